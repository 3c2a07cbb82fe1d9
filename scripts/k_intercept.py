"""A launch's fixed cost against cuBLAS's: one config per M x N (gemm()'s pick at the largest K) timed over a range of
K against torch.matmul, in one process on identical tensors, alternating, in CUDA graphs; a least-squares line
time = a + b K per side, so `a` is what a launch costs beside its K loop (prologue, first loads, epilogue, the gap
between launches in a graph).

    python3 scripts/k_intercept.py --specs FILE      # here (MLIR host): the configs' specs
    python3 scripts/k_intercept.py [--mn 512x4096,1024x1024] [--ks 64,128,...]   # there (GPU host)
"""

from __future__ import annotations

import argparse
import sys

from gemm_sweep import direct_pick, graph_ab, write_config_specs

MN = ("512x4096", "1024x1024", "1337x2056", "2048x2048", "4096x4096")
KS = (64, 128, 256, 512, 1024, 2048, 4096)


def _line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(a, b) of the least-squares line y = a + b x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--specs", metavar="FILE", help="write the configs' specs (for build_bundle --add-specs)")
    p.add_argument("--mn", default=",".join(MN))
    p.add_argument("--ks", default=",".join(map(str, KS)))
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--rounds", type=int, default=4)
    args = p.parse_args()
    mns = [tuple(int(v) for v in s.split("x")) for s in args.mn.split(",")]
    ks = [int(v) for v in args.ks.split(",")]
    picks = {mn: direct_pick(args.dtype, (*mn, max(ks))) for mn in mns}
    if args.specs:
        n = write_config_specs(args.specs, [cfg for cfg, _ in picks.values()])
        print(f"{n} specs written to {args.specs}")
        return 0
    import torch

    print(f"{torch.cuda.get_device_name()}, {args.dtype}; graphs, {args.rounds} alternating rounds, identical tensors")
    print(f"{'M x N':12} {'K':>6} {'ours us':>8} {'torch us':>8} {'torch/ours':>10}")
    for (m, n), (cfg, splits) in picks.items():
        ours, peer = [], []
        for k in ks:
            us, labels, _ = graph_ab((m, n, k), args.dtype, [(cfg, splits)], args.rounds)
            ours.append(us[0])
            peer.append(us[1])
            print(f"{m}x{n:<7} {k:6d} {us[0]:8.2f} {us[1]:8.2f} {us[1] / us[0]:10.3f}", flush=True)
        (a0, b0), (a1, b1) = _line(ks, ours), _line(ks, peer)
        print(f"{m}x{n}: {cfg.name} S={splits} {labels[0]}\n  ours  {a0:6.2f} us + {b0 * 1e3:7.3f} ns per K\n"
              f"  torch {a1:6.2f} us + {b1 * 1e3:7.3f} ns per K", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Launch one GEMM config on one shape a few times (for a profiler such as ncu to capture), after a correctness check.

    python3 scripts/profile_one.py 4097x4104x4096 dense_gemm_bf16_f32_bf16_kkn_128x256x64_c1x1_s4_p1s2_streamk
    python3 scripts/profile_one.py 512x4096x4096 dense_gemm_bf16_f32_bf16_kkn_128x256x64_c1x1_s4_p1s2_splitk --splits 2
"""

from __future__ import annotations

import argparse
import dataclasses
import sys


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("shape", help="MxNxK")
    p.add_argument("config", help="a kernel name the bundle holds (bfloat16, K-major A and B)")
    p.add_argument("--splits", type=int, default=1)
    p.add_argument("--launches", type=int, default=3)
    args = p.parse_args()
    import torch
    from cute_examples.dense_gemm.bench_models import prepare_row
    from cute_examples.dense_gemm.bench_run import bench_shape, operands
    from cute_examples.dense_gemm.host import choose_config

    m, n, k = (int(x) for x in args.shape.split("x"))
    shape = bench_shape((m, n, k, 1), "bfloat16")
    from cute_examples.dense_gemm.choice import CLUSTER_CHOICES, TILE_EFFICIENCY

    cfg = None
    for tile in TILE_EFFICIENCY:
        for cluster in CLUSTER_CHOICES:
            base = choose_config(shape, "float32", (tile[0], tile[1], 64), cluster, 132)
            for c in (base, base.with_schedule("pingpong") if tile[0] * tile[1] <= 16384 else base):
                for kind in ("data_parallel", "split_k", "stream_k"):
                    try:
                        cand = dataclasses.replace(c, decomposition=kind)
                    except ValueError:
                        continue
                    if cand.name == args.config:
                        cfg = cand
    if cfg is None:
        print(f"no config named {args.config}")
        return 1
    a, b, c = operands((m, n, k, 1), "bfloat16")
    ref = torch.matmul(a, b)
    fn, err, label = prepare_row(cfg, args.splits, a, b, c, ref, 132)
    print(cfg.name, label, f"error {err:.1e}")
    for _ in range(args.launches):
        fn()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Why does one GEMM shape swing between runs? Trials with fresh tensors, against torch.matmul, with the clocks.

    python3 scripts/gemm_swing.py [--shape 3000 5000 4096] [--trials 6] [--bundle-configs DIR]

Per trial (fresh `randn` operands, as F.linear has them: A (M, K) row-major, B = W.t() of a contiguous (N, K)
weight, so A and B are K-major): ours with one fixed config and the host's order, ours again on clones of the
same operands (new addresses, same bits), ours on the same tensors with zeroed operands (same addresses, other
bits), and torch.matmul; each timed in alternating blocks; with the SM clock and power that nvidia-smi reports
after the trial. Then, on one set of operands, every raster order and swizzle of the schedule and the other
cluster shapes. A swing that follows the data (zeros vs randn), the addresses (clones), the order, or the clock
tells which it is. `--bundle-configs DIR` writes the bundle of the configs it runs (build it on the MLIR host).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys


def _configs(dtype: str) -> dict[str, object]:
    from cute_examples.dense_gemm.spec import GemmConfig

    base = dict(a_dtype=dtype, b_dtype=dtype, c_dtype=dtype, tile_n=256)
    return {
        "128x256 c2x1": GemmConfig(**base, cluster_m=2),
        "128x256 c1x1": GemmConfig(**base),
        "128x256 c1x2": GemmConfig(**base, cluster_n=2),
        "128x128 c2x1": GemmConfig(a_dtype=dtype, b_dtype=dtype, c_dtype=dtype, cluster_m=2),
    }


def _smi() -> str:
    q = "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active"
    out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True, text=True)
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout else "nvidia-smi: n/a"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", type=int, nargs=3, default=(3000, 5000, 4096), metavar=("M", "N", "K"))
    p.add_argument("--trials", type=int, default=6)
    p.add_argument("--dtypes", default="float16,bfloat16")
    p.add_argument("--bundle-configs", metavar="DIR", help="write the bundle of the configs this script runs, exit")
    args = p.parse_args()
    dtypes = args.dtypes.split(",")
    if args.bundle_configs:
        from cute_examples.dense_gemm.aot import write_aot_bundle

        print(write_aot_bundle(args.bundle_configs, [c for d in dtypes for c in _configs(d).values()]))
        return 0

    import torch
    from cute_examples.dense_gemm.host import problem_of, resident_sms, schedule, tensor_maps
    from cute_examples.dense_gemm.kernel import kernel_of
    from cute_examples.timing import interleaved_median_ms
    from cute_runtime import device_properties

    m, n, k = args.shape
    props = device_properties(0)
    sms = props.sm_count
    flops = 2.0 * m * n * k
    print(f"{props.name}, {sms} SMs; shape {m}x{n}x{k}; {_smi()}")

    def tf(ms: float) -> float:
        return flops / ms / 1e9

    def ours(cfg, a, b, c, order=(None, None)):  # noqa: ANN001, ANN202
        kernel = kernel_of(cfg, tuple(props.compute_capability), 0)
        prob = problem_of(a, b, c)
        grid, r, s = schedule(prob, cfg, resident_sms(kernel, cfg, sms), *order)
        launch_args = (*tensor_maps(prob, cfg), prob.m, prob.n, prob.k, prob.l, r, s)
        return (lambda: kernel.launch(grid, *launch_args)), f"grid {grid[0]}x{grid[1]} raster_n={r} swizzle_log={s}"

    for dtype in dtypes:
        tdt = getattr(torch, dtype)
        cfgs = _configs(dtype)
        cfg = cfgs["128x256 c2x1"]
        print(f"\n{dtype}: config {cfg.name}")
        rows = []
        for t in range(args.trials):
            torch.manual_seed(1000 + t)
            a = torch.randn(m, k, device="cuda", dtype=tdt)
            w = torch.randn(n, k, device="cuda", dtype=tdt)
            b = w.t()
            c = torch.empty(m, n, device="cuda", dtype=tdt)
            a2, w2 = a.clone(), w.clone()
            c2 = torch.empty_like(c)
            az, wz = torch.zeros_like(a), torch.zeros_like(w)
            f1, sched = ours(cfg, a, b, c)
            f2, _ = ours(cfg, a2, w2.t(), c2)
            f3, _ = ours(cfg, az, wz.t(), c2)
            peer = lambda a=a, b=b, c2=c2: torch.matmul(a, b, out=c2)  # noqa: E731
            ms = interleaved_median_ms([f1, f2, f3, peer], iterations=24, rounds=4)
            err = float((c.float() - (a.float() @ b.float())).norm() / (a.float() @ b.float()).norm())
            rows.append([tf(x) for x in ms])
            print(f"trial {t}: ours {tf(ms[0]):6.1f}  clones {tf(ms[1]):6.1f}  zeros {tf(ms[2]):6.1f}  "
                  f"torch {tf(ms[3]):6.1f} TFLOP/s  (err {err:.1e}; A at {a.data_ptr() % 65536:#x}, "
                  f"B at {w.data_ptr() % 65536:#x} mod 64K; {sched}) | {_smi()}")
            del a, w, b, c, a2, w2, c2, az, wz
        cols = list(zip(*rows, strict=True))
        print("spread (min-max): " + ", ".join(
            f"{name} {min(col):.0f}-{max(col):.0f} (median {statistics.median(col):.0f})"
            for name, col in zip(("ours", "clones", "zeros", "torch"), cols, strict=True)))
        torch.manual_seed(7)
        a = torch.randn(m, k, device="cuda", dtype=tdt)
        b = torch.randn(n, k, device="cuda", dtype=tdt).t()
        c = torch.empty(m, n, device="cuda", dtype=tdt)
        fns, labels = [], []
        for name, cf in cfgs.items():
            orders = [(None, None)] + ([(r, s) for r in (0, 1) for s in (0, 1, 2, 3)] if cf is cfg else [])
            for order in orders:
                try:
                    f, sched = ours(cf, a, b, c, order)
                except Exception as exc:  # noqa: BLE001 - a config missing from the bundle is reported, not fatal
                    print(f"{name}: skipped ({type(exc).__name__}: {str(exc)[:80]})")
                    break
                fns.append(f)
                labels.append(f"{name} {sched}" + ("" if order != (None, None) else " (host's order)"))
        fns.append(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c))
        labels.append("torch.matmul")
        ms = interleaved_median_ms(fns, iterations=16, rounds=4)
        for label, x in zip(labels, ms, strict=True):
            print(f"  {label:60} {tf(x):6.1f} TFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

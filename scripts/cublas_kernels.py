"""Which kernels torch.matmul (cuBLAS) and torch._scaled_mm (cuBLASLt) run on the model suite's shapes, and how long.

    python3 scripts/cublas_kernels.py [--dtype bfloat16] [--fp8] [--min-m 1]
    python3 scripts/cublas_kernels.py --shapes 266x14144x12152,1230x8152x15000   # these shapes instead of the suite

Per shape (operands as the suite has them: A (M, K) row-major, B = W.t() of a contiguous (N, K) weight), the peer
runs a few times under torch.profiler; each kernel it launched is printed with its mean device time. The names
(nvjet_sm90_..._128x256_64x4_2x1_...) give the peer's tile, cluster and split, which is what our cost model is
compared with.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict


def _kernels(fn, repeats: int = 5) -> list[tuple[str, float]]:
    """(kernel name, mean microseconds per call) of what fn launches."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(repeats):
            fn()
        torch.cuda.synchronize()
    total: dict[str, float] = defaultdict(float)
    for ev in prof.events():
        if ev.device_type.name == "CUDA":
            total[ev.name] += ev.device_time
    return [(name, us / repeats) for name, us in total.items()]


def main(argv: list[str] | None = None) -> int:
    """Print the peer's kernels per suite shape."""
    import torch
    from cute_examples.dense_gemm.bench_models import SuiteShape, suite

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--fp8", action="store_true", help="torch._scaled_mm on E4M3 operands (bfloat16 C)")
    p.add_argument("--min-m", type=int, default=1)
    p.add_argument("--shapes", default="", help="comma-separated MxNxK instead of the suite's shapes")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA device")
        return 0
    dtype = getattr(torch, args.dtype)
    seen = set()
    shapes = suite()
    if args.shapes:
        shapes = [SuiteShape("shape", *(int(x) for x in t.lower().split("x"))) for t in args.shapes.split(",")]
    for s in shapes:
        key = (s.m, s.n, s.k, s.l)
        if s.m < args.min_m or key in seen or (args.fp8 and (s.l != 1 or s.k % 16 or s.n % 16)):
            continue
        seen.add(key)
        a = torch.randn(s.l, s.m, s.k, device="cuda").to(dtype if not args.fp8 else torch.float8_e4m3fn)
        w = torch.randn(s.l, s.n, s.k, device="cuda").to(dtype if not args.fp8 else torch.float8_e4m3fn)
        if s.l == 1:
            a, w = a[0], w[0]
        b = w.transpose(-1, -2)
        if args.fp8:
            one = torch.ones((), device="cuda")
            rows = _kernels(lambda a=a, b=b, one=one: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                                      out_dtype=torch.bfloat16))
        else:
            rows = _kernels(lambda a=a, b=b: torch.matmul(a, b))
        line = "; ".join(f"{name} {us:.2f}us" for name, us in rows)
        print(f"{s.m}x{s.n}x{s.k}x{s.l}: {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

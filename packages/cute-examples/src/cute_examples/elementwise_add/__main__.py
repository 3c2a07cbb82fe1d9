"""`python -m cute_examples.elementwise_add`: CuTeDSL's elementwise_add flags, checked against torch, timed."""

from __future__ import annotations

import argparse
import sys

from ..cli import add_bundle_flag, apply_bundle_flag, parse_dtype
from ..report import NO_GPU, resource_line
from .kernel import DTYPES


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m cute_examples.elementwise_add", description=__doc__)
    p.add_argument("--M", type=int, default=1024, help="rows (default 1024)")
    p.add_argument("--N", type=int, default=1024, help="columns (default 1024)")
    p.add_argument("--dtype", default="Float32", help="Float32, Float16, BFloat16, Int32 (or torch's names)")
    p.add_argument("--warmup_iterations", type=int, default=2)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--skip_ref_check", action="store_true", help="do not compare with torch")
    p.add_argument("--benchmark", action="store_true", help="time ours and torch.add on the same tensors")
    add_bundle_flag(p)
    return p


def _compile_report(dtype: str, m: int, n: int) -> str:
    """Compile (no GPU needed) the kernel these contiguous (m, n) tensors use, and its resource report."""
    from .kernel import compile_elementwise_add, elementwise_add_spec

    offset_bits = 32 if m * n < 2**31 else 64
    art = compile_elementwise_add(elementwise_add_spec(dtype, "vec", offset_bits=offset_bits), "sm_90a")
    return resource_line(art.entry.resources)


def run(args: argparse.Namespace) -> int:
    """Compile, and with a GPU run, check and optionally time one elementwise add."""
    dtype = parse_dtype(args.dtype, DTYPES, "--dtype")
    for flag, v in (("--M", args.M), ("--N", args.N)):
        if v < 1 or v >= 2**31:
            raise SystemExit(f"error: {flag} must be in [1, 2**31), got {v}")
    if args.iterations < 1 or args.warmup_iterations < 0:
        raise SystemExit("error: --iterations must be >= 1 and --warmup_iterations >= 0")
    apply_bundle_flag(args)
    import torch

    if not torch.cuda.is_available():
        print(f"elementwise_add {dtype} {args.M}x{args.N}")
        print(_compile_report(dtype, args.M, args.N))
        print(NO_GPU)
        return 0

    from ..timing import interleaved_median_ms
    from .host import elementwise_add, select_kernel

    tdtype = getattr(torch, dtype)
    shape = (args.M, args.N)
    if tdtype.is_floating_point:
        a, b = torch.randn(shape, device="cuda", dtype=tdtype), torch.randn(shape, device="cuda", dtype=tdtype)
    else:
        a = torch.randint(-1000, 1000, shape, device="cuda", dtype=tdtype)
        b = torch.randint(-1000, 1000, shape, device="cuda", dtype=tdtype)
    c = torch.full_like(a, 7)
    kernel, spec = select_kernel(a, b, c)
    print(f"elementwise_add {dtype} {args.M}x{args.N} ({kernel.name}, {spec['variant']})")
    print(resource_line(kernel.entry.resources))
    elementwise_add(a, b, c)
    torch.cuda.synchronize()
    if not args.skip_ref_check:
        torch.testing.assert_close(c, a + b, rtol=0, atol=0)
        print("check: passed (bit-exact against torch)")
    if args.benchmark:
        nbytes = 3 * a.numel() * a.element_size()
        ours, ref = interleaved_median_ms(
            [lambda: elementwise_add(a, b, c), lambda: torch.add(a, b, out=c)],
            warmup=args.warmup_iterations, iterations=max(args.iterations, 4),
        )
        print(f"ours:      {ours * 1e3:9.2f} us  {nbytes / ours / 1e6:8.1f} GB/s")
        print(f"torch.add: {ref * 1e3:9.2f} us  {nbytes / ref / 1e6:8.1f} GB/s")
        print(f"ratio (torch time / ours): {ref / ours:.3f}x")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the CLI."""
    return run(_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

"""`python -m cute_examples.elementwise_add`: CuTeDSL's elementwise_add flags, checked against torch, timed."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from ..cli import Parser, add_bundle_flag, apply_bundle_flag, dtype_of, make_parser, number, option, switch
from ..report import no_gpu_ending, resource_line
from .kernel import DTYPES


def parser() -> Parser:
    """The command line of the elementwise add."""
    p = make_parser("python -m cute_examples.elementwise_add", __doc__ or "", [
        "python -m cute_examples.elementwise_add --M 16384 --N 16384 --dtype Float32 --benchmark",
        "python -m cute_examples.elementwise_add --M 127 --N 129 --dtype BFloat16",
    ])
    option(p, "--M", type=number(int, 1, below=2**31), default=1024, example="16384", metavar="ROWS",
           help="rows of A, B and C")
    option(p, "--N", type=number(int, 1, below=2**31), default=1024, example="16384", metavar="COLS",
           help="columns of A, B and C")
    option(p, "--dtype", type=dtype_of(DTYPES, "--dtype"), default="Float32", example="BFloat16",
           shown="Float32", help="Float32, Float16, BFloat16, Int32 (or torch's names)")
    option(p, "--warmup_iterations", type=number(int, 0), default=2, example="5", metavar="N",
           help="untimed calls before timing (--benchmark)")
    option(p, "--iterations", type=number(int, 1), default=100, example="1000", metavar="N",
           help="timed calls per measurement (--benchmark)")
    switch(p, "--skip_ref_check", help="do not compare with torch")
    switch(p, "--benchmark", help="time ours and torch.add on the same tensors")
    add_bundle_flag(p)
    return p


def _compile_report(dtype: str, m: int, n: int) -> str:
    """Compile (no GPU needed) the kernel these contiguous (m, n) tensors use, and its resource report."""
    from .kernel import add_kernel
    from .modes import standins

    _, args = standins(dtype, (m, n), [(n, 1)] * 3, 16)
    art = add_kernel.artifact(*args, target="sm_90a")
    return resource_line(art.entry.resources, cached=art.cached)


def run(args: argparse.Namespace, argv: Sequence[str] = ()) -> int:
    """Compile, and with a GPU run, check and optionally time one elementwise add (args from `parser()`)."""
    dtype = args.dtype
    apply_bundle_flag(args)
    import torch

    if not torch.cuda.is_available():
        print(f"elementwise_add {dtype} {args.M}x{args.N}")
        print(_compile_report(dtype, args.M, args.N))
        skipped = "the launch, the check against torch" + (", the timing (--benchmark)" if args.benchmark else "")
        rest = (f"python -m cute_examples.elementwise_add {shlex.join(argv)}",
                "(without MLIR there: python -m cute_examples.build_bundle build/aot here, then --bundle build/aot)")
        for line in no_gpu_ending("compiled the kernel for sm_90a (resource report above)", skipped, rest):
            print(line)
        return 0

    from ..timing import interleaved_median_ms
    from .host import compiled_here, describe_plan, elementwise_add, plan_for

    tdtype = getattr(torch, dtype)
    shape = (args.M, args.N)
    if tdtype.is_floating_point:
        a, b = torch.randn(shape, device="cuda", dtype=tdtype), torch.randn(shape, device="cuda", dtype=tdtype)
    else:
        a = torch.randint(-1000, 1000, shape, device="cuda", dtype=tdtype)
        b = torch.randint(-1000, 1000, shape, device="cuda", dtype=tdtype)
    c = torch.full_like(a, 7)
    plan = plan_for(a, b, c)
    print(f"elementwise_add {dtype} {args.M}x{args.N} ({describe_plan(plan)})")
    print(resource_line(plan.kernel.entry.resources, cached=not compiled_here(plan)))
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
    argv = sys.argv[1:] if argv is None else list(argv)
    return run(parser().parse_args(argv), argv)


if __name__ == "__main__":
    sys.exit(main())

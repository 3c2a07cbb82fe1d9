"""The main job: compile every example kernel to PTX and cubin with its resource report; on a GPU, run, check, time."""

from __future__ import annotations

import sys

from cute_nvarch.target import SM80, SM90A

from .catalogue import compile_catalogue
from .cli import Parser, add_bundle_flag, apply_bundle_flag, make_parser, number, option, targets
from .report import no_gpu_ending

DEFAULT_TARGETS = (SM90A.name, SM80.name)


def parser() -> Parser:
    """The command line of the main job."""
    p = make_parser("python -m cute_examples", __doc__ or "", [
        "python -m cute_examples",
        "python -m cute_examples --targets sm_90a",
        "python -m cute_examples --bundle build/aot --iterations 50   # on a GPU host",
    ])
    option(p, "--targets", type=targets, default=DEFAULT_TARGETS, example="sm_90a,sm_89", metavar="LIST",
           help="comma-separated compile targets (sm_80, sm_89, sm_90a); the dense GEMM builds for sm_90a only")
    option(p, "--iterations", type=number(int, 1), default=30, example="100", metavar="N",
           help="timed iterations per benchmark row (GPU only)")
    add_bundle_flag(p)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the main job."""
    args = parser().parse_args(argv)
    apply_bundle_flag(args)
    done = f"nothing compiled (--bundle {args.bundle}: the kernels come from it)"
    if args.bundle is None:
        n = len(compile_catalogue(args.targets))
        done = f"{n} kernels compiled for {', '.join(args.targets)} (PTX, cubin, resource report each)"
    import torch

    if not torch.cuda.is_available():
        print()
        for line in no_gpu_ending(done, "running each kernel, checking it against torch, timing it against "
                                        "torch.add / torch.matmul (cuBLAS)"):
            print(line)
        return 0
    from . import bench
    from .checks import run_checks

    print(f"\n== run and check on {torch.cuda.get_device_name()}")
    for row in run_checks():
        print(row)
    return bench.main(["--iterations", str(args.iterations)] + (["--bundle", args.bundle] if args.bundle else []))


if __name__ == "__main__":
    sys.exit(main())

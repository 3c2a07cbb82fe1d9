"""`python -m cute_examples.build_bundle DIR`: an AOT bundle of every example kernel, for GPU hosts without MLIR.

The bundle also stores the JIT kernels' signatures (the tutorial transpose, the bench's add), so that
`cute_runtime.load_bundle(DIR)["transpose"](x, y, pack, swizzle, grid=...)` dispatches there.
"""

from __future__ import annotations

import sys

from .cli import Parser, make_parser, option, positional, switch, targets


def parser() -> Parser:
    """The command line of build_bundle."""
    p = make_parser("python -m cute_examples.build_bundle", __doc__ or "", [
        "python -m cute_examples.build_bundle build/aot",
        "python -m cute_examples.build_bundle build/aot-sm80 --targets sm_80,sm_89 --no-gemm",
        "then, on the GPU host: bash scripts/gpu_session.sh all   (docs/bundle.md)",
    ])
    positional(p, "directory", example="build/aot", help="the bundle directory to write (created or replaced)")
    option(p, "--targets", type=targets, default=("sm_90a",), example="sm_90a,sm_80", metavar="LIST",
           help="comma-separated compile targets (sm_80, sm_89, sm_90a); the dense GEMM builds for sm_90a only")
    switch(p, "--no-gemm", help="leave the dense GEMM kernels out")
    option(p, "--add-specs", default=None, example="misses.jsonl", metavar="FILE",
           help="also compile the specs a bundle-only GPU host recorded with CUTE_RECORD_MISSES=FILE")
    return p


def main(argv: list[str] | None = None) -> int:
    """Compile the catalogue for the given targets and write one bundle directory."""
    args = parser().parse_args(argv)
    from cute_ir.bundle import write_bundle

    from .catalogue import compile_catalogue, jit_kernels

    arts = compile_catalogue(args.targets, gemm=not args.no_gemm, recorded=args.add_specs)
    path = write_bundle(args.directory, arts, {name: k.signature() for name, k in jit_kernels().items()})
    print(f"bundle: {path} ({len(arts)} kernels, each one's .cubin and .ptx beside it)")
    print(f"on a GPU host: --bundle {args.directory} or CUTE_BUNDLE_DIR={args.directory}; "
          "bash scripts/gpu_session.sh all runs everything from build/aot (docs/bundle.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

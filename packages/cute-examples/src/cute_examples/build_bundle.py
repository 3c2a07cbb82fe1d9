"""`python -m cute_examples.build_bundle DIR`: an AOT bundle of every example kernel, for GPU hosts without MLIR."""

from __future__ import annotations

import argparse
import sys
import time

from .catalogue import artifacts


def main(argv: list[str] | None = None) -> int:
    """Compile the catalogue for the given targets and write one bundle directory."""
    p = argparse.ArgumentParser(prog="python -m cute_examples.build_bundle", description=__doc__)
    p.add_argument("directory")
    p.add_argument("--targets", default="sm_90a", help="comma-separated compile targets (default sm_90a)")
    p.add_argument("--no-gemm", action="store_true", help="leave the dense GEMM kernels out")
    args = p.parse_args(argv)
    from cute_ir.bundle import write_bundle

    t0 = time.perf_counter()
    arts = [art for t in args.targets.split(",") for _, art in artifacts(t.strip(), gemm=not args.no_gemm)]
    path = write_bundle(args.directory, arts)
    print(f"bundle {path}: {len(arts)} kernels in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The main job: compile every example kernel to PTX and cubin with its resource report; on a GPU, run, check, time."""

from __future__ import annotations

import argparse
import sys
import time

from .cli import add_bundle_flag, apply_bundle_flag
from .report import NO_GPU, resource_line


def _compile_table(targets: tuple[str, ...]) -> list[str]:
    """Compile the catalogue of example kernels for each target; one row per kernel with its resource report."""
    from .catalogue import artifacts

    rows = []
    for target in targets:
        t0 = time.perf_counter()
        for label, art in artifacts(target):
            rows.append(f"{target:7} {label:44} PTX {len(art.ptx):7d} B  cubin {len(art.cubin):7d} B  "
                        f"{resource_line(art.entry['resources'])}")
        rows.append(f"{target:7} all compiled in {time.perf_counter() - t0:.2f} s")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the main job."""
    p = argparse.ArgumentParser(prog="python -m cute_examples", description=__doc__)
    p.add_argument("--targets", default="sm_90a,sm_80", help="comma-separated compile targets")
    p.add_argument("--iterations", type=int, default=30, help="timed iterations per benchmark row")
    add_bundle_flag(p)
    args = p.parse_args(argv)
    apply_bundle_flag(args)
    if args.bundle is None:
        print("== compile: every example kernel to PTX and cubin (ptxas resource report)")
        for row in _compile_table(tuple(t.strip() for t in args.targets.split(",") if t.strip())):
            print(row)
    import torch

    if not torch.cuda.is_available():
        print(NO_GPU)
        return 0
    from . import bench
    from .checks import run_checks

    print(f"\n== run and check on {torch.cuda.get_device_name()}")
    for row in run_checks():
        print(row)
    return bench.main(["--iterations", str(args.iterations)] + (["--bundle", args.bundle] if args.bundle else []))


if __name__ == "__main__":
    sys.exit(main())

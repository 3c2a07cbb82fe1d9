"""What the examples print about compiled kernels: the resource line, the kernel table, where the files went, and
the ending printed where no GPU is found."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "GPU_HOST_BENCH",
    "GPU_HOST_STEPS",
    "NO_GPU",
    "WIDTH",
    "KernelTable",
    "artifact_location",
    "no_gpu_ending",
    "resource_line",
]

NO_GPU = "no GPU found"
WIDTH = 120  # every row of the main job's report fits in this many columns
# the command that runs everything a CPU machine skipped, on a GPU host (docs/bundle.md, scripts/gpu_session.sh)
GPU_HOST_STEPS = (
    "here:  python -m cute_examples.build_bundle build/aot   (the kernels of the GPU tests and benchmarks)",
    "there: bash scripts/gpu_session.sh all                  (in a copy of this clone with build/aot: GPU tests,",
    "       compute-sanitizer, benchmarks; docs/bundle.md). A GPU host with MLIR runs python3 -m nox -s demo.",
)
# the same for the benchmarks alone
GPU_HOST_BENCH = (
    "here:  python -m cute_examples.build_bundle build/aot",
    "there: bash scripts/gpu_session.sh bench   (in a copy of this clone with build/aot; docs/bundle.md)",
)


def _compile_text(resources: Mapping[str, float], cached: bool) -> str:
    return "(cached)" if cached else f"{resources.get('compile_ms', 0.0):.0f} ms"


def resource_line(resources: Mapping[str, float], *, cached: bool = False) -> str:
    """`registers: N, shared memory: N bytes, spill stores: N bytes, spill loads: N bytes, compile: N ms`.

    `compile: (cached)` when the kernel came from cute-ir's disk cache (its compile time is not this run's).
    """
    return (
        f"registers: {int(resources['registers'])}, shared memory: {int(resources['shared_memory'])} bytes, "
        f"spill stores: {int(resources['spill_stores'])} bytes, spill loads: {int(resources['spill_loads'])} bytes, "
        f"compile: {_compile_text(resources, cached)}"
    )


class KernelTable:
    """Rows of (kernel, PTX and cubin sizes, ptxas's resource report, compile time) within WIDTH columns."""

    _TAIL = f" {'PTX KiB':>7} {'cubin KiB':>9} {'regs':>4} {'smem B':>6} {'spill B':>7} {'compile':>8}"

    def __init__(self, labels: Sequence[str]) -> None:
        room = WIDTH - len(self._TAIL)
        self.width = min(max([len("kernel"), *(len(label) for label in labels)]), room)

    def _label(self, label: str) -> str:
        return label if len(label) <= self.width else label[: self.width - 1] + "~"

    def header(self) -> str:
        """The column titles."""
        return f"{'kernel':<{self.width}}{self._TAIL}"

    def row(self, label: str, art: Any) -> str:
        """One kernel's row (art: a cute-ir Artifact)."""
        r = art.entry.resources
        spill = f"{int(r['spill_stores'])}/{int(r['spill_loads'])}"
        return (
            f"{self._label(label):<{self.width}} {len(art.ptx) / 1024:7.1f} {len(art.cubin) / 1024:9.1f} "
            f"{int(r['registers']):4d} {int(r['shared_memory']):6d} {spill:>7} "
            f"{_compile_text(r, getattr(art, 'cached', False)):>8}"
        )


def artifact_location() -> list[str]:
    """Where the PTX and cubin of the kernels compiled in this process are (cute-ir's cache, CUTE_DUMP_DIR)."""
    from cute_ir import config

    dump = config.dump_dir()
    lines = []
    if config.cache_enabled():
        lines.append(f"PTX and cubin: {config.cache_dir()}/kernels/<key[:2]>/<key>.{{ptx,cubin,json}}")
        lines.append("  (cute-ir's compile cache, CUTE_CACHE_DIR; python -m cute_examples.build_bundle DIR gathers "
                     "them into a bundle)")
    else:
        lines.append("PTX and cubin: kept in memory only (CUTE_CACHE=0); CUTE_DUMP_DIR=DIR writes them")
    if dump:
        lines.append(f"every stage of each kernel (.mlir, .ptx, .cubin, .ptxas.txt): {dump} (CUTE_DUMP_DIR)")
    return lines


def no_gpu_ending(done: str, skipped: str, rest: Sequence[str] = GPU_HOST_STEPS) -> list[str]:
    """The closing lines where no GPU is found: what was done, what was skipped, how to run the rest on a GPU."""
    lines = [f"{NO_GPU}."]
    for head, text in (("done: ", done), ("skipped (needs an NVIDIA GPU): ", skipped)):
        lines += textwrap.wrap(head + text, WIDTH, subsequent_indent="  ")
    return [*lines, "to run the rest on a GPU host:", *(f"  {line}" for line in rest)]

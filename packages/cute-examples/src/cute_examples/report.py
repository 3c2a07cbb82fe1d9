"""The one-line resource report every example prints, and the line printed where no GPU is found."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["NO_GPU", "resource_line"]

NO_GPU = "no GPU found"


def resource_line(resources: Mapping[str, float]) -> str:
    """`registers: N, shared memory: N bytes, spill stores: N bytes, spill loads: N bytes, compile: N ms`."""
    ms = resources.get("compile_ms", 0.0)
    return (
        f"registers: {int(resources['registers'])}, shared memory: {int(resources['shared_memory'])} bytes, "
        f"spill stores: {int(resources['spill_stores'])} bytes, spill loads: {int(resources['spill_loads'])} bytes, "
        f"compile: {ms:.0f} ms"
    )

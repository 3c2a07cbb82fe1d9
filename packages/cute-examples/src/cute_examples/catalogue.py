"""Every kernel configuration the examples, their GPU tests and benchmarks use, for the main job and AOT bundles."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .elementwise_add.kernel import DTYPES, VARIANTS, compile_elementwise_add

__all__ = ["artifacts"]


def _elementwise(target: str) -> Iterator[tuple[str, Any]]:
    for dtype in DTYPES:
        for variant in VARIANTS:
            for offset_bits in (32, 64):
                art = compile_elementwise_add(dtype, variant, target, offset_bits=offset_bits)
                yield f"elementwise_add {dtype} {variant} i{offset_bits}", art


def artifacts(target: str, *, gemm: bool = True) -> Iterator[tuple[str, Any]]:
    """(label, cute_ir Artifact) for every example kernel on target, compiled through cute-ir's cache."""
    yield from _elementwise(target)
    if gemm and target == "sm_90a":
        from .dense_gemm.aot import aot_configs
        from .dense_gemm.host import compile_gemm

        for cfg in aot_configs():
            yield f"dense_gemm {cfg.name}", compile_gemm(cfg, target)

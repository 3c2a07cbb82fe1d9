"""Fixtures for the Hopper builder tests: compile a small kernel to PTX/cubin, run integer code on the CPU."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pytest

pytest.importorskip("mlir")

from _ir_host import HostInt  # noqa: E402


@pytest.fixture
def compile_kernel() -> Callable[..., object]:
    """compile_kernel(name, params, body, **kd_kwargs) -> cute_ir Artifact (PTX, cubin, ptxas report)."""
    from cute_ir import hopper
    from cute_ir.kernel import KernelDef, Param
    from cute_ir.stages import compile as compile_stages

    def run(name: str, params: Sequence[tuple[str, str]], body: Callable[..., None], **kw: object) -> object:
        kw.setdefault("min_blocks_per_sm", 1)
        kd = KernelDef(name, [Param(n, k) for n, k in params], **kw)
        with kd.body() as k:
            body(k)
        hopper.finalize_tma_params(kd)
        return compile_stages(kd)

    return run


def ptx_body(ptx: str) -> list[str]:
    """The PTX instruction lines (comments and blank lines dropped, whitespace normalised)."""
    out = []
    for line in ptx.splitlines():
        line = line.split("//")[0].strip()
        if line:
            out.append(re.sub(r"\s+", " ", line))
    return out


@pytest.fixture
def ptx_lines() -> Callable[[str], list[str]]:
    """ptx_lines(ptx) -> normalised instruction lines."""
    return ptx_body


@pytest.fixture
def host_int() -> type[HostInt]:
    """HostInt(nargs, result_bits, build) runs `build(*i32 values) -> values` on the CPU."""
    return HostInt

"""Kernel parameter kinds as data: how each kind lies in a kernel's parameter space, and `Param`.

A kernel's parameters are plain PTX parameters in order. Each kind fixes the bytes it occupies, its
alignment, the `struct` code that packs it on the host and, for integers, the range a value must lie in.
cute-ir lowers each kind to an MLIR argument; cute-runtime packs arguments by these facts.
"""

from __future__ import annotations

import keyword
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PARAM_KINDS",
    "TMA_DESCRIPTOR_ALIGN",
    "TMA_DESCRIPTOR_BYTES",
    "Param",
    "ParamKind",
    "param_kind",
    "parse_params",
]

# A CUtensorMap: 128 opaque bytes passed by value (`.param .align 64 .b8 name[128]`).
TMA_DESCRIPTOR_BYTES = 128
TMA_DESCRIPTOR_ALIGN = 64


@dataclass(frozen=True)
class ParamKind:
    """One parameter kind: name, packed `struct` code, size and alignment in bytes, integer range if any."""

    name: str
    struct_code: str
    size: int
    align: int
    int_range: tuple[int, int] | None = None

    @property
    def is_float(self) -> bool:
        """True for the floating-point scalar kinds."""
        return self.struct_code in ("f", "d")


PARAM_KINDS: dict[str, ParamKind] = {
    k.name: k
    for k in (
        ParamKind("ptr", "Q", 8, 8),
        ParamKind("i32", "i", 4, 4, (-(1 << 31), (1 << 31) - 1)),
        ParamKind("u32", "I", 4, 4, (0, (1 << 32) - 1)),
        ParamKind("i64", "q", 8, 8, (-(1 << 63), (1 << 63) - 1)),
        ParamKind("u64", "Q", 8, 8, (0, (1 << 64) - 1)),
        ParamKind("f32", "f", 4, 4),
        ParamKind("f64", "d", 8, 8),
        ParamKind("tma", f"{TMA_DESCRIPTOR_BYTES}s", TMA_DESCRIPTOR_BYTES, TMA_DESCRIPTOR_ALIGN),
    )
}


def param_kind(name: str) -> ParamKind:
    """The ParamKind called `name`; ValueError naming the known kinds otherwise."""
    kind = PARAM_KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise ValueError(f"param kind must be one of {sorted(PARAM_KINDS)}, got {name!r}")
    return kind


@dataclass(frozen=True)
class Param:
    """One parameter of a compiled kernel: its name and kind (a key of PARAM_KINDS)."""

    name: str
    kind: str


def parse_params(params: Any, where: str = "params") -> tuple[Param, ...]:
    """Validate a params list ([{"name": ..., "kind": ...}, ...] or Params) into Param records."""
    if isinstance(params, (str, bytes)) or not isinstance(params, Sequence):
        raise ValueError(f"{where} must be a list of {{'name', 'kind'}} objects, got {type(params).__name__}")
    out: list[Param] = []
    seen: set[str] = set()
    for i, p in enumerate(params):
        if isinstance(p, Param):
            name, kind = p.name, p.kind
        elif isinstance(p, dict):
            name, kind = p.get("name"), p.get("kind")
        else:
            raise ValueError(f"{where}[{i}] must be an object with 'name' and 'kind', got {type(p).__name__}")
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"{where}[{i}].name {name!r} must be a Python identifier")
        if name in seen:
            raise ValueError(f"{where}[{i}].name {name!r} is repeated")
        if kind not in PARAM_KINDS:
            raise ValueError(f"{where}[{i}] ({name!r}).kind {kind!r} is not one of {sorted(PARAM_KINDS)}")
        seen.add(name)
        out.append(Param(name, kind))
    return tuple(out)

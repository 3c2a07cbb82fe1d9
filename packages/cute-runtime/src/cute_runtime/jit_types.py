"""Parameter annotations of JIT kernels: `Tensor(...)`, `Scalar(kind)`, `TensorMap`; int, bool, str, layouts and
frozen dataclasses are compile-time.

    @cute_runtime.kernel(block=(32, 8))
    def transpose(k, x: Tensor(rank=2), y: Tensor(rank=2), tile: int = 32): ...

A `Tensor` argument specializes on its dtype, rank, alignment, contiguous mode and index width, and on the
extents of its `static` modes; every other extent and stride is a kernel parameter. An `int`, `bool`, `str`
(an identifier token), cute-layout layout/swizzle or frozen-dataclass argument is compiled in (each value is its
own specialization; a dataclass by its fields, which must be JSON scalars or tuples of them). `Scalar("f32")`
(or `float`) is a run-time kernel parameter; `cute_runtime.TensorMap` (kind "tma") takes an encoded TMA
descriptor, passed by value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from cute_nvarch.kernel_spec import check_spec
from cute_nvarch.numeric import numeric_type
from cute_nvarch.params import PARAM_KINDS

__all__ = ["Scalar", "Tensor", "const_to_spec", "is_const_dataclass"]


@dataclass(frozen=True)
class Tensor:
    """A tensor parameter: optional required dtype and rank, and the modes whose extents are compiled in."""

    dtype: str | None = None
    rank: int | None = None
    static: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.dtype is not None:
            object.__setattr__(self, "dtype", numeric_type(self.dtype).canonical)
        if self.rank is not None and (type(self.rank) is not int or self.rank < 0):
            raise ValueError(f"Tensor: rank must be an int >= 0, got {self.rank!r}")
        static = tuple(self.static)
        if any(type(m) is not int or m < 0 or (self.rank is not None and m >= self.rank) for m in static):
            raise ValueError(f"Tensor: static must list mode indices (0 <= m < rank), got {self.static!r}")
        object.__setattr__(self, "static", static)

    def to_json(self) -> dict[str, Any]:
        """The annotation as JSON (bundles store it in the kernel's signature)."""
        return {"dtype": self.dtype, "rank": self.rank, "static": list(self.static)}


@dataclass(frozen=True)
class Scalar:
    """A run-time parameter of one of cute-nvarch's by-value kinds (i32, u32, i64, u64, f32, f64, tma)."""

    kind: str

    def __post_init__(self) -> None:
        if self.kind not in PARAM_KINDS or self.kind == "ptr":
            raise ValueError(f"Scalar: kind must be a by-value parameter kind (not ptr), got {self.kind!r}")


def _nested(x: Any, what: str) -> Any:
    if isinstance(x, tuple):
        return [_nested(e, what) for e in x]
    if type(x) is int:
        return x
    raise TypeError(f"{what} must hold static ints only, got {x!r}")


def is_const_dataclass(cls: Any) -> bool:
    """Whether a class can be a compile-time parameter's annotation as a dataclass (frozen, so hashable)."""
    return isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen


def _field(name: str, f: str, v: Any) -> Any:
    if isinstance(v, tuple):
        return [_field(name, f, e) for e in v]
    if v is None or type(v) in (int, bool, str):
        return v
    raise TypeError(f"argument {name!r}: dataclass field {f!r} must be None, an int, bool, str or tuple, got {v!r}")


def const_to_spec(name: str, value: Any) -> Any:
    """The spec value of a compile-time argument: an int, a bool, a str, a layout/swizzle as an object, or a
    frozen dataclass as {"fields": {...}}."""
    if type(value) in (int, bool):
        return value
    if type(value) is str or is_const_dataclass(type(value)):
        if type(value) is str:
            out: Any = value
        else:
            out = {"fields": {f.name: _field(name, f.name, getattr(value, f.name)) for f in dataclasses.fields(value)}}
        try:
            check_spec({"value": out})
        except ValueError as exc:
            raise ValueError(f"argument {name!r}: compile-time strings must be identifier tokens: {exc}") from None
        return out
    cls = type(value).__name__
    if cls == "Swizzle" and hasattr(value, "bits"):
        return {"swizzle": [value.bits, value.base, value.shift]}
    if cls == "Layout" and hasattr(value, "stride"):
        return {"shape": _nested(value.shape, name), "stride": _nested(value.stride, name)}
    if cls == "ComposedLayout" and hasattr(value, "outer"):
        return {
            "outer": const_to_spec(name, value.outer),
            "offset": _nested(value.offset, name),
            "inner": const_to_spec(name, value.inner),
        }
    raise TypeError(
        f"argument {name!r}: a compile-time argument must be an int, a bool, a str, a cute_layout layout/swizzle "
        f"or a frozen dataclass, "
        f"got {type(value).__name__}"
    )

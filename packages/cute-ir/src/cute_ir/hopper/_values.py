"""Small helpers that turn Python ints and SSA-integer wrappers into typed MLIR values (internal)."""

from __future__ import annotations

from typing import Any

from mlir import ir
from mlir.dialects import arith, llvm

__all__ = [
    "I1",
    "I16",
    "I32",
    "I64",
    "as_value",
    "const",
    "i1",
    "i16",
    "i32",
    "i64",
    "smem_ptr_type",
    "cluster_ptr_type",
    "generic_ptr_type",
    "global_ptr_type",
]


def I1() -> ir.IntegerType:  # noqa: N802 - type constructors read like MLIR types
    """The i1 type of the current context."""
    return ir.IntegerType.get_signless(1)


def I16() -> ir.IntegerType:  # noqa: N802
    """The i16 type of the current context."""
    return ir.IntegerType.get_signless(16)


def I32() -> ir.IntegerType:  # noqa: N802
    """The i32 type of the current context."""
    return ir.IntegerType.get_signless(32)


def I64() -> ir.IntegerType:  # noqa: N802
    """The i64 type of the current context."""
    return ir.IntegerType.get_signless(64)


def smem_ptr_type() -> ir.Type:
    """`!llvm.ptr<3>`: a shared::cta address."""
    return llvm.PointerType.get(3)


def cluster_ptr_type() -> ir.Type:
    """`!llvm.ptr<7>`: a shared::cluster address."""
    return llvm.PointerType.get(7)


def generic_ptr_type() -> ir.Type:
    """`!llvm.ptr`: a generic address."""
    return llvm.PointerType.get()


def global_ptr_type() -> ir.Type:
    """`!llvm.ptr<1>`: a global address."""
    return llvm.PointerType.get(1)


def _unwrap(x: Any) -> Any:
    """The ir.Value behind an SSA-integer wrapper (cute_ir's `Int`/`Bool`), else `x` itself."""
    if isinstance(x, ir.Value):
        return x
    for attr in ("value", "ir_value", "_value"):
        v = getattr(x, attr, None)
        if isinstance(v, ir.Value):
            return v
    return x


def const(type_: ir.Type, v: int) -> ir.Value:
    """An `arith.constant` of integer type `type_`; values >= 2**(w-1) are stored two's-complement."""
    width = ir.IntegerType(type_).width
    if not -(1 << (width - 1)) <= v < (1 << width):
        raise ValueError(f"constant {v} does not fit in i{width}")
    if v >= 1 << (width - 1):
        v -= 1 << width
    return arith.constant(type_, v)


def as_value(x: Any, type_: ir.Type) -> ir.Value:
    """`x` (int, bool, ir.Value or SSA-integer wrapper) as a value of integer type `type_`.

    Wider values are truncated, narrower ones zero-extended (all quantities handled here --
    coordinates, byte counts, addresses -- are non-negative); `index` values are cast.
    """
    x = _unwrap(x)
    if isinstance(x, bool):
        return const(type_, int(x))
    if isinstance(x, int):
        return const(type_, x)
    if not isinstance(x, ir.Value):
        raise TypeError(f"expected an int or an MLIR integer value, got {type(x).__name__}")
    src = x.type
    if src == type_:
        return x
    if isinstance(src, ir.IndexType):
        return arith.index_castui(type_, x)
    if not isinstance(src, ir.IntegerType):
        raise TypeError(f"expected an integer value, got one of type {src}")
    sw, dw = ir.IntegerType(src).width, ir.IntegerType(type_).width
    if sw > dw:
        return arith.trunci(type_, x)
    return arith.extui(type_, x)


def i1(x: Any) -> ir.Value:
    """`x` as an i1 value."""
    return as_value(x, I1())


def i16(x: Any) -> ir.Value:
    """`x` as an i16 value."""
    return as_value(x, I16())


def i32(x: Any) -> ir.Value:
    """`x` as an i32 value."""
    return as_value(x, I32())


def i64(x: Any) -> ir.Value:
    """`x` as an i64 value."""
    return as_value(x, I64())

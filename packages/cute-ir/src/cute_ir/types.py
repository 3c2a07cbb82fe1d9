"""The MLIR types kernels name: signless integers of each width and pointers into each address space.

Constructors of the current `ir.Context` (call them inside a kernel body or an `ir.Context`):
`I1()`, `I8()`, `I16()`, `I32()`, `I64()`, `F32()`; `smem_ptr_type()` (`!llvm.ptr<3>`, shared::cta),
`cluster_ptr_type()` (`!llvm.ptr<7>`, shared::cluster), `global_ptr_type()` (`!llvm.ptr<1>`),
`generic_ptr_type()` (`!llvm.ptr`).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import llvm

__all__ = [
    "F32",
    "I1",
    "I8",
    "I16",
    "I32",
    "I64",
    "cluster_ptr_type",
    "generic_ptr_type",
    "global_ptr_type",
    "smem_ptr_type",
]


def I1() -> ir.IntegerType:  # noqa: N802 - type constructors read like MLIR types
    """The i1 type."""
    return ir.IntegerType.get_signless(1)


def I8() -> ir.IntegerType:  # noqa: N802
    """The i8 type."""
    return ir.IntegerType.get_signless(8)


def I16() -> ir.IntegerType:  # noqa: N802
    """The i16 type."""
    return ir.IntegerType.get_signless(16)


def I32() -> ir.IntegerType:  # noqa: N802
    """The i32 type."""
    return ir.IntegerType.get_signless(32)


def I64() -> ir.IntegerType:  # noqa: N802
    """The i64 type."""
    return ir.IntegerType.get_signless(64)


def F32() -> ir.F32Type:  # noqa: N802
    """The f32 type."""
    return ir.F32Type.get()


def smem_ptr_type() -> ir.Type:
    """`!llvm.ptr<3>`: a shared::cta address."""
    return llvm.PointerType.get(3)


def cluster_ptr_type() -> ir.Type:
    """`!llvm.ptr<7>`: a shared::cluster address."""
    return llvm.PointerType.get(7)


def global_ptr_type() -> ir.Type:
    """`!llvm.ptr<1>`: a global address."""
    return llvm.PointerType.get(1)


def generic_ptr_type() -> ir.Type:
    """`!llvm.ptr`: a generic address."""
    return llvm.PointerType.get()

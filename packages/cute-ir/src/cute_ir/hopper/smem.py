"""Shared memory for Hopper kernels: a byte plan of named buffers and pointers into dynamic shared memory.

`SmemPlan` (cute-nvarch's allocator, `cute_nvarch.smem`, re-exported) places named buffers at aligned
byte offsets (mbarriers, swizzle-pattern-aligned GMMA buffers) and reports the dynamic shared-memory size
to launch with (including the slack that the in-kernel round-up may consume), checked against the target.
The builders emit at the caller's insertion point:

- `dynamic_smem_base(align)`: the start of dynamic shared memory rounded up to `align` bytes
  (`gpu.dynamic_shared_memory`-style extern global declared with 16-byte alignment, then rounded up in
  the kernel: TMA/WGMMA SW128 buffers need 1024-byte alignment, which the declaration cannot promise).
- `smem_offset(ptr, bytes)`: byte-offset pointer arithmetic on `!llvm.ptr<3>`.
- `smem_address(ptr)`: the 32-bit shared-window address (what GMMA descriptors and `mapa` consume).
"""

from __future__ import annotations

from typing import Any

from cute_nvarch.smem import SmemBuffer, SmemPlan
from mlir import ir
from mlir.dialects import llvm

from ..special import DYNAMIC_SMEM_DECLARED_ALIGN, DYNAMIC_SMEM_SYMBOL, dynamic_smem
from ..types import I32
from ..values import Int, as_value

__all__ = [
    "DYNAMIC_SMEM_SYMBOL",
    "DYNAMIC_SMEM_DECLARED_ALIGN",
    "SmemBuffer",
    "SmemPlan",
    "dynamic_smem_base",
    "smem_address",
    "smem_offset",
]


def dynamic_smem_base(align: int = 1024) -> ir.Value:
    """Pointer (`!llvm.ptr<3>`) to dynamic shared memory rounded up to `align` bytes (`cute_ir.special`'s)."""
    if align < 16 or align & (align - 1):
        raise ValueError(f"align must be a power of two >= 16, got {align}")
    return dynamic_smem(align)


def smem_offset(ptr: ir.Value, nbytes: Any) -> ir.Value:
    """`ptr + nbytes` for a shared-memory pointer; `nbytes` is an int or an integer value."""
    i8 = ir.IntegerType.get_signless(8)
    if isinstance(nbytes, int):
        if nbytes == 0:
            return ptr
        if -(1 << 31) <= nbytes < (1 << 31):
            return llvm.getelementptr(
                ptr.type, ptr, [], ir.DenseI32ArrayAttr.get([nbytes]), ir.TypeAttr.get(i8), 0
            )
    off = as_value(nbytes, I32())
    return llvm.getelementptr(
        ptr.type, ptr, [off], ir.DenseI32ArrayAttr.get([-(1 << 31)]), ir.TypeAttr.get(i8), 0
    )


def smem_address(ptr: ir.Value) -> Int:
    """The 32-bit shared-window address of a shared-memory pointer (an i32 `Int`)."""
    return Int(llvm.ptrtoint(I32(), ptr))

"""Shared memory for Hopper kernels: a byte plan of named buffers and pointers into dynamic shared memory.

`SmemPlan` is pure Python: it places named buffers at aligned byte offsets and reports the dynamic
shared-memory size to launch with (including the slack that the in-kernel round-up may consume).
The builders emit at the caller's insertion point:

- `dynamic_smem_base(align)`: the start of dynamic shared memory rounded up to `align` bytes
  (`gpu.dynamic_shared_memory`-style extern global declared with 16-byte alignment, then rounded up in
  the kernel: TMA/WGMMA SW128 buffers need 1024-byte alignment, which the declaration cannot promise).
- `smem_offset(ptr, bytes)`: byte-offset pointer arithmetic on `!llvm.ptr<3>`.
- `smem_address(ptr)`: the 32-bit shared-window address (what GMMA descriptors and `mapa` consume).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mlir import ir
from mlir.dialects import llvm

from ..special import DYNAMIC_SMEM_DECLARED_ALIGN, DYNAMIC_SMEM_SYMBOL, dynamic_smem
from ..types import I32
from ..values import as_value

__all__ = [
    "DYNAMIC_SMEM_SYMBOL",
    "DYNAMIC_SMEM_DECLARED_ALIGN",
    "SmemBuffer",
    "SmemPlan",
    "dynamic_smem_base",
    "smem_address",
    "smem_offset",
]


@dataclass(frozen=True)
class SmemBuffer:
    """One named buffer of a `SmemPlan`: byte offset from the aligned base, size and alignment."""

    name: str
    offset: int
    nbytes: int
    align: int


@dataclass
class SmemPlan:
    """Named shared-memory buffers placed at aligned byte offsets from a base aligned to `base_align`."""

    base_align: int = 1024
    buffers: dict[str, SmemBuffer] = field(default_factory=dict)
    _end: int = 0

    def __post_init__(self) -> None:
        if self.base_align < 16 or self.base_align & (self.base_align - 1):
            raise ValueError(f"base_align must be a power of two >= 16, got {self.base_align}")

    def add(self, name: str, nbytes: int, align: int = 16) -> SmemBuffer:
        """Place a buffer of `nbytes` bytes aligned to `align` (a power of two <= base_align)."""
        if name in self.buffers:
            raise ValueError(f"shared-memory buffer {name!r} is already placed")
        if nbytes <= 0:
            raise ValueError(f"buffer {name!r}: nbytes must be positive, got {nbytes}")
        if align <= 0 or align & (align - 1) or align > self.base_align:
            raise ValueError(
                f"buffer {name!r}: align must be a power of two <= {self.base_align}, got {align}"
            )
        offset = -(-self._end // align) * align
        buf = SmemBuffer(name, offset, nbytes, align)
        self.buffers[name] = buf
        self._end = offset + nbytes
        return buf

    def __getitem__(self, name: str) -> SmemBuffer:
        return self.buffers[name]

    @property
    def nbytes(self) -> int:
        """Bytes used from the aligned base."""
        return self._end

    @property
    def dynamic_smem_bytes(self) -> int:
        """Dynamic shared memory to launch with: the plan plus the worst-case round-up slack."""
        return self._end + max(0, self.base_align - DYNAMIC_SMEM_DECLARED_ALIGN)


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


def smem_address(ptr: ir.Value) -> ir.Value:
    """The 32-bit shared-window address of a shared-memory pointer."""
    return llvm.ptrtoint(I32(), ptr)

"""The calls the add's GPU tests, the main job's checks, the benchmark, the CLI and the torch.ops GPU tests make,
as data (one list).

The catalogue specializes `add_kernel` for each case from `Placeholder`s (no GPU), so that an AOT bundle serves
every one of them on a host without cute-ir; the GPU tests build the same tensors with `Operand.make`. An
operand lies `offset` elements into a fresh allocation (torch's are 512-byte aligned), with its own strides
(0 for a broadcast mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cute_nvarch.numeric import BFloat16, Float32

from ..checks import _GUARD as GUARD
from ..checks import EW_SHAPES as CHECK_SHAPES
from .kernel import DTYPES

__all__ = ["BENCH_SIZES", "CHECK_SHAPES", "GUARD", "Case", "Operand", "cases"]

BENCH_SIZES = {"2^20": (1024, 1024), "2^24": (4096, 4096), "2^28": (16384, 16384), "10000x10007": (10000, 10007)}
BENCH_DTYPES = (Float32.canonical, BFloat16.canonical)
ODD_SHAPES = ((3, 5), (129, 1001), (1000, 10007), (1, 100003))  # contiguous, odd N: one 1-D range
SIZE_ONE = ((1, 4096), (4096, 1), (1, 1, 77, 1))


@dataclass(frozen=True)
class Operand:
    """A view `offset` elements into an allocation of at least `size` elements (row-major by default)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    offset: int = 0
    size: int = 0

    @property
    def stride(self) -> tuple[int, ...]:
        """Element strides."""
        if self.strides is not None:
            return self.strides
        out, step = [], 1
        for e in reversed(self.shape):
            out.append(step)
            step *= max(e, 1)
        return tuple(reversed(out))

    def span(self) -> int:
        """Elements the allocation needs (offset included)."""
        if 0 in self.shape:
            return max(self.size, self.offset)
        need = self.offset + sum((e - 1) * s for e, s in zip(self.shape, self.stride, strict=True)) + 1
        return max(self.size, need)

    def address_align(self, itemsize: int) -> int:
        """The byte alignment of the view's address (allocations are 512-byte aligned), at most 16."""
        off = self.offset * itemsize
        return min(16, off & -off) if off else 16

    def make(self, dtype: Any, fill: float | int | None = None) -> Any:
        """The view in a fresh CUDA allocation (torch dtype), random unless `fill`."""
        import torch

        n = self.span()
        if fill is not None:
            base = torch.full((n,), fill, device="cuda", dtype=dtype)
        elif dtype.is_floating_point:
            base = torch.randn(n, device="cuda").to(dtype)
        else:
            base = torch.randint(-(2**20), 2**20, (n,), device="cuda", dtype=dtype)
        return base.as_strided(self.shape, self.stride, self.offset)


@dataclass(frozen=True)
class Case:
    """One call elementwise_add(a, b, out): dtype and the three operands (out's shape is the result's)."""

    label: str
    dtype: str
    a: Operand
    b: Operand
    out: Operand


def _contiguous(label: str, dtype: str, shape: tuple[int, ...], guarded: bool = False) -> Case:
    n = 1
    for e in shape:
        n *= e
    out = Operand(shape, None, GUARD, n + 2 * GUARD) if guarded else Operand(shape)
    return Case(label, dtype, Operand(shape), Operand(shape), out)


def cases() -> list[Case]:
    """Every elementwise_add call of the GPU tests, the main job's checks, the benchmark and the CLI."""
    out = []
    for dtype in DTYPES:
        for shape in CHECK_SHAPES:
            out.append(_contiguous(f"exact {shape}", dtype, shape, guarded=True))
        for m, n in ((127, 129), (4096, 4096)):  # column-major views of (n, m) buffers
            t = Operand((m, n), (1, m))
            out.append(Case(f"transposed {(m, n)}", dtype, t, t, Operand((m, n), (1, m), GUARD, m * n + 2 * GUARD)))
        for shape in ODD_SHAPES + SIZE_ONE:
            out.append(_contiguous(f"contiguous {shape}", dtype, shape, guarded=True))
        m, n = 300, 517
        padded = Operand((m, n - 5), (n, 1))  # rows padded: two modes, unit stride
        out.append(Case("padded rows", dtype, padded, padded, Operand((m, n - 5), (n, 1), GUARD, m * n + 2 * GUARD)))
        shifted = Operand((m, n - 1), (n, 1), 1)  # misaligned address
        out.append(Case("misaligned view", dtype, shifted, Operand((m, n - 1), (n, 1)),
                        Operand((m, n - 1), (n, 1), GUARD, m * n + 2 * GUARD)))
        every_other = Operand((m, n), (2 * n, 2))  # no unit stride
        out.append(Case("strided view", dtype, every_other, every_other, Operand((m, n), (n, 1), GUARD,
                                                                                     m * n + 2 * GUARD)))
        row, col = Operand((m, n), (0, 1)), Operand((m, n), (1, 0))  # broadcast (stride 0) inputs
        out.append(Case("broadcast row", dtype, row, Operand((m, n)), Operand((m, n), None, GUARD, m * n + 2 * GUARD)))
        out.append(Case("broadcast column", dtype, Operand((m, n)), col,
                        Operand((m, n), None, GUARD, m * n + 2 * GUARD)))
        out.append(Case("outer sum", dtype, col, row, Operand((m, n), None, GUARD, m * n + 2 * GUARD)))
        out.append(Case("in place", dtype, Operand((300, 500)), Operand((300, 500)), Operand((300, 500))))
        for shape in ((0, 5), (5, 0)):
            out.append(_contiguous(f"empty {shape}", dtype, shape, guarded=True))
        out.append(_contiguous("cli", dtype, (1024, 1024)))
    for dtype in BENCH_DTYPES:
        for label, shape in BENCH_SIZES.items():
            out.append(_contiguous(f"bench {label}", dtype, shape))
        out.append(_contiguous("bench host cost", dtype, (32, 32)))
    from ..torch_ops_cases import ADD_SHAPE, SHAPE  # the torch.ops GPU tests' adds: float32 x + row, float16 dense

    m, n = ADD_SHAPE
    out.append(Case("torch.ops x + row", Float32.canonical, Operand((m, n)), Operand((m, n), (0, 1)), Operand((m, n))))
    out.append(_contiguous("torch.ops h + y", "float16", SHAPE[:2]))
    return out

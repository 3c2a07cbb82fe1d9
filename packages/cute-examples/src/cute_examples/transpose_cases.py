"""The matrices the transpose's GPU tests, benchmark, ncu run and tutorial use, as data (one list for all).

The catalogue specializes the kernel for each case from `Placeholder`s (no GPU), so an AOT bundle serves every
one of them on a host without cute-ir; the GPU tests build the same matrices with `make`. A matrix lies
`offset` elements into a fresh allocation (torch's are 512-byte aligned), with its own strides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cute_nvarch.numeric import BFloat16, Float16, Float32
from cute_runtime import Placeholder

__all__ = ["DTYPES", "GUARD", "Case", "Matrix", "cases"]

DTYPES = (Float32.canonical, Float16.canonical, BFloat16.canonical)
GUARD = 4096  # elements of sentinel before and after a guarded output
# exact-result shapes: single rows and columns, odd sizes, partial tiles in both directions
SHAPES = [(1, 1), (1, 77), (65, 1), (31, 33), (64, 64), (129, 257), (1000, 3001), (4097, 130),
          (8, 8), (200, 136), (1032, 4104)]  # the last ones (and (64, 64)) have 16-byte rows: the vector step runs
DYNAMIC_SHAPES = [(100, 200), (300, 64), (48, 400)]  # one specialization for all three (16-byte rows)
VIEW_BASE = (300, 513)  # the views test slices a matrix of this shape


@dataclass(frozen=True)
class Matrix:
    """A (possibly strided) view `offset` elements into an allocation of `size` elements."""

    shape: tuple[int, int]
    strides: tuple[int, int] | None = None
    offset: int = 0
    size: int | None = None

    @property
    def stride(self) -> tuple[int, int]:
        """Element strides (row-major by default)."""
        return self.strides or (self.shape[1], 1)

    def placeholder(self, dtype: str, base_align: int = 512) -> Placeholder:
        """A stand-in with this matrix's shape, strides and address alignment."""
        nbytes = Placeholder((1,), dtype).info.itemsize
        off = self.offset * nbytes
        align = min(base_align, off & -off) if off else base_align
        return Placeholder(self.shape, dtype, strides=self.stride, align=align)

    def allocate(self, dtype: Any, fill: float | None = None) -> Any:
        """A fresh CUDA allocation (torch dtype) that holds the matrix, random unless `fill`."""
        import torch

        s0, s1 = self.stride
        need = self.offset + (self.shape[0] - 1) * s0 + (self.shape[1] - 1) * s1 + 1
        n = max(self.size or 0, need)
        if fill is None:
            return torch.randn(n, device="cuda").to(dtype)
        return torch.full((n,), fill, device="cuda", dtype=dtype)

    def view(self, base: Any) -> Any:
        """The matrix inside an allocation."""
        return base.as_strided(self.shape, self.stride, self.offset)

    def make(self, dtype: Any, fill: float | None = None) -> Any:
        """The matrix in a fresh allocation."""
        return self.view(self.allocate(dtype, fill))


@dataclass(frozen=True)
class Case:
    """One call: x, y (its transpose's shape), dtype, the word layouts to run (swizzled and/or naive).

    Where both matrices have 16-byte aligned addresses and rows, the vector step (`transpose_vec`) runs too.
    """

    label: str
    x: Matrix
    y: Matrix
    dtype: str
    swizzles: tuple[bool, ...] = (True,)


def _contiguous(shape: tuple[int, int]) -> tuple[Matrix, Matrix]:
    return Matrix(shape), Matrix((shape[1], shape[0]))


def cases() -> list[Case]:
    """Every transpose call the GPU tests, the tutorial, the benchmark and transpose_ncu make."""
    out = []
    for dtype in DTYPES:
        for shape in SHAPES:
            n = shape[0] * shape[1]
            out.append(Case(f"exact {shape}", Matrix(shape), Matrix(shape[::-1], None, GUARD, n + 2 * GUARD), dtype,
                            (True, False)))
        m, n = VIEW_BASE
        for label, x in (("misaligned view", Matrix((m, n - 1), (n, 1), 1)),
                         ("padded rows", Matrix((m, n - 13), (n, 1))),
                         ("column-major", Matrix((n, m), (1, n)))):
            out.append(Case(label, x, Matrix((x.shape[1], x.shape[0])), dtype))
        # 16-byte rows, extents that end inside a 16-byte unit: the vector step's element-predicated tails
        out.append(Case("padded vector rows", Matrix((m, 510), (512, 1)), Matrix((510, m), (m + 4, 1)), dtype))
    for shape in DYNAMIC_SHAPES:
        out.append(Case(f"dynamic {shape}", *_contiguous(shape), Float32.canonical))
    out.append(Case("streams", *_contiguous((2048, 2048)), Float32.canonical))
    out.append(Case("dlpack", *_contiguous((100, 70)), Float32.canonical))
    for dtype in (Float32.canonical, Float16.canonical):
        out.append(Case("tutorial", *_contiguous((1000, 3001)), dtype))
        out.append(Case("tutorial vector", *_contiguous((1000, 3000)), dtype))
        out.append(Case("bench", *_contiguous((16384, 16384)), dtype, (True, False)))
        out.append(Case("ncu", *_contiguous((4096, 4096)), dtype, (True, False)))
    return out

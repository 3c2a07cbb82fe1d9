"""Operand geometries that TMA cannot read as they are, which gemm() runs through its staging, and calls that gemm()
runs as the transposed problem (`transposed`): GPU tests, bundle.

Each case gives a, b and out as (shape, strides, storage offset) views of flat buffers (elements), so the GPU
test builds them with `as_strided` inside guarded buffers and the AOT catalogue sees the same geometry
(`case_layouts`) to list the configs gemm() picks for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANY_SHAPE_CASES",
    "ONE_ROUND_CASES",
    "QUANTISED_CASES",
    "TRANSPOSED_CASES",
    "AnyShapeCase",
    "View",
    "case_layouts",
]


@dataclass(frozen=True)
class View:
    """A strided view of a flat buffer: shape, strides and offset in elements."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int = 0

    @property
    def extent(self) -> int:
        """Elements of the buffer the view reaches (offset included)."""
        return self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.stride, strict=True)) + 1


@dataclass(frozen=True)
class AnyShapeCase:
    """One gemm() call: a name, the input dtype and the three views (out in the input dtype)."""

    name: str
    dtype: str
    a: View
    b: View
    out: View


def _row(*shape: int, ld: int | None = None, offset: int = 0) -> View:
    """A row-major (batched) matrix view with leading dimension ld (default: dense)."""
    *lead, r, c = shape
    ld = c if ld is None else ld
    return View(shape, ((r * ld,) if lead else ()) + (ld, 1), offset)


ANY_SHAPE_CASES = (
    AnyShapeCase("k127", "float16", _row(200, 127), _row(127, 256), _row(200, 256)),
    AnyShapeCase("n1001", "float16", _row(130, 64), _row(64, 1001), _row(130, 1001)),
    AnyShapeCase("n1001_bf16", "bfloat16", _row(130, 64), _row(64, 1001), _row(130, 1001)),
    AnyShapeCase("m999_m_major", "float16", View((999, 64), (1, 999)), _row(64, 128), View((999, 128), (1, 999))),
    AnyShapeCase("broadcast_b", "float16", _row(3, 128, 64), View((3, 64, 96), (0, 96, 1)), _row(3, 128, 96)),
    AnyShapeCase("m1", "float16", _row(1, 64), _row(64, 128), _row(1, 128)),
    AnyShapeCase("k1", "float16", View((64, 1), (1, 1)), _row(1, 128), _row(64, 128)),
    AnyShapeCase("n1", "float16", _row(64, 72), View((72, 1), (1, 1)), View((64, 1), (1, 1))),
    AnyShapeCase("no_unit_stride", "float16", View((128, 64), (256, 2)), View((64, 96), (192, 2)),
                 View((128, 96), (192, 2))),
    AnyShapeCase("misaligned_a", "float16", _row(128, 64, offset=1), _row(64, 128), _row(128, 128)),
    AnyShapeCase("batch_stride_odd", "float16", View((2, 64, 72), (64 * 72 + 3, 72, 1)), _row(2, 72, 64),
                 _row(2, 64, 64)),
    # fewer rows than a tile in every batch: A's and C's boxes cover M's rows only (GemmConfig.a_box_rows)
    AnyShapeCase("m5_batched", "bfloat16", _row(3, 5, 64), _row(3, 64, 96), _row(3, 5, 96)),
    AnyShapeCase("m13_batched_k200", "float16", _row(2, 13, 200), _row(2, 200, 256), _row(2, 13, 256)),
)


def _weight_t(*shape: int) -> View:
    """b = W.t() of a contiguous (batched) (N, K) weight: a (K, N) view with K contiguous."""
    *lead, k, n = shape
    return View(shape, ((k * n,) if lead else ()) + (1, k))


# few rows of C that gemm() runs as C^T = B^T A^T (M-major C', 128x160 tiles) on a 132-SM GPU: split-K, a batched
# data-parallel launch, stream-K into an out of padded rows (its padding must stay untouched)
TRANSPOSED_CASES = (
    AnyShapeCase("t139_split_bf16", "bfloat16", _row(139, 14336), _weight_t(14336, 4096), _row(139, 4096)),
    AnyShapeCase("t130_batched_f16", "float16", _row(2, 130, 2048), _weight_t(2, 2048, 6144), _row(2, 130, 6144)),
    AnyShapeCase("t139_streamk_ld_bf16", "bfloat16", _row(3, 139, 4096), _weight_t(3, 4096, 3072),
                 _row(3, 139, 3072, ld=3080)),
    # a decode-like N (`transposed.narrow`): the transposed problem's 24 / 8 rows on the decode rows' 64-row tiles,
    # split-K and data-parallel
    AnyShapeCase("t_narrow24_split_bf16", "bfloat16", _row(2100, 2048), _weight_t(2048, 24), _row(2100, 24)),
    AnyShapeCase("t_narrow8_f16", "float16", _row(12000, 1024), _weight_t(1024, 8), _row(12000, 8)),
)

# single-round launches on the tiles only they take (`choice.ONE_ROUND_TILES`) on a 132-SM GPU: 128x176 (a partial
# last column of tiles into an out of padded rows, whose padding must stay untouched) and 128x144 on a 2x1 cluster
ONE_ROUND_CASES = (
    AnyShapeCase("one_round_176_bf16", "bfloat16", _row(1992, 2048), _weight_t(2048, 1288), _row(1992, 1288)),
    AnyShapeCase("one_round_176_partial_f16", "float16", _row(1990, 2048), _weight_t(2048, 1290),
                 _row(1990, 1290, ld=1296)),
    AnyShapeCase("one_round_144_bf16", "bfloat16", _row(2640, 2048), _weight_t(2048, 848), _row(2640, 848)),
)

# calls whose transposed problem's tiles fill a 132-SM GPU's round better (`transposed.quantises`): 4707 x 680 x 1176
# as 6 x 22 tiles of 128x224 on a 2x1 cluster (direct: 37 x 3 of 128x256), and 949 x 2616 x 2096 as 21 x 6 of 128x160
# (direct: 8 x 15 of 128x176) into an out of padded rows, whose padding must stay untouched; the first also batched
QUANTISED_CASES = (
    AnyShapeCase("quantised_f16", "float16", _row(4707, 1176), _weight_t(1176, 680), _row(4707, 680)),
    AnyShapeCase("quantised_batched_f16", "float16", _row(2, 4707, 1176), _weight_t(2, 1176, 680),
                 _row(2, 4707, 680)),
    AnyShapeCase("quantised_ld_bf16", "bfloat16", _row(949, 2096), _weight_t(2096, 2616), _row(949, 2616, ld=2624)),
)


def case_layouts(case: AnyShapeCase, base: int = 1 << 20) -> tuple[Any, Any, Any]:
    """The case's a, b, out as `launch_plan.Layout`s (geometry only) at 16-byte-aligned buffer bases."""
    from ..torch_types import torch_dtype
    from .launch_plan import Layout
    from .spec import DTYPE_BYTES

    e = DTYPE_BYTES[case.dtype]
    dt = torch_dtype(case.dtype)
    return tuple(Layout(v.shape, v.stride, dt, base + v.offset * e) for v in (case.a, case.b, case.out))

"""SM80 `mma.sync` atoms (CuTe's `SM80_16x8xK_*_TN` with `mma_traits_sm80.hpp` layouts).

One warp (32 threads) per instruction, A row-major (K-major) and B column-major (K-major) in registers:

  m16n8k16  f16 x f16 -> f16 or f32,  bf16 x bf16 -> f32
  m16n8k8   tf32 x tf32 -> f32
  m16n8k32  s8|u8 x s8|u8 -> s32
"""

from __future__ import annotations

from cute_layout import Layout

from cute_nvarch.gmma_desc import Major
from cute_nvarch.mma_atom import MmaAtom, OperandSource
from cute_nvarch.numeric import (
    BFloat16,
    Float16,
    Float32,
    Int8,
    Int32,
    NumericType,
    TFloat32,
    Uint8,
    numeric_type,
)

__all__ = ["make_mma_sync_atom", "SM80_16x8_ROW"]

# CuTe's SM80_16x8_Row: the C layout of every m16n8 mma.sync.
SM80_16x8_ROW = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))

_TAG = {
    Float16: "F16",
    BFloat16: "BF16",
    Float32: "F32",
    TFloat32: "TF32",
    Int8: "S8",
    Uint8: "U8",
    Int32: "S32",
}


def _layouts(k: int) -> tuple[Layout, Layout]:
    if k == 16:
        a = Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
        b = Layout(((4, 8), (2, 2)), ((16, 1), (8, 64)))
    elif k == 8:
        a = Layout(((4, 8), (2, 2)), ((16, 1), (8, 64)))
        b = Layout(((4, 8), 2), ((8, 1), 32))
    else:  # k == 32
        a = Layout(((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256)))
        b = Layout(((4, 8), (4, 2)), ((32, 1), (8, 128)))
    return a, b


def make_mma_sync_atom(
    a_dtype: NumericType | str,
    b_dtype: NumericType | str,
    acc_dtype: NumericType | str,
    shape_mnk: tuple[int, int, int] | None = None,
) -> MmaAtom:
    """The SM80 `mma.sync.aligned.m16n8kK.row.col` atom (CuTe's `SM80_16x8xK_<D><A><B><C>_TN`)."""
    a, b, c = numeric_type(a_dtype), numeric_type(b_dtype), numeric_type(acc_dtype)
    if a == b == Float16:
        k, accs = 16, (Float16, Float32)
    elif a == b == BFloat16:
        k, accs = 16, (Float32,)
    elif a == b == TFloat32:
        k, accs = 8, (Float32,)
    elif a in (Int8, Uint8) and b in (Int8, Uint8):
        k, accs = 32, (Int32,)
    else:
        raise ValueError(
            f"make_mma_sync_atom: no SM80 mma.sync multiplies {a} by {b}; allowed A x B: Float16 x Float16, "
            f"BFloat16 x BFloat16, TFloat32 x TFloat32, Int8|Uint8 x Int8|Uint8"
        )
    if c not in accs:
        raise ValueError(
            f"make_mma_sync_atom: {a} x {b} accumulates in {' or '.join(t.name for t in accs)}, not {c}"
        )
    if shape_mnk is not None and tuple(shape_mnk) != (16, 8, k):
        raise ValueError(
            f"make_mma_sync_atom: {a} x {b} mma.sync has shape (16, 8, {k}), not {tuple(shape_mnk)}"
        )
    la, lb = _layouts(k)
    name = f"SM80_16x8x{k}_{_TAG[c]}{_TAG[a]}{_TAG[b]}{_TAG[c]}_TN"
    ptx = f"mma.sync.aligned.m16n8k{k}.row.col.{c.ptx_type}.{a.ptx_type}.{b.ptx_type}.{c.ptx_type}"
    return MmaAtom(
        name=name,
        ptx=ptx,
        arch="sm_80",
        shape_mnk=(16, 8, k),
        thr_id=Layout(32),
        layout_a_tv=la,
        layout_b_tv=lb,
        layout_c_tv=SM80_16x8_ROW,
        a_dtype=a,
        b_dtype=b,
        c_dtype=c,
        a_major=Major.K,
        b_major=Major.K,
        a_source=OperandSource.RMEM,
        b_source=OperandSource.RMEM,
    )

"""SM90 `wgmma.mma_async` atoms (CuTe's `SM90_64xNxK_*_SS/RS` with `mma_traits_sm90_gmma.hpp` layouts).

Instruction family (PTX ISA 8.0, sm_90a), M = 64 and one warpgroup (128 threads):

  A/B type        K   accumulator   N
  f16 x f16       16  f16 or f32    8..256 step 8      A and B K- or MN-major
  bf16 x bf16     16  f32           8..256 step 8      A and B K- or MN-major
  tf32 x tf32      8  f32           8..256 step 8      K-major only
  e4m3/e5m2 (any  32  f16 or f32    8..256 step 8      K-major only
    pairing)
  s8/u8 (any      32  s32           8, 16, 24, then    K-major only
    pairing)                        32..256 step 16

A comes from shared memory (a descriptor) or registers (then K-major); B always from shared memory.
"""

from __future__ import annotations

from cute_layout import Layout

from cute_nvarch.gmma_desc import Major, as_major
from cute_nvarch.mma_atom import MmaAtom, OperandSource
from cute_nvarch.numeric import (
    BFloat16,
    Float8E4M3FN,
    Float8E5M2,
    Float16,
    Float32,
    Int8,
    Int32,
    NumericType,
    TFloat32,
    Uint8,
    numeric_type,
)

__all__ = [
    "WGMMA_N_DENSE",
    "WGMMA_N_INTEGER",
    "wgmma_allowed_n",
    "wgmma_k",
    "make_wgmma_atom",
    "wgmma_layout_c",
    "wgmma_layout_a_rmem",
    "wgmma_layout_smem",
]

WGMMA_M = 64
WGMMA_N_DENSE: tuple[int, ...] = tuple(range(8, 257, 8))
WGMMA_N_INTEGER: tuple[int, ...] = (8, 16, 24) + tuple(range(32, 257, 16))

_FP8 = (Float8E4M3FN, Float8E5M2)
_INT8 = (Int8, Uint8)
_TAG = {
    Float16: "F16",
    BFloat16: "BF16",
    Float32: "F32",
    TFloat32: "TF32",
    Float8E4M3FN: "E4M3",
    Float8E5M2: "E5M2",
    Int8: "S8",
    Uint8: "U8",
    Int32: "S32",
}


def _family(a: NumericType, b: NumericType) -> NumericType:
    """The operand family of A x B, named by its first type (Float8E4M3FN for fp8, Int8 for 8-bit integers)."""
    if a == b and a in (Float16, BFloat16, TFloat32):
        return a
    if a in _FP8 and b in _FP8:
        return _FP8[0]
    if a in _INT8 and b in _INT8:
        return _INT8[0]
    raise ValueError(
        f"make_wgmma_atom: no wgmma multiplies {a} by {b}; allowed A x B: Float16 x Float16, "
        f"BFloat16 x BFloat16, "
        f"TFloat32 x TFloat32, Float8E4M3FN|Float8E5M2 x Float8E4M3FN|Float8E5M2, Int8|Uint8 x Int8|Uint8"
    )


# operand family -> the accumulator types wgmma allows
_ACC = {
    Float16: (Float16, Float32),
    BFloat16: (Float32,),
    TFloat32: (Float32,),
    Float8E4M3FN: (Float16, Float32),
    Int8: (Int32,),
}


def wgmma_k(a_dtype: NumericType | str) -> int:
    """K of the wgmma instruction for operands of `a_dtype` (32 bytes of K)."""
    a = numeric_type(a_dtype)
    if a.width not in (8, 16, 32) or a in (Float32, Int32):
        raise ValueError(f"wgmma_k: {a} is not a wgmma operand type")
    return 256 // a.width


def wgmma_allowed_n(a_dtype: NumericType | str) -> tuple[int, ...]:
    """The N values PTX allows for wgmma with operands of `a_dtype`."""
    a = numeric_type(a_dtype)
    return WGMMA_N_INTEGER if a in _INT8 else WGMMA_N_DENSE


def wgmma_layout_c(n: int) -> Layout:
    """CuTe's `GMMA::CLayout_64xN`: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))."""
    return Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


def wgmma_layout_a_rmem(k: int) -> Layout:
    """CuTe's `GMMA::ALayout_64xK` for A in registers (K = 8, 16 or 32)."""
    if k == 16:
        return Layout(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512)))
    if k == 32:
        return Layout(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024)))
    if k == 8:
        return Layout(((4, 8, 4), (2, 2)), ((64, 1, 16), (8, 256)))
    raise ValueError(f"wgmma_layout_a_rmem: K must be 8, 16 or 32, got {k}")


def wgmma_layout_smem(mn: int, k: int) -> Layout:
    """CuTe's `GMMA::ABLayout<MN,K>` for an operand in shared memory: (128,(MN,K)):(0,(1,MN))."""
    return Layout((128, (mn, k)), (0, (1, mn)))


def make_wgmma_atom(
    a_dtype: NumericType | str,
    b_dtype: NumericType | str,
    acc_dtype: NumericType | str,
    n: int,
    a_major: Major | str = Major.K,
    b_major: Major | str = Major.K,
    a_source: OperandSource | str = OperandSource.SMEM,
) -> MmaAtom:
    """The SM90 `wgmma.mma_async` m64nNk* atom (CuTe's `SM90_64xNxK_<C><A><B>_{SS,RS}[_TN]`)."""
    a, b, c = numeric_type(a_dtype), numeric_type(b_dtype), numeric_type(acc_dtype)
    fam = _family(a, b)
    if c not in _ACC[fam]:
        allowed = " or ".join(t.name for t in _ACC[fam])
        raise ValueError(f"make_wgmma_atom: {a} x {b} accumulates in {allowed}, not {c}")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"make_wgmma_atom: n must be an int, got {type(n).__name__}")
    allowed_n = wgmma_allowed_n(a)
    if n not in allowed_n:
        raise ValueError(
            f"make_wgmma_atom: N={n} is not allowed for {a} x {b} wgmma; PTX allows N in "
            f"{{{', '.join(map(str, allowed_n))}}}"
        )
    am, bm = as_major(a_major, "make_wgmma_atom"), as_major(b_major, "make_wgmma_atom")
    src = OperandSource(a_source)
    sixteen_bit = fam in (Float16, BFloat16)
    for name, major, t in (("A", am, a), ("B", bm, b)):
        if major is Major.MN and not sixteen_bit:
            raise ValueError(
                f"make_wgmma_atom: {name} is MN-major but {t} operands of wgmma are K-major only "
                f"(PTX transposes 16-bit types only)"
            )
    if src is OperandSource.RMEM and am is not Major.K:
        raise ValueError("make_wgmma_atom: A from registers is K-major; a_major must be Major.K")
    k = wgmma_k(a)
    layout_a = wgmma_layout_a_rmem(k) if src is OperandSource.RMEM else wgmma_layout_smem(WGMMA_M, k)
    tn = "" if sixteen_bit else "_TN"
    name = f"SM90_64x{n}x{k}_{_TAG[c]}{_TAG[a]}{_TAG[b]}_{'RS' if src is OperandSource.RMEM else 'SS'}{tn}"
    ptx = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{c.ptx_type}.{a.ptx_type}.{b.ptx_type}"
    return MmaAtom(
        name=name,
        ptx=ptx,
        arch="sm_90a",
        shape_mnk=(WGMMA_M, n, k),
        thr_id=Layout(128),
        layout_a_tv=layout_a,
        layout_b_tv=wgmma_layout_smem(n, k),
        layout_c_tv=wgmma_layout_c(n),
        a_dtype=a,
        b_dtype=b,
        c_dtype=c,
        a_major=am,
        b_major=bm,
        a_source=src,
        b_source=OperandSource.SMEM,
    )

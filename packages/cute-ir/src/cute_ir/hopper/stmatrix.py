"""Register -> shared-memory stores for epilogues: `stmatrix`, 16-bit packing, plain `st.shared`.

`pack_b16x2(lo, hi, elem)` packs two floats into one i32 of two 16-bit `elem` values (rounding f32 to
nearest; values already of type `elem` are packed as they are); `to_f32(v)` widens a 16-bit float;
`st_shared(ptr, values, alignment)` stores one value, or several as one vector store.

`stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 [addr], {r0, ...}`: for matrix `q` (0..x-1),
lane `8*q + i` supplies the shared address of row `i` of that matrix (16 contiguous bytes); register `q` of
lane `l` holds the two b16 elements at row `l // 4`, columns `2*(l % 4)` and `2*(l % 4) + 1` of matrix `q`
-- exactly the pairs of a wgmma/mma accumulator fragment after packing two 16-bit values per 32-bit
register. With `.trans` each matrix is stored transposed (the addresses then name its columns).
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from ..types import I32

__all__ = ["pack_b16x2", "st_shared", "stmatrix", "to_f32"]


def stmatrix(addr: ir.Value, regs: Sequence[ir.Value], trans: bool = False) -> None:
    """Store 1, 2 or 4 8x8 b16 matrices (one i32 register each) to the row addresses in `addr` (ptr<3>)."""
    if len(regs) not in (1, 2, 4):
        raise ValueError(f"stmatrix stores 1, 2 or 4 matrices, got {len(regs)} registers")
    for r in regs:
        if r.type != I32():
            raise TypeError(f"stmatrix registers must be i32 (two packed b16), got {r.type}")
    nvvm.stmatrix(
        addr,
        list(regs),
        nvvm.MMALayout.col if trans else nvvm.MMALayout.row,
        ir.Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>"),
        nvvm.LdStMatrixEltType.B16,
    )


def to_f32(v: ir.Value) -> ir.Value:
    """`v` as f32 (16-bit floats are extended exactly; f32 values are returned as they are)."""
    f32 = ir.F32Type.get()
    return v if v.type == f32 else arith.extf(f32, v)


def _vector(values: Sequence[ir.Value]) -> ir.Value:
    vec = llvm.mlir_undef(ir.VectorType.get([len(values)], values[0].type))
    for i, v in enumerate(values):
        vec = llvm.insertelement(vec, v, arith.constant(I32(), i))
    return vec


def pack_b16x2(lo: ir.Value, hi: ir.Value, elem: ir.Type) -> ir.Value:
    """Two floats as one i32 of 16-bit `elem` values (lo in bits 0-15): f32/f16 inputs are rounded (RN) to
    `elem` through f32, inputs already of type `elem` are packed as they are."""
    if not (isinstance(elem, (ir.F16Type, ir.BF16Type))):
        raise TypeError(f"pack_b16x2: elem must be f16 or bf16, got {elem}")
    if lo.type == elem and hi.type == elem:
        return llvm.bitcast(I32(), _vector([lo, hi]))
    half2 = arith.truncf(ir.VectorType.get([2], elem), _vector([to_f32(lo), to_f32(hi)]))
    return llvm.bitcast(I32(), half2)


def st_shared(ptr: ir.Value, values: Sequence[ir.Value], alignment: int) -> None:
    """Store `values` (of one type) at the shared-memory pointer: one scalar store, or one vector store."""
    if not values:
        raise ValueError("st_shared: no values to store")
    if len({str(v.type) for v in values}) != 1:
        raise TypeError(f"st_shared: values must share a type, got {[str(v.type) for v in values]}")
    llvm.store(values[0] if len(values) == 1 else _vector(values), ptr, alignment=alignment)

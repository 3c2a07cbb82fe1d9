"""`stmatrix`: warp-collective stores of 8x8 b16 matrices from registers to shared memory (epilogues).

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

__all__ = ["pack_b16x2", "stmatrix"]


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


def pack_b16x2(lo: ir.Value, hi: ir.Value, elem: ir.Type) -> ir.Value:
    """Two f32 values rounded (RN) to the 16-bit float `elem`, packed into one i32 (lo in bits 0-15)."""
    if not (isinstance(elem, (ir.F16Type, ir.BF16Type))):
        raise TypeError(f"pack_b16x2: elem must be f16 or bf16, got {elem}")
    f32 = ir.F32Type.get()
    v2f32 = ir.VectorType.get([2], f32)
    vec = llvm.mlir_undef(v2f32)
    vec = llvm.insertelement(vec, lo, arith.constant(I32(), 0))
    vec = llvm.insertelement(vec, hi, arith.constant(I32(), 1))
    half2 = arith.truncf(ir.VectorType.get([2], elem), vec)
    return llvm.bitcast(I32(), half2)

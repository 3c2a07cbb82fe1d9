"""Scalar floating-point arithmetic and predicated global loads on SSA values (what fused epilogues compute).

    from cute_ir import scalar as S
    y = S.fma(alpha, acc, S.f32(1.0))          # fma.rn.f32
    y = S.select(S.lt(x, S.f32(0.0)), a, b)    # setp + selp
    raw = S.ld_global(addr, pred, 32)          # 0 where pred is false, else the 32 bits at addr
    S.st_global(addr, S.pack2(lo, hi, bf16), pred)   # two f32 rounded to bf16, one 32-bit store where pred
    bits = S.cvt_e4m3x2(lo, hi)                # two f32 -> two saturated e4m3 bytes (an i16)
    m = S.warp_max(x)                          # max over the 32 lanes (shfl.sync.bfly)

Every function takes and returns `ir.Value`s of f32 (or the documented types) and emits at the current
insertion point; kernels use these instead of MLIR dialect ops. Pointers are i64 addresses (`Int` or
`ir.Value`), predicates `Bool`s or i1 values.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, llvm, nvvm
from mlir.dialects import math as _math

from .values import as_value

__all__ = [
    "abs_",
    "add",
    "as_float",
    "cvt_e4m3x2",
    "f32",
    "fma",
    "ld_global",
    "lt",
    "maximum",
    "mul",
    "pack2",
    "red_max_nonneg_f32",
    "select",
    "st_global",
    "sub",
    "to_bits",
    "to_f32",
    "unpack2",
    "warp_max",
]


def f32(v: float) -> ir.Value:
    """An f32 constant."""
    return arith.constant(ir.F32Type.get(), float(v))


def add(a: ir.Value, b: ir.Value) -> ir.Value:
    """a + b (round to nearest)."""
    return arith.addf(a, b)


def sub(a: ir.Value, b: ir.Value) -> ir.Value:
    """a - b."""
    return arith.subf(a, b)


def mul(a: ir.Value, b: ir.Value) -> ir.Value:
    """a * b."""
    return arith.mulf(a, b)


def fma(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """a * b + c, rounded once (fma.rn)."""
    return _math.fma(a, b, c)


def maximum(a: ir.Value, b: ir.Value) -> ir.Value:
    """max(a, b), NaN if either is NaN (max.NaN.f32, torch.maximum's rule)."""
    return arith.maximumf(a, b)


def abs_(a: ir.Value) -> ir.Value:
    """|a|."""
    return _math.absf(a)


def lt(a: ir.Value, b: ir.Value) -> ir.Value:
    """a < b (ordered: false when either is NaN), an i1."""
    return arith.cmpf(arith.CmpFPredicate.OLT, a, b)


def select(pred: object, a: ir.Value, b: ir.Value) -> ir.Value:
    """a where pred (a Bool or i1) holds, else b."""
    return arith.select(as_value(pred), a, b)


def to_f32(v: ir.Value) -> ir.Value:
    """v as f32 (f16/bf16 extended exactly; f32 as it is)."""
    f = ir.F32Type.get()
    return v if v.type == f else arith.extf(f, v)


_LD = {16: ("h", "b16"), 32: ("r", "b32"), 64: ("l", "b64")}


def ld_global(address: object, pred: object, bits: int) -> ir.Value:
    """The `bits` (16, 32 or 64) at the global i64 address (aligned to its size) as an integer, 0 where pred
    (a Bool or i1) is false (no access then).

    A plain, coherent `ld.global` (L1-cached): unlike `ld.global.nc`, ptxas does not move it across barriers
    (it hoisted a GEMM epilogue's non-coherent loads of every chunk ahead of the first and spilled).
    """
    if bits not in _LD:
        raise ValueError(f"ld_global: bits must be 16, 32 or 64, got {bits!r}")
    reg, b = _LD[bits]
    addr = as_value(address, ir.IntegerType.get_signless(64))
    asm = f"{{ mov.{b} $0, 0; @$2 ld.global.{b} $0, [$1]; }}"
    return llvm.inline_asm(ir.IntegerType.get_signless(bits), [addr, as_value(pred)], asm, f"={reg},l,b")


_ST = {16: ("h", "b16"), 32: ("r", "b32"), 64: ("l", "b64")}


def st_global(address: object, raw: ir.Value, pred: object) -> None:
    """A plain `st.global` of the integer raw (i16, i32 or i64) at the global i64 address (aligned to its size) where
    pred (a Bool or i1) holds; nothing is written where it does not."""
    bits = raw.type.width if isinstance(raw.type, ir.IntegerType) else None
    if bits not in _ST:
        raise ValueError(f"st_global: raw must be an i16, i32 or i64 value, got {raw.type}")
    reg, b = _ST[bits]
    addr = as_value(address, ir.IntegerType.get_signless(64))
    llvm.inline_asm(None, [addr, raw, as_value(pred)], f"{{ @$2 st.global.{b} [$0], $1; }}", f"l,{reg},b,~{{memory}}",
                    has_side_effects=True)


def _width(elem: ir.Type) -> int:
    if isinstance(elem, ir.F32Type):
        return 32
    if isinstance(elem, (ir.F16Type, ir.BF16Type)):
        return 16
    raise TypeError(f"elem must be f16, bf16 or f32, got {elem}")


def to_bits(x: ir.Value, elem: ir.Type) -> ir.Value:
    """The f32 value x rounded to nearest even to `elem` (f16, bf16 or f32), as an integer of its width (the inverse
    of `as_float`)."""
    width = _width(elem)
    y = x if width == 32 else arith.truncf(elem, x)
    return arith.bitcast(ir.IntegerType.get_signless(width), y)


def pack2(lo: ir.Value, hi: ir.Value, elem: ir.Type) -> ir.Value:
    """Two f32 values rounded to `elem` (f16, bf16 or f32) as one integer of twice its width, lo at the lower address
    (the inverse of `unpack2`)."""
    width = _width(elem)
    pair = llvm.mlir_undef(ir.VectorType.get([2], elem))
    for i, x in enumerate((lo, hi)):
        y = x if width == 32 else arith.truncf(elem, x)
        pair = llvm.insertelement(pair, y, arith.constant(ir.IntegerType.get_signless(32), i))
    return llvm.bitcast(ir.IntegerType.get_signless(2 * width), pair)


def as_float(raw: ir.Value, elem: ir.Type) -> ir.Value:
    """The `elem` (f16, bf16 or f32) value whose bits raw (an integer of its width) holds, as f32."""
    return to_f32(arith.bitcast(elem, raw))


def unpack2(raw: ir.Value, elem: ir.Type) -> tuple[ir.Value, ir.Value]:
    """The two `elem` (f16, bf16 or f32) values packed in raw (an integer of twice their width), as f32, the
    lower-addressed first."""
    pair = llvm.bitcast(ir.VectorType.get([2], elem), raw)
    return tuple(to_f32(llvm.extractelement(pair, arith.constant(ir.IntegerType.get_signless(32), i)))
                 for i in (0, 1))


def cvt_e4m3x2(lo: ir.Value, hi: ir.Value) -> ir.Value:
    """Two f32 values as two Float8E4M3FN bytes in an i16 (lo in bits 0-7, the lower address), rounded to nearest
    even and saturated (`cvt.rn.satfinite.e4m3x2.f32`): beyond +-448 (+-inf included) gives +-448, NaN gives NaN."""
    # the instruction puts its first source operand in the upper byte
    return llvm.inline_asm(ir.IntegerType.get_signless(16), [hi, lo], "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;",
                           "=h,f,f")


def warp_max(x: ir.Value) -> ir.Value:
    """max(x) over the 32 lanes of the warp, in every lane (five `shfl.sync.bfly` steps; NaN if any lane's is
    NaN). Every lane of the warp must run it."""
    i32 = ir.IntegerType.get_signless(32)
    for offset in (16, 8, 4, 2, 1):
        other = nvvm.shfl_sync(x.type, arith.constant(i32, -1), x, arith.constant(i32, offset),
                               arith.constant(i32, 31), nvvm.ShflKind.bfly)
        x = maximum(x, other)
    return x


def red_max_nonneg_f32(address: object, x: ir.Value, pred: object) -> None:
    """`red.global.max.u32 [address], bits(x)` where pred holds: an atomic max of a non-negative f32 (or NaN with
    its sign clear) at the global i64 address. The bits of such floats order as unsigned integers, NaN above +inf,
    so the value there only ever grows and a NaN sticks; the address must hold such a value (e.g. 0) before."""
    addr = as_value(address, ir.IntegerType.get_signless(64))
    raw = arith.bitcast(ir.IntegerType.get_signless(32), x)
    llvm.inline_asm(None, [addr, raw, as_value(pred)], "{ @$2 red.global.max.u32 [$0], $1; }", "l,r,b,~{memory}",
                    has_side_effects=True)

"""WGMMA builders: GMMA descriptors from cute-nvarch numbers, `wgmma.mma_async` chains, fence/commit/wait.

Descriptors: cute-nvarch computes each operand's 64-bit descriptor for a buffer starting at shared address
0, as two 32-bit halves, plus the byte advances per K-block and per atom. In the kernel only the start
address field (bits 0-13: `(address >> 4) & 0x3FFF`) depends on where the buffer lives, so

    desc = (hi << 32) | (lo + ((smem_address + byte_offset) >> 4))

with `hi`/`lo` the build-time halves (no 64-bit constant with bit 63 set is ever materialised; shared
addresses are below 2**18, so the sum stays inside the 14-bit field when nvarch's start field is 0).

The builders take cute-nvarch's wgmma `MmaAtom` (`cute_nvarch.mma_sm90.make_wgmma_atom`; a `TiledMma` stands
for its atom): its shape, operand and accumulator types, majors and mnemonic are the atom's, so no second
table of wgmma forms exists here. A must come from shared memory (an `_SS` atom).

Accumulators are an `!llvm.struct` of registers as `nvvm.wgmma.mma_async` wants them: f32/s32 accumulators
are `N/2` scalars per thread for m64nN; f16 accumulators are `N/4` `vector<2xf16>`. The register order is
CuTe's accumulator thread-value order (value index = flattened `(2,2,N/8)` mode of the C layout).

WGMMA rules the builders enforce or document:
- Issued by a whole warpgroup (4 consecutive warps starting at a multiple of 4), `.sync.aligned`.
- `wgmma_fence()` before the first `wgmma.mma_async` of a chain whenever the accumulator registers
  were touched by other instructions (and after writes to smem read by the chain are fenced by
  `fence.proxy.async`); `wgmma_commit_group()` closes the chain; `wgmma_wait_group(n)` before reading
  the accumulators or reusing the smem the chain reads.
- The transpose bits (MN-major A or B) exist only for 16-bit A/B types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cute_nvarch.mma_atom import MmaAtom, OperandSource
from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from ..types import I32, I64
from ..values import as_value, const

__all__ = [
    "AccumulatorElements",
    "GmmaDescriptorBase",
    "accumulator_elements",
    "accumulator_from_values",
    "accumulator_type",
    "accumulator_values",
    "gmma_descriptor",
    "gmma_descriptor_base",
    "undef_accumulator",
    "wgmma_atom",
    "wgmma_commit_group",
    "wgmma_fence",
    "wgmma_mma_async",
    "wgmma_wait_group",
    "zero_accumulator",
]


def wgmma_atom(mma: Any) -> MmaAtom:
    """The wgmma `MmaAtom` of `mma` (an MmaAtom or a TiledMma of one); ValueError for any other atom."""
    atom = getattr(mma, "atom", mma)
    if not isinstance(atom, MmaAtom):
        raise TypeError(f"expected a cute-nvarch MmaAtom or TiledMma, got {type(mma).__name__}")
    if not atom.is_wgmma:
        raise ValueError(f"{atom.name} is not a wgmma atom (make it with cute_nvarch.mma_sm90.make_wgmma_atom)")
    if atom.a_source is not OperandSource.SMEM:
        raise ValueError(f"{atom.name}: the wgmma builders take A from shared memory (an _SS atom)")
    return atom


def _wgmma_type(t: Any) -> object:
    """NVVM's WGMMATypes member of a cute-nvarch numeric type (named by its PTX type)."""
    return getattr(nvvm.WGMMATypes, t.ptx_type)


def accumulator_type(mma: Any) -> ir.Type:
    """The `!llvm.struct` holding one thread's accumulators of the atom."""
    atom = wgmma_atom(mma)
    count = atom.num_c_values
    acc = atom.c_dtype.ptx_type
    if acc == "f16":
        elt = ir.VectorType.get([2], ir.F16Type.get())
        count //= 2
    elif acc == "f32":
        elt = ir.F32Type.get()
    else:
        elt = ir.IntegerType.get_signless(32)
    return llvm.StructType.get_literal([elt] * count)


def zero_accumulator(mma: Any) -> ir.Value:
    """An accumulator struct of zeros."""
    return llvm.mlir_zero(accumulator_type(mma))


def undef_accumulator(mma: Any) -> ir.Value:
    """An accumulator struct with undefined contents (for a chain whose first wgmma has scale-d 0)."""
    return llvm.mlir_undef(accumulator_type(mma))


def _check_halves(lo: int, hi: int) -> None:
    if not 0 <= lo < (1 << 32) or not 0 <= hi < (1 << 32):
        raise ValueError(f"descriptor halves must be unsigned 32-bit, got lo={lo:#x} hi={hi:#x}")
    if lo & 0x3FFF:
        raise ValueError(f"descriptor lo half must have a zero start-address field, got {lo:#x}")


def _pack(lo_word: ir.Value, hi: int) -> ir.Value:
    # the start field is an unsigned 14-bit number: zero-extend
    lo64 = arith.extui(I64(), lo_word)
    return arith.ori(lo64, const(hi << 32, I64())) if hi else lo64


def gmma_descriptor(smem_addr: Any, lo: int, hi: int, byte_offset: Any = 0) -> ir.Value:
    """The i64 GMMA descriptor of the buffer at shared address `smem_addr` + `byte_offset` (nvarch halves)."""
    _check_halves(lo, hi)
    addr = as_value(smem_addr, I32())
    if not (isinstance(byte_offset, int) and byte_offset == 0):
        addr = arith.addi(addr, as_value(byte_offset, I32()))
    start = arith.andi(arith.shrui(addr, const(4, I32())), const(0x3FFF, I32()))
    return _pack(arith.ori(start, const(lo, I32())) if lo else start, hi)


@dataclass(frozen=True)
class GmmaDescriptorBase:
    """A buffer's GMMA descriptor kept as its run-time low word (start field | lo) and build-time high half, so
    that each advance is one add to the start field (a K loop's descriptors cost an add each, not a rebuild)."""

    lo_word: ir.Value
    hi: int

    def plus(self, units: Any) -> GmmaDescriptorBase:
        """The descriptor `units` 16-byte units on (a run-time i32, e.g. stage * stage_bytes / 16)."""
        return GmmaDescriptorBase(arith.addi(self.lo_word, as_value(units, I32())), self.hi)

    def at(self, byte_offset: int = 0) -> ir.Value:
        """The i64 descriptor `byte_offset` bytes on (a build-time multiple of 16)."""
        if byte_offset % 16:
            raise ValueError(f"byte_offset must be a multiple of 16, got {byte_offset}")
        word = self.lo_word if byte_offset == 0 else arith.addi(self.lo_word, const(byte_offset >> 4, I32()))
        return _pack(word, self.hi)


def gmma_descriptor_base(smem_addr: Any, lo: int, hi: int) -> GmmaDescriptorBase:
    """The advanceable descriptor of the buffer at shared address `smem_addr` (nvarch halves). Its advances add to
    the 14-bit start field without a mask: shared addresses stay below 2**18, so the field never carries."""
    _check_halves(lo, hi)
    start = arith.andi(arith.shrui(as_value(smem_addr, I32()), const(4, I32())), const(0x3FFF, I32()))
    return GmmaDescriptorBase(arith.ori(start, const(lo, I32())) if lo else start, hi)


def wgmma_fence() -> None:
    """`wgmma.fence.sync.aligned`: order register/smem accesses before the next wgmma.mma_async."""
    nvvm.wgmma_fence_aligned()


def wgmma_commit_group() -> None:
    """`wgmma.commit_group.sync.aligned`: close the pending wgmma.mma_async ops into a group."""
    nvvm.wgmma_commit_group_sync_aligned()


def wgmma_wait_group(pending: int = 0) -> None:
    """`wgmma.wait_group.sync.aligned pending`: wait until at most `pending` groups are in flight."""
    if not 0 <= pending <= 7:
        raise ValueError(f"pending must be in [0, 7], got {pending}")
    nvvm.wgmma_wait_group_sync_aligned(pending)


def wgmma_mma_async(
    mma: Any, acc: ir.Value, desc_a: ir.Value, desc_b: ir.Value, accumulate: bool = True
) -> ir.Value:
    """One `wgmma.mma_async` of the atom with A and B from shared-memory descriptors; the new accumulator.

    `accumulate=False` computes D = A*B (scale-d 0; the incoming registers are ignored).
    """
    atom = wgmma_atom(mma)
    m, n, k = atom.shape_mnk
    return nvvm.wgmma_mma_async(
        accumulator_type(atom),
        acc,
        desc_a,
        desc_b,
        ir.Attribute.parse(f"#nvvm.shape<m = {m}, n = {n}, k = {k}>"),
        _wgmma_type(atom.a_dtype),
        _wgmma_type(atom.b_dtype),
        _wgmma_type(atom.c_dtype),
        nvvm.WGMMAScaleOut.one if accumulate else nvvm.WGMMAScaleOut.zero,
        nvvm.WGMMAScaleIn.one,
        nvvm.WGMMAScaleIn.one,
        # the atom's PTX layout names: A "row" = K-major (no transpose), B "col" = K-major (no transpose)
        getattr(nvvm.MMALayout, atom.a_layout),
        getattr(nvvm.MMALayout, atom.b_layout),
    )


def accumulator_values(acc: ir.Value, mma: Any) -> list[ir.Value]:
    """The accumulator registers as a list (f16 accumulators as `vector<2xf16>` pairs)."""
    body = llvm.StructType(accumulator_type(mma)).body
    return [llvm.extractvalue(body[0], acc, [i]) for i in range(len(body))]


def accumulator_from_values(values: Sequence[ir.Value], mma: Any) -> ir.Value:
    """The accumulator struct holding `values` (registers in `accumulator_values` order): its inverse."""
    ty = accumulator_type(mma)
    body = llvm.StructType(ty).body
    if len(values) != len(body) or any(v.type != t for v, t in zip(values, body, strict=True)):
        raise ValueError(f"accumulator_from_values: need {len(body)} values of type {body[0]}, got "
                         f"{[str(v.type) for v in values][:4]}... ({len(values)})")
    acc = llvm.mlir_undef(ty)
    for i, v in enumerate(values):
        acc = llvm.insertvalue(acc, v, [i])
    return acc


class AccumulatorElements(Sequence):
    """The accumulator elements in the atom's value order; element v is extracted where it is indexed.

    f32/s32 accumulators: the registers themselves; f16 accumulators: element v % 2 of `vector<2xf16>`
    register v // 2, one `llvm.extractelement` per indexing (emitted at the insertion point of the use).
    """

    def __init__(self, regs: list[ir.Value], pairs: bool) -> None:
        self._regs = regs
        self._pairs = pairs

    def __len__(self) -> int:
        return 2 * len(self._regs) if self._pairs else len(self._regs)

    def __getitem__(self, v: int) -> ir.Value:  # type: ignore[override]
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"accumulator element index must be an int, got {type(v).__name__}")
        if not 0 <= v < len(self):
            raise IndexError(f"accumulator element {v} out of range [0, {len(self)})")
        if not self._pairs:
            return self._regs[v]
        return llvm.extractelement(self._regs[v // 2], const(v % 2, I32()))


def accumulator_elements(acc: ir.Value, mma: Any) -> AccumulatorElements:
    """The accumulator's elements in the atom's value order (see `AccumulatorElements`)."""
    return AccumulatorElements(accumulator_values(acc, mma), wgmma_atom(mma).c_dtype.ptx_type == "f16")

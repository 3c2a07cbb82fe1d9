"""WGMMA builders: GMMA descriptors from cute-nvarch numbers, `wgmma.mma_async` chains, fence/commit/wait.

Descriptors: cute-nvarch computes each operand's 64-bit descriptor for a buffer starting at shared address
0, as two 32-bit halves, plus the byte advances per K-block and per atom. In the kernel only the start
address field (bits 0-13: `(address >> 4) & 0x3FFF`) depends on where the buffer lives, so

    desc = (hi << 32) | (lo + ((smem_address + byte_offset) >> 4))

with `hi`/`lo` the build-time halves (no 64-bit constant with bit 63 set is ever materialised; shared
addresses are below 2**18, so the sum stays inside the 14-bit field when nvarch's start field is 0).

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

from dataclasses import dataclass, field
from typing import Any

from cute_nvarch.mma_sm90 import make_wgmma_atom
from cute_nvarch.numeric import numeric_type
from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from ..types import I32, I64
from ..values import as_value, const

__all__ = [
    "WgmmaShape",
    "accumulator_type",
    "accumulator_values",
    "gmma_descriptor",
    "wgmma_commit_group",
    "wgmma_fence",
    "wgmma_mma_async",
    "wgmma_wait_group",
    "zero_accumulator",
]

def _wgmma_type(name: str) -> object:
    """NVVM's WGMMATypes member of a numeric type (named by its PTX type: f16, bf16, e4m3, s8, f32, s32, ...)."""
    return getattr(nvvm.WGMMATypes, numeric_type(name).ptx_type)


@dataclass(frozen=True)
class WgmmaShape:
    """One `wgmma.mma_async` form: m64nNkK with A/B/accumulator PTX types and operand majors ("k" or "mn")."""

    n: int
    a_type: str
    b_type: str
    acc_type: str
    a_major: str = "k"
    b_major: str = "k"
    atom: Any = field(init=False, repr=False, compare=False)  # cute-nvarch's MmaAtom of this form

    def __post_init__(self) -> None:
        for name, major in (("a_major", self.a_major), ("b_major", self.b_major)):
            if major not in ("k", "mn"):
                raise ValueError(f"{name} must be 'k' or 'mn', got {major!r}")
        try:  # cute-nvarch owns which forms exist (types, accumulators, N, majors), their K and mnemonic
            atom = make_wgmma_atom(
                self.a_type,
                self.b_type,
                self.acc_type,
                self.n,
                "K" if self.a_major == "k" else "MN",
                "K" if self.b_major == "k" else "MN",
            )
        except (TypeError, ValueError) as e:
            raise ValueError(f"WgmmaShape({self.n}, {self.a_type}, {self.b_type}, {self.acc_type}): {e}") from None
        object.__setattr__(self, "atom", atom)

    @property
    def m(self) -> int:
        """Rows per instruction (always 64)."""
        return 64

    @property
    def k(self) -> int:
        """K per instruction (32 bytes of A/B elements)."""
        return self.atom.shape_mnk[2]

    @property
    def num_acc_values(self) -> int:
        """Accumulator elements per thread (64*N/128)."""
        return self.n // 2

    @property
    def mnemonic(self) -> str:
        """The PTX mnemonic this shape emits (cute-nvarch's atom's)."""
        return self.atom.ptx


def accumulator_type(shape: WgmmaShape) -> ir.Type:
    """The `!llvm.struct` holding one thread's accumulators of `shape`."""
    if shape.acc_type == "f16":
        elt = ir.VectorType.get([2], ir.F16Type.get())
        count = shape.num_acc_values // 2
    elif shape.acc_type == "f32":
        elt, count = ir.F32Type.get(), shape.num_acc_values
    else:
        elt, count = ir.IntegerType.get_signless(32), shape.num_acc_values
    return llvm.StructType.get_literal([elt] * count)


def zero_accumulator(shape: WgmmaShape) -> ir.Value:
    """An accumulator struct of zeros."""
    return llvm.mlir_zero(accumulator_type(shape))


def gmma_descriptor(smem_addr: Any, lo: int, hi: int, byte_offset: Any = 0) -> ir.Value:
    """The i64 GMMA descriptor of the buffer at shared address `smem_addr` + `byte_offset` (nvarch halves)."""
    if not 0 <= lo < (1 << 32) or not 0 <= hi < (1 << 32):
        raise ValueError(f"descriptor halves must be unsigned 32-bit, got lo={lo:#x} hi={hi:#x}")
    if lo & 0x3FFF:
        raise ValueError(f"descriptor lo half must have a zero start-address field, got {lo:#x}")
    addr = as_value(smem_addr, I32())
    if not (isinstance(byte_offset, int) and byte_offset == 0):
        addr = arith.addi(addr, as_value(byte_offset, I32()))
    start = arith.andi(arith.shrui(addr, const(4, I32())), const(0x3FFF, I32()))
    lo_v = arith.ori(start, const(lo, I32())) if lo else start
    lo64 = arith.extui(I64(), lo_v)
    return arith.ori(lo64, const(hi << 32, I64())) if hi else lo64


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
    shape: WgmmaShape, acc: ir.Value, desc_a: ir.Value, desc_b: ir.Value, accumulate: bool = True
) -> ir.Value:
    """One `wgmma.mma_async` with A and B from shared-memory descriptors; returns the new accumulator.

    `accumulate=False` computes D = A*B (scale-d 0; the incoming registers are ignored).
    """
    return nvvm.wgmma_mma_async(
        accumulator_type(shape),
        acc,
        desc_a,
        desc_b,
        ir.Attribute.parse(f"#nvvm.shape<m = 64, n = {shape.n}, k = {shape.k}>"),
        _wgmma_type(shape.a_type),
        _wgmma_type(shape.b_type),
        _wgmma_type(shape.acc_type),
        nvvm.WGMMAScaleOut.one if accumulate else nvvm.WGMMAScaleOut.zero,
        nvvm.WGMMAScaleIn.one,
        nvvm.WGMMAScaleIn.one,
        # nvvm: A "row" = K-major (no transpose), B "col" = K-major (no transpose)
        nvvm.MMALayout.row if shape.a_major == "k" else nvvm.MMALayout.col,
        nvvm.MMALayout.col if shape.b_major == "k" else nvvm.MMALayout.row,
    )


def accumulator_values(acc: ir.Value, shape: WgmmaShape) -> list[ir.Value]:
    """The accumulator registers as a list (f16 accumulators as `vector<2xf16>` pairs)."""
    body = llvm.StructType(accumulator_type(shape)).body
    return [llvm.extractvalue(body[0], acc, [i]) for i in range(len(body))]

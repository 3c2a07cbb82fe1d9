"""The MMA atom: one tensor-core instruction as data (CuTe's `MMA_Traits` + `MMA_Atom`).

Thread-value layouts follow CuTe: `layout_a_tv` maps (thread, value) to the column-major index
`m + M*k` of the atom's (M, K) tile, `layout_b_tv` to `n + N*k` of (N, K), `layout_c_tv` to `m + M*n`
of (M, N). `thr_id` maps the atom's logical thread to its thread index within the executing group.
An operand read from shared memory (wgmma's descriptor operands) is owned by every thread: its layout
is `(128,(MN,K)):(0,(1,MN))`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from cute_layout import Layout

from cute_nvarch.gmma_desc import Major
from cute_nvarch.numeric import NumericType

__all__ = ["MmaAtom", "OperandSource"]


class OperandSource(str, Enum):
    """Where an MMA operand comes from."""

    RMEM = "rmem"
    SMEM = "smem"


@dataclass(frozen=True)
class MmaAtom:
    """One MMA instruction.

    Fields:
      name: CuTe's operation name (`"SM90_64x128x16_F32F16F16_SS"`, `"SM80_16x8x16_F32F16F16F32_TN"`).
      ptx: the PTX mnemonic without operands (`"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"`).
      arch: lowest target that has it (`"sm_80"`, `"sm_90a"`).
      shape_mnk: (M, N, K) of one instruction.
      thr_id: logical thread -> thread index (`Layout(128)` for a warpgroup, `Layout(32)` for a warp).
      layout_a_tv, layout_b_tv, layout_c_tv: (thread, value) -> operand-tile index (see module doc).
      a_dtype, b_dtype: operand element types; c_dtype: accumulator (and D) element type.
      a_major, b_major: which mode of A (M,K) / B (N,K) is contiguous in shared memory; operands in
        registers are K-major. For wgmma the value is the instruction's `imm-trans-a/b` immediate.
      a_source, b_source: `OperandSource.SMEM` (a 64-bit GMMA descriptor) or `OperandSource.RMEM`.
    """

    name: str
    ptx: str
    arch: str
    shape_mnk: tuple[int, int, int]
    thr_id: Layout
    layout_a_tv: Layout
    layout_b_tv: Layout
    layout_c_tv: Layout
    a_dtype: NumericType
    b_dtype: NumericType
    c_dtype: NumericType
    a_major: Major
    b_major: Major
    a_source: OperandSource
    b_source: OperandSource

    @property
    def num_threads(self) -> int:
        """Threads that execute one instruction together (32 or 128)."""
        return _size(self.thr_id)

    @property
    def is_wgmma(self) -> bool:
        """True for SM90 warpgroup MMAs."""
        return self.ptx.startswith("wgmma.")

    @property
    def a_layout(self) -> str:
        """A's PTX/NVVM layout name: "row" when K-major (no transpose), "col" when M-major."""
        return "row" if self.a_major is Major.K else "col"

    @property
    def b_layout(self) -> str:
        """B's PTX/NVVM layout name: "col" when K-major (no transpose), "row" when N-major."""
        return "col" if self.b_major is Major.K else "row"

    @property
    def num_c_values(self) -> int:
        """Accumulator elements each thread holds."""
        return _size_mode(self.layout_c_tv, 1)

    @property
    def num_a_values(self) -> int:
        """A elements each thread holds (every element of the tile for a shared-memory operand)."""
        return _size_mode(self.layout_a_tv, 1)

    @property
    def num_b_values(self) -> int:
        """B elements each thread holds (every element of the tile for a shared-memory operand)."""
        return _size_mode(self.layout_b_tv, 1)

    @property
    def c_registers(self) -> int:
        """32-bit registers of the accumulator per thread."""
        return self.num_c_values * self.c_dtype.width // 32

    @property
    def a_registers(self) -> int:
        """32-bit registers of A per thread (2 for a 64-bit descriptor)."""
        if self.a_source is OperandSource.SMEM:
            return 2
        return self.num_a_values * self.a_dtype.width // 32

    @property
    def b_registers(self) -> int:
        """32-bit registers of B per thread (2 for a 64-bit descriptor)."""
        if self.b_source is OperandSource.SMEM:
            return 2
        return self.num_b_values * self.b_dtype.width // 32

    def __str__(self) -> str:
        return self.name


def _size_mode(layout: Layout, i: int) -> int:
    shape = layout.shape[i]
    n = 1
    stack = [shape]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(x)
        else:
            n *= x
    return n


def _size(layout: Layout) -> int:
    shape = layout.shape
    n = 1
    stack = [shape]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(x)
        else:
            n *= x
    return n

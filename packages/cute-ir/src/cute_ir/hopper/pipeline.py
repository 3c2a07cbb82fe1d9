"""A multistage TMA pipeline over shared-memory stages: full/empty mbarrier pairs with phase tracking.

Protocol (as CUTLASS's `PipelineTmaAsync`): stage `s` has a *full* barrier (arrival count 1: the producer's
`arrive.expect_tx`; TMA loads complete its transaction bytes) and an *empty* barrier (arrival count
`consumer_arrivals`: every consumer that must release the stage before it is refilled, including the
consumers of other CTAs of the cluster that receive this CTA's multicasts).

Iteration `it` (a running count of loads, the same number on the producer and consumer side) uses
`stage = it % stages` and `phase = (it // stages) & 1`:

    producer: wait(empty[stage], phase ^ 1); arrive_expect_tx(full[stage], tx_bytes); issue TMA loads
    consumer: wait(full[stage], phase); ... read the stage ...; arrive(empty[stage]) (locally or remotely,
              release at CTA scope: `mbarrier.arrive.shared::cluster` as CUTLASS's ClusterBarrier)

Because a producer waits on parity `phase ^ 1`, its first pass over the stages does not block (the phase
"before" phase 0 counts as completed). Deriving (stage, phase) from `it` keeps loop-carried state out of the
kernel: a persistent kernel computes `it = tiles_done * k_tiles + k`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlir import ir
from mlir.dialects import arith, scf

from ..types import I1, I32
from ..values import as_value, const
from .mbarrier import (
    MBARRIER_BYTES,
    mbarrier_arrive,
    mbarrier_arrive_cluster,
    mbarrier_arrive_expect_tx,
    mbarrier_init,
    mbarrier_wait,
)
from .smem import smem_offset
from .sync import fence_mbarrier_init

__all__ = ["PipelineSpec", "TmaPipeline", "stage_and_phase"]


def stage_and_phase(it: int, stages: int) -> tuple[int, int]:
    """(stage, phase parity) of load iteration `it` (what `TmaPipeline.stage_phase` emits)."""
    if it < 0 or stages < 1:
        raise ValueError(f"need it >= 0 and stages >= 1, got it={it}, stages={stages}")
    return it % stages, (it // stages) & 1


@dataclass(frozen=True)
class PipelineSpec:
    """A TMA pipeline's static shape: stages, bytes per stage landing in this CTA, empty-barrier arrivals."""

    stages: int
    tx_bytes: int
    consumer_arrivals: int

    def __post_init__(self) -> None:
        if self.stages < 1:
            raise ValueError(f"stages must be >= 1, got {self.stages}")
        if not 0 < self.tx_bytes < (1 << 20):
            raise ValueError(f"tx_bytes must be in (0, 2**20), got {self.tx_bytes}")
        if not 1 <= self.consumer_arrivals < (1 << 20):
            raise ValueError(f"consumer_arrivals must be in [1, 2**20), got {self.consumer_arrivals}")

    @property
    def smem_bytes(self) -> int:
        """Shared memory of the barriers: `stages` full then `stages` empty mbarriers."""
        return 2 * self.stages * MBARRIER_BYTES


class TmaPipeline:
    """Builders for one `PipelineSpec` whose 2*stages mbarriers start at the shared-memory pointer `base`."""

    def __init__(self, spec: PipelineSpec, base: ir.Value) -> None:
        self.spec = spec
        self.base = base

    def full(self, stage: Any) -> ir.Value:
        """Pointer to the full barrier of `stage` (int or i32 value)."""
        if isinstance(stage, int):
            self._check_stage(stage)
            return smem_offset(self.base, stage * MBARRIER_BYTES)
        return smem_offset(self.base, arith.muli(as_value(stage, I32()), const(MBARRIER_BYTES, I32())))

    def empty(self, stage: Any) -> ir.Value:
        """Pointer to the empty barrier of `stage` (int or i32 value)."""
        off = self.spec.stages * MBARRIER_BYTES
        if isinstance(stage, int):
            self._check_stage(stage)
            return smem_offset(self.base, off + stage * MBARRIER_BYTES)
        return smem_offset(
            self.base, arith.addi(arith.muli(as_value(stage, I32()), const(MBARRIER_BYTES, I32())), const(off, I32()))
        )

    def _check_stage(self, stage: int) -> None:
        if not 0 <= stage < self.spec.stages:
            raise ValueError(f"stage must be in [0, {self.spec.stages}), got {stage}")

    def init(self, pred: Any) -> None:
        """Initialise every barrier from the threads where `pred` (i1) holds (make it one thread)."""
        op = scf.IfOp(as_value(pred, I1()))
        with ir.InsertionPoint(op.then_block):
            for s in range(self.spec.stages):
                mbarrier_init(self.full(s), 1)
                mbarrier_init(self.empty(s), self.spec.consumer_arrivals)
            fence_mbarrier_init()
            scf.yield_([])

    def stage_phase(self, it: Any) -> tuple[ir.Value, ir.Value]:
        """(stage, phase) of iteration `it`: `it % stages` and `(it // stages) & 1`, as i32 values."""
        it = as_value(it, I32())
        n = const(self.spec.stages, I32())
        stage = arith.remui(it, n)
        phase = arith.andi(arith.divui(it, n), const(1, I32()))
        return stage, phase

    def producer_acquire(self, stage: Any, phase: Any) -> None:
        """Wait until `stage` is free for iteration of parity `phase` (waits empty[stage] on `phase ^ 1`)."""
        mbarrier_wait(self.empty(stage), arith.xori(as_value(phase, I32()), const(1, I32())))

    def producer_commit(self, stage: Any) -> None:
        """Announce the stage's transaction bytes on full[stage] and arrive (before or after issuing TMA)."""
        mbarrier_arrive_expect_tx(self.full(stage), self.spec.tx_bytes)

    def consumer_wait(self, stage: Any, phase: Any) -> None:
        """Wait until the TMA loads of `stage` for the iteration of parity `phase` have landed."""
        mbarrier_wait(self.full(stage), phase)

    def consumer_release(self, stage: Any) -> None:
        """Release `stage` to this CTA's producer (one arrival on empty[stage])."""
        mbarrier_arrive(self.empty(stage))

    def consumer_release_cluster(self, stage: Any, cta_rank: Any, scope: str = "cta") -> None:
        """Release `stage` to the producer of CTA `cta_rank` of the cluster (remote arrival at `scope`).

        The default CTA-scope release is CUTLASS's (`ClusterBarrier::arrive(cta_id, pred)`); it is enough
        once `wgmma.wait_group` has retired the stage's reads, and unlike "cluster" it adds no
        `MEMBAR.ALL.GPU` to every K-tile.
        """
        mbarrier_arrive_cluster(self.empty(stage), cta_rank, scope)

    def producer_tail(self, it_end: Any) -> None:
        """Wait until consumers released every stage used by iterations before `it_end` (before exiting)."""
        it_end = as_value(it_end, I32())
        for k in range(self.spec.stages):
            stage, phase = self.stage_phase(arith.addi(it_end, const(k, I32())))
            self.producer_acquire(stage, phase)

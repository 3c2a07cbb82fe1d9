"""The multistage TMA pipeline block: full/empty mbarrier pairs over shared-memory stages, with phase tracking.

Protocol (as CUTLASS's `PipelineTmaAsync`): stage `s` has a *full* barrier (arrival count 1: the producer's
`arrive.expect_tx`; TMA loads complete its transaction bytes) and an *empty* barrier (arrival count
`consumer_arrivals`: every consumer group that must release the stage before it is refilled, including the
consumer groups of the other CTAs of the cluster that receive this CTA's multicasts).

Iteration `it` (a running count of loads, the same number on the producer and the consumer side) uses
`stage = it % stages` and `phase = (it // stages) & 1`:

    producer: acquire = wait(empty[stage], phase ^ 1); commit = arrive_expect_tx(full[stage], tx_bytes);
              issue the TMA loads of the stage onto full[stage]
    consumer: wait(full[stage], phase); ... read the stage ...; release (one arrival per consumer group on
              the empty barrier of every CTA that multicast into the stage)

Because a producer waits on parity `phase ^ 1`, its first pass over the stages does not block (the phase
"before" phase 0 counts as completed). Deriving (stage, phase) from `it` keeps loop-carried state out of the
kernel: a persistent kernel computes `it = tiles_done * k_tiles + k`. Before it exits, the producer waits
until every stage it filled was released (`producer_tail`), so no CTA leaves while a peer may still arrive
on its barriers.

Cluster release (`PipelineSpec.cluster`, `release_group`): with multicast along a cm x cn cluster, CTA (x, y)
receives A from the CTAs of its row and B from those of its column, so each consumer group releases a stage
to every CTA of its row and column: thread d < cm*cn of the group arrives on CTA d's empty barrier when d
shares the row or the column (`releases_to`, which also runs on Python ints: `release_targets`), and each empty barrier
counts `consumer_groups * (cm + cn - 1)` arrivals. The remote arrive is released at CTA scope by default
(`release_scope="cta"`, CUTLASS's `ClusterBarrier::arrive(cta_id, pred)`: a plain `SYNCS.ARRIVE`), which is
enough once `wgmma.wait_group` has retired the stage's reads; "cluster" (`.release.cluster`) makes ptxas put a
GPU-wide `MEMBAR.ALL.GPU` before every release, which measured slower on the GEMM (its "cluster_release"
variant keeps it as the control).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlir import ir

from ..control import if_
from ..types import I32
from ..values import Int, as_value
from .mbarrier import (
    MBARRIER_BYTES,
    RELEASE_SCOPES,
    mbarrier_arrive,
    mbarrier_arrive_cluster,
    mbarrier_arrive_expect_tx,
    mbarrier_init,
    mbarrier_wait,
)
from .smem import smem_offset
from .sync import fence_mbarrier_init

__all__ = ["PipelineSpec", "TmaPipeline", "release_targets", "releases_to", "stage_and_phase"]


def stage_and_phase(it: int, stages: int) -> tuple[int, int]:
    """(stage, phase parity) of load iteration `it` (what `TmaPipeline.stage_phase` emits)."""
    if it < 0 or stages < 1:
        raise ValueError(f"need it >= 0 and stages >= 1, got it={it}, stages={stages}")
    return it % stages, (it // stages) & 1


def releases_to(thread: Any, cta_m: Any, cta_n: Any, cluster: tuple[int, int]) -> Any:
    """Whether thread `thread` of a consumer group of CTA (cta_m, cta_n) arrives on CTA `thread`'s empty barrier.

    True when `thread` is a rank of the cluster in the CTA's row or column. Runs on Python ints (a bool) and
    on `Int`s (a `Bool`, what `TmaPipeline.release_group` emits).
    """
    cm, cn = cluster
    dst_m, dst_n = thread % cm, thread // cm
    same = (dst_m == cta_m) | (dst_n == cta_n)
    return (thread < cm * cn) & same


def release_targets(cta_m: int, cta_n: int, cluster: tuple[int, int]) -> list[int]:
    """Ranks (x fastest) of the CTAs a consumer group of CTA (cta_m, cta_n) releases a stage to."""
    cm, cn = cluster
    if not (0 <= cta_m < cm and 0 <= cta_n < cn):
        raise ValueError(f"CTA ({cta_m}, {cta_n}) is not in a {cm} x {cn} cluster")
    return [d for d in range(cm * cn) if releases_to(d, cta_m, cta_n, cluster)]


@dataclass(frozen=True)
class PipelineSpec:
    """A TMA pipeline's static shape: stages, bytes per stage landing in this CTA, empty-barrier arrivals.

    `cluster` (cm, cn) and `release_scope` describe the multicast release (`TmaPipeline.release_group`);
    `for_groups` derives `consumer_arrivals` from them.
    """

    stages: int
    tx_bytes: int
    consumer_arrivals: int
    cluster: tuple[int, int] = (1, 1)
    release_scope: str = "cta"

    def __post_init__(self) -> None:
        if self.stages < 1:
            raise ValueError(f"stages must be >= 1, got {self.stages}")
        if not 0 < self.tx_bytes < (1 << 20):
            raise ValueError(f"tx_bytes must be in (0, 2**20), got {self.tx_bytes}")
        if not 1 <= self.consumer_arrivals < (1 << 20):
            raise ValueError(f"consumer_arrivals must be in [1, 2**20), got {self.consumer_arrivals}")
        if len(self.cluster) != 2 or not all(isinstance(c, int) and 1 <= c <= 16 for c in self.cluster):
            raise ValueError(f"cluster must be (cm, cn) with 1 <= cm, cn <= 16, got {self.cluster!r}")
        if self.cluster[0] * self.cluster[1] > 16:
            raise ValueError(f"cluster {self.cluster} has more than 16 CTAs")
        if self.release_scope not in RELEASE_SCOPES:
            raise ValueError(f"release_scope must be one of {RELEASE_SCOPES}, got {self.release_scope!r}")

    @classmethod
    def for_groups(
        cls,
        stages: int,
        tx_bytes: int,
        consumer_groups: int,
        cluster: tuple[int, int] = (1, 1),
        release_scope: str = "cta",
    ) -> PipelineSpec:
        """The spec whose consumer groups release each stage to their cluster row and column (`release_group`)."""
        if consumer_groups < 1:
            raise ValueError(f"consumer_groups must be >= 1, got {consumer_groups}")
        arrivals = consumer_groups * (cluster[0] + cluster[1] - 1)
        return cls(stages, tx_bytes, arrivals, tuple(cluster), release_scope)

    @property
    def cluster_size(self) -> int:
        """CTAs in the cluster."""
        return self.cluster[0] * self.cluster[1]

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
        return smem_offset(self.base, Int(as_value(stage, I32())) * MBARRIER_BYTES)

    def empty(self, stage: Any) -> ir.Value:
        """Pointer to the empty barrier of `stage` (int or i32 value)."""
        off = self.spec.stages * MBARRIER_BYTES
        if isinstance(stage, int):
            self._check_stage(stage)
            return smem_offset(self.base, off + stage * MBARRIER_BYTES)
        return smem_offset(self.base, Int(as_value(stage, I32())) * MBARRIER_BYTES + off)

    def _check_stage(self, stage: int) -> None:
        if not 0 <= stage < self.spec.stages:
            raise ValueError(f"stage must be in [0, {self.spec.stages}), got {stage}")

    def init(self, pred: Any) -> None:
        """Initialise every barrier from the threads where `pred` (a Bool) holds (make it one thread).

        The barriers are visible to the cluster after `fence.mbarrier_init` and a cluster (or CTA) barrier.
        """

        def body() -> None:
            for s in range(self.spec.stages):
                mbarrier_init(self.full(s), 1)
                mbarrier_init(self.empty(s), self.spec.consumer_arrivals)
            fence_mbarrier_init()

        if_(pred, body)

    def stage_phase(self, it: Any) -> tuple[Int, Int]:
        """(stage, phase) of iteration `it`: `it % stages` and `(it // stages) & 1`, as i32 Ints."""
        it = Int(as_value(it, I32()))
        n = self.spec.stages
        return it % n, (it // n) & 1

    def producer_acquire(self, stage: Any, phase: Any) -> None:
        """Wait until `stage` is free for iteration of parity `phase` (waits empty[stage] on `phase ^ 1`)."""
        mbarrier_wait(self.empty(stage), Int(as_value(phase, I32())) ^ 1)

    def producer_commit(self, stage: Any, tx_bytes: Any = None) -> None:
        """Announce the stage's transaction bytes on full[stage] and arrive (before or after issuing TMA);
        `tx_bytes` (int or i32 value): this iteration's bytes where they differ from the spec's."""
        mbarrier_arrive_expect_tx(self.full(stage), self.spec.tx_bytes if tx_bytes is None else tx_bytes)

    def consumer_wait(self, stage: Any, phase: Any) -> None:
        """Wait until the TMA loads of `stage` for the iteration of parity `phase` have landed."""
        mbarrier_wait(self.full(stage), phase)

    def consumer_release(self, stage: Any) -> None:
        """Release `stage` to this CTA's producer (one arrival on empty[stage])."""
        mbarrier_arrive(self.empty(stage))

    def consumer_release_cluster(self, stage: Any, cta_rank: Any, scope: str | None = None) -> None:
        """Release `stage` to the producer of CTA `cta_rank` of the cluster (remote arrival at `scope`).

        `scope` defaults to the spec's `release_scope` (see the module doc for why "cta" is the default).
        """
        mbarrier_arrive_cluster(self.empty(stage), cta_rank, self.spec.release_scope if scope is None else scope)

    def release_group(self, stage: Any, thread: Int, cta_m: Int | int = 0, cta_n: Int | int = 0) -> None:
        """One consumer group releases `stage`: called by all its threads (`thread` = index in the group).

        Without a cluster thread 0 arrives locally; in a cm x cn cluster thread d < cm*cn arrives on CTA d's
        empty barrier when d shares this CTA's row (`cta_m`) or column (`cta_n`), as `release_targets`.
        """
        if self.spec.cluster_size == 1:
            if_(thread == 0, lambda: self.consumer_release(stage))
            return
        ok = releases_to(thread, cta_m, cta_n, self.spec.cluster)
        if_(ok, lambda: self.consumer_release_cluster(stage, thread))

    def producer_tail(self, it_end: Any) -> None:
        """Wait until consumers released every stage used by iterations before `it_end` (before exiting)."""
        it_end = Int(as_value(it_end, I32()))
        for k in range(self.spec.stages):
            stage, phase = self.stage_phase(it_end + k)
            self.producer_acquire(stage, phase)

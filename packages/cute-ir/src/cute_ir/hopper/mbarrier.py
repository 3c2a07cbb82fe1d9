"""mbarrier builders: init, arrive (local and remote in the cluster), expect-tx, and phase-parity waits.

An mbarrier is an 8-byte object in shared memory (`!llvm.ptr<3>`). PTX semantics relied on:

- `mbarrier.init [bar], count` starts phase 0 with `count` pending arrivals and tx-count 0.
- A phase completes when the pending arrival count reaches 0 and the tx-count is 0; then the next phase
  starts with the arrival count reset to `count`.
- `mbarrier.arrive.expect_tx [bar], bytes` raises the tx-count by `bytes` and then arrives once; TMA loads
  (`cp.async.bulk ... mbarrier::complete_tx::bytes`) lower it by the bytes they write. A complete_tx may
  precede the expect_tx (the tx-count goes transiently negative); the phase still waits for the arrival.
- `mbarrier.try_wait.parity [bar], P` succeeds once the phase with parity P has completed, that is when
  the current phase parity differs from P. Right after init (current phase 0) waiting on parity 1
  succeeds at once: a producer that waits for "empty" with parity `phase ^ 1` starts without waiting.
- A remote arrive (`mapa` to another CTA's shared::cluster window, then
  `mbarrier.arrive.shared::cluster`, release at CTA scope by default) counts on that CTA's barrier at
  the same offset.
"""

from __future__ import annotations

from typing import Any

from cute_nvarch.smem import MBARRIER_BYTES
from mlir import ir
from mlir.dialects import nvvm

from ..control import while_
from ..types import I1, I32, cluster_ptr_type
from ..values import Bool, as_value

__all__ = [
    "MBARRIER_BYTES",
    "RELEASE_SCOPES",
    "mbarrier_arrive",
    "mbarrier_arrive_cluster",
    "mbarrier_arrive_expect_tx",
    "mbarrier_expect_tx",
    "mbarrier_init",
    "mbarrier_try_wait",
    "mbarrier_wait",
    "map_shared_rank",
]


def mbarrier_init(bar: ir.Value, count: Any) -> None:
    """`mbarrier.init.shared.b64 [bar], count`."""
    if isinstance(count, int) and not 1 <= count < (1 << 20):
        raise ValueError(f"mbarrier arrival count must be in [1, 2**20), got {count}")
    nvvm.mbarrier_init(bar, as_value(count, I32()))


def mbarrier_arrive(bar: ir.Value) -> None:
    """`mbarrier.arrive.shared.b64` on a barrier of this CTA (release, CTA scope)."""
    nvvm.MBarrierArriveOp(None, bar)


def map_shared_rank(ptr: ir.Value, cta_rank: Any) -> ir.Value:
    """`mapa.shared::cluster`: the address of `ptr`'s offset in the shared memory of CTA `cta_rank`."""
    return nvvm.mapa(cluster_ptr_type(), ptr, as_value(cta_rank, I32()))


_SCOPES = {"cta": nvvm.MemScopeKind.CTA, "cluster": nvvm.MemScopeKind.CLUSTER}
RELEASE_SCOPES = tuple(_SCOPES)


def mbarrier_arrive_cluster(bar: ir.Value, cta_rank: Any, scope: str = "cta") -> None:
    """Arrive on the barrier at `bar`'s offset in CTA `cta_rank` of the cluster (release at `scope`).

    "cta" (CUTLASS's `ClusterBarrier::arrive(cta_id, pred)`: `mbarrier.arrive.shared::cluster`) orders
    only this thread's own accesses and costs a plain arrive; "cluster" (`.release.cluster`) makes ptxas
    emit `MEMBAR.ALL.GPU` before the arrive, which a per-K-tile stage release cannot afford. Releasing a
    stage whose wgmma reads have retired (`wgmma.wait_group`) needs no stronger ordering.
    """
    if scope not in _SCOPES:
        raise ValueError(f"scope must be one of {tuple(_SCOPES)}, got {scope!r}")
    remote = map_shared_rank(bar, cta_rank)
    nvvm.MBarrierArriveOp(None, remote, scope=_SCOPES[scope])


def mbarrier_arrive_expect_tx(bar: ir.Value, tx_bytes: Any) -> None:
    """`mbarrier.arrive.expect_tx.shared.b64 _, [bar], tx_bytes`: expect more bytes, then arrive."""
    if isinstance(tx_bytes, int) and not 0 <= tx_bytes < (1 << 20):
        raise ValueError(f"expect-tx byte count must be in [0, 2**20), got {tx_bytes}")
    nvvm.mbarrier_arrive_expect_tx(None, bar, as_value(tx_bytes, I32()))


def mbarrier_expect_tx(bar: ir.Value, tx_bytes: Any) -> None:
    """`mbarrier.expect_tx`: raise the tx-count by `tx_bytes` without arriving."""
    if isinstance(tx_bytes, int) and not 0 <= tx_bytes < (1 << 20):
        raise ValueError(f"expect-tx byte count must be in [0, 2**20), got {tx_bytes}")
    nvvm.mbarrier_expect_tx(bar, as_value(tx_bytes, I32()))


def mbarrier_try_wait(bar: ir.Value, phase: Any) -> ir.Value:
    """One `mbarrier.try_wait.parity` (may suspend for a while): i1, true when phase `phase` completed."""
    return nvvm.MBarrierTryWaitOp(I1(), bar, as_value(phase, I32())).result


def mbarrier_wait(bar: ir.Value, phase: Any) -> None:
    """Block until the phase of parity `phase` (0 or 1) of `bar` has completed (a try_wait loop)."""
    while_(lambda: ~Bool(mbarrier_try_wait(bar, phase)))

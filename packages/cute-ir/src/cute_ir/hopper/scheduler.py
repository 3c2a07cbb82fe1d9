"""The persistent tile scheduler on the device: cute-nvarch's `TileScheduler` evaluated on run-time `Int`s.

`PersistentScheduler(desc, m, n, k, l, raster_along_n, swizzle_log)` emits, at the insertion point, the
tile counts of the problem, this cluster's id and count, the number of units the cluster walks
(`num_units`) and this CTA's place in its cluster (`cta_m`, `cta_n`: Python 0 along a cluster extent of 1).
`work_unit(i)` emits the `WorkUnit` (m, n, l, k_begin, k_end) of the cluster's `i`-th unit for this CTA,
`edges_whole(mode)` whether the units at the grid's far edge along a mode cover all of K;
`for_each_unit(body)` emits the loop `for i in range(num_units): body(i, work_unit(i))`. The formulas are
the description's own (`IR_OPS` supplies select/min/2**log), so host enumeration and device walk agree.
With `decomposition` "split_k" or "stream_k" (compile-time) and `splits` (run-time split-K parts) the
counts and units are those of cute-nvarch's `KWork` (`work`): units carry K ranges, their part among the
units of their tile and the tile's workspace slot; "data_parallel" emits the walk as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cute_nvarch.tile_scheduler import IntOps, KWork, TileScheduler, WorkUnit
from mlir.dialects import arith

from ..control import for_
from ..special import block_idx_in_cluster, cluster_idx, num_clusters
from ..values import Int, min_, select

__all__ = ["IR_OPS", "PersistentScheduler"]


def _pow2(log: Any) -> Any:
    if isinstance(log, int):
        return 1 << log
    return Int(arith.constant(log.value.type, 1)) << log


def _select(cond: Any, a: Any, b: Any) -> Any:
    if isinstance(cond, bool):
        return a if cond else b
    return select(cond, a, b)


def _min(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return min_(a, b)


IR_OPS = IntOps(select=_select, min=_min, pow2=_pow2)


class PersistentScheduler:
    """This CTA's view of a persistent launch described by a cute-nvarch `TileScheduler` (run-time values)."""

    def __init__(
        self,
        desc: TileScheduler,
        m: Int,
        n: Int,
        k: Int,
        l: Int,
        raster_along_n: Int,
        swizzle_log: Int,
        decomposition: str = "data_parallel",
        splits: Int | int = 1,
    ) -> None:
        if not isinstance(desc, TileScheduler):
            raise TypeError(f"PersistentScheduler: desc must be a cute_nvarch TileScheduler, got {type(desc).__name__}")
        self.desc = desc
        self.m, self.n = m, n  # the problem's extents (edge tiles' origins)
        tiles_m, tiles_n, self.k_tiles = desc.problem_tiles(m, n, k)
        self.cm_tiles, self.cn_tiles = desc.cluster_tiles(tiles_m, tiles_n)
        total = self.cm_tiles * self.cn_tiles * l
        self.cluster_id = Int(cluster_idx(0))
        self.num_clusters = Int(num_clusters(0))
        self.work = None
        if decomposition == "data_parallel":
            self.num_units = desc.units_of_cluster(total, self.cluster_id, self.num_clusters, IR_OPS)
        else:
            self.work = KWork(decomposition, total, self.k_tiles, self.num_clusters, splits, IR_OPS)
            self.num_units = self.work.units_of_cluster(self.cluster_id)
        self.along_n = raster_along_n != 0
        self.swizzle_log = swizzle_log
        self.cta_m = Int(block_idx_in_cluster(0)) if desc.cluster_m > 1 else 0
        self.cta_n = Int(block_idx_in_cluster(1)) if desc.cluster_n > 1 else 0
        self._whole = tuple(desc.edges_whole(self.work, mode, self.cm_tiles, self.cn_tiles, self.along_n,
                                             swizzle_log, IR_OPS) for mode in (0, 1))

    def work_unit(self, i: Int) -> WorkUnit:
        """The WorkUnit of this CTA for the cluster's `i`-th unit (data-parallel: `cluster_id + i * num_clusters`)."""
        if self.work is not None:
            return self.desc.split_work_unit(
                self.work, self.cluster_id, i, self.cta_m, self.cta_n, self.cm_tiles, self.cn_tiles, self.along_n,
                self.swizzle_log, IR_OPS,
            )
        w = self.cluster_id + i * self.num_clusters
        return self.desc.work_unit(
            w, self.cta_m, self.cta_n, self.cm_tiles, self.cn_tiles, self.k_tiles, self.along_n, self.swizzle_log,
            IR_OPS,
        )

    def edges_whole(self, mode: int) -> Any:
        """Whether the units of the last two unit rows (mode 0) or columns (mode 1) cover their tiles' whole K
        (`TileScheduler.edges_whole`: True, or a run-time Bool under stream-K, emitted with the counts)."""
        return self._whole[mode]

    def for_each_unit(self, body: Callable[[Int, WorkUnit], None]) -> None:
        """Emit the cluster's unit loop: `body(i, work_unit(i))` for i in [0, num_units)."""
        for_(0, self.num_units, 1, lambda i: body(i, self.work_unit(i)))

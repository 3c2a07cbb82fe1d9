"""The persistent tile scheduler: one description of which CTA computes which output tile, for host and device.

A `TileScheduler` holds the static part (CTA tile (M, N, K) and cluster (M, N) shape). The problem
(M, N, K, L) gives the tile counts; a launch picks a raster order and swizzle (`pick_order`) and a grid
of clusters for the SM count (`grid`). Cluster `c` of `num_clusters` walks the cluster-shaped *units*
`w = c, c + num_clusters, ...` (`units_of_cluster` of them); each unit is one cluster-shaped block of
CTA tiles of one batch, and the CTA at (x, y) of its cluster takes the `WorkUnit` (m, n, l, k_begin,
k_end) of its tile: a data-parallel unit covers all of K (k_begin 0, k_end the K-tile count). Kinds of
units that split K (stream-K, split-K) would add units with other K ranges without changing that
interface.

Inside a batch the units are ordered by a raster with a swizzle (the grouped order of Triton's matmul
tutorial and CUTLASS's swizzled rasterization): units come in groups of `2**swizzle_log` rows of the
"minor" dimension (N when rastering along M, M when along N); inside a group consecutive units cycle
through the group's rows and then step along the "major" dimension, so that concurrently running tiles
share A and B panels in L2. The last group may be narrower. `swizzle_log = 0` is plain raster order:
along M (`along_n` false) it is column-major over the tiles.

The arithmetic is written once and runs on Python ints (host, tests) or on a compiler's run-time integers
(cute-ir's `Int`): `+ - * // % <<` and comparisons come from the operands, the three other operations
from an `IntOps` (`PY_OPS` for ints; cute-ir supplies its own).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "MAX_SWIZZLE_LOG",
    "PY_OPS",
    "IntOps",
    "TileScheduler",
    "WorkUnit",
]

MAX_SWIZZLE_LOG = 4  # largest swizzle_log a launch may ask for (groups of 16 rows)
_PICK_SWIZZLE_LOG = 3  # the host's pick groups at most 8 rows


class WorkUnit(NamedTuple):
    """One CTA's work: output tile (m, n) of batch l (in CTA tiles), K tiles [k_begin, k_end)."""

    m: Any
    n: Any
    l: Any
    k_begin: Any
    k_end: Any


@dataclass(frozen=True)
class IntOps:
    """The operations the schedule needs beyond Python operators: select(cond, a, b), min(a, b), 2**log."""

    select: Any
    min: Any
    pow2: Any


PY_OPS = IntOps(
    select=lambda c, a, b: a if c else b,
    min=min,
    pow2=lambda log: 1 << log,
)


def _ceil_div(a: Any, b: int) -> Any:
    return (a + (b - 1)) // b


def _positive(name: str, v: object) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ValueError(f"TileScheduler: {name} must be an int >= 1, got {v!r}")
    return v


@dataclass(frozen=True)
class TileScheduler:
    """The static persistent schedule of a kernel: CTA tile (tile_m, tile_n, tile_k), cluster (cluster_m, cluster_n)."""

    tile_m: int
    tile_n: int
    tile_k: int
    cluster_m: int = 1
    cluster_n: int = 1

    def __post_init__(self) -> None:
        for f in ("tile_m", "tile_n", "tile_k", "cluster_m", "cluster_n"):
            _positive(f, getattr(self, f))
        if self.cluster_size > 16:
            raise ValueError(f"TileScheduler: a cluster has at most 16 CTAs, got {self.cluster_m}x{self.cluster_n}")

    @property
    def cluster_size(self) -> int:
        """CTAs per cluster."""
        return self.cluster_m * self.cluster_n

    # --- tile counts (ints or run-time integers) ------------------------------------------------------
    def problem_tiles(self, m: Any, n: Any, k: Any) -> tuple[Any, Any, Any]:
        """(M tiles, N tiles, K tiles) of an M x N x K problem, partial tiles counted."""
        return _ceil_div(m, self.tile_m), _ceil_div(n, self.tile_n), _ceil_div(k, self.tile_k)

    def cluster_tiles(self, tiles_m: Any, tiles_n: Any) -> tuple[Any, Any]:
        """(units along M, units along N): cluster-shaped blocks of CTA tiles, partial ones counted."""
        return _ceil_div(tiles_m, self.cluster_m), _ceil_div(tiles_n, self.cluster_n)

    def units_of_tiles(self, tiles_m: Any, tiles_n: Any, l: Any) -> Any:
        """Work units (cluster-shaped blocks of tiles) of a tiles_m x tiles_n grid of CTA tiles per batch."""
        return _ceil_div(tiles_m, self.cluster_m) * _ceil_div(tiles_n, self.cluster_n) * l

    def num_units(self, m: int, n: int, l: int) -> int:
        """Work units of an M x N x L problem."""
        return self.units_of_tiles(_ceil_div(m, self.tile_m), _ceil_div(n, self.tile_n), l)

    # --- the launch (host) ----------------------------------------------------------------------------
    def max_clusters(self, num_sms: int) -> int:
        """Clusters that run at once on `num_sms` SMs (at least one)."""
        if type(num_sms) is not int or num_sms < 1:
            _positive("num_sms", num_sms)
        return max(1, num_sms // (self.cluster_m * self.cluster_n))

    def num_clusters(self, m: int, n: int, l: int, num_sms: int) -> int:
        """Clusters of the persistent launch: one per unit up to what fits on the SMs."""
        return max(1, min(self.num_units(m, n, l), self.max_clusters(num_sms)))

    def grid(self, m: int, n: int, l: int, num_sms: int) -> tuple[int, int, int]:
        """The launch grid in CTAs: (cluster_m * clusters, cluster_n, 1)."""
        return (self.cluster_m * self.num_clusters(m, n, l, num_sms), self.cluster_n, 1)

    def pick_order(self, m: int, n: int, l: int, num_sms: int) -> tuple[int, int]:
        """(raster_along_n, swizzle_log): raster along the longer side of the unit grid, and group
        2**swizzle_log (up to 8) rows of the other side when there are more units than clusters."""
        tiles_m, tiles_n, _ = self.problem_tiles(m, n, 1)
        cm, cn = self.cluster_tiles(tiles_m, tiles_n)
        units = cm * cn * l
        clusters = self.num_clusters(m, n, l, num_sms)
        along_n = 1 if cn > cm else 0
        minor = cm if along_n else cn
        swz = 0
        while swz < _PICK_SWIZZLE_LOG and (2 << swz) <= minor and units > clusters:
            swz += 1
        return along_n, swz

    @staticmethod
    def check_order(raster_along_n: object = None, swizzle_log: object = None) -> None:
        """ValueError unless raster_along_n (when given) is 0 or 1 and swizzle_log an int in [0, MAX_SWIZZLE_LOG]."""
        if raster_along_n is not None and raster_along_n not in (0, 1):
            raise ValueError(f"raster_along_n must be 0 or 1, got {raster_along_n!r}")
        if swizzle_log is not None and (
            not isinstance(swizzle_log, int) or isinstance(swizzle_log, bool) or not 0 <= swizzle_log <= MAX_SWIZZLE_LOG
        ):
            raise ValueError(f"swizzle_log must be an int in [0, {MAX_SWIZZLE_LOG}], got {swizzle_log!r}")

    # --- the walk (ints or run-time integers) ---------------------------------------------------------
    @staticmethod
    def units_of_cluster(total: Any, cluster_id: Any, num_clusters: Any, ops: IntOps = PY_OPS) -> Any:
        """Units cluster `cluster_id` of `num_clusters` takes out of `total`: ceil((total - id) / n), >= 0."""
        remaining = ops.select(total > cluster_id, total - cluster_id, 0)
        return (remaining + num_clusters - 1) // num_clusters

    @staticmethod
    def raster_unit(
        r: Any, cm_tiles: Any, cn_tiles: Any, along_n: Any, swizzle_log: Any, ops: IntOps = PY_OPS
    ) -> tuple[Any, Any]:
        """(unit m, unit n) of the `r`-th unit of a batch of cm_tiles x cn_tiles units."""
        major_tiles = ops.select(along_n, cn_tiles, cm_tiles)
        minor_tiles = ops.select(along_n, cm_tiles, cn_tiles)
        gsize = ops.pow2(swizzle_log)
        per_group = gsize * major_tiles
        g = r // per_group
        within = r % per_group
        first_minor = g * gsize
        rows = ops.min(minor_tiles - first_minor, gsize)
        minor = first_minor + within % rows
        major = within // rows
        return ops.select(along_n, minor, major), ops.select(along_n, major, minor)

    @classmethod
    def unit_coords(
        cls, unit: Any, cm_tiles: Any, cn_tiles: Any, along_n: Any, swizzle_log: Any, ops: IntOps = PY_OPS
    ) -> tuple[Any, Any, Any]:
        """(unit m, unit n, batch) of work unit `unit`."""
        per_batch = cm_tiles * cn_tiles
        batch = unit // per_batch
        um, un = cls.raster_unit(unit % per_batch, cm_tiles, cn_tiles, along_n, swizzle_log, ops)
        return um, un, batch

    def work_unit(
        self,
        unit: Any,
        cta_m: Any,
        cta_n: Any,
        cm_tiles: Any,
        cn_tiles: Any,
        k_tiles: Any,
        along_n: Any,
        swizzle_log: Any,
        ops: IntOps = PY_OPS,
    ) -> WorkUnit:
        """The WorkUnit of the CTA at (cta_m, cta_n) of its cluster for unit `unit` (data-parallel: all of K)."""
        um, un, batch = self.unit_coords(unit, cm_tiles, cn_tiles, along_n, swizzle_log, ops)
        return WorkUnit(um * self.cluster_m + cta_m, un * self.cluster_n + cta_n, batch, 0, k_tiles)

    def work_units(
        self, m: int, n: int, k: int, l: int, num_clusters: int, raster_along_n: int, swizzle_log: int
    ) -> Iterator[tuple[int, int, WorkUnit]]:
        """Every (cluster id, CTA rank in the cluster, WorkUnit) the launch runs, in each CTA's order (host)."""
        self.check_order(raster_along_n, swizzle_log)
        tiles_m, tiles_n, k_tiles = self.problem_tiles(m, n, k)
        cm, cn = self.cluster_tiles(tiles_m, tiles_n)
        total = cm * cn * l
        for cid in range(num_clusters):
            for i in range(self.units_of_cluster(total, cid, num_clusters)):
                w = cid + i * num_clusters
                for y in range(self.cluster_n):
                    for x in range(self.cluster_m):
                        yield cid, x + self.cluster_m * y, self.work_unit(
                            w, x, y, cm, cn, k_tiles, raster_along_n, swizzle_log
                        )

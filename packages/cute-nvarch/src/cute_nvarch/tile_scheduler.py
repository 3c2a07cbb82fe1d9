"""The persistent tile scheduler: one description of which CTA computes which output tile, for host and device.

A `TileScheduler` holds the static part (CTA tile (M, N, K) and cluster (M, N) shape). The problem
(M, N, K, L) gives the tile counts; a launch picks a raster order and swizzle (`pick_order`) and a grid
of clusters for the SM count (`grid`). Cluster `c` of `num_clusters` walks the cluster-shaped *units*
`w = c, c + num_clusters, ...` (`units_of_cluster` of them); each unit is one cluster-shaped block of
CTA tiles of one batch, and the CTA at (x, y) of its cluster takes the `WorkUnit` (m, n, l, k_begin,
k_end) of its tile: a data-parallel unit covers all of K (k_begin 0, k_end the K-tile count).

Units that split K are the other kinds of a `Decomposition` (`KWork` evaluates one launch's counts):
- "split_k": with T tiles on P clusters, the tiles of the last, partial wave (`dp_tiles` = T - T % P data-parallel
  ones first where T > P; all tiles where T <= P) have their K tiles in S = min(splits, K tiles) even parts; unit
  w >= dp_tiles is part `(w - dp_tiles) % S` of tile `dp_tiles + (w - dp_tiles) // S`, so a tile's parts run on
  consecutive clusters at once, and every split tile's part i covers the same K range as every other's (the
  clusters of the split round read the same K slices, which L2 shares);
- "stream_k" (CUTLASS's SM90 stream-K model, in the Stream-K paper's "two-tile stream-K + data-parallel"
  form): with P clusters and T tiles, the K iterations of the last T % P tiles plus, where T > P, one full
  wave more (`sk_tiles`: each worker then has one to two tiles of iterations, so a tile is shared by at most two
  workers and its final part reads at most one partial, where a thin remainder spread over all P workers shared
  a tile among up to P / (T % P) of them) are spread evenly (tile-major: iteration t * k_tiles + kt)
  over W = min(P, iterations // MIN_STREAM_K_ITERS) (at least one) stream-K workers, cluster j < W being
  worker j; the other tiles are data-parallel waves. A worker's range crosses tiles, so it is one unit per
  tile it touches; it walks its whole tiles first, then its last tile (where partial, the head of one it shares
  with the next worker: K from 0), then its first (the tail of one shared with the previous worker, ending at
  the tile's last K tile) and then its data-parallel tiles. The workers so stay in K step: over the shared
  phase's I iterations, at iteration tau a whole tile or a leading head reads K tile tau, a head after a whole
  tile tau - k_tiles and every tail tau - (I - k_tiles), three K positions for all workers (walking the head
  first put each worker's whole tile at its own K offset: 3.8x the data-parallel launch's DRAM bytes on
  2895 x 4096 x 14336). The shared tiles are the first `sk_tiles` of the raster (they run first, together), the
  data-parallel ones the rest.
Every unit also carries `part` (its index among the units of its tile, in K order), `parts` (how many units
share the tile) and `slot` (the shared tile's index: its arrival counter). The fix-up is parallel and
deterministic: every part i < parts - 1 stores its partial accumulators in its own workspace tile
(`KWork.partial(slot, i)`) without waiting and signals the tile's counter; part `parts - 1` (the one with
the tile's last K range) waits until all others have signalled, adds their partials in the fixed order
0, 1, ..., parts - 2 and finishes the tile. Only final parts wait, and only for non-final units of smaller
launch-wide index (split-K: units w - parts + 1 .. w - 1; stream-K: lower workers' heads, walked before
their tails), which never wait, so a launch whose clusters are all resident always progresses. Partial tiles:
split-K (parts - 1) per tile; stream-K one per worker (a worker is a non-final part only of its last tile).

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
    "DECOMPOSITIONS",
    "MAX_SWIZZLE_LOG",
    "MIN_STREAM_K_ITERS",
    "PY_OPS",
    "Decomposition",
    "IntOps",
    "KWork",
    "TileScheduler",
    "WorkUnit",
]

MAX_SWIZZLE_LOG = 4  # largest swizzle_log a launch may ask for (groups of 16 rows)
_PICK_SWIZZLE_LOG = 3  # the host's pick groups at most 8 rows
DECOMPOSITIONS = ("data_parallel", "split_k", "stream_k")
MIN_STREAM_K_ITERS = 2  # K tiles a stream-K worker gets at least (fewer workers when there are few iterations)
MAX_SPLITS = 64  # split-K parts per tile a launch may ask for


class WorkUnit(NamedTuple):
    """One CTA's work: output tile (m, n) of batch l (in CTA tiles), K tiles [k_begin, k_end); `part` of `parts`
    units sharing the tile (K order) and the shared tile's workspace `slot` (0 and 1 unit when not shared)."""

    m: Any
    n: Any
    l: Any
    k_begin: Any
    k_end: Any
    part: Any = 0
    parts: Any = 1
    slot: Any = 0


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


def _max(a: Any, b: Any, ops: IntOps) -> Any:
    return ops.select(a > b, a, b)


@dataclass(frozen=True)
class Decomposition:
    """How a launch splits the K loop: `kind` in DECOMPOSITIONS; `splits` = split-K parts per tile (else 1)."""

    kind: str = "data_parallel"
    splits: int = 1

    def __post_init__(self) -> None:
        if self.kind not in DECOMPOSITIONS:
            raise ValueError(f"decomposition kind must be one of {DECOMPOSITIONS}, got {self.kind!r}")
        if not isinstance(self.splits, int) or isinstance(self.splits, bool):
            raise ValueError(f"splits must be an int, got {self.splits!r}")
        if self.kind == "split_k" and not 2 <= self.splits <= MAX_SPLITS:
            raise ValueError(f"split_k needs splits in [2, {MAX_SPLITS}], got {self.splits}")
        if self.kind != "split_k" and self.splits != 1:
            raise ValueError(f"splits must be 1 for {self.kind}, got {self.splits}")

    @property
    def shares_tiles(self) -> bool:
        """Whether units may share a tile (a workspace and flags are needed)."""
        return self.kind != "data_parallel"


class KWork:
    """One launch's unit counts of a decomposition kind over `tiles` cluster tiles of `k_tiles` K tiles on
    `num_clusters` clusters (`splits`: split-K's requested parts), on ints or run-time integers.

    `units_of_cluster(c)` is how many units cluster c walks; `unit(c, i)` its i-th as (cluster tile index,
    k_begin, k_end, part, parts, slot); `partial(slot, part)` the workspace tile of a non-final part's partial.
    Attributes: `splits` (split-K's effective S), `dp_tiles` (split-K's data-parallel tiles: the whole waves past
    one), `sk_tiles` (tiles shared by stream-K workers), `workers` (W),
    `iters` (stream-K iterations), `shared_tiles` (arrival counters), `partial_tiles` (workspace partial tiles).
    """

    def __init__(self, kind: str, tiles: Any, k_tiles: Any, num_clusters: Any, splits: Any = 1,
                 ops: IntOps = PY_OPS) -> None:
        if kind not in DECOMPOSITIONS:
            raise ValueError(f"decomposition kind must be one of {DECOMPOSITIONS}, got {kind!r}")
        self.kind, self.tiles, self.k_tiles, self.num_clusters, self.ops = kind, tiles, k_tiles, num_clusters, ops
        self.splits, self.sk_tiles, self.workers, self.iters, self.shared_tiles = 1, 0, 0, 0, 0
        self.dp_tiles = 0
        if kind == "split_k":
            self.splits = ops.min(splits, k_tiles)
            self.dp_tiles = ops.select(tiles > num_clusters, tiles - tiles % num_clusters, 0)
            self.shared_tiles = tiles - self.dp_tiles
        elif kind == "stream_k":
            # the remainder's tiles, plus one full wave where the launch has one to spare (see the module doc)
            rem = tiles % num_clusters
            self.sk_tiles = rem + ops.select(rem > 0, ops.select(tiles > num_clusters, num_clusters, 0), 0)
            self.iters = self.sk_tiles * k_tiles
            some = _max(ops.min(num_clusters, self.iters // MIN_STREAM_K_ITERS), 1, ops)
            self.workers = ops.select(self.iters > 0, some, 0)
            self.shared_tiles = self.sk_tiles

    @property
    def partial_tiles(self) -> Any:
        """Cluster tiles of partial accumulators in the workspace (split-K: parts - 1 per tile; stream-K: one per
        worker)."""
        if self.kind == "split_k":
            return self.shared_tiles * (self.splits - 1)
        return self.workers

    def partial(self, slot: Any, part: Any) -> Any:
        """The workspace tile where non-final `part` of shared tile `slot` leaves its partial accumulators."""
        if self.kind == "split_k":
            return slot * (self.splits - 1) + part
        return self._worker_of(slot * self.k_tiles) + part  # stream-K: the worker's own tile

    @property
    def total_units(self) -> Any:
        """Units of the launch (stream-K: with one per worker; see `units_of_cluster` for the pieces)."""
        if self.kind == "split_k":
            return self.dp_tiles + self.shared_tiles * self.splits
        if self.kind == "stream_k":
            return self.tiles - self.sk_tiles + self.workers
        return self.tiles

    def _worker_range(self, c: Any) -> tuple[Any, Any]:
        """Stream-K worker c's iterations [begin, end) (empty past the last worker)."""
        w = _max(self.workers, 1, self.ops)
        return self.ops.min(c, self.workers) * self.iters // w, self.ops.min(c + 1, self.workers) * self.iters // w

    def _worker_of(self, it: Any) -> Any:
        """The stream-K worker whose range holds iteration `it`."""
        return ((it + 1) * self.workers - 1) // _max(self.iters, 1, self.ops)

    def _sk_pieces(self, c: Any) -> Any:
        begin, end = self._worker_range(c)
        kt = self.k_tiles
        return self.ops.select(end > begin, (end - 1) // kt - begin // kt + 1, 0)

    def units_of_cluster(self, c: Any) -> Any:
        """Units cluster `c` walks."""
        ops = self.ops
        if self.kind == "split_k":
            return TileScheduler.units_of_cluster(self.total_units, c, self.num_clusters, ops)
        if self.kind == "stream_k":
            dp = TileScheduler.units_of_cluster(self.tiles - self.sk_tiles, c, self.num_clusters, ops)
            return self._sk_pieces(c) + dp
        return TileScheduler.units_of_cluster(self.tiles, c, self.num_clusters, ops)

    def unit(self, c: Any, i: Any) -> tuple[Any, Any, Any, Any, Any, Any]:
        """(cluster tile, k_begin, k_end, part, parts, slot) of cluster c's i-th unit."""
        ops, kt, p = self.ops, self.k_tiles, self.num_clusters
        if self.kind == "split_k":
            s = self.splits
            w = c + i * p
            dp = w < self.dp_tiles
            shared = ops.select(dp, 0, w - self.dp_tiles)
            slot, part = shared // s, shared % s
            return (
                ops.select(dp, w, self.dp_tiles + slot),
                ops.select(dp, 0, part * kt // s),
                ops.select(dp, kt, (part + 1) * kt // s),
                ops.select(dp, 0, part),
                ops.select(dp, 1, s),
                slot,
            )
        if self.kind == "data_parallel":
            return c + i * p, 0, kt, 0, 1, 0
        begin, end = self._worker_range(c)
        pieces = self._sk_pieces(c)
        sk = i < pieces
        first_tile = begin // kt
        # walked from the second tile up to the last, then the first (see the module doc)
        t = ops.select(sk, ops.select(i < pieces - 1, first_tile + 1 + i, first_tile), 0)
        t0 = t * kt
        first = self._worker_of(t0)
        sk_part = c - first
        sk_parts = self._worker_of(t0 + kt - 1) - first + 1
        dp_tile = self.sk_tiles + c + (i - pieces) * p
        return (
            ops.select(sk, t, dp_tile),
            ops.select(sk, _max(begin, t0, ops) - t0, 0),
            ops.select(sk, ops.min(end, t0 + kt) - t0, kt),
            ops.select(sk, sk_part, 0),
            ops.select(sk, sk_parts, 1),
            t,
        )


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
    def edge_units_from(mode: int, cm_tiles: Any, cn_tiles: Any, along_n: Any, swizzle_log: Any,
                        ops: IntOps = PY_OPS) -> Any:
        """The least raster index (in batch 0) of a unit in the last two unit rows (mode 0: along M) or columns
        (mode 1: along N) of a cm_tiles x cn_tiles grid (ints or run-time integers): every unit of a smaller index
        lies outside them, in every batch."""
        last2 = _max((cm_tiles if mode == 0 else cn_tiles) - 2, 0, ops)
        major_tiles = ops.select(along_n, cn_tiles, cm_tiles)
        minor_tiles = ops.select(along_n, cm_tiles, cn_tiles)
        gsize = ops.pow2(swizzle_log)
        # across the raster (the minor mode): the first column of the group holding row `last2`
        as_minor = (last2 // gsize) * gsize * major_tiles + last2 % gsize
        # along the raster (the major mode): column `last2` of the first group
        as_major = last2 * ops.min(minor_tiles, gsize)
        return ops.select(along_n, as_minor, as_major) if mode == 0 else ops.select(along_n, as_major, as_minor)

    @classmethod
    def edges_whole(cls, work: KWork | None, mode: int, cm_tiles: Any, cn_tiles: Any, along_n: Any,
                    swizzle_log: Any, ops: IntOps = PY_OPS) -> Any:
        """Whether every unit in the last two unit rows (mode 0) or columns (mode 1) covers its tiles' whole K
        (True without stream-K; ints or run-time integers): stream-K shares the first `sk_tiles` of the raster,
        so where those end before `edge_units_from` an edge tile and its neighbour run the same K loop."""
        if work is None or work.kind != "stream_k":
            return True
        return work.sk_tiles <= cls.edge_units_from(mode, cm_tiles, cn_tiles, along_n, swizzle_log, ops)

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

    def split_work_unit(
        self,
        work: KWork,
        cluster_id: Any,
        i: Any,
        cta_m: Any,
        cta_n: Any,
        cm_tiles: Any,
        cn_tiles: Any,
        along_n: Any,
        swizzle_log: Any,
        ops: IntOps = PY_OPS,
    ) -> WorkUnit:
        """The WorkUnit of the CTA at (cta_m, cta_n) of cluster `cluster_id` for its `i`-th unit of `work`
        (`slot` counts CTA tiles: the shared cluster tile's slot times the cluster size plus the CTA's rank)."""
        tile, k_begin, k_end, part, parts, slot = work.unit(cluster_id, i)
        um, un, batch = self.unit_coords(tile, cm_tiles, cn_tiles, along_n, swizzle_log, ops)
        rank = cta_m + self.cluster_m * cta_n
        return WorkUnit(
            um * self.cluster_m + cta_m, un * self.cluster_n + cta_n, batch, k_begin, k_end, part, parts,
            slot * self.cluster_size + rank,
        )

    def k_work(self, decomp: Decomposition, m: int, n: int, k: int, l: int, num_clusters: int) -> KWork:
        """The KWork of a launch of `num_clusters` clusters for an M x N x K x L problem (host)."""
        tiles_m, tiles_n, k_tiles = self.problem_tiles(m, n, k)
        return KWork(decomp.kind, self.units_of_tiles(tiles_m, tiles_n, l), k_tiles, num_clusters, decomp.splits)

    def decomposed_clusters(self, decomp: Decomposition, m: int, n: int, k: int, l: int, num_sms: int) -> int:
        """Clusters of a launch with `decomp`: one per unit up to what fits (stream-K: all that fit)."""
        if decomp.kind == "stream_k":
            return self.max_clusters(num_sms)
        if decomp.kind == "split_k":  # every cluster once the tiles fill a wave, else one per unit
            tiles_m, tiles_n, k_tiles = self.problem_tiles(m, n, k)
            parts = min(decomp.splits, k_tiles)
            return max(1, min(self.units_of_tiles(tiles_m, tiles_n, l) * parts, self.max_clusters(num_sms)))
        return self.num_clusters(m, n, l, num_sms)

    def workspace_tiles(self, decomp: Decomposition, m: int, n: int, k: int, l: int, num_clusters: int) -> int:
        """CTA tiles with an arrival counter (shared tiles) a launch needs (0 when no tile is shared)."""
        if not decomp.shares_tiles:
            return 0
        return self.k_work(decomp, m, n, k, l, num_clusters).shared_tiles * self.cluster_size

    def partial_tiles(self, decomp: Decomposition, m: int, n: int, k: int, l: int, num_clusters: int) -> int:
        """CTA tiles of partial accumulators in the workspace of a launch (0 when no tile is shared)."""
        if not decomp.shares_tiles:
            return 0
        return self.k_work(decomp, m, n, k, l, num_clusters).partial_tiles * self.cluster_size

    def work_units(
        self,
        m: int,
        n: int,
        k: int,
        l: int,
        num_clusters: int,
        raster_along_n: int,
        swizzle_log: int,
        decomp: Decomposition | None = None,
    ) -> Iterator[tuple[int, int, WorkUnit]]:
        """Every (cluster id, CTA rank in the cluster, WorkUnit) the launch runs, in each CTA's order (host)."""
        self.check_order(raster_along_n, swizzle_log)
        tiles_m, tiles_n, k_tiles = self.problem_tiles(m, n, k)
        cm, cn = self.cluster_tiles(tiles_m, tiles_n)
        total = cm * cn * l
        work = None if decomp is None or not decomp.shares_tiles else self.k_work(decomp, m, n, k, l, num_clusters)
        for cid in range(num_clusters):
            count = self.units_of_cluster(total, cid, num_clusters) if work is None else work.units_of_cluster(cid)
            for i in range(count):
                w = cid + i * num_clusters
                for y in range(self.cluster_n):
                    for x in range(self.cluster_m):
                        if work is None:
                            wu = self.work_unit(w, x, y, cm, cn, k_tiles, raster_along_n, swizzle_log)
                        else:
                            wu = self.split_work_unit(work, cid, i, x, y, cm, cn, raster_along_n, swizzle_log)
                        yield cid, x + self.cluster_m * y, wu

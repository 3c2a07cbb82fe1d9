"""The static persistent tile schedule: work unit -> (tile_m, tile_n, batch), on Python ints or cute_ir Ints.

The same functions run at build time on SSA integers (`cute_ir.values.Int`, emitting `arith`) inside the
kernel and on Python ints in tests and on the host, so the order the kernel walks is testable on a CPU.

A work unit is one cluster-shaped block of CTA tiles of one batch; cluster `c` of `num_clusters` takes
units `c, c + num_clusters, ...`. Inside a batch the units are ordered by a raster with a swizzle (the
grouped order of Triton's matmul tutorial and CUTLASS's swizzled rasterization): units come in groups
of `2**swizzle_log` rows of the "minor" dimension (N when rastering along M, M when along N); inside a
group consecutive units cycle through the group's rows and then step along the "major" dimension, so
that concurrently running tiles share A and B panels in L2. The last group may be narrower.
`swizzle_log = 0` is plain raster order: along M (`along_n` false) it is column-major over the tiles.
"""

from __future__ import annotations

from typing import Any

__all__ = ["num_units", "raster_tile", "unit_tile"]


def _select(cond: Any, a: Any, b: Any) -> Any:
    if isinstance(cond, bool):
        return a if cond else b
    from cute_ir.values import select

    return select(cond, a, b)


def _min(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    from cute_ir.values import min_

    return min_(a, b)


def _pow2(log: Any) -> Any:
    if isinstance(log, int):
        return 1 << log
    from cute_ir.values import Int
    from mlir.dialects import arith

    return Int(arith.constant(log.value.type, 1)) << log


def raster_tile(r: Any, cm_tiles: Any, cn_tiles: Any, along_n: Any, swizzle_log: Any) -> tuple[Any, Any]:
    """(cluster-tile m, cluster-tile n) of the `r`-th unit of a batch of cm_tiles x cn_tiles units."""
    major_tiles = _select(along_n, cn_tiles, cm_tiles)
    minor_tiles = _select(along_n, cm_tiles, cn_tiles)
    gsize = _pow2(swizzle_log)
    per_group = gsize * major_tiles
    g = r // per_group
    within = r % per_group
    first_minor = g * gsize
    rows = _min(minor_tiles - first_minor, gsize)
    minor = first_minor + within % rows
    major = within // rows
    return _select(along_n, minor, major), _select(along_n, major, minor)


def unit_tile(
    unit: Any, cm_tiles: Any, cn_tiles: Any, along_n: Any, swizzle_log: Any
) -> tuple[Any, Any, Any]:
    """(cluster-tile m, cluster-tile n, batch) of work unit `unit`."""
    per_batch = cm_tiles * cn_tiles
    batch = unit // per_batch
    cm, cn = raster_tile(unit % per_batch, cm_tiles, cn_tiles, along_n, swizzle_log)
    return cm, cn, batch


def num_units(total: Any, cluster_id: Any, num_clusters: Any) -> Any:
    """Units cluster `cluster_id` of `num_clusters` takes out of `total`: ceil((total - id) / n), >= 0."""
    remaining = _select(total > cluster_id, total - cluster_id, 0)
    return (remaining + num_clusters - 1) // num_clusters

"""The persistent tile scheduler: every output tile exactly once, the unit order, the launch, the rules."""

from __future__ import annotations

import itertools

import pytest
from cute_nvarch.tile_scheduler import MAX_SWIZZLE_LOG, TileScheduler, WorkUnit
from hypothesis import given, settings
from hypothesis import strategies as st

TILES = ((64, 64), (128, 128), (128, 256), (64, 256))
CLUSTERS = ((1, 1), (2, 1), (1, 2), (2, 2), (4, 1), (1, 4))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 3000),
    st.integers(1, 3000),
    st.integers(1, 700),
    st.integers(1, 3),
    st.sampled_from(TILES),
    st.sampled_from(CLUSTERS),
    st.integers(0, 1),
    st.integers(0, MAX_SWIZZLE_LOG),
    st.integers(1, 140),
)
def test_work_units_cover_every_tile_once(m, n, k, l, tile, cluster, along_n, swz, num_sms):
    sched = TileScheduler(*tile, 64, *cluster)
    clusters = sched.num_clusters(m, n, l, num_sms)
    tiles_m, tiles_n, k_tiles = sched.problem_tiles(m, n, k)
    seen = {}
    ctas = set()
    for cid, rank, wu in sched.work_units(m, n, k, l, clusters, along_n, swz):
        assert isinstance(wu, WorkUnit) and (wu.k_begin, wu.k_end) == (0, k_tiles)  # data-parallel: all of K
        ctas.add((cid, rank))
        if wu.m < tiles_m and wu.n < tiles_n:  # CTAs of a cluster past the matrix edge own no tile
            assert (wu.m, wu.n, wu.l) not in seen, (wu, seen.get((wu.m, wu.n, wu.l)))
            seen[(wu.m, wu.n, wu.l)] = (cid, rank)
    assert set(seen) == set(itertools.product(range(tiles_m), range(tiles_n), range(l)))
    assert len(ctas) == clusters * sched.cluster_size  # every launched CTA has work
    grid = sched.grid(m, n, l, num_sms)
    assert grid == (cluster[0] * clusters, cluster[1], 1) and clusters <= max(1, num_sms // sched.cluster_size)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 10000), st.integers(1, 200))
def test_clusters_split_the_units(total, clusters):
    counts = [TileScheduler.units_of_cluster(total, c, clusters) for c in range(clusters)]
    assert sum(counts) == total and max(counts) - min(counts) <= 1


def test_unit_orders():
    # plain raster along M is column-major; along N row-major; swizzled groups of two N columns
    def order(cm, cn, along_n, swz):
        return [TileScheduler.unit_coords(u, cm, cn, along_n, swz)[:2] for u in range(cm * cn)]

    assert order(3, 2, False, 0) == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
    assert order(2, 3, True, 0) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert order(2, 3, False, 1) == [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (1, 2)]
    # batches follow one another; a unit's CTA tiles are the cluster's block
    assert TileScheduler.unit_coords(7, 2, 3, False, 0) == (1, 0, 1)
    sched = TileScheduler(128, 256, 64, 2, 1)
    assert sched.work_unit(1, 1, 0, 2, 3, 9, False, 0) == WorkUnit(3, 0, 0, 0, 9)


def test_launch_and_order_pick():
    sched = TileScheduler(128, 256, 64, 2, 1)
    assert sched.problem_tiles(8192, 8192, 8192) == (64, 32, 128)
    assert sched.num_units(8192, 8192, 1) == 32 * 32
    assert sched.grid(8192, 8192, 1, 132) == (132, 1, 1)  # 66 clusters of 2 CTAs
    assert sched.pick_order(8192, 8192, 1, 132) == (0, 3)  # more units than clusters: groups of 8
    small = TileScheduler(64, 64, 64, 2, 2)
    assert small.grid(1, 8, 1, 132) == (2, 2, 1) and small.pick_order(1, 8, 1, 132) == (0, 0)
    wide = TileScheduler(128, 128, 64)
    assert wide.pick_order(128, 128 * 40, 1, 8)[0] == 1  # rasters along the longer side (N)


def test_rules():
    with pytest.raises(ValueError, match="tile_m must be an int >= 1"):
        TileScheduler(0, 64, 64)
    with pytest.raises(ValueError, match="at most 16 CTAs"):
        TileScheduler(64, 64, 64, 4, 8)
    with pytest.raises(ValueError, match="raster_along_n must be 0 or 1"):
        TileScheduler.check_order(2, None)
    with pytest.raises(ValueError, match="swizzle_log must be an int in"):
        TileScheduler.check_order(None, MAX_SWIZZLE_LOG + 1)
    with pytest.raises(ValueError, match="num_sms must be an int >= 1"):
        TileScheduler(64, 64, 64).grid(64, 64, 1, 0)

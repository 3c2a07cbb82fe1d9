"""The persistent tile scheduler: every output tile exactly once, the unit order, the launch, the rules."""

from __future__ import annotations

import itertools

import pytest
from cute_nvarch.tile_scheduler import MAX_SWIZZLE_LOG, TileScheduler, WorkUnit
from hypothesis import given, settings
from hypothesis import strategies as st

TILES = ((64, 64), (128, 128), (128, 256), (64, 256), (256, 128))
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


def _check_cover(sched, decomp, m, n, k, l, num_sms, along_n, swz):
    """Every (tile, K tile) exactly once; each tile's units in K order with parts 0..parts-1; workspace slots."""
    from cute_nvarch.tile_scheduler import Decomposition  # noqa: F401 - the type under test

    clusters = sched.decomposed_clusters(decomp, m, n, k, l, num_sms)
    assert 1 <= clusters <= sched.max_clusters(num_sms)
    tiles_m, tiles_n, k_tiles = sched.problem_tiles(m, n, k)
    slots = sched.workspace_tiles(decomp, m, n, k, l, clusters)
    per_tile: dict = {}
    for _cid, _rank, wu in sched.work_units(m, n, k, l, clusters, along_n, swz, decomp):
        assert 0 <= wu.k_begin < wu.k_end <= k_tiles, wu
        if wu.m < tiles_m and wu.n < tiles_n:
            per_tile.setdefault((wu.m, wu.n, wu.l), []).append(wu)
    assert set(per_tile) == set(itertools.product(range(tiles_m), range(tiles_n), range(l)))
    used_slots = set()
    for units in per_tile.values():
        units.sort(key=lambda u: u.k_begin)
        assert [u.part for u in units] == list(range(len(units)))  # K order is part order
        assert all(u.parts == len(units) for u in units)
        assert units[0].k_begin == 0 and units[-1].k_end == k_tiles
        assert all(a.k_end == b.k_begin for a, b in zip(units, units[1:], strict=False))  # each K tile once
        if len(units) > 1:
            assert len({u.slot for u in units}) == 1 and 0 <= units[0].slot < slots
            used_slots.add(units[0].slot)
    if decomp.kind == "split_k":
        # the last, partial wave's tiles in S parts (every tile where they fit one wave), the others whole
        work = sched.k_work(decomp, m, n, k, l, clusters)
        s = min(decomp.splits, k_tiles)
        assert {len(u) for u in per_tile.values()} <= {1, s}
        if work.tiles <= clusters:
            assert all(len(u) == s for u in per_tile.values())
        else:
            assert work.dp_tiles == work.tiles - work.tiles % clusters and work.shared_tiles == work.tiles % clusters
    if decomp.kind == "stream_k" and sched.k_work(decomp, m, n, k, l, clusters).tiles > clusters:
        # past one wave the shared tiles are the remainder plus a full wave: every worker has a tile's K or more,
        # so no tile has more than two parts
        assert max(len(u) for u in per_tile.values()) <= 2
    # the non-final parts' partial tiles: each its own, inside the workspace
    if decomp.shares_tiles:
        work = sched.k_work(decomp, m, n, k, l, clusters)
        partials = [work.partial(u.slot // sched.cluster_size, u.part) * sched.cluster_size + u.slot
                    % sched.cluster_size for units in per_tile.values() if len(units) > 1 for u in units[:-1]]
        assert len(set(partials)) == len(partials)
        assert all(0 <= p < sched.partial_tiles(decomp, m, n, k, l, clusters) for p in partials)
    return per_tile, used_slots


@settings(max_examples=1000, deadline=None)
@given(
    st.integers(1, 3000),
    st.integers(1, 3000),
    st.integers(1, 3000),
    st.integers(1, 3),
    st.sampled_from(TILES),
    st.sampled_from(CLUSTERS),
    st.integers(1, 140),
    st.sampled_from(("split_k", "stream_k", "data_parallel")),
    st.integers(2, 8),
    st.integers(0, 1),
    st.integers(0, MAX_SWIZZLE_LOG),
)
def test_decomposed_units_cover_every_k_block_once(m, n, k, l, tile, cluster, num_sms, kind, splits, along_n, swz):
    from cute_nvarch.tile_scheduler import Decomposition

    sched = TileScheduler(*tile, 64, *cluster)
    decomp = Decomposition(kind, splits if kind == "split_k" else 1)
    _check_cover(sched, decomp, m, n, k, l, num_sms, along_n, swz)


@settings(max_examples=1000, deadline=None)
@given(
    st.integers(1, 6000),
    st.integers(1, 6000),
    st.integers(1, 2000),
    st.integers(1, 3),
    st.sampled_from(TILES),
    st.sampled_from(CLUSTERS),
    st.integers(1, 140),
    st.integers(0, 1),
    st.integers(0, MAX_SWIZZLE_LOG),
)
def test_stream_k_edges_whole_only_where_the_edge_units_cover_all_of_k(m, n, k, l, tile, cluster, num_sms, along_n,
                                                                       swz):
    """`edges_whole(mode)` says the units of the last two unit rows (columns) cover all of K: checked against the
    units the launch runs, and against the least raster index of those units (`edge_units_from`)."""
    from cute_nvarch.tile_scheduler import Decomposition

    sched = TileScheduler(*tile, 64, *cluster)
    sk = Decomposition("stream_k")
    clusters = sched.decomposed_clusters(sk, m, n, k, l, num_sms)
    work = sched.k_work(sk, m, n, k, l, clusters)
    tiles_m, tiles_n, k_tiles = sched.problem_tiles(m, n, k)
    cm, cn = sched.cluster_tiles(tiles_m, tiles_n)
    units = list(sched.work_units(m, n, k, l, clusters, along_n, swz, sk))
    for mode in (0, 1):
        count = (cm, cn)[mode]
        first = TileScheduler.edge_units_from(mode, cm, cn, along_n, swz)
        edge = [r for r in range(cm * cn)
                if TileScheduler.raster_unit(r, cm, cn, along_n, swz)[mode] >= count - 2]
        assert min(edge) == first
        whole = TileScheduler.edges_whole(work, mode, cm, cn, along_n, swz)
        assert whole == (work.sk_tiles <= first)
        if whole:
            for _cid, _rank, wu in units:
                at = (wu.m // sched.cluster_m, wu.n // sched.cluster_n)[mode]
                if at >= count - 2:
                    assert wu.parts == 1 and (wu.k_begin, wu.k_end) == (0, k_tiles), (mode, wu)
    assert TileScheduler.edges_whole(None, 0, cm, cn, along_n, swz) is True


def test_stream_k_shares_tiles_and_waits_only_on_earlier_units():
    from cute_nvarch.tile_scheduler import Decomposition, KWork

    sched = TileScheduler(128, 256, 64, 1, 1)
    sk = Decomposition("stream_k")
    # 3000 x 5000: 24 x 20 = 480 tiles on 132 SMs: the remainder's 84 tiles plus one full wave (216) over 132
    # workers of 104-105 K tiles, each tile shared by at most two of them; two data-parallel waves after
    work = sched.k_work(sk, 3000, 5000, 4096, 1, 132)
    assert (work.sk_tiles, work.iters, work.workers) == (216, 216 * 64, 132)
    per_tile, slots = _check_cover(sched, sk, 3000, 5000, 4096, 1, 132, 0, 0)
    # a tile inside one worker's range is not shared (its counter unused)
    assert slots <= set(range(216)) and len(slots) > 84
    assert max(len(u) for u in per_tile.values()) == 2
    # 256 x 8192 x 8192: 64 tiles < 132 SMs, 128 K tiles each: all stream-K, up to 3 workers per tile
    per_tile, _ = _check_cover(sched, sk, 256, 8192, 8192, 1, 132, 0, 0)
    assert max(len(u) for u in per_tile.values()) == 3
    work = KWork("stream_k", 1, 64, 132)  # one tile, 64 K tiles: 32 workers of 2
    assert work.workers == 32 and sum(work.units_of_cluster(c) for c in range(132)) == 32
    # a worker walks its whole tiles, then the lowest part of a tile it shares with the next worker, then the
    # highest part of one shared with the previous
    work = KWork("stream_k", 10, 3, 4)  # 2 tiles over + one wave: 6 tiles x 3 = 18 iterations over 4 workers
    assert (work.sk_tiles, work.workers) == (6, 4) and [work.units_of_cluster(c) for c in range(4)] == [3, 3, 3, 3]
    assert work.unit(1, 0)[:5] == (2, 0, 3, 0, 1) and work.unit(1, 1)[:5] == (1, 1, 3, 1, 2)
    assert work.unit(1, 2)[:5] == (7, 0, 3, 0, 1)  # then its data-parallel tile 6 + 1


@settings(max_examples=500, deadline=None)
@given(st.integers(2, 600), st.integers(1, 300), st.integers(1, 140))
def test_stream_k_workers_stay_in_k_step(tiles, k_tiles, clusters):
    """Past one wave every stream-K worker has a tile's K or more; walking its units, each starts at K tile
    tau (iterations walked so far) or tau - k_tiles, or is the worker's last and ends the tile's K with the
    worker's range: three K positions shared by all workers at any iteration of the shared phase."""
    from cute_nvarch.tile_scheduler import KWork

    work = KWork("stream_k", tiles + clusters, k_tiles, clusters)
    for c in range(work.workers):
        begin, end = work._worker_range(c)
        assert end - begin >= k_tiles
        units = [work.unit(c, i) for i in range(work.units_of_cluster(c))]
        shared = [u for u in units if u[0] < work.sk_tiles]
        tau = 0
        for i, (_, k_begin, k_end, *_rest) in enumerate(shared):
            last = i == len(shared) - 1
            assert k_begin - tau in (0, -k_tiles) or (last and k_end == k_tiles), (c, i, shared)
            tau += k_end - k_begin
        assert tau == end - begin


def test_decomposition_rules():
    from cute_nvarch.tile_scheduler import Decomposition, KWork

    with pytest.raises(ValueError, match="decomposition kind must be one of"):
        Decomposition("tiles")
    with pytest.raises(ValueError, match=r"split_k needs splits in \[2, 64\]"):
        Decomposition("split_k", 1)
    with pytest.raises(ValueError, match="splits must be 1 for stream_k"):
        Decomposition("stream_k", 3)
    with pytest.raises(ValueError, match="decomposition kind must be one of"):
        KWork("tiles", 1, 1, 1)
    sched = TileScheduler(128, 128, 64)
    assert sched.workspace_tiles(Decomposition(), 4096, 4096, 4096, 1, 132) == 0
    assert sched.workspace_tiles(Decomposition("split_k", 4), 256, 256, 4096, 1, 8) == 4
    assert sched.decomposed_clusters(Decomposition("split_k", 4), 256, 256, 4096, 1, 132) == 16


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 200),
    st.integers(1, 40),
    st.sampled_from(("split_k", "stream_k")),
    st.integers(2, 8),
)
def test_parallel_fixup_always_progresses(tiles, k_tiles, clusters, kind, splits):
    """Every cluster walking its units in order, non-final parts storing their partial and signalling the
    tile's counter without waiting, the final part (parts - 1) finishing only once the counter says parts - 1
    and then resetting it: the launch never deadlocks (each step some cluster advances), every tile ends
    with all its parts summed from distinct partial tiles, and every counter is back at 0."""
    from cute_nvarch.tile_scheduler import KWork

    work = KWork(kind, tiles, k_tiles, clusters, splits)
    queues = [[work.unit(c, i) for i in range(work.units_of_cluster(c))] for c in range(clusters)]
    counter: dict[int, int] = {}  # shared tile slot -> arrivals
    partial: dict[int, tuple[int, int]] = {}  # partial tile -> (tile, part) written there
    finished: dict[int, int] = {}  # tile -> parts summed by its final part
    want = {u[0]: u[4] for q in queues for u in q}  # tile -> its parts
    pos = [0] * clusters
    while any(p < len(q) for p, q in zip(pos, queues, strict=True)):
        moved = False
        for c, q in enumerate(queues):
            if pos[c] < len(q):
                tile, _, _, part, parts, slot = q[pos[c]]
                if parts == 1:
                    finished[tile] = 1
                elif part < parts - 1:  # store the partial (never overwriting a live one), signal
                    where = work.partial(slot, part)
                    assert where not in partial, "partial tile reused"
                    partial[where] = (tile, part)
                    counter[slot] = counter.get(slot, 0) + 1
                elif counter.get(slot, 0) == parts - 1:  # final: all others arrived; read 0..parts-2, reset
                    got = [partial.pop(work.partial(slot, i)) for i in range(parts - 1)]
                    assert got == [(tile, i) for i in range(parts - 1)]
                    counter[slot] = 0
                    finished[tile] = parts
                else:
                    continue
                pos[c] += 1
                moved = True
        assert moved, "deadlock"
    assert finished == want and set(finished) == set(range(tiles))
    assert not partial and all(v == 0 for v in counter.values())

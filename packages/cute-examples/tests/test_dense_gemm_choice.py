"""The data-parallel tile/cluster model (`dense_gemm.choice`) against the H200 tile sweep it was fitted to."""

import json
import math
import os

import pytest
from cute_examples.dense_gemm.choice import GemmShape, estimate_us, rank_configs

SWEEP = os.path.join(os.path.dirname(__file__), "data", "tile_sweep_h200.json")


def _shapes() -> dict:
    with open(SWEEP) as f:
        rows = json.load(f)["rows"]
    out: dict = {}
    for dtype, m, n, k, tm, tn, cm, cn, stages, us, peer in rows:
        if stages <= 8:  # the default pipelines (the sweep also tried deeper ones on 64x64)
            out.setdefault((dtype, m, n, k), {})[((tm, tn), (cm, cn))] = (us, peer)
    return out


def _measured_pick(shape: GemmShape, measured: dict) -> tuple:
    """The model's first (tile, cluster) that the sweep measured: the sweeps before the 256x128 tile skip it (where
    `WIDE_M_SWAP` put it first, the pick before the swap)."""
    return next(tc for tc in rank_configs(shape) if tc in measured)


def test_pick_is_close_to_the_fastest_measured_config():
    regrets, worst = [], None
    for (dtype, m, n, k), measured in _shapes().items():
        pick = _measured_pick(GemmShape(m, n, k, ab_dtype=dtype, c_dtype=dtype), measured)
        best = min(us for us, _ in measured.values())
        r = best / measured[pick][0]
        regrets.append(r)
        worst = min(worst or (r, ""), (r, f"{dtype} {m}x{n}x{k}: picked {pick}"))
    geo = math.exp(sum(map(math.log, regrets)) / len(regrets))
    assert len(regrets) >= 50
    # 0.980 with the tile N 160 refit (0.983 before; the random sweep's pick 0.919 -> 0.936, the test below);
    # 0.973 on the sweep with tile N 96, 160 and 192 (0.968 without 96 and 160; 0.979 on the sweep with 192 only,
    # 0.927 there without it and the DRAM floor's headroom order); a model change that loses this shows here
    assert geo >= 0.97, (geo, worst)
    assert worst[0] >= 0.7, worst


def _measured(sweep: str) -> dict:
    """{(dtype, M, N, K): {(tile, cluster): our us}} of a sweep file of tests/data whose rows are dtype, M, N, K,
    tile M, tile N, cluster M, cluster N, stages, our us and the peer's."""
    with open(os.path.join(os.path.dirname(__file__), "data", sweep)) as f:
        rows = json.load(f)["rows"]
    measured: dict = {}
    for dtype, m, n, k, tm, tn, cm, cn, _stages, us, _peer in rows:
        measured.setdefault((dtype, m, n, k), {})[((tm, tn), (cm, cn))] = us
    return measured


def _pick_on(sweep: str) -> tuple[float, int]:
    """(geometric mean of fastest / picked measured time, shapes) over a sweep file of tests/data (`_measured`)."""
    measured = _measured(sweep)
    logs = []
    for (dtype, m, n, k), times in measured.items():
        pick = _measured_pick(GemmShape(m, n, k, ab_dtype=dtype, c_dtype=dtype), times)
        logs.append(math.log(min(times.values()) / times[pick]))
    return math.exp(sum(logs) / len(logs)), len(logs)


@pytest.fixture
def without_tile_224(monkeypatch, request):
    """The choice without tile N 224, for the sweeps measured before it (where it ranks first, the next measured config
    is not the pick the sweep judged: the wide-M swap only follows a 128x256 pick)."""
    from cute_examples.dense_gemm import choice

    request.addfinalizer(choice._ranked.cache_clear)  # no ranking without the tile outlives the test
    monkeypatch.delitem(choice.TILE_EFFICIENCY, (128, 224))
    choice._ranked.cache_clear()


def test_tile_n_224_pays_where_the_model_picks_it(monkeypatch, request):
    """Tile N 224 on tests/data/tile_224_sweep_h200.json (30 shapes on every cluster of 128x192, 128x224, 128x256,
    256x128 and 128x160): the pick runs nearer the fastest measured config with it than without it, and every pick
    that moved to it runs faster."""
    from cute_examples.dense_gemm import choice

    request.addfinalizer(choice._ranked.cache_clear)
    choice._ranked.cache_clear()
    measured = _measured("tile_224_sweep_h200.json")
    assert len(measured) == 30
    shapes = {key: GemmShape(*key[1:], ab_dtype=key[0], c_dtype=key[0]) for key in measured}
    picks = {key: rank_configs(s)[0] for key, s in shapes.items()}
    assert all(p in measured[key] for key, p in picks.items())  # every pick was measured
    with_224, _ = _pick_on("tile_224_sweep_h200.json")
    monkeypatch.delitem(choice.TILE_EFFICIENCY, (128, 224))
    choice._ranked.cache_clear()
    without, _ = _pick_on("tile_224_sweep_h200.json")
    before = {key: rank_configs(s)[0] for key, s in shapes.items()}
    moved = [measured[key][picks[key]] / measured[key][before[key]] for key in measured if picks[key][0] == (128, 224)]
    # 0.990 with it, 0.987 without; 4 picks moved (512 x 28672 x 4096 0.966, 6329 x 2128 x 6416 0.951, 4097 x 4104 x
    # 4096 0.987 and 935 x 13768 x 5840 0.987 of the previous pick's time)
    assert with_224 >= 0.985 and with_224 > without
    assert len(moved) >= 3 and max(moved) < 1.0, moved
    # a second sweep (tests/data/tile_176_sweep_h200.json, 30 other shapes; its tile N 176 is not a tile of the choice):
    # the pick 0.983 of the fastest measured config with 128x224, 0.984 without it (6 picks moved: 0.886..1.091)
    monkeypatch.setitem(choice.TILE_EFFICIENCY, (128, 224), 0.98)
    choice._ranked.cache_clear()
    second, shapes = _pick_on("tile_176_sweep_h200.json")
    assert shapes == 30 and second >= 0.975


def test_one_round_tiles_pay_where_the_model_picks_them(monkeypatch, request):
    """`choice.ONE_ROUND_TILES` on tests/data/one_round_tile_sweep_h200.json (five single-round long-K shapes, ten tiles
    x three clusters; its 128x208 and 128x240 are not tiles of the choice): the pick runs nearer the fastest measured
    config with 128x144 and 128x176 than without them, every pick that moved to one runs faster, and neither is
    offered past one round or under `WIDE_M_MIN_K_TILES` K tiles."""
    from cute_examples.dense_gemm import choice
    from cute_examples.dense_gemm.choice import ONE_ROUND_TILES, WIDE_M_MIN_K_TILES

    request.addfinalizer(choice._ranked.cache_clear)
    choice._ranked.cache_clear()
    measured = _measured("one_round_tile_sweep_h200.json")
    assert len(measured) == 5
    shapes = {key: GemmShape(*key[1:], ab_dtype=key[0], c_dtype=key[0]) for key in measured}
    picks = {key: _measured_pick(s, measured[key]) for key, s in shapes.items()}
    with_tiles, _ = _pick_on("one_round_tile_sweep_h200.json")
    monkeypatch.setattr(choice, "ONE_ROUND_TILES", {})
    choice._ranked.cache_clear()
    without, _ = _pick_on("one_round_tile_sweep_h200.json")
    before = {key: _measured_pick(s, measured[key]) for key, s in shapes.items()}
    moved = [measured[key][picks[key]] / measured[key][before[key]] for key in measured
             if picks[key][0] in ONE_ROUND_TILES]
    # 0.959 with them, 0.896 without; 4 picks moved (0.960, 0.860, 0.879 and 0.980 of the previous pick's time)
    assert with_tiles >= 0.95 and with_tiles > without + 0.05
    assert len(moved) == 4 and max(moved) < 1.0, moved
    monkeypatch.setattr(choice, "ONE_ROUND_TILES", ONE_ROUND_TILES)
    choice._ranked.cache_clear()
    # two rounds of 128x176 tiles (8192^3), a short K (2000 x 1288 x 1984: 31 K tiles), 8-bit operands: not offered
    for shape in (GemmShape(8192, 8192, 8192, ab_dtype="bfloat16", c_dtype="bfloat16"),
                  GemmShape(2000, 1288, 64 * (WIDE_M_MIN_K_TILES - 1), ab_dtype="bfloat16", c_dtype="bfloat16"),
                  GemmShape(2000, 1288, 9280, ab_dtype="float8_e4m3fn", c_dtype="bfloat16")):
        assert all(tile not in ONE_ROUND_TILES for tile, _ in rank_configs(shape)), shape
    assert rank_configs(shapes[("bfloat16", 2000, 1288, 9280)])[0] == ((128, 176), (1, 1))


@pytest.mark.parametrize(("mnk", "tile", "transposed"), [
    # H200, gemm()'s picks against those without the rule (`pick_ab.py --baseline no-fit-n-tiles --full --layers`)
    ((163, 57344, 8192), (128, 176), True),  # N' = 163: 128x192 -> 128x176 on the transposed problem
    ((324, 57344, 8192), (128, 176), True),  # 2 x 176 columns: 639.0 -> 554.8 us (direct 128x192 before)
    ((131, 57344, 8192), (128, 144), True),  # 128x160 -> 128x144 on a 2x1 cluster: 293.2 -> 271.2 us
    ((280, 28672, 4096), (128, 144), True),  # 2 x 144 columns: 156.1 -> 136.7 us (direct 128x224 before)
])
def test_fitted_tiles_rank_on_any_round_where_they_fit_n(mnk, tile, transposed):
    """`choice.ONE_ROUND_FIT_N`: 128x144 / 128x176 also rank on launches of several rounds where they cover N (here the
    transposed problem's N' = M) with fewer padded columns than both neighbouring widths; not where the launch's CTAs
    fill less than `ONE_ROUND_MIN_FILL` of the SMs (those rows ran 1.10-1.15x the stream-K pick they displaced)."""
    from cute_examples.dense_gemm.choice import ONE_ROUND_TILES, _fits_n
    from cute_examples.dense_gemm.launch_plan import plan_pick

    def pick(shape: GemmShape) -> tuple:
        direct, t_pick = plan_pick(shape, (shape.ab_dtype, "float32", None, None, None), None, 132)
        return (direct if t_pick is None else t_pick)[0], t_pick is not None

    cfg, was_transposed = pick(GemmShape(*mnk, 1, "bfloat16", "bfloat16"))
    assert ((cfg.tile_m, cfg.tile_n), was_transposed) == (tile, transposed), cfg.name
    assert [n for n in range(1, 400) if _fits_n(n, (128, 144))] == [*range(129, 145), *range(257, 289)]
    assert [n for n in range(1, 400) if _fits_n(n, (128, 176))] == [*range(161, 177), *range(321, 353)]
    # fewer CTAs than 0.9 of the SMs: 80 tiles of 128x144 (stream-K on 128x160 stays), 96 tiles of 6101 x 280
    for shape in (GemmShape(144, 10240, 8192, 1, "bfloat16", "bfloat16"),
                  GemmShape(6101, 280, 16192, 1, "float16", "float16")):
        cfg, _ = pick(shape)
        assert (cfg.tile_m, cfg.tile_n) not in ONE_ROUND_TILES and cfg.decomposition == "stream_k", cfg.name


def test_single_round_128x256_launches_run_256x128_with_a_1x2_cluster(without_tile_224):
    """`choice.WIDE_M_SWAP` on the rows it was fitted to (tests/data/wide_m_sweep_h200.json: 44 shapes x 2 dtypes, the
    tiles 128x256 and 256x128 x three clusters on every shape, three more tiles on 26 of them)."""
    from cute_examples.dense_gemm.choice import WIDE_M_SWAP

    measured = _measured("wide_m_sweep_h200.json")
    assert len(measured) == 98
    swapped, picks = [], []
    for (dtype, m, n, k), times in measured.items():
        pick = _measured_pick(GemmShape(m, n, k, ab_dtype=dtype, c_dtype=dtype), times)
        picks.append(math.log(min(times.values()) / times[pick]))
        if pick == WIDE_M_SWAP[1]:
            swapped.append(math.log(times[WIDE_M_SWAP[1]] / times[WIDE_M_SWAP[0]]))
    # 38 rows swapped, 0.969 of 128x256's time (0.88-1.04); the pick 0.978 of the fastest config (0.966 without it)
    assert len(swapped) >= 30 and math.exp(sum(swapped) / len(swapped)) <= 0.98
    assert math.exp(sum(picks) / len(picks)) >= 0.97
    # not on a multi-round launch, nor where 256-row tiles would pad M with more rows, nor at K = 1024
    for m, n, k in ((2048, 4096, 14336), (640, 8192, 8192), (256, 13944, 1024)):
        assert rank_configs(GemmShape(m, n, k, ab_dtype="bfloat16", c_dtype="bfloat16"))[0] != WIDE_M_SWAP[1]
    # 8-bit operands, promotion and a float32 C never rank a 256-row tile
    for shape, promoting in ((GemmShape(512, 8192, 8192, ab_dtype="float8_e4m3fn", c_dtype="bfloat16"), False),
                             (GemmShape(512, 8192, 8192), True),
                             (GemmShape(512, 8192, 8192, c_dtype="float32"), False)):
        assert all(t[0] <= 128 for t, _ in rank_configs(shape, promoting=promoting))


def test_the_256x128_tile_pays_where_the_model_picks_it(monkeypatch, request, without_tile_224):
    """Every row of tests/data/wide_m_sweep_h200.json whose pick is a 256-row tile, against the pick of the model
    without that tile (both measured there): the third sweep's 10 multi-round shapes were measured after the fit."""
    from cute_examples.dense_gemm import choice

    measured = _measured("wide_m_sweep_h200.json")
    shapes = {key: GemmShape(*key[1:], ab_dtype=key[0], c_dtype=key[0]) for key in measured}
    request.addfinalizer(choice._ranked.cache_clear)
    choice._ranked.cache_clear()
    picks = {key: _measured_pick(s, measured[key]) for key, s in shapes.items()}
    monkeypatch.delitem(choice.TILE_EFFICIENCY, (256, 128))
    choice._ranked.cache_clear()
    before = {key: _measured_pick(s, measured[key]) for key, s in shapes.items()}
    logs = [math.log(measured[key][picks[key]] / measured[key][before[key]]) for key in measured
            if picks[key][0][0] == 256]
    # 48 rows (38 swapped, 10 multi-round): 0.959 (0.82-1.04); the 10 multi-round ones 0.920 (0.82-0.99)
    assert len(logs) >= 45 and math.exp(sum(logs) / len(logs)) <= 0.97


def test_rows_off_sectors_send_the_pick_to_a_cluster(monkeypatch):
    """`choice.OFF_SECTOR_K_TILE_US` on tests/data/row_alignment_h200.json: a launch without a cluster runs 1.2-1.3x
    longer than with a 2x1 cluster exactly where A's and B's rows both start off 32-byte sectors (`rows_off_sectors`),
    whatever K's last tile, the majors and the dtype (bfloat16, E4M3); the pick over
    tests/data/partial_k_sweep_h200.json runs near the fastest measured config."""
    from cute_examples.dense_gemm import choice
    from cute_examples.dense_gemm.choice import estimate_us, rows_off_sectors

    with open(os.path.join(os.path.dirname(__file__), "data", "row_alignment_h200.json")) as f:
        rows = json.load(f)["rows"]
    assert len(rows) == 30
    off = 0
    for dtype, m, n, k, am, bm, a_ld, b_ld, tm, tn, alone, clustered, _peer in rows:
        shape = GemmShape(m, n, k, ab_dtype=dtype, c_dtype="bfloat16", a_major=am, b_major=bm, a_ld=a_ld, b_ld=b_ld)
        off += rows_off_sectors(shape)
        assert rows_off_sectors(shape) == (alone / clustered > 1.15), (k, am, bm, a_ld, b_ld, tm, tn)
        modelled = estimate_us(shape, (tm, tn), (1, 1)) > estimate_us(shape, (tm, tn), (2, 1))
        assert modelled == rows_off_sectors(shape), (k, a_ld, b_ld, tm, tn)
    assert off == 6  # K = 7096, both leading dimensions 7048 and E4M3 at K = 7056, on two tiles each
    geo, shapes = _pick_on("partial_k_sweep_h200.json")
    assert shapes == 32
    # 0.990 (without the term 0.940: 3775 x 9776 x 7096 and 2218 x 15712 x 6280 ran 128x256 without a cluster)
    assert geo >= 0.97
    off_shape, on_shape = (GemmShape(3775, 9776, k, ab_dtype="bfloat16") for k in (7096, 7088))
    assert rank_configs(off_shape)[0][1] != (1, 1) and rank_configs(on_shape)[0][1] == (1, 1)
    # the term: per K tile of a launch without a cluster (30 x 39 tiles of 128x256: 9 rounds of 111 K tiles)
    term = choice.OFF_SECTOR_K_TILE_US
    with_term = [estimate_us(off_shape, (128, 256), c) for c in ((1, 1), (2, 1))]
    monkeypatch.setattr(choice, "OFF_SECTOR_K_TILE_US", 0.0)
    without = [estimate_us(off_shape, (128, 256), c) for c in ((1, 1), (2, 1))]
    assert term > 0 and with_term[0] - without[0] == pytest.approx(9 * 111 * term)
    assert with_term[1] == without[1]


def test_row_strides_are_the_operands_own():
    """A GemmProblem's rows step by its tensors' strides (a slice of a wider tensor keeps the wider stride); a
    GemmShape's by dense operands of its majors padded to 16 bytes unless given; one row steps by 0."""
    from cute_examples.dense_gemm.host import problem_of
    from cute_examples.dense_gemm.launch_plan import Layout

    def problem(a_shape, a_stride, b_shape, b_stride):  # noqa: ANN001, ANN202
        m, n = a_shape[0], b_shape[1]
        return problem_of(Layout(a_shape, a_stride, "bfloat16", 256), Layout(b_shape, b_stride, "bfloat16", 256),
                          Layout((m, n), (n, 1), "bfloat16", 256))

    assert problem((64, 7040), (7048, 1), (7040, 512), (1, 7056)).row_strides() == (7048, 7056)
    assert problem((64, 7040), (1, 72), (7040, 512), (520, 1)).row_strides() == (72, 520)  # M-major A, N-major B
    assert problem((1, 7040), (9000, 1), (7040, 1), (1, 7048)).row_strides() == (0, 0)
    assert GemmShape(64, 512, 7040).row_strides() == (7040, 7040)
    assert GemmShape(64, 512, 7040, a_major="m", b_major="n").row_strides() == (64, 512)
    assert GemmShape(64, 512, 7040, a_ld=7048).row_strides() == (7048, 7040)
    assert GemmShape(64, 512, 7043).row_strides() == (7048, 7048)  # padded to 16 bytes, as gemm() stages it
    assert GemmShape(1, 512, 7040, b_major="n").row_strides() == (0, 512)


def test_an_input_addend_is_rechosen_off_the_256_row_tile():
    """A 256-row tile takes no input (its addend loads would spill): gemm()'s pick moves to the fastest modelled tile
    of at most 128 rows, and a given 256-row tile is a ValueError naming input=."""
    from cute_examples.dense_gemm.host import choose_epilogue_config

    shape = GemmShape(512, 8192, 8192)
    assert choose_epilogue_config(shape, {"activation": "gelu", "bias": "n"}).tile_m == 256
    cfg = choose_epilogue_config(shape, {"bias": "n", "has_input": True})
    assert (cfg.tile_m, cfg.tile_n, cfg.has_input) == (128, 256, True)
    with pytest.raises(ValueError, match="input= needs a tile of at most 128 rows"):
        choose_epilogue_config(shape, {"has_input": True}, tile_shape_mnk=(256, 128, 64))


def test_pick_on_random_shapes_is_close_to_the_fastest_measured_config():
    """The same on shapes the constants before the tile N 160 refit never saw (tests/data/random_sweep_h200.json: 88
    random shapes and 13 whose last row of M tiles is partial, every data-parallel config measured on an H200; the
    refit saw the first 61, the last 40 were measured after it)."""
    geo, shapes = _pick_on("random_sweep_h200.json")
    assert shapes == 101
    # 0.936 (0.919 before the refit: 128x160 0.94 -> 0.99, 64x160 0.60 -> 0.75; 8-bit operands keep 64x160 at 0.60);
    # on the 40 shapes measured after it 0.921 (0.916 before); 0.944 with OFF_SECTOR_K_TILE_US, 0.943 with
    # MULTICAST_SAVES and no partial-row term
    assert geo >= 0.94


def test_pick_after_the_edge_tile_change_is_close_to_the_fastest_measured_config():
    """The same on 46 shapes measured with edge tiles inside the problem (tests/data/edge_sweep_h200.json: 40 random
    shapes, 6 partial-row ones; every data-parallel config on an H200; no constant was fitted to them before
    `MULTICAST_SAVES`, which they chose and 18 fresh random shapes then confirmed)."""
    geo, shapes = _pick_on("edge_sweep_h200.json")
    assert shapes == 46
    # 0.948 (the 40 random shapes 0.958: before the edge-tile change the same model picked 0.921 of the fastest there);
    # 0.960 with OFF_SECTOR_K_TILE_US, 0.961 with TILE_CLUSTER_COST, 0.974 with MULTICAST_SAVES and no partial-row term
    assert geo >= 0.965


def test_clusters_pay_where_loads_bind_and_cost_where_compute_does():
    big = GemmShape(8192, 8192, 8192, ab_dtype="bfloat16", c_dtype="bfloat16")
    # 21 rounds of 128x192 tiles (3/4 of a 128x256 tile's work each) beat 16 of 128x256 (measured: 2-3% faster)
    assert rank_configs(big)[0] == ((128, 192), (1, 1))
    assert estimate_us(big, (128, 256), (2, 1)) > estimate_us(big, (128, 256), (1, 1))
    narrow = GemmShape(256, 4096, 4096, ab_dtype="bfloat16", c_dtype="bfloat16")
    assert estimate_us(narrow, (64, 128), (2, 1)) < estimate_us(narrow, (64, 128), (1, 1))
    # the DRAM floor: no config beats reading A and B once
    decode = GemmShape(1, 8192, 8192, ab_dtype="bfloat16", c_dtype="bfloat16")
    floor = 8193 * 8192 * 2 / 3.9e6
    assert all(estimate_us(decode, t, c) >= floor * 0.999 for t, c in rank_configs(decode))


def test_dram_bound_configs_rank_by_their_headroom():
    """Configs whose rounds fit under the DRAM floor tie there; the one with the shortest rounds goes first (measured
    on an H200 at 128 x 8192 x 8192: 64x128 with a 2x1 cluster 38 us, without it 57 us; both modelled under the
    floor)."""
    shape = GemmShape(128, 8192, 8192, ab_dtype="float16", c_dtype="float16")
    assert estimate_us(shape, (64, 128), (2, 1)) == estimate_us(shape, (64, 128), (1, 1))
    assert rank_configs(shape)[0] == ((64, 128), (2, 1))


def test_two_accumulators_cost_the_wide_tiles():
    """With two-level accumulation the 128x192 tile is 5% faster per FLOP than 128x128 (without it 15%): on an H200
    FP8 4096^3 with promotion ran 115 us on 128x128 and 123 us on 128x192, 8192^3 911 and 854 us."""
    shape = GemmShape(4096, 4096, 4096, ab_dtype="float8_e4m3fn", c_dtype="bfloat16")
    promoting = [t for t, c in rank_configs(shape, promoting=True) if c == (1, 1) and t[1] <= 192]
    assert promoting[0] == (128, 128)
    big = GemmShape(8192, 8192, 8192, ab_dtype="float8_e4m3fn", c_dtype="bfloat16")
    assert [t for t, c in rank_configs(big, promoting=True) if c == (1, 1) and t[1] <= 192][0] == (128, 192)
    assert estimate_us(shape, (128, 192), (1, 1), promoting=True) > estimate_us(shape, (128, 192), (1, 1))


def test_a_cluster_costs_8bit_k_tiles():
    """With 8-bit operands a cluster adds `CLUSTER_8BIT_K_TILE_US` per K tile (H200 FP8 sweep: at 128 x 4096 x 4096,
    64x64 ran 7.3 us without a cluster, 7.9 us with a 2x1 one and 8.6 us with a 1x2 one), so the E4M3 pick there runs
    without one while the 16-bit estimate of the same clusters is unchanged."""
    from cute_examples.dense_gemm.choice import CLUSTER_8BIT_K_TILE_US, _rounds_us

    fp8 = GemmShape(128, 4096, 4096, ab_dtype="float8_e4m3fn", c_dtype="bfloat16")
    half = GemmShape(128, 4096, 4096, ab_dtype="bfloat16", c_dtype="bfloat16")
    assert rank_configs(fp8)[0] == ((64, 64), (1, 1))
    k_tiles = 4096 // 64  # the model counts 64-element K tiles for every dtype (choice._rounds_us)
    rounds = 1  # 128 tiles in 64 two-CTA clusters, 66 of which fit on 132 SMs
    for cluster in ((1, 2), (2, 1)):
        assert _rounds_us(fp8, (64, 64), cluster, 132) - _rounds_us(half, (64, 64), cluster, 132) == pytest.approx(
            rounds * k_tiles * CLUSTER_8BIT_K_TILE_US)


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn"])
@pytest.mark.parametrize("m", [1, 16, 64])
def test_decode_rows_rank_no_cluster(dtype, m):
    """At M <= SMALL_M (one row of tiles; A's box holds at most 64 rows) no cluster is ranked: on the H200 decode sweep
    a cluster ran a median 9% slower than the same tile without one and faster in 1% of the cases (16 x 57344 x 8192
    on 64x128 c1x2 once cost 8% against 64x256 c1x1). Past it clusters are ranked."""
    from cute_examples.dense_gemm.choice import SMALL_M

    for n, k in ((57344, 8192), (6144, 4096), (4096, 14336)):
        assert {c for _, c in rank_configs(GemmShape(m, n, k, ab_dtype=dtype, c_dtype="bfloat16"))} == {(1, 1)}
    assert len({c for _, c in rank_configs(GemmShape(SMALL_M + 1, 57344, 8192, ab_dtype=dtype,
                                                     c_dtype="bfloat16"))}) == 3


def test_k_choice_prices_an_8bit_cluster_as_the_choice_does():
    """k_choice (which compares the data-parallel pick with the shared-K configs) adds the choice's 8-bit cluster term
    (`cluster_k_tile_us`) to each of its K tiles: an E4M3 launch and a bfloat16 one with the same bytes per K tile,
    the same K tiles and the same FLOP count per tile in the model differ by exactly that term."""
    from cute_examples.dense_gemm.choice import CLUSTER_8BIT_K_TILE_US, cluster_k_tile_us
    from cute_examples.dense_gemm.k_choice import estimate_us
    from cute_examples.dense_gemm.spec import GemmConfig

    assert cluster_k_tile_us("float8_e4m3fn", (2, 1), 128) == pytest.approx(2 * CLUSTER_8BIT_K_TILE_US)
    assert cluster_k_tile_us("float8_e4m3fn", (1, 1), 128) == 0.0
    assert cluster_k_tile_us("bfloat16", (1, 2), 64) == 0.0
    e4m3, bf16 = "float8_e4m3fn", "bfloat16"
    fp8 = GemmConfig(a_dtype=e4m3, b_dtype=e4m3, c_dtype=bf16, a_major="k", b_major="k", tile_m=128, tile_n=128,
                     cluster_m=2)
    half = GemmConfig(a_dtype=bf16, b_dtype=bf16, c_dtype=bf16, tile_m=128, tile_n=128, cluster_m=2)
    assert (fp8.tile_k, half.tile_k) == (128, 64)  # one 128-byte row per K tile each
    k_tiles, rounds = 64, 1  # 4 x 32 tiles in 64 two-CTA clusters, 66 of which fit on 132 SMs
    t8 = estimate_us(GemmShape(512, 4096, 128 * k_tiles), fp8, 132, "data_parallel")
    t16 = estimate_us(GemmShape(512, 4096, 64 * k_tiles), half, 132, "data_parallel")
    assert t8 - t16 == pytest.approx(rounds * k_tiles * 2 * CLUSTER_8BIT_K_TILE_US)


def test_a_64x64_cluster_saves_no_loads():
    """`MULTICAST_SAVES`: on the recorded sweeps a 2x1 cluster ran 64x64 no faster than without one up to M = 512 (the
    model with the whole multicast share said 0.69-0.79), so its loads cost the same with a cluster and the tie goes to
    no cluster: 169 x 1384 x 3200 runs 64x64 without one (the edge sweep's fastest config there)."""
    from cute_examples.dense_gemm.choice import MULTICAST_SAVES, choose_tile_cluster, estimate_us

    measured = []
    for sweep in ("tile_sweep_h200.json", "random_sweep_h200.json", "edge_sweep_h200.json"):
        with open(os.path.join(os.path.dirname(__file__), "data", sweep)) as f:
            rows = [r for r in json.load(f)["rows"] if r[4:6] == [64, 64] and r[8] <= 8 and r[1] <= 512]
        by: dict = {}
        for dtype, m, n, k, _tm, _tn, cm, cn, _stages, us, _peer in rows:
            by.setdefault((dtype, m, n, k), {})[(cm, cn)] = us
        measured += [math.log(t[(2, 1)] / t[(1, 1)]) for t in by.values() if (2, 1) in t and (1, 1) in t]
    assert len(measured) >= 60 and math.exp(sum(measured) / len(measured)) > 1.0
    assert MULTICAST_SAVES[(64, 64)] == 0.0
    shape = GemmShape(169, 1384, 3200, ab_dtype="bfloat16", c_dtype="bfloat16")
    assert estimate_us(shape, (64, 64), (2, 1)) >= estimate_us(shape, (64, 64), (1, 1))
    assert choose_tile_cluster(shape) == ((64, 64), (1, 1))
    # other 64-row tiles keep the multicast: a 2x1 cluster halves B's rows of 64x128's load-bound K tiles
    narrow = GemmShape(256, 4096, 4096)
    assert estimate_us(narrow, (64, 128), (2, 1)) < estimate_us(narrow, (64, 128), (1, 1))

"""When gemm() runs the transposed problem C^T = B^T A^T (`dense_gemm.transposed`), on CPU: the transposed shape's
majors and row strides, and the rule's cases (H200 measurements in the module doc)."""

from __future__ import annotations

import pytest
from cute_examples.dense_gemm.choice import GemmShape
from cute_examples.dense_gemm.launch_plan import plan_config, plan_pick
from cute_examples.dense_gemm.transposed import MAX_M, MIN_TILE, transposed_fields, transposed_shape

OPTIONS = ("bfloat16", "float32", None, None, None)


def _modelled_us(shape: GemmShape, cfg) -> float:  # noqa: ANN001 - a GemmConfig
    """`choice.estimate_us` of cfg's tile and cluster on `shape` (132 SMs)."""
    from cute_examples.dense_gemm.choice import estimate_us

    return estimate_us(shape, (cfg.tile_m, cfg.tile_n), (cfg.cluster_m, cfg.cluster_n))


def test_the_transposed_shape_trades_m_and_n_and_each_operand_keeps_its_memory():
    s = GemmShape(139, 4096, 14336, 2, "bfloat16", "float32", a_major="k", b_major="n", c_major="n", a_ld=14344,
                  b_ld=4104)
    t = transposed_shape(s)
    # A' = B^T: B's N-contiguous rows are A' "m"-major; B' = A^T: A's K-contiguous rows stay "k"; C' = C^T "m"-major
    assert (t.m, t.n, t.k, t.l, t.ab_dtype, t.c_dtype) == (4096, 139, 14336, 2, "bfloat16", "float32")
    assert (t.a_major, t.b_major, t.c_major) == ("m", "k", "m")
    assert t.row_strides() == s.row_strides()[::-1]
    assert transposed_shape(t) == GemmShape(139, 4096, 14336, 2, "bfloat16", "float32", "k", "n", "n", 14344, 4104)


@pytest.mark.parametrize(("mnk", "dtype", "transposed"), [
    ((139, 4096, 14336), "bfloat16", True),  # 139 rows: 256 on 128-row tiles, one 160-column tile (61.1 -> 44.0 us)
    ((294, 57344, 8192), "bfloat16", True),  # 384 -> 320 rows (614 -> 500 us)
    # among all tiles the transposed pick is 128x96 on a 2x1 cluster (17 such rows measured 0.999); among tiles of sides
    # MIN_TILE or more stream-K on 128x192 (182 x 8192 x 28672: 200.3 -> 168.4 us)
    ((166, 8192, 28672), "bfloat16", True),
    ((144, 8192, 8192), "float16", True),  # the same for 64x160 on a 2x1 cluster: split-K 2 on 128x160 instead
    ((228, 10240, 8192), "float16", False),  # 256 rows either way (the transposed pick measured 1.11x)
    ((45, 4096, 14336), "bfloat16", False),  # decode-like M (the transposed split tiles ran 1.7-1.9x)
    ((555, 10240, 8192), "bfloat16", True),  # 640 -> 576 rows (128x224 -> 128x192 transposed: 177.5 -> 152.9 us)
    ((600, 4096, 4096), "bfloat16", False),  # 640 rows either way
    ((1100, 4096, 4096), "bfloat16", False),  # above MAX_M, and the transposed tiles fill the SMs no better
    ((128, 4096, 4096), "bfloat16", False),  # no padding to save
])
def test_few_rows_run_transposed_where_it_pads_less_on_full_tiles(mnk, dtype, transposed):
    shape = GemmShape(*mnk, 1, dtype, dtype)
    options = (dtype, *OPTIONS[1:])
    direct, t_pick = plan_pick(shape, options, None, 132)
    assert direct == plan_config(shape, options, None, 132)
    assert (t_pick is not None) == transposed
    if t_pick is not None:
        cfg, _ = t_pick
        assert t_pick == plan_config(transposed_shape(shape), options, None, 132, min_tile=MIN_TILE)
        assert cfg.c_major == "m"
        assert min(cfg.tile_m, cfg.tile_n) >= MIN_TILE and shape.m <= MAX_M


def test_the_transposed_pick_is_the_fastest_modelled_among_tiles_of_sides_min_tile():
    """Over random shapes of few rows the transposed pick gemm() runs has tile sides of MIN_TILE or more, and a
    transposed problem of N <= SMALL_M (whose M' has no 128-row tile) is never considered, except above MAX_M rows
    (`transposed.narrow`)."""
    import random

    from cute_examples.dense_gemm.choice import SMALL_M, rank_configs
    from cute_examples.dense_gemm.transposed import may_transpose

    rng = random.Random(7)
    taken = 0
    for _ in range(300):
        m, n, k = rng.randint(65, MAX_M), rng.randrange(8, 16384, 8), rng.randrange(64, 16384, 8)
        shape = GemmShape(m, n, k, 1, "bfloat16", "bfloat16")
        assert may_transpose(shape) == (n > SMALL_M)
        assert may_transpose(GemmShape(MAX_M + m, n, k, 1, "bfloat16", "bfloat16"))  # `quantises` or `narrow`
        _, t_pick = plan_pick(shape, OPTIONS, None, 132)
        if t_pick is None:
            continue
        taken += 1
        cfg, _ = t_pick
        assert min(cfg.tile_m, cfg.tile_n) >= MIN_TILE
        first = next(t for t, _ in rank_configs(transposed_shape(shape), 132) if min(t) >= MIN_TILE)
        assert cfg.shares_k or (cfg.tile_m, cfg.tile_n) == first
    assert taken > 30
    assert plan_pick(GemmShape(139, 64, 14336, 1, "bfloat16", "bfloat16"), OPTIONS, None, 132)[1] is None


@pytest.mark.parametrize(("mnk", "dtype", "transposed"), [
    ((6916, 936, 13880), "bfloat16", True),  # 128x160 -> 128x224 on 2x1 clusters: 367.1 -> 310.9 us (cuBLAS 368.4)
    ((4707, 680, 1176), "float16", True),  # one round either way, 128x256 -> 128x224: 21.1 -> 18.2 us
    ((949, 2616, 2096), "bfloat16", True),  # few rows where the padding rule does not hold: 19.8 -> 17.8 us
    ((3572, 936, 1696), "float16", True),  # 23.8 -> 20.8 us with a bias along N and SiLU
    ((1100, 4096, 4096), "bfloat16", False),
    ((8192, 8192, 8192), "float16", False),
    ((4096, 14336, 4096), "bfloat16", False),
])
def test_rows_whose_transposed_tiles_fill_the_sms_better_run_transposed(mnk, dtype, transposed):
    """`transposed.quantises`: a data-parallel transposed pick modelled (`choice.estimate_us`) at least QUANTISE_GAIN
    faster than the direct data-parallel pick runs, at any number of rows."""
    from cute_examples.dense_gemm.transposed import QUANTISE_GAIN

    shape = GemmShape(*mnk, 1, dtype, dtype)
    options = (dtype, *OPTIONS[1:])
    (cfg, _), t_pick = plan_pick(shape, options, None, 132)
    assert (t_pick is not None) == transposed
    if t_pick is not None:
        t_cfg = t_pick[0]
        assert cfg.decomposition == t_cfg.decomposition == "data_parallel" and t_cfg.c_major == "m"
        assert _modelled_us(transposed_shape(shape), t_cfg) < (1 - QUANTISE_GAIN) * _modelled_us(shape, cfg)


def test_above_max_m_a_transposed_pick_is_modelled_faster_on_data_parallel_configs():
    """Over random shapes of more than MAX_M rows (N > SMALL_M), gemm() runs the transposed problem on some (about 3%
    of such draws; the H200 A/Bs in the module doc), each decided on the two problems' data-parallel picks (before
    k_choice's stream-K past one round, which then applies to the transposed problem as to any): the model prices the
    transposed one at least QUANTISE_GAIN faster."""
    import random

    from cute_examples.dense_gemm.transposed import QUANTISE_GAIN

    rng = random.Random(11)
    options = ("float16", *OPTIONS[1:])
    taken = 0
    for _ in range(400):
        m, n, k = rng.randint(MAX_M + 1, 8191), rng.randrange(72, 16384, 8), rng.randrange(64, 16384, 8)
        shape = GemmShape(m, n, k, 1, "float16", "float16")
        if plan_pick(shape, options, None, 132)[1] is None:
            continue
        taken += 1
        t_shape = transposed_shape(shape)
        cfg, _ = plan_config(shape, options, None, 132, rounds=False)
        t_cfg, _ = plan_config(t_shape, options, None, 132, min_tile=MIN_TILE, rounds=False)
        assert cfg.decomposition == t_cfg.decomposition == "data_parallel"
        assert _modelled_us(t_shape, t_cfg) < (1 - QUANTISE_GAIN) * _modelled_us(shape, cfg)
    assert 4 <= taken <= 60


def test_only_k_major_operands_run_transposed_past_max_m_rows():
    """`quantises` holds for K-major A and B only (a row-major b makes A' M-major, which ran up to 1.27x): 6916 x 936
    x 13880 runs transposed from F.linear's operands, direct from x @ W (W (K, N) contiguous) or an M-major a."""
    options = ("bfloat16", *OPTIONS[1:])
    assert plan_pick(GemmShape(6916, 936, 13880, 1, "bfloat16", "bfloat16"), options, None, 132)[1] is not None
    for a_major, b_major in (("k", "n"), ("m", "k"), ("m", "n")):
        shape = GemmShape(6916, 936, 13880, 1, "bfloat16", "bfloat16", a_major, b_major)
        assert plan_pick(shape, options, None, 132)[1] is None, (a_major, b_major)


@pytest.mark.parametrize(("mnk", "transposed"), [
    ((2557, 64, 5416), True),  # split-K on 64x128 either way: 18.9 -> 12.0 us (cuBLAS 11.3)
    ((4104, 40, 4672), True),  # 23.5 -> 10.8 us (cuBLAS 12.4)
    ((16077, 8, 5080), True),  # 128x64 -> the decode rows' 64x128, both data-parallel: 47.1 -> 41.7 us
    ((9543, 64, 7848), False),  # the transposed pick splits K where the direct one does not (it ran 1.53x)
    ((7721, 56, 1880), False),  # the same (1.19x)
    ((1024, 64, 4096), False),  # not above MAX_M rows
    ((3000, 65, 4096), False),  # N above SMALL_M
])
def test_a_decode_like_n_runs_as_the_transposed_decode_rows(mnk, transposed):
    """`transposed.narrow`: N <= SMALL_M with more than MAX_M rows runs as the transposed problem, whose M' = N rows
    take the decode rows' 64-row tiles and short A box, unless that pick splits K where the direct one does not."""
    from cute_examples.dense_gemm.transposed import min_tile, narrow

    shape = GemmShape(*mnk, 1, "bfloat16", "bfloat16")
    direct, t_pick = plan_pick(shape, OPTIONS, None, 132)
    assert (t_pick is not None) == transposed
    if narrow(shape):
        assert min_tile(shape) == 0
        t_cfg, _ = plan_config(transposed_shape(shape), OPTIONS, None, 132, min_tile=0)
        assert (t_pick is None) == (t_cfg.shares_k and not direct[0].shares_k)
    if t_pick is not None:
        assert t_pick[0].tile_m == 64 and t_pick[0].c_major == "m"


def test_only_free_16_bit_calls_without_an_input_run_transposed():
    """Plain calls and a bias / alpha / activation (the bias along the other mode); not an input addend, the
    pre-activation output, SwiGLU or device scales; not with a tile, promotion or 8-bit operands."""
    shape = GemmShape(139, 4096, 14336, 1, "bfloat16", "bfloat16")
    assert plan_pick(shape, OPTIONS, None, 132)[1] is not None
    assert transposed_fields({"activation": "gelu", "bias": "n", "has_alpha": True}) == {
        "activation": "gelu", "bias": "m", "has_alpha": True}
    assert transposed_fields({"activation": "relu", "bias": None})["bias"] is None
    for fields in ({"activation": "gelu", "bias": "n", "has_input": True}, {"activation": "gelu", "has_aux": True},
                   {"activation": "swiglu", "bias": "n"}, {"scale_a": "tensor"}):
        assert transposed_fields(fields) is None
        assert plan_pick(shape, OPTIONS, {"bias": None, "has_input": False, "has_alpha": False, "has_aux": False,
                                          "activation": "identity", **fields}, 132)[1] is None
    assert plan_pick(shape, ("bfloat16", "float32", (128, 128, 64), None, None), None, 132)[1] is None  # a given tile
    assert plan_pick(shape, (*OPTIONS, 4), None, 132)[1] is None  # promotion
    fp8 = GemmShape(139, 4096, 14336, 1, "float8_e4m3fn", "bfloat16")
    assert plan_pick(fp8, OPTIONS, None, 132)[1] is None


def test_no_model_suite_row_runs_transposed():
    """The suite's token counts (1, 16, 128, 512, ...), squares, odd and batched shapes pad no rows that a transposed
    launch would save: the benchmark's rows (`bench_models.row_config`, the direct picks) are the ones gemm() runs."""
    from cute_examples.dense_gemm.bench_models import SUITE_NUM_SMS, suite
    from cute_examples.dense_gemm.bench_run import bench_shape

    for s in suite():
        for dtype in ("bfloat16", "float16"):
            for sms in SUITE_NUM_SMS:
                shape = bench_shape((s.m, s.n, s.k, s.l), dtype)
                assert plan_pick(shape, (dtype, "float32", None, None, None), None, sms)[1] is None, (s, dtype, sms)


def test_a_transposed_pick_gemm_does_not_run_is_never_loaded():
    """plan_pick asks `loadable` (which loads a kernel, compiling it where a compiler is) only about kernels the plan
    may run: 300 x 272 x 1024 with a bias and ReLU keeps the direct 64x64 (the transposed problem's 128x128 split-K
    would pad M to 384 rows), so no transposed kernel is asked for; 139 x 4096 x 14336's transposed split is."""
    fields = {"activation": "relu", "bias": "n", "has_input": False, "has_alpha": False, "has_aux": False,
              "scale_a": None, "scale_b": None}
    for mnk, transposed in (((300, 272, 1024), False), ((139, 4096, 14336), True)):
        asked = []
        shape = GemmShape(*mnk, 1, "float16", "float16", "k", "n", "n")
        _, t_pick = plan_pick(shape, ("float16", *OPTIONS[1:]), fields, 132,
                              lambda cfg, asked=asked: asked.append(cfg) or True)
        assert (t_pick is not None) == transposed
        assert any(cfg.c_major == "m" for cfg in asked) == transposed

"""GEMM config choice: the cost model, speed-option variants, the bundle's coverage, the tune cache."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace

import pytest
from cute_examples.dense_gemm import tune, tune_cache
from cute_examples.dense_gemm.bench import BENCH_DTYPES, BENCH_SHAPES, bench_config
from cute_examples.dense_gemm.choice import GemmShape, estimate_us, rank_configs
from cute_examples.dense_gemm.host import choose_config
from cute_examples.dense_gemm.kernel import gemm_spec
from cute_examples.dense_gemm.spec import SMEM_CAPACITY, VARIANTS, GemmConfig


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(k_pipe_mmas=2), "k_pipe_mmas"),
        (dict(acc_init="ones"), "acc_init"),
        (dict(epi_buffers=3), "epi_buffers"),
        (dict(release_scope="gpu"), "release_scope"),
    ],
)
def test_speed_option_rules(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GemmConfig(**kwargs)
    with pytest.raises(ValueError, match="variant"):
        GemmConfig().with_variant("turbo")


def test_variants_names_specs_and_shared_memory():
    fast, base = GemmConfig(tile_n=256), GemmConfig(tile_n=256).with_variant("base")
    assert fast.variant == "fast" and base.variant == "base"
    assert GemmConfig(epi_buffers=1).variant is None
    assert fast.name.endswith("_s4_p1s2") and base.name.endswith("_s4_p0z1")
    # the JIT spec holds every config field: the variants are distinct kernels
    assert gemm_spec(fast) != gemm_spec(base)
    assert gemm_spec(fast)["args"][-1]["value"]["fields"] == dataclasses.asdict(replace(fast, stages=4))
    # the second staging buffer per consumer warpgroup: 2 x 8 KiB more, still 4 stages of 48 KiB
    assert fast.smem_bytes(4) - base.smem_bytes(4) == 2 * 64 * 64 * 2
    assert fast.smem_bytes(4) <= SMEM_CAPACITY < fast.smem_bytes(5)


def test_cluster_release_control_variant():
    """"cluster_release" is "fast" with the cluster-scope release: own name and spec; default specs unchanged."""
    fast = GemmConfig(tile_n=256, cluster_m=2)
    ctl = fast.with_variant("cluster_release")
    assert ctl.variant == "cluster_release" and ctl.with_variant("fast") == fast
    assert ctl.name == fast.name + "_rc" and ctl.smem_bytes(4) == fast.smem_bytes(4)
    assert gemm_spec(ctl) != gemm_spec(fast)
    assert gemm_spec(ctl)["args"][-1]["value"]["fields"]["release_scope"] == "cluster"
    assert fast.with_variant("base").release_scope == "cta"
    assert {k for opts in VARIANTS.values() for k in opts} == {
        "k_pipe_mmas",
        "acc_init",
        "epi_buffers",
        "release_scope",
        "schedule",
    }


def test_cost_model_prefers_full_waves_and_big_tiles():
    big = GemmShape(8192, 8192, 8192)
    assert rank_configs(big)[0] == ((128, 192), (1, 1))  # 21 rounds of 3/4 of 128x256's work, against 16
    # a problem of 128 x 8 tiles of 128x64 runs in one round; 128x256 tiles would leave most SMs idle
    mid = GemmShape(1024, 1024, 4096)
    assert estimate_us(mid, (128, 64), (1, 1)) < estimate_us(mid, (128, 256), (1, 1))
    # partial tiles cost as much as full ones: one more row costs a whole extra round of tiles
    assert estimate_us(GemmShape(129, 256, 64), (128, 256), (1, 1), 1) == 2 * estimate_us(
        GemmShape(128, 256, 64), (128, 256), (1, 1), 1
    )
    # no cluster wider than the tile grid; float32 C never with N > 128
    assert all(cluster[0] == 1 for _, cluster in rank_configs(GemmShape(60, 1000, 64)))
    assert all(t[1] <= 128 for t, _ in rank_configs(GemmShape(4096, 4096, 4096, c_dtype="float32")))
    with pytest.raises(ValueError, match="tile"):
        estimate_us(big, (256, 256), (1, 1))
    with pytest.raises(ValueError, match="m must be"):
        GemmShape(0, 1, 1)


def test_small_odd_batched_and_short_k_shapes_get_sensible_configs():
    for shape, want in [
        (GemmShape(1, 1, 8), (64, 64)),
        (GemmShape(127, 255, 72), (64, 64)),
        (GemmShape(64, 4096, 4096), (64, 64)),
        (GemmShape(8192, 8192, 1024), (128, 256)),
        (GemmShape(4096, 4096, 4096, 4), (128, 256)),
    ]:
        cfg = choose_config(shape)
        assert (cfg.tile_m, cfg.tile_n) == want, shape
        assert cfg.num_stages == cfg.max_stages() and cfg.variant == "fast"


def test_every_bench_config_and_tune_candidate_is_in_the_bundle():
    from cute_examples.dense_gemm.aot import BENCH_NUM_SMS, aot_configs

    names = {c.name for c in aot_configs()}
    for dtype in BENCH_DTYPES:
        for mnkl in BENCH_SHAPES:
            for sms in BENCH_NUM_SMS:
                for variant in VARIANTS:
                    cfg = bench_config(mnkl, dtype, variant, sms)
                    assert cfg.name in names and cfg.a_dtype == cfg.c_dtype == dtype
                shape = GemmShape(*mnkl, ab_dtype=dtype, c_dtype=dtype)
                cands = tune.tune_candidates(shape, "float32", sms)
                assert cands[0] == choose_config(shape, num_sms=sms)
                assert all(c.name in names for c in cands)
    # the large shapes run CUTLASS's tile (without a cluster: `choice.CLUSTER_COST`)
    cfg = bench_config((16384, 16384, 8192, 1), "bfloat16")
    assert (cfg.tile_m, cfg.tile_n, cfg.cluster_m, cfg.cluster_n, cfg.num_stages) == (128, 256, 1, 1, 4)


def test_tune_cache_round_trip(tmp_path):
    path = str(tmp_path / "sub" / "tune.json")
    shape = GemmShape(4096, 4096, 4096, 2, "bfloat16", "bfloat16")
    assert tune_cache.load_tune_cache(path) == {} and tune_cache.lookup_tuned(shape, "float32", "GPU X", path) is None
    cfg = GemmConfig(a_dtype="bfloat16", b_dtype="bfloat16", c_dtype="bfloat16", tile_n=256, cluster_m=2)
    choice = tune_cache.TunedChoice(cfg, 1, 2, 123.5)
    assert tune_cache.store_tuned(shape, "float32", "GPU X", choice, path) == path
    def same(got, want):
        return got is not None and (got.config, got.raster_along_n, got.swizzle_log, got.us) == (
            want.config,
            want.raster_along_n,
            want.swizzle_log,
            want.us,
        )

    assert same(tune_cache.lookup_tuned(shape, "float32", "GPU X", path), choice)
    assert tune_cache.lookup_tuned(shape, "float32", "GPU Y", path) is None  # per device name
    single = GemmShape(4096, 4096, 4096, 1, "bfloat16", "bfloat16")
    assert tune_cache.lookup_tuned(single, "float32", "GPU X", path) is None
    other = tune_cache.TunedChoice(cfg.with_variant("base"), None, None, 99.0)
    tune_cache.store_tuned(GemmShape(8, 8, 8), "float32", "GPU X", other, path)
    assert len(tune_cache.load_tune_cache(path)) == 2
    assert same(tune_cache.lookup_tuned(shape, "float32", "GPU X", path), choice)
    data = json.loads(open(path).read())
    assert data["format"] == "cute-gemm-tune" and data["version"] == 2
    assert tune_cache.tune_key(shape, "float32", "GPU X") == "GPU X|4096x4096x4096x2|bfloat16.float32.bfloat16|kkn"


def test_tune_cache_path_comes_from_the_config_module(tmp_path, monkeypatch):
    from cute_examples.config import tune_cache_path

    monkeypatch.setenv("CUTE_TUNE_CACHE", str(tmp_path / "t.json"))
    assert tune_cache_path() == str(tmp_path / "t.json")
    monkeypatch.delenv("CUTE_TUNE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tune_cache_path() == str(tmp_path / "xdg" / "cute-examples" / "gemm_tune.json")


def test_a_broken_tune_cache_is_a_value_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        tune_cache.load_tune_cache(str(bad))
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="cute-gemm-tune"):
        tune_cache.load_tune_cache(str(bad))


def test_cli_variant_and_tune_flags():
    from cute_examples.dense_gemm.__main__ import config_of, parse_args

    args = parse_args(["--variant", "base", "--tune"])
    assert args.tune and config_of(args).variant == "base"
    assert config_of(parse_args([])).variant == "fast"
    with pytest.raises(SystemExit):
        parse_args(["--variant", "turbo"])
    from cute_examples.dense_gemm.bench import main

    with pytest.raises(SystemExit):
        main(["--variant", "fast,turbo"])

"""The decomposition cost model and the model-shape suite without a GPU: calibration file, choices, AOT cover."""

from __future__ import annotations

import json

import pytest
from cute_examples.dense_gemm.choice import GemmShape
from cute_examples.dense_gemm.spec import GemmConfig


def _cal(**fields):
    """The calibrated constants with `fields` replaced (the tests' own rates)."""
    import dataclasses

    from cute_examples.dense_gemm.calibration import calibration

    return dataclasses.replace(calibration(), **fields)


def test_calibration_file_is_complete(tmp_path):
    from cute_examples.dense_gemm.calibration import CALIBRATION_FILE, calibration

    cal = calibration()
    assert cal.sm_flop_per_us > 0 and cal.hbm_bytes_per_us > 0 and 0 <= cal.min_gain < 1
    data = json.load(open(CALIBRATION_FILE))
    assert "calibrate" in data["about"] and data["device"] and data["date"]
    del data["hbm_bytes_per_us"]
    bad = tmp_path / "cal.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="'hbm_bytes_per_us' is missing"):
        calibration(str(bad))
    data = json.load(open(CALIBRATION_FILE))
    data["tile_efficiency"]["pingpong"] = {}
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="tile_efficiency"):
        calibration(str(bad))


def test_model_follows_waves_and_k():
    """General behaviour (not a table): a full wave stays data-parallel; too few tiles for the SMs with a long K
    splits; a partial last wave of a long-K problem goes stream-K; K too short to share stays data-parallel."""
    from cute_examples.dense_gemm.k_choice import choose_decomposition

    cal = _cal(sm_load_bytes_per_us=1e6, sm_stream_bytes_per_us=1e6, hbm_bytes_per_us=1e9, sm_store_bytes_per_us=5e4,
               sm_fixup_bytes_per_us=8e4, unit_fixed_us=0.5, min_gain=0.1)
    cfg = GemmConfig(tile_n=256)
    assert choose_decomposition(GemmShape(128 * 132, 256, 8192), cfg, 132, cal).kind == "data_parallel"
    few = choose_decomposition(GemmShape(256, 2048, 16384), cfg, 132, cal)  # 16 tiles, 256 K tiles
    assert few.kind != "data_parallel"
    partial = choose_decomposition(GemmShape(128 * 140, 256, 16384), cfg, 132, cal)  # 140 tiles on 132 SMs
    assert partial.kind == "stream_k"
    assert choose_decomposition(GemmShape(256, 2048, 64), cfg, 132, cal).kind == "data_parallel"


def test_suite_and_its_configs_are_in_the_bundle():
    from cute_examples.dense_gemm.aot import aot_configs
    from cute_examples.dense_gemm.bench_models import model_configs, row_config, suite

    shapes = suite()
    assert len(shapes) >= 30 and len(suite(quick=True)) < len(shapes)
    assert {s.m for s in shapes if s.label.startswith("llama3")} == {1, 16, 128, 512, 2048, 8192}
    assert any(s.l > 1 for s in shapes) and any(s.m % 2 for s in shapes)
    names = {c.name for c in aot_configs()}
    assert all(c.name in names for c in model_configs())
    cfg, choice = row_config(shapes[0], "bfloat16", 132, "data_parallel")
    assert choice.kind == "data_parallel" and not cfg.shares_k
    with pytest.raises(ValueError, match="decomposition must be one of"):
        row_config(shapes[0], "bfloat16", 132, "tiles")


def test_limiter_names_the_bound():
    from cute_examples.dense_gemm.k_choice import limiter

    def cal(hbm, load):
        return _cal(sm_flop_per_us=5e6, sm_load_bytes_per_us=load, sm_stream_bytes_per_us=load, hbm_bytes_per_us=hbm,
                    sm_store_bytes_per_us=5e4, sm_fixup_bytes_per_us=8e4, unit_fixed_us=0.5, min_gain=0.1)

    cfg, decode = GemmConfig(tile_m=64, tile_n=256), GemmShape(1, 8192, 8192)
    assert limiter(decode, cfg, 132, "data_parallel", cal=cal(1e6, 1e9)) == "DRAM"
    assert limiter(decode, cfg, 132, "data_parallel", cal=cal(1e12, 1e3)) == "SM loads"
    assert limiter(GemmShape(8192, 8192, 8192), GemmConfig(tile_n=256), 132, "data_parallel",
                   cal=cal(1e12, 1e9)) == "tensor cores"


def test_small_m_prefers_split_k_on_narrow_tiles_and_the_workspace_is_bounded():
    """Decode-like M splits K on the narrowest tile (more SMs streaming B) rather than stream-K on 128x256; a
    decomposition whose partial tiles exceed MAX_WORKSPACE_BYTES is never chosen."""
    import dataclasses

    from cute_examples.dense_gemm.k_choice import (
        SMALL_M_TILES,
        choose_decomposition,
        decomposed_config,
        partial_bytes,
    )
    from cute_examples.dense_gemm.split_k import MAX_WORKSPACE_BYTES

    dp = GemmConfig(tile_m=64, tile_n=64, cluster_n=2)
    cfg, choice = decomposed_config(GemmShape(1, 4096, 14336), dp, 132)
    assert choice.kind == "split_k" and (cfg.tile_m, cfg.tile_n) in SMALL_M_TILES and cfg.decomposition == "split_k"
    # a huge fix-up bandwidth makes every split attractive: the budget still rules out the big workspaces
    cal = _cal(sm_flop_per_us=5e6, sm_load_bytes_per_us=1e3, sm_stream_bytes_per_us=1e3, hbm_bytes_per_us=1e12,
               sm_store_bytes_per_us=5e4, sm_fixup_bytes_per_us=1e12, unit_fixed_us=0.0, min_gain=0.0)
    big = GemmShape(4096, 4096, 65536)
    tile = GemmConfig(tile_n=256)
    c = choose_decomposition(big, tile, 132, cal)
    assert c.kind != "data_parallel"
    assert partial_bytes(big, tile, 132, c.kind, c.splits) <= MAX_WORKSPACE_BYTES
    assert partial_bytes(big, tile, 132, "split_k", 16) > MAX_WORKSPACE_BYTES
    assert partial_bytes(big, dataclasses.replace(tile, decomposition="stream_k"), 132, "data_parallel") == 0

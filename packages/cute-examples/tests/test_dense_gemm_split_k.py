"""Split-K / stream-K without a GPU: config rules, the kernel each config is, launch schedules, compiles."""

from __future__ import annotations

import pytest
from cute_examples.dense_gemm.choice import GemmShape
from cute_examples.dense_gemm.spec import GemmConfig


def test_config_rules_and_names():
    cfg = GemmConfig(tile_n=256, decomposition="stream_k")
    assert cfg.shares_k and cfg.name.endswith("_streamk")
    assert GemmConfig(decomposition="split_k").name.endswith("_splitk")
    assert not GemmConfig().shares_k and "split" not in GemmConfig().name
    with pytest.raises(ValueError, match="decomposition must be one of"):
        GemmConfig(decomposition="tiles")
    with pytest.raises(ValueError, match="needs acc_dtype float32"):
        GemmConfig(acc_dtype="float16", decomposition="split_k")
    with pytest.raises(ValueError, match="takes no fused epilogue"):
        GemmConfig(activation="relu", decomposition="split_k")
    with pytest.raises(ValueError, match="multiple of epi_buffers=2"):
        GemmConfig(tile_n=64, decomposition="stream_k")  # one 64-column chunk per tile


def test_kernel_of_a_split_config():
    from cute_examples.dense_gemm.kernel import _kernel_fn, gemm_spec
    from cute_examples.dense_gemm.split_k import SPLIT_PARAMS, dense_gemm_split

    cfg = GemmConfig(decomposition="split_k")
    assert _kernel_fn(cfg) is dense_gemm_split
    spec = gemm_spec(cfg)
    assert spec != gemm_spec(GemmConfig()) and SPLIT_PARAMS == ("workspace", "flags", "splits")


def test_schedules():
    from cute_examples.dense_gemm.decomposed import schedule_of

    shape = GemmShape(3000, 5000, 4096)
    dp = schedule_of(shape, GemmConfig(tile_n=256), 132)
    assert dp.label == "data_parallel units=480 grid=132x1x1"
    sk = schedule_of(shape, GemmConfig(tile_n=256, decomposition="stream_k"), 132)
    assert (sk.workers, sk.sk_tiles, sk.shared_cta_tiles, sk.grid) == (132, 84, 84, (132, 1, 1))
    assert sk.label == "stream_k W=132 sk_tiles=84 units=528 grid=132x1x1"
    split = schedule_of(GemmShape(256, 512, 4096), GemmConfig(decomposition="split_k"), 132, splits=4)
    assert split.label == "split_k S=4 units=32 grid=32x1x1" and split.shared_cta_tiles == 8
    # split-K never has more parts than K tiles
    assert schedule_of(GemmShape(256, 512, 100), GemmConfig(decomposition="split_k"), 132, splits=4).splits == 2


def test_split_configs_compile_without_spills():
    """Two representative split configs through ptxas (the full list is in the config sweep)."""
    from cute_examples.dense_gemm.configs import sweep_configs
    from cute_examples.dense_gemm.kernel import compile_gemm
    from cute_examples.dense_gemm.split_k_cases import SPLIT_GPU_CASES, split_sweep_configs

    names = {c.name for c in sweep_configs()}
    assert all(c.name in names for c in split_sweep_configs())
    assert all(c.config in split_sweep_configs() for c in SPLIT_GPU_CASES)
    for cfg in (GemmConfig(tile_n=256, cluster_m=2, decomposition="split_k"),
                GemmConfig(tile_n=256, decomposition="stream_k")):
        art = compile_gemm(cfg)
        r = art.resources
        assert (r["spill_stores"], r["spill_loads"]) == (0, 0), cfg.name
        ptx = art.ptx
        for instr in ("ld.acquire.gpu.global.u32", "st.release.gpu.global.u32", "ld.global.cg.v4.f32",
                      "st.global.cg.v4.f32", "nanosleep.u32"):
            assert instr in ptx, instr

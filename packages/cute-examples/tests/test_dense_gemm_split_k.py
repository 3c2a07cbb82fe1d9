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
    fused = GemmConfig(activation="relu", bias="n", has_input=True, decomposition="split_k")
    assert fused.shares_k and fused.fused and fused.name.endswith("_relu_bn_in_splitk")
    with pytest.raises(ValueError, match="schedule 'pingpong' needs decomposition 'data_parallel'"):
        GemmConfig(activation="relu", decomposition="split_k", schedule="pingpong")
    fp8 = GemmConfig(a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn", c_dtype="bfloat16", scale_a="tensor",
                     scale_b="n", activation="relu", decomposition="split_k")
    assert fp8.shares_k and fp8.scaled and fp8.name.endswith("_splitk")
    # one 64-column chunk per tile: the kernel restarts the two buffers' order each unit (`kernel._epilogue`)
    assert GemmConfig(tile_n=64, decomposition="stream_k").epi_buffers == 2


def test_shared_k_staging_buffers_by_epilogue_chunks():
    """One staging buffer for a tile of one epilogue chunk, `ODD_CHUNK_BUFFERS` for an odd number more, else the
    config's."""
    from cute_examples.dense_gemm.k_choice import ODD_CHUNK_BUFFERS, shared_k_config

    e4m3 = "float8_e4m3fn"
    dp = GemmConfig(a_dtype=e4m3, b_dtype=e4m3, c_dtype=e4m3, tile_n=256, scale_a="tensor", scale_b="tensor")
    cfg = shared_k_config(dp, (128, 128), "split_k")  # an 8-bit C's 128 columns: one chunk
    assert (cfg.tile_n, cfg.epi_buffers, cfg.decomposition, cfg.scale_a) == (128, 1, "split_k", "tensor")
    assert shared_k_config(dp, (128, 256), "stream_k").epi_buffers == 2  # two chunks keep two buffers
    wide = shared_k_config(GemmConfig(tile_n=64), (128, 256), "split_k")  # 16-bit C: four chunks
    assert (wide.tile_n, wide.epi_buffers, wide.cluster_m) == (256, 2, 1)
    odd = shared_k_config(GemmConfig(), (128, 160), "stream_k")  # 16-bit C: five 32-column chunks
    assert (odd.c_tile_n // odd.epi_n, odd.epi_buffers) == (5, ODD_CHUNK_BUFFERS) and ODD_CHUNK_BUFFERS == 2


def test_kernel_of_a_split_config():
    from cute_examples.dense_gemm.kernel import _kernel_fn, dense_gemm_split, gemm_spec
    from cute_examples.dense_gemm.split_k import SPLIT_PARAMS

    cfg = GemmConfig(decomposition="split_k")
    assert _kernel_fn(cfg) is dense_gemm_split
    spec = gemm_spec(cfg)
    assert spec != gemm_spec(GemmConfig()) and SPLIT_PARAMS == ("workspace", "flags", "splits")
    from cute_examples.dense_gemm.kernel import FUSED_PARAMS, PARAMS, SCALE_PARAMS, dense_gemm_split_scaled

    scaled = GemmConfig(a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn", c_dtype="float8_e4m3fn", tile_n=256,
                        decomposition="stream_k")
    assert _kernel_fn(scaled) is dense_gemm_split_scaled
    # the host's parameter block: the scaled kernel's values, then the split ones (launch_plan, decomposed)
    names = [d.name for d in dense_gemm_split_scaled.decls if d.kind != "const"]
    assert names == list(PARAMS + FUSED_PARAMS + SCALE_PARAMS + SPLIT_PARAMS)
    from cute_examples.dense_gemm.kernel import dense_gemm_split_fused

    fused = GemmConfig(activation="gelu", bias="n", has_aux=True, decomposition="split_k")
    assert _kernel_fn(fused) is dense_gemm_split_fused
    names = [d.name for d in dense_gemm_split_fused.decls if d.kind != "const"]
    assert names == list(PARAMS + FUSED_PARAMS + SPLIT_PARAMS)
    assert gemm_spec(fused)["kernel"] == "dense_gemm_split_fused" != gemm_spec(cfg)["kernel"]
    pytest.importorskip("mlir")  # the kernels' own checks run as they build
    with pytest.raises(ValueError, match="use dense_gemm_split_fused"):
        dense_gemm_split.artifact(*(None,) * len(PARAMS + SPLIT_PARAMS), config=fused, target="sm_90a")
    with pytest.raises(ValueError, match="needs a split-K / stream-K config with a fused epilogue"):
        dense_gemm_split_fused.artifact(*(None,) * len(names), config=cfg, target="sm_90a")


def test_schedules():
    from cute_examples.dense_gemm.decomposed import schedule_of

    shape = GemmShape(3000, 5000, 4096)
    dp = schedule_of(shape, GemmConfig(tile_n=256), 132)
    assert dp.label == f"data_parallel units=480 grid=132x1x1 raster_n={dp.raster_along_n} swz={dp.swizzle_log}"
    # a given order (raster_along_n, swizzle_log) is the one the schedule and its label carry
    other = schedule_of(shape, GemmConfig(tile_n=256), 132, order=(1 - dp.raster_along_n, 4))
    assert other.label == f"data_parallel units=480 grid=132x1x1 raster_n={1 - dp.raster_along_n} swz=4"
    sk = schedule_of(shape, GemmConfig(tile_n=256, decomposition="stream_k"), 132)
    # 480 tiles on 132 SMs: the remainder's 84 tiles and one full wave shared, two data-parallel waves
    assert (sk.workers, sk.sk_tiles, sk.shared_cta_tiles, sk.grid) == (132, 216, 216, (132, 1, 1))
    assert sk.label.startswith("stream_k W=132 sk_tiles=216 units=396 grid=132x1x1 raster_n=")
    split = schedule_of(GemmShape(256, 512, 4096), GemmConfig(decomposition="split_k"), 132, splits=4)
    assert split.label.startswith("split_k S=4 units=32 grid=32x1x1 raster_n=") and split.shared_cta_tiles == 8
    # partial tiles: stream-K one per worker, split-K parts - 1 per tile; bounded by MAX_WORKSPACE_BYTES
    assert (sk.partial_cta_tiles, sk.workspace_bytes) == (132, 132 * 128 * 256 * 4)
    assert (split.partial_cta_tiles, split.workspace_bytes) == (24, 24 * 128 * 128 * 4)
    with pytest.raises(ValueError, match="more than MAX_WORKSPACE_BYTES"):
        schedule_of(GemmShape(8192, 8192, 8192), GemmConfig(tile_n=256, decomposition="split_k"), 132, splits=16)
    # past a wave split-K runs the whole waves data-parallel and splits the last, partial wave's tiles
    hybrid = schedule_of(GemmShape(3000, 4096, 2048), GemmConfig(tile_n=256, decomposition="split_k"), 132, splits=3)
    assert (hybrid.grid, hybrid.units, hybrid.shared_cta_tiles, hybrid.partial_cta_tiles) == ((132, 1, 1), 264 + 360,
                                                                                              120, 240)
    # split-K never has more parts than K tiles
    assert schedule_of(GemmShape(256, 512, 100), GemmConfig(decomposition="split_k"), 132, splits=4).splits == 2


def test_stream_k_gpu_case_shifts_its_m_edge():
    """The stream-K GPU case past two waves with a partial last M tile: its launch rasters along the longer N, the
    last two tile rows are data-parallel (`TileScheduler.edges_whole`), so the kernel starts the edge tile inside M."""
    from cute_examples.dense_gemm.decomposed import schedule_of
    from cute_examples.dense_gemm.split_k_cases import SPLIT_GPU_CASES
    from cute_nvarch.tile_scheduler import TileScheduler

    case = next(c for c in SPLIT_GPU_CASES if c.mnk == (2000, 8192, 1024))
    cfg, (m, n, k) = case.config, case.mnk
    s = schedule_of(GemmShape(m, n, k), cfg, 132)
    work = cfg.tile_scheduler.k_work(s.decomposition, m, n, k, 1, s.grid[0])
    tiles_m, tiles_n, _ = cfg.tile_scheduler.problem_tiles(m, n, k)
    assert s.raster_along_n == 1 and 0 < s.sk_tiles < tiles_m * tiles_n and m % cfg.tile_m
    assert TileScheduler.edges_whole(work, 0, tiles_m, tiles_n, s.raster_along_n, s.swizzle_log)
    assert cfg.clamped_edges[0] and cfg.tile_origin(0, tiles_m - 1, m) == m - cfg.tile_m
    assert cfg.tile_origin(0, tiles_m - 1, m, whole=False) == (tiles_m - 1) * cfg.tile_m


def test_split_configs_compile_without_spills():
    """Representative split configs of the plain, scaled and fused kernels through ptxas (the full list is in the
    config sweep)."""
    from cute_examples.dense_gemm.configs import sweep_configs
    from cute_examples.dense_gemm.kernel import compile_gemm
    from cute_examples.dense_gemm.split_k_cases import (
        FP8_SPLIT_GPU_CASES,
        FUSED_SPLIT_GPU_CASES,
        SPLIT_GPU_CASES,
        split_sweep_configs,
    )

    names = {c.name for c in sweep_configs()}
    assert all(c.name in names for c in split_sweep_configs())
    assert all(c.config in split_sweep_configs() for c in SPLIT_GPU_CASES + FP8_SPLIT_GPU_CASES + FUSED_SPLIT_GPU_CASES)
    for cfg in (GemmConfig(tile_n=256, cluster_m=2, decomposition="split_k"),
                GemmConfig(tile_n=256, decomposition="stream_k"), FP8_SPLIT_GPU_CASES[0].config,
                FUSED_SPLIT_GPU_CASES[0].config, SPLIT_GPU_CASES[-1].config, FUSED_SPLIT_GPU_CASES[-1].config):
        art = compile_gemm(cfg)
        r = art.resources
        assert (r["spill_stores"], r["spill_loads"]) == (0, 0), cfg.name
        ptx = art.ptx
        for instr in ("ld.acquire.gpu.global.u32", "st.release.gpu.global.u32", "red.release.gpu.global.add.u32",
                      "ld.global.cg.v4.f32", "st.global.cg.v4.f32", "nanosleep.u32", "trap;"):
            assert instr in ptx, instr


def test_gemm_plan_runs_the_chosen_decomposition(monkeypatch, tmp_path):
    """A plan whose shape the model decomposes runs dense_gemm_split with its schedule's grid and splits (with a fused
    epilogue, dense_gemm_split_fused with the same schedule); the workspace and flag addresses are set per stream in
    the parameter block; CUTE_GEMM_DECOMPOSE=0 keeps it data-parallel."""
    import dataclasses
    import struct
    from types import SimpleNamespace

    import cute_runtime
    import torch
    from cute_examples.dense_gemm import decomposed, launch_plan, tune_cache
    from cute_examples.dense_gemm import kernel as gemm_kernel
    from cute_examples.dense_gemm.launch_plan import PlanCache
    from cute_examples.dense_gemm.split_k import SPLIT_PARAMS
    from cute_runtime import TensorMap
    from gemm_fakes import Driver, GemmKernel

    launches = []

    @dataclasses.dataclass(frozen=True)
    class Device:
        type: str
        index: int

    class Fake:
        is_cuda = True

        def __init__(self, shape, address):
            self.shape, self.dtype, self._address = torch.Size(shape), torch.float16, address
            self._stride = torch.empty(shape, device="meta").stride()
            self.device = Device("cuda", 0)

        def dim(self):
            return len(self.shape)

        def stride(self):
            return self._stride

        def data_ptr(self):
            return self._address

    monkeypatch.setenv("CUTE_TUNE_CACHE", str(tmp_path / "none.json"))
    monkeypatch.setattr(tune_cache, "_once", {})
    props = SimpleNamespace(compute_capability=(9, 0), sm_count=132, name="Fake H100")
    monkeypatch.setattr(cute_runtime, "device_properties", lambda device: props)
    monkeypatch.setattr(cute_runtime.driver, "init", lambda: Driver)
    monkeypatch.setattr(gemm_kernel, "kernel_of", lambda cfg, cc, device=None: GemmKernel(
        cfg, lambda grid, stream, block: launches.append((grid, stream, block))))
    monkeypatch.setattr(launch_plan, "tensor_maps", lambda p, cfg: [TensorMap(bytes(128)) for _ in range(3)])
    monkeypatch.setattr(decomposed.Workspace, "pointers", lambda self, cfg, sch, device, stream: (stream << 20,
                                                                                                   stream << 24))
    cache = PlanCache(launch_plan._build)
    monkeypatch.setattr(launch_plan, "_get", cache.get)
    a, b, c = Fake((256, 16384), 1 << 20), Fake((16384, 512), 1 << 30), Fake((256, 512), 1 << 34)
    launch_plan.gemm(a, b, c, stream=7)
    (plan,) = cache.table().values()
    assert plan.config.shares_k and plan.schedule.kind == plan.config.decomposition
    launch_plan.gemm(a, b, c, stream=9)
    offsets = dict(zip((p.name for p in plan.kernel.layout.params), plan.kernel.layout.offsets, strict=True))
    for (grid, stream, block), want in zip(launches, (7, 9), strict=True):
        assert grid == plan.schedule.grid and stream == want
        ws, flags = (struct.unpack_from("<Q", block, offsets[n])[0] for n in SPLIT_PARAMS[:2])
        assert (ws, flags) == (want << 20, want << 24)
        assert struct.unpack_from("<i", block, offsets["splits"])[0] == plan.schedule.splits
    # with a fused epilogue: the same decomposition, dense_gemm_split_fused's block (fused values, then split ones)
    bias = Fake((512,), 1 << 36)
    launch_plan.gemm(a, b, c, bias=bias, activation="gelu", stream=7)
    (fused,) = [p for p in cache.table().values() if p.config.fused]
    assert fused.config == dataclasses.replace(plan.config, activation="gelu", bias="n")
    assert fused.schedule == plan.schedule
    offsets = dict(zip((p.name for p in fused.kernel.layout.params), fused.kernel.layout.offsets, strict=True))
    grid, stream, block = launches[-1]
    assert grid == fused.schedule.grid and stream == 7
    assert struct.unpack_from("<Q", block, offsets["bias_ptr"])[0] == 1 << 36
    assert struct.unpack_from("<Q", block, offsets["workspace"])[0] == 7 << 20
    assert struct.unpack_from("<i", block, offsets["splits"])[0] == fused.schedule.splits
    monkeypatch.setenv("CUTE_GEMM_DECOMPOSE", "0")
    cache.table().clear()
    launch_plan.gemm(a, b, c, stream=7)
    (plan,) = cache.table().values()
    assert not plan.config.shares_k and plan.schedule is None

"""The ping-pong schedule (`GemmConfig.schedule` "pingpong") on the CPU: its rules, its plan (one releasing warpgroup
per stage, two staging buffers), its variant, and (with MLIR) its kernels: 0 spills, tile_m / 64 wgmma atoms per
k-block, the math order barrier; the cooperative kernel has no such barrier."""

from __future__ import annotations

import dataclasses
import re

import pytest
from cute_examples.dense_gemm.pingpong_cases import PLAIN_GPU_CONFIGS, gpu_calls, sweep_configs
from cute_examples.dense_gemm.spec import CONSUMER_REGS, PRODUCER_REGS, GemmConfig


def _pp(**kw):
    return GemmConfig(schedule="pingpong", **kw)


@pytest.mark.parametrize(("kw", "words"), [
    ({"schedule": "pingpong2"}, "schedule must be one of"),
    ({"schedule": "pingpong", "tile_m": 128, "tile_n": 256}, "tile_m * tile_n / 128 <= 128"),
    ({"schedule": "pingpong", "tile_m": 64, "decomposition": "split_k"}, "needs decomposition 'data_parallel'"),
    ({"schedule": "pingpong", "tile_m": 128, "tile_n": 128, "has_input": True}, "has_input with schedule 'pingpong'"),
    ({"schedule": "pingpong", "tile_m": 64, "decomposition": "stream_k"}, "needs decomposition 'data_parallel'"),
    ({"schedule": "pingpong", "tile_m": 64, "tile_n": 128, "a_dtype": "float8_e4m3fn", "b_dtype": "float8_e4m3fn",
      "c_dtype": "bfloat16", "mma_promotion_interval": 4}, "takes no mma_promotion_interval"),
])
def test_pingpong_rules_name_the_field(kw, words):
    with pytest.raises(ValueError, match=re.escape(words)) as e:
        GemmConfig(**kw)
    assert "schedule" in str(e.value)


def test_pingpong_shape_of_the_cta():
    for tm, tn in ((64, 64), (64, 128), (64, 256), (128, 64), (128, 128)):
        cfg = _pp(tile_m=tm, tile_n=tn)
        assert cfg.pingpong and "_p1s2P" in cfg.name
        assert (cfg.num_consumer_warpgroups, cfg.num_threads, cfg.mma_warpgroups, cfg.atoms_m) == (2, 384, 1, tm // 64)
        # the register split of three warpgroups (one producer, two consumers) fits the SM's 64 K registers
        assert 128 * (PRODUCER_REGS + 2 * CONSUMER_REGS) <= 65536
    coop = GemmConfig(tile_m=64)
    assert (coop.num_consumer_warpgroups, coop.num_threads, coop.mma_warpgroups, coop.atoms_m) == (1, 256, 1, 1)
    assert "P" not in GemmConfig().name and GemmConfig().schedule == "cooperative"


def test_with_schedule_and_the_pingpong_variant():
    wide = GemmConfig(tile_m=128, tile_n=256, cluster_m=2, stages=3)
    pp = wide.with_schedule("pingpong")
    assert (pp.tile_m, pp.tile_n, pp.cluster_m, pp.stages, pp.schedule) == (64, 256, 2, None, "pingpong")
    assert wide.with_variant("pingpong") == pp and pp.variant == "pingpong"
    assert pp.with_variant("fast").schedule == "cooperative" and pp.with_variant("fast").variant == "fast"
    square = GemmConfig(tile_m=128, tile_n=128)
    assert square.with_schedule("pingpong").tile_m == 128  # within the accumulator limit: the tile stays
    assert square.with_schedule("cooperative") == square
    with pytest.raises(ValueError, match="schedule must be one of"):
        square.with_schedule("serial")


def test_pingpong_input_picks_a_64x128_tile():
    from cute_examples.dense_gemm.epilogue_cases import bench_problem
    from cute_examples.dense_gemm.host import choose_epilogue_config

    p = bench_problem(2048, 4096, 16384)
    cfg = choose_epilogue_config(p, {"has_input": True}, variant="pingpong")
    assert cfg.pingpong and cfg.has_input and cfg.tile_m * cfg.tile_n <= 64 * 128
    with pytest.raises(ValueError, match="input= with the ping-pong schedule"):
        choose_epilogue_config(p, {"has_input": True}, tile_shape_mnk=(128, 128, 64), variant="pingpong")


def test_pingpong_plan_releases_each_stage_once_per_cta():
    pytest.importorskip("mlir")
    from cute_examples.dense_gemm.plan import make_plan

    for cm, cn in ((1, 1), (2, 1), (1, 2), (2, 2)):
        pp = make_plan(_pp(tile_m=128, tile_n=128, cluster_m=cm, cluster_n=cn))
        coop = make_plan(GemmConfig(tile_m=128, tile_n=128, cluster_m=cm, cluster_n=cn))
        # one warpgroup reads a stage (per CTA of its cluster row and column), not tile_m / 64 of them
        assert pp.pipeline.consumer_arrivals == cm + cn - 1
        assert coop.pipeline.consumer_arrivals == 2 * (cm + cn - 1)
        # the second 64-row atom of A sits where the cooperative kernel's second warpgroup reads
        assert pp.a.mn_atom_bytes == coop.a.mn_atom_bytes > 0
        # two staging buffers sets: one per consumer warpgroup
        cfg = pp.cfg
        assert pp.smem["epi"].nbytes == 2 * cfg.epi_buffers * cfg.epi_bytes


def test_pingpong_cases_are_valid_and_bundled():
    sweep = sweep_configs()
    assert len(sweep) == len({c.name for c in sweep}) == 45 and all(c.pingpong for c in sweep)
    from cute_examples.dense_gemm.aot import aot_configs

    names = {c.name for c in aot_configs()}
    assert {c.name for c in PLAIN_GPU_CONFIGS} <= names
    for call in gpu_calls():
        assert call.variant == "pingpong"
        assert all(c.pingpong and c.name in names for c in call.configs((132, 114)))


_COMPILED = [
    _pp(tile_m=64, tile_n=256),
    _pp(tile_m=128, tile_n=128, cluster_m=2),
    _pp(tile_m=128, tile_n=64, cluster_n=2, a_major="m", c_major="m", c_dtype="float32"),
    _pp(tile_m=128, tile_n=128, activation="gelu", bias="n", a_dtype="bfloat16", b_dtype="bfloat16",
        c_dtype="bfloat16"),
    _pp(tile_m=64, tile_n=256, activation="swiglu"),
]


@pytest.mark.parametrize("cfg", _COMPILED, ids=lambda c: c.name)
def test_pingpong_kernels_assemble_without_spills(cfg):
    pytest.importorskip("mlir")
    from cute_examples.dense_gemm.kernel import compile_gemm
    from cute_ir.hopper import sass

    art = compile_gemm(cfg)
    r = art.resources
    assert r["spill_stores"] == 0 and r["spill_loads"] == 0 and r["local_memory"] == 0, r
    assert art.entry.launch.block == (384, 1, 1)
    ptx = re.sub(r"[ \t]+", " ", art.ptx)
    k_blocks = cfg.tile_k // 16
    # the peeled K-tile and the K loop: each k-block issues tile_m / 64 atoms (one per 64-row accumulator)
    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n", ptx)) == 2 * k_blocks * cfg.atoms_m
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in ptx and "setmaxnreg.inc.sync.aligned.u32 232;" in ptx
    # the math order barrier (256 threads: two consumer warpgroups), a wait and an arrive, and the epilogue's
    # per-warpgroup barrier (128 threads)
    assert len(re.findall(r"bar\.sync %r\d+, 256;", ptx)) == 1
    assert len(re.findall(r"bar\.arrive %r\d+, 256;", ptx)) == 1
    assert re.search(r"bar\.sync %r\d+, 128;", ptx)
    if sass.find_disassembler() is None:
        return
    ops = sass.opcode_counts(sass.disassemble(art.cubin))
    assert ops["HGMMA"] == 2 * k_blocks * cfg.atoms_m
    assert ops["STL"] == 0 and ops["LDL"] == 0 and ops["USETMAXREG"] == 2


def test_cooperative_kernel_has_no_order_barrier():
    pytest.importorskip("mlir")
    from cute_examples.dense_gemm.kernel import compile_gemm

    cfg = GemmConfig(tile_m=128, tile_n=128)
    ptx = re.sub(r"[ \t]+", " ", compile_gemm(cfg).ptx)
    assert not re.search(r"bar\.(sync|arrive) %r\d+, 256;", ptx)
    pp = compile_gemm(dataclasses.replace(cfg, schedule="pingpong")).ptx
    assert pp != compile_gemm(cfg).ptx

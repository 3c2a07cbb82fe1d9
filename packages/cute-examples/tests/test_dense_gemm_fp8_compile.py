"""CPU CI for the FP8 GEMM: every config of `fp8_configs` assembles with 0 spills, its wgmma is m64nNk32 with
the config's 8-bit types, and its SASS runs QGMMA with no data conversion between the first and the last QGMMA."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("mlir")

from cute_examples.dense_gemm.fp8_cases import fp8_configs, scaled_configs  # noqa: E402
from cute_examples.dense_gemm.kernel import compile_gemm  # noqa: E402
from cute_examples.dense_gemm.spec import GemmConfig  # noqa: E402
from cute_examples.dense_gemm.split_k_cases import FP8_SPLIT_GPU_CASES  # noqa: E402
from cute_ir.hopper import sass  # noqa: E402
from cute_nvarch.numeric import numeric_type  # noqa: E402

_SHORT = {"float8_e4m3fn": "E4M3", "float8_e5m2": "E5M2"}


@pytest.mark.parametrize("cfg", fp8_configs() + scaled_configs()[1::3] + [c.config for c in FP8_SPLIT_GPU_CASES],
                         ids=lambda c: c.name)
def test_fp8_config_assembles_with_qgmma(cfg):
    art = compile_gemm(cfg)
    r = art.resources
    assert r["spill_stores"] == 0 and r["spill_loads"] == 0 and r["local_memory"] == 0, r
    assert r["shared_memory"] == cfg.smem_bytes(cfg.num_stages)
    assert cfg.tile_k == 128
    ptx = re.sub(r"[ \t]+", " ", art.ptx)
    a, b = (numeric_type(d).ptx_type for d in (cfg.a_dtype, cfg.b_dtype))
    mma = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k(\d+)\.(\w+)\.(\w+)\.(\w+)", ptx)
    # K-tile 0 is peeled: two chains of tile_k / 32 wgmmas; promotion every K-tile with scale-d-0 chains in one
    # consumer warpgroup takes the loop's K-tiles in pairs and an odd last one in a branch (kernel._promoting_pairs):
    # four chains; tile_m 256: each chain's wgmmas for both 64-row atoms of the warpgroup
    pairs = cfg.mma_promotion_interval == cfg.k_blocks and cfg.acc_init == "scale_d" and cfg.mma_warpgroups == 1
    chains = (4 if pairs else 2) * cfg.atoms_m
    assert mma == [(str(cfg.tile_n), "32", "f32", a, b)] * chains * (cfg.tile_k // 32)
    if sass.find_disassembler() is None:
        pytest.skip("no SASS disassembler: install nvidia-cuda-nvdisasm (cuobjdump -sass needs it)")
    instrs = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", sass.disassemble(art.cubin))
    form = f"QGMMA.64x{cfg.tile_n}x32.F32.{_SHORT[cfg.a_dtype]}.{_SHORT[cfg.b_dtype]}"
    q = [i for i, ins in enumerate(instrs) if "QGMMA" in ins]
    assert len(q) == chains * (cfg.tile_k // 32) and all(form in instrs[i] for i in q), [instrs[i] for i in q]
    # no float conversion between the first and the last QGMMA: the 8-bit operands go to the tensor cores as
    # they are. `I2F.U32.RP` is the reciprocal step of an integer division by a run-time divisor (the tile
    # schedule's), which ptxas may schedule there; it converts no data.
    between = instrs[q[0] : q[-1] + 1]
    conv = [ins for ins in between if re.search(r"\b(F2F|F2FP|I2F)\b", ins) and "I2F.U32.RP" not in ins]
    assert conv == []
    if cfg.mma_promotion_interval:
        # the promotion adds the wgmma accumulator into the second one: one FADD per accumulator value at least
        fadds = sum(ins.startswith("FADD") for ins in instrs[q[0] :])
        assert fadds >= cfg.tile_n // 2, fadds


@pytest.mark.parametrize(
    ("fields", "rule"),
    [
        ({"a_major": "m"}, "a_major must be 'k' for 8-bit"),
        ({"b_major": "n"}, "b_major must be 'k' for 8-bit"),
        ({"b_dtype": "float16"}, "b_dtype must be 8-bit"),
        ({"acc_dtype": "float16"}, "acc_dtype must be float32"),
        ({"tile_k": 64}, "tile_k must be one of"),
        ({"mma_promotion_interval": 6}, "multiple of the 4 k-blocks"),
        ({"mma_promotion_interval": -4}, "mma_promotion_interval must be an int >= 0"),
        ({"mma_promotion_interval": 4, "tile_n": 256}, "tile_n <= 192"),
    ],
)
def test_fp8_config_rules(fields, rule):
    with pytest.raises(ValueError, match=rule):
        GemmConfig(**{"a_dtype": "Float8E4M3FN", "b_dtype": "float8_e4m3fn", "c_dtype": "bfloat16", **fields})


def test_fp8_config_defaults_and_names():
    cfg = GemmConfig(a_dtype="Float8E4M3FN", b_dtype="Float8E5M2", c_dtype="BFloat16")
    assert (cfg.a_dtype, cfg.b_dtype, cfg.tile_k, cfg.ab_bytes) == ("float8_e4m3fn", "float8_e5m2", 128, 1)
    assert cfg.name.startswith("dense_gemm_e4m3e5m2_f32_bf16_kkn_128x128x128_")
    assert GemmConfig(mma_promotion_interval=8).name.endswith("_pi8") and cfg.k_blocks == GemmConfig().k_blocks == 4
    assert GemmConfig().tile_k == 64 and GemmConfig().name.startswith("dense_gemm_f16_f32_f16_kkn_128x128x64_")


def test_k_blocks_is_the_wgmma_atoms():
    from cute_examples.dense_gemm.plan import make_plan

    for cfg in (GemmConfig(), fp8_configs()[0]):
        assert cfg.k_blocks == cfg.tile_k // make_plan(cfg).wgmma.shape_mnk[2]


@pytest.mark.parametrize("cfg", scaled_configs(), ids=lambda c: c.name)
def test_scaled_kernels_read_their_scales(cfg):
    from cute_examples.dense_gemm.kernel import FUSED_PARAMS, PARAMS, SCALE_PARAMS

    art = compile_gemm(cfg)
    r = art.resources
    assert r["spill_stores"] == 0 and r["spill_loads"] == 0 and r["local_memory"] == 0, r
    assert [p.name for p in art.entry.params] == list(PARAMS + FUSED_PARAMS + SCALE_PARAMS)
    # per thread and work unit: one load per per-tensor scale, two rows of A's, two columns per 8 of B's
    loads = art.ptx.count("ld.global")
    want = {"tensor": 1, "m": 2, None: 0}[cfg.scale_a] + {"tensor": 1, "n": cfg.tile_n // 4, None: 0}[cfg.scale_b]
    assert loads == want, (loads, want)

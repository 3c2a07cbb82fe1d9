"""CPU CI for the GEMM's 8-bit (E4M3) C: every `fp8_out_configs` entry assembles with 0 spills, its SASS runs QGMMA
with no data conversion between the first and the last QGMMA, converts its outputs with `F2FP.SATFINITE.E4M3` (two
values each) and raises amax with one `red.global.max` per warp and unit; the config rules."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("mlir")

from cute_examples.dense_gemm.fp8_cases import fp8_out_configs  # noqa: E402
from cute_examples.dense_gemm.kernel import FUSED_PARAMS, PARAMS, SCALE_PARAMS, compile_gemm  # noqa: E402
from cute_examples.dense_gemm.spec import GemmConfig  # noqa: E402
from cute_ir.hopper import sass  # noqa: E402

E4M3 = "float8_e4m3fn"


@pytest.mark.parametrize("cfg", fp8_out_configs(), ids=lambda c: c.name)
def test_fp8_out_config_assembles(cfg):
    art = compile_gemm(cfg)
    r = art.resources
    assert r["spill_stores"] == 0 and r["spill_loads"] == 0 and r["local_memory"] == 0, r
    assert r["shared_memory"] == cfg.smem_bytes(cfg.num_stages)
    assert [p.name for p in art.entry.params] == list(PARAMS + FUSED_PARAMS + SCALE_PARAMS)
    ptx = re.sub(r"[ \t]+", " ", art.ptx)
    # per unit and 64-row slab (tile_m 256: two per warpgroup): one cvt per pair of the thread's 64 x c_tile_n / 128
    # values, one amax atomic per warp
    pairs = 64 * cfg.c_tile_n // 128 // 2 * cfg.atoms_m
    assert len(re.findall(r"cvt\.rn\.satfinite\.e4m3x2\.f32", ptx)) == pairs
    assert len(re.findall(r"red\.global\.max\.u32", ptx)) == cfg.atoms_m
    assert len(re.findall(r"st\.shared\.b16", ptx)) == pairs
    if sass.find_disassembler() is None:
        pytest.skip("no SASS disassembler: install nvidia-cuda-nvdisasm (cuobjdump -sass needs it)")
    instrs = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", sass.disassemble(art.cubin))
    q = [i for i, ins in enumerate(instrs) if "QGMMA" in ins]
    assert q and all(f"QGMMA.64x{cfg.tile_n}x32.F32" in instrs[i] for i in q)
    between = instrs[q[0] : q[-1] + 1]
    conv = [ins for ins in between if re.search(r"\b(F2F|F2FP|I2F)\b", ins) and "I2F.U32.RP" not in ins]
    assert conv == []
    f2fp = [ins for ins in instrs if "F2FP" in ins]
    assert len(f2fp) == pairs and all("F2FP.SATFINITE.E4M3.F32.PACK_AB" in ins for ins in f2fp), f2fp
    assert sum(bool(re.search(r"\bREDG?\.E\.MAX\b", ins)) for ins in instrs) == cfg.atoms_m


@pytest.mark.parametrize(
    ("fields", "rule"),
    [
        ({"a_dtype": "float16", "b_dtype": "float16"}, "c_dtype float8_e4m3fn needs 8-bit inputs"),
        ({"c_major": "m"}, "c_dtype float8_e4m3fn needs c_major 'n'"),
        ({"tile_n": 96}, "must be a multiple of 64"),
        ({"tile_n": 128, "activation": "swiglu"}, "multiple of the 128-column epilogue chunk"),
    ],
)
def test_fp8_out_config_rules(fields, rule):
    with pytest.raises(ValueError, match=rule):
        GemmConfig(**{"a_dtype": E4M3, "b_dtype": E4M3, "c_dtype": "Float8E4M3FN", **fields})


def test_fp8_out_is_the_scaled_kernel_with_bfloat16_addends():
    from cute_examples.dense_gemm.kernel import _kernel_fn, dense_gemm_scaled

    cfg = GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype=E4M3)
    assert cfg.fp8_out and cfg.scaled and cfg.fused and _kernel_fn(cfg) is dense_gemm_scaled
    assert (cfg.c_bytes, cfg.epi_n, cfg.epi_bytes, cfg.epilogue_dtype) == (1, 128, 8192, "bfloat16")
    assert cfg.name == "dense_gemm_e4m3_f32_e4m3_kkn_128x128x128_c1x1_s6_p1s2_sxx"
    assert GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="bfloat16").epilogue_dtype == "bfloat16"
    assert GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="float32").epilogue_dtype == "float32"


@pytest.mark.parametrize("cfg", fp8_out_configs()[:3], ids=lambda c: c.name)
def test_fp8_out_staging_and_store_boxes(cfg):
    """The 8-bit C path: each thread's 2-byte store at the f32 path's (row, col) puts value e of the pair at
    the staging layout's offset of (row, col + e), for every accumulator of every chunk exactly once; the TMA store
    boxes cover the 64 x 128 chunk once and the layout is a bijection onto the 8 KiB buffer."""
    import itertools

    from cute_examples.dense_gemm.epilogue import f32_store_coords
    from cute_examples.dense_gemm.plan import make_plan

    p = make_plan(cfg)
    epi = p.epi
    assert (epi.elem_bytes, epi.swizzle, epi.box_dims[0]) == (1, 3, 128)  # SW128 rows of 128 bytes
    cells = [(b.mn + i, b.k + j) for b in epi.boxes for i in range(epi.box_dims[1]) for j in range(epi.box_dims[0])]
    assert sorted(cells) == sorted(itertools.product(range(64), range(cfg.epi_n)))
    assert {epi.offset(r, c) for r in range(64) for c in range(cfg.epi_n)} == set(range(cfg.epi_bytes))
    for chunk in range(cfg.c_tile_n // cfg.epi_n):
        mem = {}
        for w, lane, j, h in itertools.product(range(4), range(32), range(cfg.epi_n // 8), (0, 1)):
            r0, c0 = f32_store_coords(w, lane, j, h)
            base = epi.offset(r0, c0)
            assert base % 2 == 0  # the 2-byte store's alignment
            for e in (0, 1):
                v = 4 * (j + chunk * cfg.epi_n // 8) + 2 * h + e
                row, col = divmod(p.wgmma.layout_c_tv((32 * w + lane, v)), 64)[::-1]
                assert (row, col - chunk * cfg.epi_n) == (r0, c0 + e) and base + e == epi.offset(r0, c0 + e)
                assert base + e not in mem
                mem[base + e] = (r0, c0 + e)
        assert len(mem) == cfg.epi_bytes

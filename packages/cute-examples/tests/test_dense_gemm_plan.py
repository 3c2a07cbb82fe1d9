"""The GEMM's static side: config rules, the nvarch-derived plan (descriptors, TMA boxes), the schedule."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

pytest.importorskip("mlir")  # the plan is built with cute-ir's Hopper builders

from cute_examples.dense_gemm.aot import aot_configs, dtype_major_configs, tile_cluster_configs
from cute_examples.dense_gemm.fp8_cases import fp8_configs
from cute_examples.dense_gemm.kernel import gemm_spec
from cute_examples.dense_gemm.plan import make_plan
from cute_examples.dense_gemm.spec import SMEM_CAPACITY, TILE_N, GemmConfig


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(a_dtype="float32", b_dtype="float32"), "a_dtype"),
        (dict(a_dtype="float16", b_dtype="bfloat16"), "b_dtype must equal"),
        (dict(a_dtype="bf16", b_dtype="bf16", acc_dtype="float16"), "float16 inputs"),
        (dict(c_dtype="int8"), "c_dtype"),
        (dict(a_major="n"), "a_major"),
        (dict(b_major="m"), "b_major"),
        (dict(c_major="k"), "c_major"),
        (dict(tile_m=192), "tile_m"),
        (dict(tile_m=256, tile_n=256), "accumulators per consumer thread"),
        (dict(tile_m=256, has_input=True), "takes no has_input"),
        (dict(tile_m=256, mma_promotion_interval=4), "takes no mma_promotion_interval"),
        (dict(tile_m=256, tile_n=64, schedule="pingpong"), "schedule 'pingpong' supports tile_m in"),
        (dict(tile_n=80), "tile_n"),
        (dict(tile_k=32), "tile_k"),
        (dict(cluster_m=4), "cluster shape"),
        (dict(stages=1), "stages"),
        (dict(tile_n=256, stages=8), "shared memory"),
        (dict(target="sm_80"), "sm_90a"),
    ],
)
def test_config_rules(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GemmConfig(**kwargs)


def test_config_names_spec_and_dtype_spellings():
    cfg = GemmConfig(a_dtype="Float16", b_dtype="torch.float16", c_dtype="BFloat16", acc_dtype="f32")
    assert (cfg.a_dtype, cfg.c_dtype, cfg.acc_dtype) == ("float16", "bfloat16", "float32")
    assert cfg == GemmConfig(c_dtype="bfloat16")
    # the kernel's spec holds the config with its stages resolved: one spec however the stages were given
    assert gemm_spec(cfg) == gemm_spec(replace(cfg, stages=cfg.num_stages))
    assert cfg.num_threads == 384 and GemmConfig(tile_m=64).num_threads == 256
    for c in aot_configs():
        assert (
            c.smem_bytes(c.num_stages) <= SMEM_CAPACITY < c.smem_bytes(c.num_stages + 1) or c.num_stages == 8
        )
    assert len({c.name for c in aot_configs()}) == len(aot_configs())
    assert len(dtype_major_configs()) == 9 * 8 and len(tile_cluster_configs()) == 21 * 4
    wide = GemmConfig(tile_m=256, tile_n=128)  # two consumer warpgroups of two 64-row atoms each
    assert (wide.num_consumer_warpgroups, wide.atoms_m, wide.mma_warpgroups, wide.num_threads) == (2, 2, 2, 384)


def test_plan_matches_the_descriptor_and_tma_oracles():
    """cute-nvarch's documented numbers: K-major SW128 0x4000004000010000, MN-major 128-wide
    0x4000004002000000, K-block advances 32 (K-major) / 2048 (MN-major) bytes, M-atom advance 8192,
    MN-major 128x64 -> two boxes."""
    p = make_plan(GemmConfig())
    assert (p.a.desc_hi << 32 | p.a.desc_lo) == 0x4000004000010000
    assert (p.b.desc_hi << 32 | p.b.desc_lo) == 0x4000004000010000
    assert (p.a.k_block_bytes, p.a.mn_atom_bytes) == (32, 8192)
    assert p.a.box_dims == (64, 128) and len(p.a.boxes) == 1 and p.a.swizzle == 3
    q = make_plan(GemmConfig(a_major="m", b_major="n"))
    assert (q.b.desc_hi << 32 | q.b.desc_lo) == 0x4000004002000000
    assert q.b.k_block_bytes == 2048 and q.a.mn_atom_bytes == 8192
    assert q.a.box_dims == (64, 64)
    assert [(b.mn, b.k, b.smem_offset) for b in q.a.boxes] == [(0, 0, 0), (64, 0, 8192)]
    assert p.pipeline.tx_bytes == 2 * 128 * 64 * 2 and p.pipeline.consumer_arrivals == 2
    assert make_plan(GemmConfig(cluster_m=2, cluster_n=2)).pipeline.consumer_arrivals == 2 * 3


@pytest.mark.parametrize(("a_major", "dtype"), [("k", "float16"), ("m", "bfloat16"), ("k", "float8_e4m3fn")])
def test_a_256_row_tile_advances_one_m_atom_per_64_rows(a_major, dtype):
    """The kernel addresses 64-row slab s of A at s * mn_atom_bytes (warpgroup g's atoms 2g, 2g + 1 at tile_m 256):
    cute-nvarch's TiledMma descriptor of each slab's first thread starts there."""
    from cute_examples.dense_gemm.plan import _tiled_mma
    from cute_nvarch.gmma_smem import make_gmma_smem_layout
    from cute_nvarch.numeric import numeric_type

    cfg = GemmConfig(a_dtype=dtype, b_dtype=dtype, c_dtype="bfloat16",
                     a_major=a_major, tile_m=256, tile_n=128)
    step = make_plan(cfg).a.mn_atom_bytes
    layout = make_gmma_smem_layout(numeric_type(dtype), "K" if a_major == "k" else "MN", 256, cfg.tile_k,
                                   cfg.num_stages)
    _, tiled = _tiled_mma(cfg)
    starts = [tiled.smem_desc_A(layout, 0, 128 * s).desc.start_address for s in range(4)]
    assert starts == [s * step for s in range(4)] and step > 0


def _covered(op, tile_mn, tile_k):
    cells = []
    for b in op.boxes:
        inner, outer = op.box_dims
        ext_mn, ext_k = (outer, inner) if op.major == "k" else (inner, outer)
        cells += [(b.mn + i, b.k + j) for i in range(ext_mn) for j in range(ext_k)]
    return cells


@pytest.mark.parametrize("cfg", aot_configs()[::3] + tile_cluster_configs() + fp8_configs(), ids=lambda c: c.name)
def test_tma_boxes_cover_each_tile_once_and_split_evenly(cfg):
    p = make_plan(cfg)
    for op, mn in ((p.a, cfg.tile_m), (p.b, cfg.tile_n)):
        cells = _covered(op, mn, cfg.tile_k)
        assert len(cells) == len(set(cells)) == mn * cfg.tile_k
        assert len(op.boxes) % op.multicast == 0
        assert all(1 <= d <= 256 for d in op.box_dims) and op.box_dims[0] * cfg.ab_bytes <= 128
        assert all(b.smem_offset % 1024 == 0 for b in op.boxes)  # every box keeps the swizzle phase
    e = p.epi
    cells = []
    for b in e.boxes:
        inner, outer = e.box_dims
        ext_r, ext_c = (outer, inner) if cfg.c_major == "n" else (inner, outer)
        cells += [(b.mn + i, b.k + j) for i in range(ext_r) for j in range(ext_c)]
    assert sorted(cells) == sorted(itertools.product(range(64), range(cfg.epi_n)))
    # the staging layout is a bijection onto the buffer, 16-byte chunks stay contiguous
    offs = {e.offset(r, c) for r in range(64) for c in range(cfg.epi_n)}
    assert offs == set(range(0, cfg.epi_bytes, cfg.c_bytes))


def _c_coords(atom, t, v):
    """(row, col) in the 64 x N atom tile of accumulator value v of thread t, from the atom's C layout."""
    return divmod(atom.layout_c_tv((t, v)), 64)[::-1]


@pytest.mark.parametrize("tile_n", TILE_N)
@pytest.mark.parametrize("acc_dtype", ["float32", "float16"])
def test_accumulator_fragment_positions(tile_n, acc_dtype):
    """The plan's wgmma atom (what the wgmma builders take) has PTX's accumulator fragment as its C layout:
    value v = 4j + 2h + e of thread t at row 16*(t//32) + (t%32)//4 + 8h, column 8j + 2*(t%4) + e -- the
    positions epilogue.py addresses (it was a run-time check of the plan; one source now, this test)."""
    atom = make_plan(GemmConfig(tile_n=tile_n, acc_dtype=acc_dtype)).wgmma
    assert atom.shape_mnk == (64, tile_n, 16) and atom.num_c_values == tile_n // 2
    for t in range(128):
        for v in range(atom.num_c_values):
            j, h, e = v // 4, (v % 4) // 2, v % 2
            assert _c_coords(atom, t, v) == (16 * (t // 32) + (t % 32) // 4 + 8 * h, 8 * j + 2 * (t % 4) + e)


def test_plan_atom_is_the_tiled_mma_atom_of_the_config():
    """The plan holds cute-nvarch's atom of the config's types and majors (no second table of wgmma forms)."""
    from cute_nvarch.mma_sm90 import make_wgmma_atom

    for cfg in (GemmConfig(), GemmConfig(a_major="m", b_major="n", tile_n=64, a_dtype="bf16", b_dtype="bf16")):
        atom = make_plan(cfg).wgmma
        want = make_wgmma_atom(
            cfg.a_dtype, cfg.b_dtype, cfg.acc_dtype, cfg.tile_n,
            "K" if cfg.a_major == "k" else "MN", "K" if cfg.b_major == "k" else "MN",
        )
        assert atom == want
        assert atom.ptx.startswith(f"wgmma.mma_async.sync.aligned.m64n{cfg.tile_n}k16.f32.")


@pytest.mark.parametrize(
    ("c_dtype", "c_major", "acc_dtype"),
    [
        ("float16", "n", "float32"),
        ("bfloat16", "m", "float32"),
        ("float32", "n", "float32"),
        ("float32", "m", "float16"),
        ("float16", "m", "float16"),
    ],
)
def test_epilogue_puts_every_accumulator_where_the_staging_layout_says(c_dtype, c_major, acc_dtype):
    """Emulate stmatrix (and the f32 stores) with the kernel's index functions: every C element of every chunk
    lands at the staging layout's offset of its (row, col), and nothing else is written."""
    from cute_examples.dense_gemm.epilogue import f32_store_coords, stmatrix_pair_values, stmatrix_row_coords

    cfg = GemmConfig(c_dtype=c_dtype, c_major=c_major, acc_dtype=acc_dtype, tile_n=128)
    p = make_plan(cfg)
    epi, eb = p.epi, cfg.c_bytes
    trans = c_major == "m"

    def coords(t, v):  # (row, col) of accumulator value v of thread t, from the atom's C layout
        return _c_coords(p.wgmma, t, v)

    for chunk in range(cfg.tile_n // cfg.epi_n):
        mem = {}
        groups = range(chunk * cfg.epi_n // 8, (chunk + 1) * cfg.epi_n // 8)
        for w in range(4):
            for j in groups:
                jloc = j - chunk * cfg.epi_n // 8
                if eb == 2:
                    if (j - groups[0]) % 2:
                        continue
                    addr = [epi.offset(*stmatrix_row_coords(w, lane, jloc, trans)) for lane in range(32)]
                    for lane in range(32):
                        for q, pair in enumerate(stmatrix_pair_values(j)):
                            for e, v in enumerate(pair):
                                mr, mc = lane // 4, 2 * (lane % 4) + e  # the element's place in matrix q
                                dst = addr[8 * q + mc] + eb * mr if trans else addr[8 * q + mr] + eb * mc
                                r, c = coords(32 * w + lane, v)
                                assert dst not in mem
                                mem[dst] = (r, c - chunk * cfg.epi_n)
                else:
                    for lane in range(32):
                        for h in (0, 1):
                            r0, c0 = f32_store_coords(w, lane, jloc, h)
                            for e in (0, 1):
                                dst = epi.offset(r0, c0) + 4 * e if c_major == "n" else epi.offset(r0, c0 + e)
                                r, c = coords(32 * w + lane, 4 * j + 2 * h + e)
                                assert (r, c - chunk * cfg.epi_n) == (r0, c0 + e)
                                assert dst not in mem
                                mem[dst] = (r, c - chunk * cfg.epi_n)
        assert len(mem) == 64 * cfg.epi_n
        for r in range(64):
            for c in range(cfg.epi_n):
                assert mem[epi.offset(r, c)] == (r, c), (chunk, r, c)


def test_shared_memory_plan_is_the_allocators_and_matches_the_layout_rule():
    """The kernel's plan is the config's allocator plan; it places every buffer on a 1024-byte boundary and its
    size is barriers + stages + staging buffers + the base round-up, for all 1,728 configs at every stage count."""
    from cute_examples.dense_gemm.configs import every_config

    for cfg in every_config():
        for s in range(2, 9):
            plan = cfg.smem_plan(s)
            assert [b.name for b in plan.buffers.values()] == ["barriers", "a", "b", "epi"]
            assert plan["barriers"].offset == 0 and plan["barriers"].nbytes == 2 * s * 8
            assert all(plan[n].offset % 1024 == 0 for n in ("a", "b", "epi"))
            data = s * (cfg.a_stage_bytes + cfg.b_stage_bytes)
            epi = cfg.num_consumer_warpgroups * cfg.epi_buffers * cfg.epi_bytes
            assert cfg.smem_bytes(s) == plan.dynamic_smem_bytes == 1024 + data + epi + 1024 - 16
            assert plan.fits(cfg.target) == (s <= cfg.max_stages())
    cfg = GemmConfig(tile_n=256)
    assert make_plan(cfg).smem.buffers == cfg.smem_plan(cfg.num_stages).buffers

"""The GEMM's TMA boxes (cute-nvarch's plan, their one owner) against an oracle, for all 6,048 configs, no MLIR.

The oracle knows how TMA writes a box -- densely, the tensor map's dimension 0 fastest, at the box's
shared-memory offset, swizzled by the address like every other access of the 1024-byte-aligned buffer --
and checks each plan against the buffer layout the wgmma descriptors read (`make_gmma_smem_layout`):
every tile element lies in exactly one box, at the offset where the layout puts it; every box starts on
a swizzle-pattern boundary; every multicast slot issues an equal share; the tensor map's swizzle is the
buffer's. It checks coverage and placement, not which split the plan chose.
"""

from __future__ import annotations

import functools
import time

import pytest
from cute_examples.dense_gemm.configs import FORMERLY_FAILING, every_config, sample_configs
from cute_examples.dense_gemm.plan import tma_boxes
from cute_nvarch.gmma_desc import GmmaLayoutType, gmma_layout_type_of
from cute_nvarch.gmma_smem import make_gmma_smem_layout
from cute_nvarch.numeric import numeric_type

# CUtensorMapSwizzle of each GMMA layout type
TMA_SWIZZLE = {GmmaLayoutType.INTERLEAVE: 0, GmmaLayoutType.B32: 1, GmmaLayoutType.B64: 2, GmmaLayoutType.B128: 3}
NVARCH = {"float16": "Float16", "bfloat16": "BFloat16", "float32": "Float32"}


@functools.cache
def buffer(dtype: str, major: str, tile_mn: int, tile_k: int, layout_type: GmmaLayoutType | None = None):
    """(offset table [mn][k] in elements, unswizzled; the TMA swizzle) of one stage's GMMA buffer."""
    layout = make_gmma_smem_layout(NVARCH[dtype], "K" if major == "k" else "MN", tile_mn, tile_k,
                                   layout_type=layout_type)
    inner = layout.inner
    table = [[inner((mn, k)) for k in range(tile_k)] for mn in range(tile_mn)]
    return table, TMA_SWIZZLE[gmma_layout_type_of(layout, numeric_type(NVARCH[dtype]))]


@functools.cache
def check_boxes(dtype: str, major: str, tile_mn: int, tile_k: int, box_dims: tuple, boxes: tuple, swizzle: int,
                parts: int, layout_type: GmmaLayoutType | None = None) -> None:
    """Assert coverage, placement and equal multicast shares of one plan's boxes (cached per distinct plan).

    `boxes` are (mn, k, smem byte offset, slot); `major` "k" means K is the tensor map's dimension 0.
    """
    table, want_swizzle = buffer(dtype, major, tile_mn, tile_k, layout_type)
    ebytes = {"float16": 2, "bfloat16": 2, "float32": 4}[dtype]
    inner, outer = box_dims
    assert swizzle == want_swizzle, f"tensor-map swizzle {swizzle}, the buffer's is {want_swizzle}"
    assert 1 <= outer <= 256 and 16 <= inner * ebytes <= 128, box_dims  # TMA limits, the swizzle span
    seen = [[0] * tile_k for _ in range(tile_mn)]
    for mn0, k0, offset, _ in boxes:
        pattern = 8 * {0: 16, 1: 32, 2: 64, 3: 128}[want_swizzle]  # bytes of one 8-row swizzle pattern
        assert offset % pattern == 0, f"box at ({mn0}, {k0}) starts at byte {offset}, off the swizzle pattern"
        base = offset // ebytes
        for e_out in range(outer):
            for e_in in range(inner):
                mn, k = (mn0 + e_out, k0 + e_in) if major == "k" else (mn0 + e_in, k0 + e_out)
                assert table[mn][k] == base + e_out * inner + e_in, (
                    f"element ({mn}, {k}) of the box at ({mn0}, {k0}) lands at {base + e_out * inner + e_in}, "
                    f"the layout puts it at {table[mn][k]}"
                )
                seen[mn][k] += 1
    assert all(n == 1 for row in seen for n in row), "the boxes do not cover the tile exactly once"
    slots = [slot for *_, slot in boxes]
    assert sorted(set(slots)) == list(range(parts)), slots
    assert all(slots.count(s) == len(boxes) // parts for s in range(parts)), f"unequal multicast shares {slots}"


def check_config(cfg) -> None:
    """The oracle on the A, B (stage 0) and C staging-buffer boxes of one config."""
    a, b, c = tma_boxes(cfg)
    for op, tile_mn, parts in ((a, cfg.tile_m, cfg.cluster_n), (b, cfg.tile_n, cfg.cluster_m)):
        assert op.multicast == parts
        boxes = tuple((x.mn, x.k, x.smem_offset, x.slot) for x in op.boxes)
        check_boxes(cfg.a_dtype, op.major, tile_mn, cfg.tile_k, op.box_dims, boxes, op.swizzle, parts)
    major = "k" if cfg.c_major == "n" else "mn"  # C's (M, N) seen as (MN, K)
    boxes = tuple((x.mn, x.k, x.smem_offset, 0) for x in c.boxes)
    check_boxes(cfg.c_dtype, major, 64, cfg.epi_n, c.box_dims, boxes, c.swizzle, 1, cfg.epi_layout_type)


def test_every_config_is_planned_and_its_boxes_land_where_the_buffer_puts_them():
    configs = every_config()
    assert len(configs) == 6048 and len({c.name for c in configs}) == 6048
    t0 = time.perf_counter()
    for cfg in configs:
        check_config(cfg)
    assert time.perf_counter() - t0 < 60  # seconds: every plan is computed; identical box lists checked once


@pytest.mark.parametrize("name", [n for n, _ in FORMERLY_FAILING])
def test_formerly_failing_classes_get_whole_boxes(name):
    """Issue 9's classes: an MN-major operand's (atom, 64) boxes (atom: the swizzle span, 64 elements, 32 for tiles
    96, 160 and 224, 16 for 144 and 176) are shared out whole among the two CTAs; an odd number of them (tile 192:
    three) is cut along K into (atom, 32) boxes."""
    in_class = dict(FORMERLY_FAILING)[name]
    configs = [c for c in every_config() if in_class(c)]
    assert configs
    for cfg in configs:
        a, b, _ = tma_boxes(cfg)
        op, tile_mn = (a, cfg.tile_m) if name.startswith("A") else (b, cfg.tile_n)
        span = next(s for s in (64, 32, 16) if tile_mn % s == 0)
        whole = (tile_mn // span) % 2 == 0
        assert op.major == "mn" and op.multicast == 2 and op.box_dims == ((span, 64) if whole else (span, 32))
        assert len(op.boxes) == tile_mn // span * (1 if whole else 2)  # 128 -> one box per CTA, 256 -> two
        assert [x.slot for x in op.boxes] == sorted(x.slot for x in op.boxes)  # contiguous shares


def test_sample_is_seeded_distinct_and_holds_every_formerly_failing_class():
    s = sample_configs()
    assert len(s) == 24 and len({c.name for c in s}) == 24 and s == sample_configs()
    for name, in_class in FORMERLY_FAILING:
        assert any(in_class(c) for c in s), name
    assert [c.name for c in sample_configs(30, seed=3)] != [c.name for c in s]
    with pytest.raises(ValueError, match="count must be in 4..6048"):
        sample_configs(3)


def test_oracle_catches_a_misplaced_box():
    """The oracle fails a plan whose box lands at the wrong shared-memory offset or whose shares differ."""
    cfg = next(c for c in every_config() if c.a_major == "m" and c.tile_m == 128 and c.cluster_n == 2)
    a, _, _ = tma_boxes(cfg)
    boxes = [(x.mn, x.k, x.smem_offset, x.slot) for x in a.boxes]
    swapped = ((boxes[0][0], boxes[0][1], boxes[1][2], 0), (boxes[1][0], boxes[1][1], boxes[0][2], 1))
    with pytest.raises(AssertionError, match="lands at"):
        check_boxes(cfg.a_dtype, "mn", 128, 64, a.box_dims, swapped, a.swizzle, 2)
    one_slot = tuple((*b[:3], 0) for b in boxes)
    with pytest.raises(AssertionError):
        check_boxes(cfg.a_dtype, "mn", 128, 64, a.box_dims, one_slot, a.swizzle, 2)

"""The shared-memory allocator: placement and alignment rules, the launch size, the target's capacity."""

from __future__ import annotations

import pytest
from cute_nvarch import GmmaLayoutType, make_gmma_smem_layout
from cute_nvarch.gmma_desc import gmma_layout_type_of
from cute_nvarch.numeric import numeric_type
from cute_nvarch.smem import DYNAMIC_SMEM_DECLARED_ALIGN, MBARRIER_BYTES, SmemPlan
from cute_nvarch.target import SM80, SM90A


def test_buffers_aligned_by_kind():
    plan = SmemPlan(1024, label="demo")
    bars = plan.add_mbarriers("barriers", 8)
    a = plan.add_gmma("a", 4 * 16384, GmmaLayoutType.B128)
    x = plan.add("x", 10)
    b = plan.add_gmma("b", 4096, GmmaLayoutType.B64)
    c = plan.add_gmma("c", 256, GmmaLayoutType.INTERLEAVE)
    assert (bars.offset, bars.nbytes, bars.align) == (0, 8 * MBARRIER_BYTES, 8)
    assert (a.offset, a.align) == (1024, 1024)  # the 128-byte swizzle repeats every 8 rows of 128 bytes
    assert x.offset == a.end and (b.offset, b.align) == (67072, 512) and (c.offset, c.align) == (71168, 128)
    assert plan.nbytes == c.end and plan["a"] is a
    assert plan.dynamic_smem_bytes == plan.nbytes + 1024 - DYNAMIC_SMEM_DECLARED_ALIGN


def test_gmma_buffers_start_on_their_swizzle_pattern():
    # every stage of a GMMA buffer starts at a multiple of its pattern when the buffer does
    cases = (("f16", "k", 128, 64), ("f16", "mn", 64, 64), ("tf32", "k", 64, 16), ("s8", "k", 64, 32))
    for dtype, major, mn, k in cases:
        layout = make_gmma_smem_layout(dtype, major, mn, k)
        lt = gmma_layout_type_of(layout, numeric_type(dtype))
        plan = SmemPlan(1024)
        plan.add("odd", 40)
        buf = plan.add_gmma("tile", mn * k * numeric_type(dtype).width // 8, lt)
        assert buf.offset % lt.pattern_bytes == 0 and buf.offset % 128 == 0


def test_capacity_checked_against_the_target():
    plan = SmemPlan(1024, label="GemmConfig(kkn 128x256x64, stages=5)")
    plan.add_mbarriers("barriers", 10)
    plan.add_gmma("ab", 5 * 49152, GmmaLayoutType.B128)
    assert not plan.fits(SM90A) and not plan.fits("sm_80")
    with pytest.raises(ValueError, match=r"GemmConfig\(kkn 128x256x64, stages=5\) needs 247792 bytes .*"
                       r"ab 245760.* more than sm_90a's 232448 bytes per block"):
        plan.check("sm_90a")
    small = SmemPlan(128)
    small.add("x", SM80.smem_per_block - (128 - DYNAMIC_SMEM_DECLARED_ALIGN))
    assert small.check(SM80) is small and small.fits("sm_90a")
    small.add("y", 16)
    with pytest.raises(ValueError, match="more than sm_80's"):
        small.check(SM80)


def test_rules():
    plan = SmemPlan()
    plan.add("a", 16)
    with pytest.raises(ValueError, match="already placed"):
        plan.add("a", 16)
    with pytest.raises(ValueError, match="align must be a power of two <= 1024"):
        plan.add("y", 16, 48)
    with pytest.raises(ValueError, match="nbytes must be a positive int"):
        plan.add("z", 0)
    with pytest.raises(ValueError, match="count must be a positive int"):
        plan.add_mbarriers("bars", 0)
    with pytest.raises(ValueError, match="base_align must be a power of two >= 16"):
        SmemPlan(8)
    with pytest.raises(ValueError, match="align must be a power of two <= 128"):
        SmemPlan(128).add_gmma("t", 8192, GmmaLayoutType.B128)

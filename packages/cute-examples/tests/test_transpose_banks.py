"""Shared-memory banks of the tutorial transpose, computed with the layout algebra from the kernel's own layouts.

A warp is 32 threads tx = 0..31 of one ty; each shared access is one 32-bit word per thread (float32, or a pair
of 16-bit elements), so a warp's access is one wavefront exactly when its 32 words lie in 32 distinct banks.
The vector step's 16-byte accesses are checked per quarter-warp (below).
"""

from __future__ import annotations

from collections import Counter

import pytest
from cute_examples.transpose import (
    ROWS,
    TILE,
    UNIT,
    VROWS,
    VTILE,
    load_coord,
    smem_layout,
    store_coord,
    vector_layout,
)

BANKS = 32


def _accesses(pack: int) -> list[list[tuple[int, int]]]:
    """Every warp-wide shared access of both phases, for every ty: a list of the 32 lanes' word coordinates."""
    out = []
    for ty in range(ROWS):
        for j in range(TILE // ROWS):
            for e in range(pack):
                out.append([store_coord(tx, ty, j, e, pack) for tx in range(32)])
        for j in range(TILE * pack // ROWS):
            out.append([load_coord(tx, ty, j) for tx in range(32)])
    return out


def _worst_conflict(pack: int, swizzle: bool) -> tuple[int, int]:
    """(fewest distinct banks, largest n-way conflict) over all warp accesses."""
    layout = smem_layout(pack, swizzle)
    fewest, worst = BANKS, 1
    for lanes in _accesses(pack):
        words = [layout(c) for c in lanes]
        assert len(set(words)) == 32  # 32 different words per access: no broadcast hides a conflict
        banks = Counter(w % BANKS for w in words)
        fewest = min(fewest, len(banks))
        worst = max(worst, max(banks.values()))
    return fewest, worst


@pytest.mark.parametrize("pack", [1, 2], ids=["float32", "16-bit pairs"])
def test_swizzled_tile_is_conflict_free(pack: int) -> None:
    assert _worst_conflict(pack, swizzle=True) == (32, 1)


@pytest.mark.parametrize("pack", [1, 2], ids=["float32", "16-bit pairs"])
def test_naive_tile_conflicts(pack: int) -> None:
    fewest, worst = _worst_conflict(pack, swizzle=False)
    assert worst >= 2 and fewest < 32


def test_swizzle_is_a_bijection_on_the_tile() -> None:
    for pack in (1, 2):
        layout = smem_layout(pack, True)
        n = TILE * pack * TILE
        assert sorted(layout((r, c)) for r in range(TILE * pack) for c in range(TILE)) == list(range(n))


# 16-byte vector step: a 128-bit access is served one quarter-warp (8 lanes, 8 units = 32 banks) at a time, so
# each quarter-warp's 8 units must lie in 8 distinct 4-bank groups (unit % 8).
UNIT_GROUPS = BANKS * 4 // UNIT


def _vector_quarter_warps(pack: int) -> list[list[tuple[int, int]]]:
    """Every quarter-warp's shared access of both phases: the 8 lanes' unit coordinates (lane = tx + VTILE*ty)."""
    lanes = [(t % VTILE, t // VTILE) for t in range(VTILE * VROWS)]
    out = []
    for q0 in range(0, len(lanes), 8):
        quarter = lanes[q0 : q0 + 8]
        for j in range(VTILE // VROWS):
            for e in range(pack):
                out.append([store_coord(tx, ty, j, e, pack, VROWS) for tx, ty in quarter])
        for j in range(VTILE * pack // VROWS):
            out.append([load_coord(tx, ty, j, VROWS) for tx, ty in quarter])
    return out


def _vector_worst(pack: int, swizzle: bool) -> int:
    """The largest n-way conflict over all quarter-warp 16-byte accesses."""
    layout = vector_layout(pack, swizzle)
    worst = 1
    for quarter in _vector_quarter_warps(pack):
        units = [layout(c) for c in quarter]
        assert len(set(units)) == 8
        worst = max(worst, max(Counter(u % UNIT_GROUPS for u in units).values()))
    return worst


@pytest.mark.parametrize("pack", [4, 8], ids=["float32", "16-bit"])
def test_vector_tile_is_conflict_free(pack: int) -> None:
    assert _vector_worst(pack, swizzle=True) == 1


@pytest.mark.parametrize("pack", [4, 8], ids=["float32", "16-bit"])
def test_vector_naive_tile_conflicts(pack: int) -> None:
    assert _vector_worst(pack, swizzle=False) == 8


def test_vector_swizzle_is_a_bijection_on_the_tile() -> None:
    for pack in (4, 8):
        layout = vector_layout(pack, True)
        n = VTILE * pack * VTILE
        assert sorted(layout((r, c)) for r in range(VTILE * pack) for c in range(VTILE)) == list(range(n))

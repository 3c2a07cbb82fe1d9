"""Where each accumulator goes in the epilogue: register pairs, stmatrix row addresses, f32 store positions.

Pure index arithmetic on Python ints or cute_ir `Int`s (the kernel runs it on run-time lane and warp indices;
the tests run it on ints against an emulation of `stmatrix`). Coordinates are (row, col) inside one consumer
warpgroup's 64 x epi_n staging chunk; `jloc` counts 8-column groups inside the chunk.

Accumulator value `v = 4*j + 2*h + e` of a thread sits at row `lane//4 + 8*h (+16*warp)`, column
`8*j + 2*(lane%4) + e` (CuTe's wgmma C layout, checked by the plan). A `stmatrix.x4` stores the 16 x 16 block
of column groups (j, j+1): matrix q holds row half `q % 2` of group `j + q // 2`, so its register is the
packed pair (v = 4*(j + q//2) + 2*(q%2) + {0, 1}).

The fused epilogue reads a bias or an addend at each value's own (row, col) (`value_coords`), and SwiGLU
pairs accumulator group 2j (gate) with 2j+1 (up) into output group j (`swiglu_sources`): the output values
keep the accumulator's per-thread layout at half the width (see `activation`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["f32_store_coords", "stmatrix_pair_values", "stmatrix_row_coords", "swiglu_sources", "value_coords"]


def stmatrix_pair_values(j: int) -> list[tuple[int, int]]:
    """Accumulator value indices packed into registers 0..3 of the stmatrix.x4 of groups (j, j+1)."""
    return [(4 * (j + q // 2) + 2 * (q % 2), 4 * (j + q // 2) + 2 * (q % 2) + 1) for q in range(4)]


def stmatrix_row_coords(warp: Any, lane: Any, jloc: int, trans: bool) -> tuple[Any, Any]:
    """(row, col) whose shared address lane `lane` supplies to the stmatrix.x4 of chunk groups (jloc, jloc+1).

    Lanes 8q..8q+7 give the 8 rows of matrix q. Without .trans (n-major C) row i of matrix q is C row
    `16*warp + 8*(q%2) + i` at columns `8*(jloc + q//2)...+7`; with .trans (m-major C) it is C column
    `8*(jloc + q//2) + i` at rows `16*warp + 8*(q%2)...+7`.
    """
    q = lane // 8
    i = lane % 8
    if trans:
        return warp * 16 + (q % 2) * 8, (q // 2) * 8 + jloc * 8 + i
    return warp * 16 + (q % 2) * 8 + i, (q // 2) * 8 + jloc * 8


def f32_store_coords(warp: Any, lane: Any, jloc: int, h: int) -> tuple[Any, Any]:
    """(row, col) of the first of the two values (v = 4j + 2h + {0,1}) a thread stores for group jloc."""
    return warp * 16 + lane // 4 + h * 8, (lane % 4) * 2 + jloc * 8


def value_coords(warp: Any, lane: Any, v: int) -> tuple[Any, Any]:
    """(row, col) of accumulator value v of a thread in its warpgroup's 64-row block of the tile."""
    j, h, e = v // 4, (v // 2) % 2, v % 2
    return warp * 16 + lane // 4 + h * 8, (lane % 4) * 2 + j * 8 + e


def swiglu_sources(values: int) -> list[tuple[int, int]]:
    """(gate, up) accumulator value indices of each of the `values // 2` SwiGLU output values of a thread.

    Output value `o = 4j + r` (r < 4) comes from gate group 2j and up group 2j + 1 at the same r, so it sits
    at the output column `8j + 2*(lane%4) + r%2`, the column its gate and up have in their 8-column blocks.
    """
    if values % 8:
        raise ValueError(f"swiglu_sources: values must be a multiple of 8 (pairs of 8-column groups), got {values}")
    return [(4 * (2 * (o // 4)) + o % 4, 4 * (2 * (o // 4) + 1) + o % 4) for o in range(values // 2)]

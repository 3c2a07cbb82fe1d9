"""The layouts one elementwise_add call runs (no torch): the three tensors' modes coalesced jointly with
cute-layout, and the stand-ins that specialize `add_kernel` for them.

Modes of extent 1 drop out and neighbouring modes merge wherever every tensor's strides allow (cute-layout's
`coalesce` of each pair); a contiguous (M, N) of any N becomes one unit-stride range: the 1-D kernel, 128-bit
accesses where the three addresses are 16-byte aligned, a predicated tail. Anything else keeps two modes (the
2-D kernel, vectorized where the strides allow); more than two is a ValueError.
"""

from __future__ import annotations

from collections.abc import Sequence

from cute_runtime import Placeholder

from .kernel import tile_shape

__all__ = ["MAX_EXTENT", "coalesced_modes", "kernel_modes", "standins"]

MAX_EXTENT = 2**31  # every extent the kernel sees stays below this, less a tile (i32 coordinates)


def _one_mode(e0: int, s0: int, e1: int, s1: int) -> bool:
    """Whether row-major modes (e0:s0, e1:s1) are one mode: cute-layout's coalesce (column-major order)."""
    from cute_layout import Layout, coalesce

    shape = coalesce(Layout((e1, e0), (s1, s0))).shape
    return not isinstance(shape, tuple) or len(shape) == 1


def coalesced_modes(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], list[tuple]]:
    """(extents, [strides of each tensor]) after dropping extent-1 modes and merging the neighbours that every
    tensor's strides allow, in row-major order (at least one mode)."""
    modes: list[list[int]] = []  # [extent, *one stride per tensor]
    for m, e in enumerate(shape):
        if e == 1:
            continue
        cur = [e, *(s[m] for s in strides)]
        if modes and all(_one_mode(modes[-1][0], modes[-1][1 + i], e, cur[1 + i]) for i in range(len(strides))):
            modes[-1] = [modes[-1][0] * e, *cur[1:]]
        else:
            modes.append(cur)
    if not modes:
        modes = [[1, *(1 for _ in strides)]]
    return tuple(mo[0] for mo in modes), [tuple(mo[1 + i] for mo in modes) for i in range(len(strides))]


def kernel_modes(
    dtype: str, shape: Sequence[int], strides: Sequence[Sequence[int]]
) -> tuple[tuple[int, ...], list[tuple]]:
    """The kernel's modes for tensors of `shape` (non-empty) with these strides: coalesced; a 1-D range too long
    for i32 coordinates splits at the last extent of `shape`; ValueError when more than two modes remain."""
    modes, mstrides = coalesced_modes(shape, strides)
    if len(modes) == 1 and modes[0] >= MAX_EXTENT - tile_shape(dtype, 1)[0]:
        q = next((e for e in reversed(shape) if e != 1), 1)
        modes = (modes[0] // q, q)
        mstrides = [(s[0] * q, s[0]) for s in mstrides]
    if len(modes) > 2:
        raise ValueError(
            f"tensors of shape {tuple(shape)} with strides {', '.join(map(str, map(tuple, strides)))} keep "
            f"{len(modes)} modes after merging; elementwise_add takes at most 2 (make one of them contiguous)"
        )
    tile = tile_shape(dtype, len(modes))
    for e, t in zip(modes, tile, strict=True):
        if e >= MAX_EXTENT - t:
            raise ValueError(f"shape {tuple(shape)}: merged extents {modes} must stay below 2**31 - {t}")
    return modes, mstrides


def standins(
    dtype: str, shape: Sequence[int], strides: Sequence[Sequence[int]], align: int
) -> tuple[tuple[int, ...], list[Placeholder]]:
    """(kernel modes, Placeholders of a, b and c) that specialize add_kernel for such a call; `align`: the byte
    alignment common to the three addresses (at most 16)."""
    modes, mstrides = kernel_modes(dtype, shape, strides)
    return modes, [Placeholder(modes, dtype, strides=s, align=min(16, align)) for s in mstrides]

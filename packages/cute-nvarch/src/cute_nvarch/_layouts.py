"""Small helpers over cute-layout used across cute-nvarch (flat modes, swizzle parts, mode-wise maps).

Shared-memory layouts arrive either as a plain `Layout` or as a `ComposedLayout(Swizzle, offset, Layout)`;
the helpers here split the swizzle off so the algebra runs on the plain inner layout, and put it back.
"""

from __future__ import annotations

from typing import Any

from cute_layout import ComposedLayout, Layout, Swizzle, coalesce, flatten, make_layout, size

LayoutLike = Any  # Layout | ComposedLayout

__all__ = [
    "LayoutLike",
    "swizzle_of",
    "split_swizzle",
    "rewrap",
    "flat_modes",
    "layout_shape_tuple",
    "recast_to_bits",
    "modes_of",
    "concat",
    "recast_bits_to_elements",
    "size_of",
]


def _leaves(x: Any) -> tuple[Any, ...]:
    flat = flatten(x)
    return flat if isinstance(flat, tuple) else (flat,)


def split_swizzle(layout: LayoutLike, func: str = "cute_nvarch") -> tuple[Swizzle | None, int, Layout]:
    """(swizzle or None, offset, inner Layout) of a Layout or a `Swizzle o offset o Layout`."""
    if isinstance(layout, Layout):
        return None, 0, layout
    if isinstance(layout, ComposedLayout):
        outer, inner = layout.outer, layout.inner
        if isinstance(outer, Swizzle) and isinstance(inner, Layout) and isinstance(layout.offset, int):
            return outer, layout.offset, inner
        raise ValueError(f"{func}: expected a Layout or a Swizzle o offset o Layout, got {layout}")
    raise TypeError(f"{func}: expected a Layout or a ComposedLayout, got {type(layout).__name__}")


def rewrap(swizzle: Swizzle | None, offset: int, inner: Layout) -> LayoutLike:
    """Put a swizzle (and offset) back around an inner layout; a plain Layout when there is none."""
    if swizzle is None:
        if offset:
            raise ValueError("rewrap: a plain Layout cannot carry an offset")
        return inner
    return ComposedLayout(swizzle, offset, inner)


def swizzle_of(layout: LayoutLike) -> tuple[int, int, int] | None:
    """(bits, base, shift) of a layout's swizzle, or None for a plain Layout."""
    sw, _, _ = split_swizzle(layout)
    return None if sw is None else (sw.bits, sw.base, sw.shift)


def layout_shape_tuple(layout: Layout) -> tuple[Any, ...]:
    """The top-level shape of a layout as a tuple (a rank-1 int shape becomes a 1-tuple)."""
    shape = layout.shape
    return shape if isinstance(shape, tuple) else (shape,)


def modes_of(layout: Layout) -> list[Layout]:
    """The top-level modes of a layout as Layouts."""
    if isinstance(layout.shape, tuple):
        return [layout[i] for i in range(len(layout.shape))]
    return [layout]


def concat(*layouts: Layout) -> Layout:
    """The layout whose top-level modes are the given layouts (pycute's make_layout(*layouts))."""
    return make_layout(*layouts)


def flat_modes(layout: Layout, mode: int | None = None) -> list[tuple[int, int]]:
    """The (shape, stride) leaves of a layout (or of its top-level `mode`), in colexicographic order."""
    if mode is not None:
        layout = modes_of(layout)[mode]
    shapes, strides = _leaves(layout.shape), _leaves(layout.stride)
    out = []
    for s, d in zip(shapes, strides, strict=True):
        if type(s) is not int or type(d) is not int:
            raise TypeError(f"cute_nvarch: layout {layout} must have static int shapes and strides")
        out.append((s, d))
    return out


def recast_to_bits(layout: Layout, from_bits: int, to_bits: int, func: str) -> Layout:
    """Recast a layout of `from_bits`-wide elements to `to_bits`-wide units (CuTe's upcast), exactly.

    The unit-stride leaf's extent and every other stride must be multiples of the ratio; otherwise the
    layout does not describe whole units and a ValueError names the rule.
    """
    if to_bits % from_bits:
        raise ValueError(f"{func}: cannot recast {from_bits}-bit elements to {to_bits}-bit units")
    r = to_bits // from_bits
    shapes: list[int] = []
    strides: list[int] = []
    for s, d in flat_modes(layout):
        if s == 1:
            shapes.append(1)
            strides.append(0)
        elif d == 0:
            shapes.append(s)
            strides.append(0)
        elif abs(d) == 1:
            if s % r:
                raise ValueError(
                    f"{func}: the contiguous extent {s} of {layout} is not a multiple of {r} elements "
                    f"({to_bits} bits)"
                )
            shapes.append(s // r)
            strides.append(d)
        else:
            if d % r:
                raise ValueError(
                    f"{func}: stride {d} of {layout} is not a multiple of {r} elements ({to_bits} bits)"
                )
            shapes.append(s)
            strides.append(d // r)
    flat = Layout(tuple(shapes), tuple(strides))
    # Restore the top-level grouping of the input (each top-level mode keeps its leaves).
    groups = []
    i = 0
    for m in modes_of(layout):
        n = len(_leaves(m.shape))
        sub = Layout(tuple(shapes[i : i + n]), tuple(strides[i : i + n])) if n > 1 else flat[i]
        groups.append(coalesce(sub) if n > 1 else sub)
        i += n
    return concat(*groups) if len(groups) > 1 else groups[0]


def size_of(layout: LayoutLike) -> int:
    """The domain size of a layout as an int."""
    n = size(layout)
    if type(n) is not int:
        raise TypeError(f"cute_nvarch: layout {layout} must have a static size")
    return n


def _shape_div(a: int, b: int, func: str) -> int:
    if a % b == 0:
        return a // b
    if b % a == 0:
        return 1
    raise ValueError(f"{func}: shape_div({a}, {b}) is not defined: neither divides the other")


def _map_leaves(shape: Any, stride: Any, f: Any) -> tuple[Any, Any]:
    if isinstance(shape, tuple):
        pairs = [_map_leaves(s, d, f) for s, d in zip(shape, stride, strict=True)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    return f(shape, stride)


def recast_bits_to_elements(layout: Layout, width: int, func: str) -> Layout:
    """CuTe's `upcast<width>` of a bit-index layout: the same layout counting `width`-bit elements."""

    def leaf(s: int, d: int) -> tuple[int, int]:
        if d == 0:
            return s, 0
        ad = abs(d)
        s2 = _shape_div(s, _shape_div(width, ad, func), func)
        d2 = _shape_div(ad, width, func)
        return s2, d2 if d > 0 else -d2

    shape, stride = _map_leaves(layout.shape, layout.stride, leaf)
    return Layout(shape, stride)

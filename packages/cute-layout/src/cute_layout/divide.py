"""Divides: split a layout by a tiler into (tile, rest), and the partitioners built on them.

``logical_divide(A, B) = composition(A, make_layout(B, complement(B, shape(coalesce(A)))))`` for a layout
B; a tuple tiler applies by mode (modes past the tiler are kept), an int n means n:1, None keeps the mode.
zipped/tiled/flat_divide regroup the result as CuTe does; local_tile and local_partition return the
sliced layout and the offset of the slice, as slice_and_offset does (layouts carry no pointer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._memo import memoize
from .algebra import _coalesce_flat, _complement_sd, _compose_sd, _cx_flat, _delegate, _pack
from .int_tuple import _flatten, dice, is_int, product_each, rank
from .layout import _ALGEBRA, Layout, _concat, _mk, _modes, make_layout, slice_and_offset

__all__ = [
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "hier_unzip",
    "tile_unzip",
    "inner_partition",
    "outer_partition",
    "local_tile",
    "local_partition",
]


def _as_tiler_layout(t: Any, func: str) -> Layout:
    if type(t) is Layout:
        return t
    if type(t) is int:
        return Layout(t)
    if is_int(t):
        return _mk(t, 1)
    raise TypeError(f"{func}: a tiler must be a Layout, an int, None or a tuple of tilers, got {t!r}")


def _by_mode(
    shape: Any, stride: Any, tiler: Any, leaf: Callable[[Any, Any, Any], tuple[Any, Any]], func: str
) -> tuple[Any, Any]:
    """(shape, stride) of `leaf` applied mode by mode along a tuple tiler (None keeps a mode), as CuTe's by-mode
    divides and products do; modes past the tiler stay as they are."""
    if tiler is None:
        return shape, stride
    if type(tiler) is not tuple:
        return leaf(shape, stride, tiler)
    if type(shape) is not tuple:
        shape, stride = (shape,), (stride,)
    n = len(tiler)
    if n > len(shape):
        raise ValueError(f"{func}: tiler {tiler} has more modes than {_mk(shape, stride)}")
    rs = []
    rd = []
    for i in range(n):
        a, b = _by_mode(shape[i], stride[i], tiler[i], leaf, func)
        rs.append(a)
        rd.append(b)
    return tuple(rs) + shape[n:], tuple(rd) + stride[n:]


def _ldiv_sd(shape: Any, stride: Any, tiler: Any) -> tuple[Any, Any]:
    """(shape, stride) of logical_divide(shape:stride, tiler)."""
    return _by_mode(shape, stride, tiler, _ldiv_leaf, "logical_divide")


def _ldiv_leaf(shape: Any, stride: Any, tiler: Any) -> tuple[Any, Any]:
    """(shape, stride) of logical_divide of one mode by a Layout or int tiler."""
    t = _as_tiler_layout(tiler, "logical_divide")
    ts, td = t.shape, t.stride
    if type(shape) is int and type(ts) is int and type(td) is int and ts > 1 and td > 0:
        # fast path: a 1-D mode divided by a 1-D tiler s:d (the common by-mode case)
        cur = ts * td
        rest = -(-shape // cur)
        if td == 1:
            rsh, rst = (rest, cur) if rest != 1 else (1, 0)
        elif rest != 1:
            rsh, rst = (td, rest), (1, cur)
        else:
            rsh, rst = td, 1
        return (ts, rsh), (td * stride, _scale(rst, stride))
    if type(shape) is not tuple:
        cot = shape
        LS, LD = (shape,), (stride,)
    else:
        fs, fd = _flatten(shape), _flatten(stride)
        cot = _pack(*_coalesce_flat(fs, fd, False, "logical_divide"))[0]
        LS, LD = _cx_flat(fs, fd)
    tfs, tfd = t._flat()
    rsh, rst = _complement_sd(tfs, tfd, cot, t)
    rhs_shape = (t.shape, rsh)
    rhs_stride = (t.stride, rst)
    try:
        return _compose_sd(shape, stride, rhs_shape, rhs_stride, (LS, LD))
    except ValueError as e:
        raise ValueError(f"logical_divide({_mk(shape, stride)}, {t}): {e}") from None


def _scale(d: Any, k: Any) -> Any:
    """Every stride of `d` multiplied by `k` (static zeros stay zero)."""
    if type(d) is tuple:
        return tuple([_scale(x, k) for x in d])
    return 0 if type(d) is int and d == 0 else d * k


def _logical_divide(layout: Layout, tiler: Any) -> Layout:
    s, d = _ldiv_sd(layout.shape, layout.stride, tiler)
    return _mk(s, d)


@memoize
def logical_divide(layoutA: Any, layoutB: Any) -> Any:
    """Split layout A by tiler B into ((tile), (rest)) modes: A composed with (B, complement of B)."""
    if layoutB is None:
        return layoutA
    if type(layoutA) is not Layout:
        return _delegate(layoutA, "logical_divide", "logical_divide", layoutB)
    return _logical_divide(layoutA, layoutB)


def _unzip2(shape: Any, stride: Any, tiler: Any) -> tuple[Any, Any, Any, Any]:
    """(tile shape, tile stride, rest shape, rest stride) of a divided mode, by `tiler`'s profile."""
    if type(tiler) is tuple:
        if type(shape) is not tuple or len(shape) < len(tiler):
            raise ValueError(f"tile_unzip: {shape} does not have the modes of tiler {tiler}")
        n = len(tiler)
        ts, td, rs, rd = [], [], [], []
        for i in range(n):
            a, b, c, d = _unzip2(shape[i], stride[i], tiler[i])
            ts.append(a)
            td.append(b)
            rs.append(c)
            rd.append(d)
        return tuple(ts), tuple(td), tuple(rs) + shape[n:], tuple(rd) + stride[n:]
    if tiler is None:
        return 1, 0, shape, stride
    if type(shape) is not tuple or len(shape) != 2:
        raise ValueError(f"tile_unzip: expected a rank-2 (tile, rest) mode, got {shape}")
    return shape[0], stride[0], shape[1], stride[1]


def tile_unzip(layout: Layout, tiler: Any) -> Layout:
    """Gather the (tile, rest) pairs found at the leaves of `tiler` into ((tiles...), (rests...))."""
    ts, td, rs, rd = _unzip2(layout.shape, layout.stride, tiler)
    return _mk((ts, rs), (td, rd))


def hier_unzip(splitter: Any, layoutA: Any, layoutB: Any) -> Layout:
    """Apply `splitter` at the leaves of tiler `layoutB` and gather into ((tiles...), (rests...)) (pycute)."""
    if layoutB is None:
        return make_layout(Layout(1, 0), layoutA)
    if type(layoutB) is tuple:
        modes = _modes(layoutA)
        if len(layoutB) > len(modes):
            raise ValueError(f"hier_unzip: tiler {layoutB} has more modes than {layoutA}")
        split = [hier_unzip(splitter, modes[i], b) for i, b in enumerate(layoutB)]
        first = _concat([s[0] for s in split])
        second = _concat([s[1] for s in split] + modes[len(layoutB) :])
        return _concat([first, second])
    return splitter(layoutA, layoutB)


@memoize
def zipped_divide(layoutA: Any, layoutB: Any) -> Any:
    """logical_divide gathered as ((tile modes...), (rest modes...))."""
    if type(layoutA) is not Layout:
        return _delegate(layoutA, "zipped_divide", "zipped_divide", layoutB)
    if layoutB is None:
        return _mk((1, layoutA.shape), (0, layoutA.stride))
    return tile_unzip(_logical_divide(layoutA, layoutB), layoutB)


def _unpack(mode_shape: Any, mode_stride: Any) -> tuple[tuple, tuple]:
    if type(mode_shape) is tuple:
        return mode_shape, mode_stride
    return (mode_shape,), (mode_stride,)


def _unpack_second(z: Layout) -> Layout:
    """A zipped (first, second) layout with its second mode unpacked: (first, s0, s1, ...) (tiled_*)."""
    rs, rd = _unpack(z.shape[1], z.stride[1])
    return _mk((z.shape[0],) + rs, (z.stride[0],) + rd)


def _unpack_both(z: Layout) -> Layout:
    """A zipped (first, second) layout with both modes unpacked: (f0, f1, ..., s0, s1, ...) (flat_*)."""
    fs, fd = _unpack(z.shape[0], z.stride[0])
    rs, rd = _unpack(z.shape[1], z.stride[1])
    return _mk(fs + rs, fd + rd)


@memoize
def tiled_divide(layoutA: Any, layoutB: Any) -> Any:
    """zipped_divide with the rest modes unpacked: ((tile modes...), rest0, rest1, ...)."""
    if type(layoutA) is not Layout:
        return _delegate(layoutA, "tiled_divide", "tiled_divide", layoutB)
    return _unpack_second(zipped_divide(layoutA, layoutB))


@memoize
def flat_divide(layout: Any, tiler: Any) -> Any:
    """zipped_divide with both modes unpacked: (tile0, tile1, ..., rest0, rest1, ...)."""
    if type(layout) is not Layout:
        return _delegate(layout, "flat_divide", "flat_divide", tiler)
    return _unpack_both(zipped_divide(layout, tiler))


def _pad_coord(coord: Any, r: int) -> Any:
    """`coord` padded with None to rank r (CuTe's append<R>(coord, _)); None or an int stay as they are."""
    if type(coord) is not tuple:
        return coord
    if len(coord) > r:
        raise ValueError(f"coordinate {coord} has more modes than the {r} it indexes")
    if r == 1:
        return coord[0] if coord else None
    return coord + (None,) * (r - len(coord))


def _all(r: int) -> Any:
    return None if r == 1 else (None,) * r


def inner_partition(layout: Any, tiler: Any, coord: Any) -> tuple[Any, Any]:
    """Keep the tile, index the rest mode of zipped_divide(layout, tiler) with `coord`: (layout, offset)."""
    z = zipped_divide(layout, tiler)
    r0, r1 = rank(z.shape[0]), rank(z.shape[1])
    return slice_and_offset((_all(r0), _pad_coord(coord, r1)), z)


def outer_partition(layout: Any, tiler: Any, coord: Any) -> tuple[Any, Any]:
    """Keep the rest, index the tile mode of zipped_divide(layout, tiler) with `coord`: (layout, offset)."""
    z = zipped_divide(layout, tiler)
    r0, r1 = rank(z.shape[0]), rank(z.shape[1])
    return slice_and_offset((_pad_coord(coord, r0), _all(r1)), z)


def local_tile(layout: Any, tiler: Any, coord: Any, proj: Any = None) -> tuple[Any, Any]:
    """The tile of `layout` at tile coordinate `coord` (CuTe's local_tile): (tile layout, offset).

    `proj` (e.g. (1, None, 1)) first selects the modes of `tiler` and `coord` that apply.
    """
    if proj is not None:
        tiler = dice(proj, tiler)
        coord = dice(proj, coord)
    return inner_partition(layout, tiler, coord)


def local_partition(layout: Any, tile: Any, index: Any, proj: Any = None) -> tuple[Any, Any]:
    """The elements of `layout` owned by thread `index` of the thread layout `tile`: (layout, offset)."""
    if proj is not None:
        tile = dice(proj, tile)
    if type(tile) is not Layout:
        raise TypeError(f"local_partition: the thread layout must be a Layout, got {tile!r}")
    tiler = product_each(tile.shape) if type(tile.shape) is tuple else tile.shape
    return outer_partition(layout, tiler, tile.get_flat_coord(index))


_ALGEBRA["tiled_divide"] = tiled_divide

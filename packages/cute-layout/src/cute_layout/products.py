"""Products: reproduce a block layout over a tiler layout, and tile_to_shape.

``logical_product(A, B) = (A, composition(complement(A, size(A) * cosize(B)), B))`` for a layout B; a
tuple tiler applies by mode (modes past the tiler are kept), an int n means n:1, None keeps the mode.
zipped/tiled/flat_product regroup as the divides do; blocked_product and raked_product interleave the
block and tiler modes (rank-sensitive, CuTe C++'s current definitions, not coalesced).
"""

from __future__ import annotations

from typing import Any

from ._memo import memoize
from .algebra import _complement_sd, _compose_sd, _delegate, evenly_divides
from .divide import _as_tiler_layout, _by_mode, _unpack_both, _unpack_second, tile_unzip
from .int_tuple import ceil_div, product, product_each
from .layout import Layout, _coshape, _mk, make_layout, make_ordered_layout

__all__ = [
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
]


def _lprod_sd(shape: Any, stride: Any, tiler: Any) -> tuple[Any, Any]:
    """(shape, stride) of logical_product(shape:stride, tiler)."""
    return _by_mode(shape, stride, tiler, _lprod_leaf, "logical_product")


def _lprod_leaf(shape: Any, stride: Any, tiler: Any) -> tuple[Any, Any]:
    """(shape, stride) of logical_product of one mode by a Layout or int tiler."""
    t = _as_tiler_layout(tiler, "logical_product")
    block = _mk(shape, stride)
    fs, fd = block._flat()
    csh, cst = _complement_sd(fs, fd, product(fs) * product(_coshape(t)), block)
    rsh, rst = _compose_sd(csh, cst, t.shape, t.stride)
    return (shape, rsh), (stride, rst)


def _logical_product(block: Layout, tiler: Any) -> Layout:
    s, d = _lprod_sd(block.shape, block.stride, tiler)
    return _mk(s, d)


@memoize
def logical_product(layoutA: Any, layoutB: Any) -> Any:
    """Reproduce block A over tiler B: ((A), (B applied to the complement of A))."""
    if layoutB is None:
        return layoutA
    if type(layoutA) is not Layout:
        return _delegate(layoutA, "logical_product", "logical_product", layoutB)
    return _logical_product(layoutA, layoutB)


@memoize
def zipped_product(layoutA: Any, layoutB: Any) -> Any:
    """logical_product gathered as ((block modes...), (tiler modes...))."""
    if type(layoutA) is not Layout:
        return _delegate(layoutA, "zipped_product", "zipped_product", layoutB)
    if layoutB is None:
        return _mk((1, layoutA.shape), (0, layoutA.stride))
    return tile_unzip(_logical_product(layoutA, layoutB), layoutB)


@memoize
def tiled_product(layoutA: Any, layoutB: Any) -> Any:
    """zipped_product with the second mode unpacked: ((block modes...), t0, t1, ...)."""
    if type(layoutA) is not Layout:
        return _delegate(layoutA, "tiled_product", "tiled_product", layoutB)
    return _unpack_second(zipped_product(layoutA, layoutB))


@memoize
def flat_product(block: Any, tiler: Any) -> Any:
    """zipped_product with both modes unpacked: (b0, b1, ..., t0, t1, ...)."""
    if type(block) is not Layout:
        return _delegate(block, "flat_product", "flat_product", tiler)
    return _unpack_both(zipped_product(block, tiler))


def _pad_rank(layout: Layout, r: int) -> Layout:
    """CuTe's append<R>(layout): pad with 1:0 modes up to rank r (a rank-1 layout stays as it is for r=1)."""
    if r == 1:
        return layout
    s = layout.shape if type(layout.shape) is tuple else (layout.shape,)
    d = layout.stride if type(layout.stride) is tuple else (layout.stride,)
    k = r - len(s)
    return _mk(s + (1,) * k, d + (0,) * k)


def _zip2(a: Layout, b: Layout) -> Layout:
    """CuTe's zip of two layouts of equal rank (tuple shapes): ((a0,b0), (a1,b1), ...)."""
    return _mk(
        tuple(zip(a.shape, b.shape)),  # noqa: B905
        tuple(zip(a.stride, b.stride)),  # noqa: B905
    )


def _as_rank(layout: Layout, r: int) -> Layout:
    """CuTe's append<R>(layout) with a tuple shape: a rank-1 int mode becomes a 1-tuple, then 1:0 pads to r."""
    s = layout.shape if type(layout.shape) is tuple else (layout.shape,)
    d = layout.stride if type(layout.stride) is tuple else (layout.stride,)
    k = r - len(s)
    if k <= 0:
        return _mk(s, d)
    return _mk(s + (1,) * k, d + (0,) * k)


def _rank_product(block: Any, tiler: Any, func: str, raked: bool) -> Layout:
    """zip(logical_product(append<R>(block), append<R>(tiler))): rank(result) == max of the ranks (CuTe)."""
    if type(block) is not Layout:
        return _delegate(block, func, func, tiler)
    if type(tiler) is not Layout:
        tiler = make_layout(tiler) if type(tiler) in (int, tuple) else tiler
    if type(tiler) is not Layout:
        raise TypeError(f"{func}: the tiler must be a Layout or a shape, got {tiler!r}")
    r = max(block.rank(), tiler.rank())
    pb, pt = _as_rank(block, r), _as_rank(tiler, r)
    result = _logical_product(pb, pt)
    first = _mk(result.shape[0], result.stride[0])
    second = _mk(result.shape[1], result.stride[1])
    return _zip2(second, first) if raked else _zip2(first, second)


@memoize
def blocked_product(block: Any, tiler: Any) -> Layout:
    """Reproduce `block` over `tiler` mode by mode, the block fastest in each mode (rank-sensitive)."""
    return _rank_product(block, tiler, "blocked_product", False)


@memoize
def raked_product(block: Any, tiler: Any) -> Layout:
    """Reproduce `block` over `tiler` mode by mode, interleaved: the tiler fastest in each mode."""
    return _rank_product(block, tiler, "raked_product", True)


@memoize
def tile_to_shape(block: Any, trg_shape: Any, order: Any = None) -> Layout:
    """Repeat `block` (blocked_product) until it has shape `trg_shape`; `order` orders the repetitions."""
    if type(block) is not Layout:
        raise TypeError(f"tile_to_shape: expected a Layout block, got {block!r}")
    r = len(trg_shape) if type(trg_shape) is tuple else 1
    if block.rank() > r:
        raise ValueError(f"tile_to_shape: {block} has more modes than the target shape {trg_shape}")
    padded = _pad_rank(block, r)
    block_shape = product_each(padded.shape)
    target_shape = product_each(trg_shape)
    if not evenly_divides(target_shape, block_shape):
        raise ValueError(
            f"tile_to_shape: the block shape {block_shape} does not divide the target {trg_shape}"
        )
    product_shape = ceil_div(target_shape, block_shape)
    if order is None:
        rep = make_layout(product_shape)
    else:
        rep = make_ordered_layout(product_shape, order)
    return _rank_product(padded, rep, "tile_to_shape", False)

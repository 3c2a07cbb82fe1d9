"""Thread-value layouts: the (thread, value) -> (M, N) layouts that partition tiles among threads."""

from __future__ import annotations

from typing import Any

from ._memo import memoize
from .algebra import _compose, right_inverse
from .int_tuple import product, product_each
from .layout import Layout, _mk
from .products import raked_product

__all__ = ["make_layout_tv"]


@memoize
def make_layout_tv(thr_layout: Any, val_layout: Any) -> tuple[tuple, Layout]:
    """(tiler_mn, layout_tv) for threads laid out by `thr_layout`, each owning `val_layout` values (CuTeDSL).

    ``layout_mn = raked_product(thr, val)`` maps (M,N) to (thread, value); ``layout_tv`` is its right
    inverse composed with the compact (num_threads, num_values) layout, so it maps (thread, value) to
    the index within the ``tiler_mn`` tile.
    """
    for name, lay in (("thr_layout", thr_layout), ("val_layout", val_layout)):
        if type(lay) is not Layout:
            raise TypeError(f"make_layout_tv: {name} must be a Layout, got {lay!r}")
    layout_mn = raked_product(thr_layout, val_layout)
    thr_size = product(thr_layout.shape)
    val_size = product(val_layout.shape)
    tmp = Layout((thr_size, val_size))
    layout_tv = _compose(right_inverse(layout_mn), tmp)
    tiler_mn = product_each(layout_mn.shape)
    return tiler_mn, _mk(layout_tv.shape, layout_tv.stride)

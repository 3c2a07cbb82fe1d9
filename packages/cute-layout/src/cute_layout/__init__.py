"""cute_layout: CuTe's layout algebra in pure Python, exact, with NVIDIA pycute's names.

``import cute_layout as pycute`` works: every public name of pycute exists with the same signature.
Operations follow CuTe C++ semantics and raise ValueError instead of returning a wrong layout.
"""

from __future__ import annotations

from typing import Any

from .__about__ import __version__
from ._memo import cache_sizes, clear_caches, memoize
from .algebra import (
    coalesce,
    complement,
    composition,
    downcast,
    evenly_divides,
    filter,
    filter_zeros,
    left_inverse,
    max_common_layout,
    max_common_vector,
    nullspace,
    recast_layout,
    right_inverse,
    upcast,
    with_shape,
)
from .divide import (
    flat_divide,
    hier_unzip,
    inner_partition,
    local_partition,
    local_tile,
    logical_divide,
    outer_partition,
    tile_unzip,
    tiled_divide,
    zipped_divide,
)
from .int_tuple import (
    ArithTuple,
    E,
    Integer,
    IntTuple,
    ScaledBasis,
    ceil_div,
    colex_geq,
    colex_gtr,
    colex_leq,
    colex_less,
    compact_col_major,
    compact_order,
    compact_row_major,
    compatible,
    congruent,
    crd2crd,
    crd2idx,
    depth,
    dice,
    elem_geq,
    elem_gtr,
    elem_leq,
    elem_less,
    elem_scale,
    flatten,
    has_none,
    idx2crd,
    inner_product,
    is_int,
    is_static,
    is_tuple,
    lex_geq,
    lex_gtr,
    lex_leq,
    lex_less,
    make_basis_like,
    prefix_product,
    product,
    product_each,
    product_like,
    rank,
    repeat_like,
    round_up,
    shape_div,
    shiftl,
    shiftr,
    signum,
    slice_,
    static_int,
    tuple_max,
    tuple_min,
    unflatten,
    weakly_congruent,
)
from .layout import (
    Layout,
    LayoutBase,
    append,
    coshape,
    cosize,
    get,
    group_modes,
    is_layout,
    make_identity_layout,
    make_layout,
    make_ordered_layout,
    prepend,
    select,
    size,
    slice_and_offset,
    take,
)
from .products import (
    blocked_product,
    flat_product,
    logical_product,
    raked_product,
    tile_to_shape,
    tiled_product,
    zipped_product,
)
from .swizzle import ComposedLayout, Swizzle, make_composed_layout, make_swizzle, max_alignment
from .tv import make_layout_tv

__all__ = [
    "__version__",
    # memoization
    "memoize",
    "clear_caches",
    "cache_sizes",
    # int tuples
    "Integer",
    "IntTuple",
    "is_int",
    "is_static",
    "is_tuple",
    "static_int",
    "signum",
    "shiftl",
    "shiftr",
    "flatten",
    "unflatten",
    "rank",
    "depth",
    "product",
    "product_each",
    "product_like",
    "inner_product",
    "prefix_product",
    "shape_div",
    "ceil_div",
    "round_up",
    "elem_scale",
    "tuple_max",
    "tuple_min",
    "congruent",
    "weakly_congruent",
    "compatible",
    "evenly_divides",
    "crd2idx",
    "idx2crd",
    "crd2crd",
    "elem_less",
    "elem_leq",
    "elem_gtr",
    "elem_geq",
    "lex_less",
    "lex_leq",
    "lex_gtr",
    "lex_geq",
    "colex_less",
    "colex_leq",
    "colex_gtr",
    "colex_geq",
    "slice_",
    "dice",
    "has_none",
    "repeat_like",
    "compact_col_major",
    "compact_row_major",
    "compact_order",
    "ScaledBasis",
    "ArithTuple",
    "E",
    "make_basis_like",
    # layouts
    "LayoutBase",
    "Layout",
    "is_layout",
    "make_layout",
    "make_ordered_layout",
    "make_identity_layout",
    "size",
    "cosize",
    "coshape",
    "get",
    "select",
    "take",
    "group_modes",
    "append",
    "prepend",
    "slice_and_offset",
    # algebra
    "coalesce",
    "filter",
    "filter_zeros",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "max_common_layout",
    "max_common_vector",
    "nullspace",
    "with_shape",
    "upcast",
    "downcast",
    "recast_layout",
    # divides and products
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
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
    # thread-value layouts
    "make_layout_tv",
]

__all__ += ["Swizzle", "ComposedLayout", "make_swizzle", "make_composed_layout", "max_alignment"]

# Pictures and the expression language load on first use: `import cute_layout` stays cheap.
_LAZY = {
    "format_layout": "picture",
    "print_layout": "picture",
    "to_svg": "picture",
    "to_svg_tv": "picture",
    "ExprError": "expr",
    "parse": "expr",
    "evaluate": "expr",
}
__all__ += list(_LAZY)


def __getattr__(name: str) -> Any:
    """Load a picture or expression-language name from its module on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cute_layout' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

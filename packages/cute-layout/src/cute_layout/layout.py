"""CuTe layouts: the `Layout` class, its constructors, and mode-level utilities.

A ``Layout(shape, stride)`` is a function from coordinates (or 1-D indices) to indices:
``L(c) = sum(c_i * stride_i)`` over the leaves of the coordinate in `shape`. It prints as CuTe does,
``(4,2):(1,4)``. Layouts are immutable, hashable (hash cached) and compare structurally.

The LayoutBase protocol
-----------------------
Other layout-like classes (``Swizzle``, ``ComposedLayout`` in :mod:`cute_layout.swizzle`) subclass
`LayoutBase`. The generic functions of this package (``size``, ``cosize``, ``composition``,
``complement``, ``right_inverse``, ``left_inverse``, ``coalesce``, the divides and products,
``slice_and_offset``, ...) handle `Layout` themselves; for any other `LayoutBase` they call a method
of the same purpose on the object, raising ``TypeError`` when it lacks one:

* ``size(x)`` -> ``x.size()``; ``cosize(x)`` -> ``x.cosize()``
* ``composition(x, rhs)`` -> ``x.compose(rhs)``; ``composition(layout, x)`` -> ``x.composed_on(layout)``
* ``right_inverse(x)`` -> ``x.right_inverse()``; ``left_inverse(x)`` -> ``x.left_inverse()``
* ``coalesce(x, profile)`` -> ``x.coalesce()`` / ``x.coalesce(profile)``
* ``logical_divide(x, t)`` -> ``x.logical_divide(t)``, likewise ``zipped_divide``, ``tiled_divide``,
  ``flat_divide``, ``logical_product``, ``zipped_product``, ``tiled_product``, ``flat_product``,
  ``blocked_product``, ``raked_product``, ``complement``
* ``slice_and_offset(crd, x)`` -> ``x.slice_and_offset(crd)``

An object whose ``_cute_static`` attribute is true may be memoized on (see :mod:`cute_layout._memo`).
"""

from __future__ import annotations

import operator
from typing import Any

from .int_tuple import (
    ScaledBasis,
    _crd2idx,
    _dice,
    _flatten,
    _is_runtime,
    compact_col_major,
    compact_order,
    crd2idx,
    has_none,
    idx2crd,
    make_basis_like,
    product,
    slice_,
)

__all__ = [
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
]


class LayoutBase:
    """Base class of everything that behaves as a layout (Layout, Swizzle, ComposedLayout)."""

    __slots__ = ()


def is_layout(x: Any) -> bool:
    """Whether `x` is a layout-like object (an instance of LayoutBase)."""
    return isinstance(x, LayoutBase)


# --------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------


def _bad_leaf(x: Any, what: str, top: Any) -> TypeError:
    return TypeError(f"Layout: {what} leaves must be ints, got {type(x).__name__} {x!r} in {what} {top!r}")


def _to_int(x: Any, what: str, top: Any) -> int:
    t = type(x)
    if t is bool or t is float or t is str or not hasattr(t, "__index__"):
        raise _bad_leaf(x, what, top)
    return operator.index(x)


def _check_shape(s: Any, top: Any) -> Any:
    t = type(s)
    if t is int:
        if s <= 0:
            raise ValueError(f"Layout: shape leaves must be positive, got {s} in shape {top!r}")
        return s
    if t is tuple or t is list:
        return tuple([_check_shape(e, top) for e in s])
    if getattr(t, "__cute_int__", False):
        return s
    return _check_shape(_to_int(s, "shape", top), top)


def _check_stride(d: Any, s: Any, shape: Any, stride: Any) -> Any:
    t = type(d)
    if type(s) is tuple:
        if (t is not tuple and t is not list) or len(d) != len(s):
            raise ValueError(f"Layout: shape {shape!r} and stride {stride!r} are not congruent")
        return tuple([_check_stride(x, y, shape, stride) for x, y in zip(d, s)])  # noqa: B905
    if t is int or t is ScaledBasis or getattr(t, "__cute_int__", False):
        return d
    if t is tuple or t is list:
        raise ValueError(f"Layout: shape {shape!r} and stride {stride!r} are not congruent")
    return _to_int(d, "stride", stride)


# --------------------------------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------------------------------


def _ints_congruent(shape: tuple, stride: tuple, fs: list, fd: list) -> bool:
    """Whether shape and stride are congruent tuples of ints with positive shapes (leaves appended to fs, fd).

    Indexing instead of zip() and the second level inline: this runs for every nested Layout built.
    """
    if len(shape) != len(stride):
        return False
    i = 0
    for s in shape:
        d = stride[i]
        i += 1
        if type(s) is int:
            if s <= 0 or type(d) is not int:
                return False
            fs.append(s)
            fd.append(d)
        elif type(s) is tuple and type(d) is tuple and len(s) == len(d):
            j = 0
            for s2 in s:
                d2 = d[j]
                j += 1
                if type(s2) is int:
                    if s2 <= 0 or type(d2) is not int:
                        return False
                    fs.append(s2)
                    fd.append(d2)
                elif type(s2) is not tuple or type(d2) is not tuple or not _ints_congruent(s2, d2, fs, fd):
                    return False
        else:
            return False
    return True


def _fmt(x: Any) -> str:
    if type(x) is tuple:
        return "(" + ",".join([_fmt(e) for e in x]) + ")"
    return str(x)


# The algebra that Layout's pycute methods (compose, with_shape, tile) call lives in modules that import this
# one; they register those functions here when they are imported (``import cute_layout`` imports them all),
# so that no import runs back from this module to them.
_ALGEBRA: dict[str, Any] = {}

# Largest layout (in cells) that Jupyter shows as a picture; larger ones show as text.
_REPR_SVG_CELLS = 1024

# Memoization tokens of static layouts, by (shape, stride); a token is unique to one value while alive.
_TOKENS: dict[Any, Any] = {}
_MAX_TOKENS = 1 << 17


class Layout(LayoutBase):
    """A CuTe layout: `shape` and congruent `stride` (column-major compact strides by default)."""

    # Derived data, computed on first use and kept on the instance (class-level None defaults).
    _h: Any = None  # hash
    _fl: Any = None  # (flat shape, flat stride)
    _cf: Any = None  # ((shape, stride) pairs of all leaves but the last, last stride): for __call__
    _st: Any = None  # whether every leaf is static
    _cx: Any = None  # CuTe's coalesce_x of this layout (see algebra)
    _k: Any = None  # memoization token: shared by equal static layouts, False when not static
    _co: Any = None  # coalesce(self), _ri: right_inverse(self), _li: left_inverse(self), once computed
    _ri: Any = None
    _li: Any = None
    _cm: Any = None  # {cotarget: complement(self, cotarget)}

    def __init__(self, shape: Any, stride: Any = None) -> None:
        if type(shape) is tuple and type(stride) is tuple and len(shape) == len(stride):
            for s in shape:  # two plain loops: cheaper than one over zip() for these short tuples
                if type(s) is not int or s <= 0:
                    break
            else:
                for d in stride:
                    if type(d) is not int:
                        break
                else:  # fast path: flat tuples of ints
                    self.shape = shape
                    self.stride = stride
                    self._fl = (shape, stride)
                    self._st = True
                    return
        elif type(shape) is int and type(stride) is int and shape > 0:
            self.shape = shape
            self.stride = stride
            self._fl = ((shape,), (stride,))
            self._st = True
            return
        if type(shape) is tuple and type(stride) is tuple:
            fs: list = []
            fd: list = []
            if _ints_congruent(shape, stride, fs, fd):  # nested tuples of ints: validated and flattened at once
                self.shape = shape
                self.stride = stride
                self._fl = (tuple(fs), tuple(fd))
                self._st = True
                return
        shape = _check_shape(shape, shape)
        if stride is None:
            stride = compact_col_major(shape)
        else:
            stride = _check_stride(stride, shape, shape, stride)
        self.shape = shape
        self.stride = stride

    # -- cached derived data ------------------------------------------------------------------------

    def _flat(self) -> tuple[tuple, tuple]:
        """(flat shape, flat stride), cached."""
        fl = self._fl
        if fl is None:
            fl = self._fl = (_flatten(self.shape), _flatten(self.stride))
        return fl

    def _callf(self) -> tuple[tuple, Any]:
        cf = self._cf
        if cf is None:
            sh = self.shape
            if type(sh) is not tuple:
                cf = ((), self.stride)
            else:
                pairs: list = []
                for s, d in zip(sh, self.stride):  # noqa: B905
                    if type(s) is tuple:
                        for s2, d2 in zip(s, d):  # noqa: B905
                            if type(s2) is tuple:
                                fs, fd = self._flat()
                                pairs = list(zip(fs, fd))  # noqa: B905
                                break
                            pairs.append((s2, d2))
                        else:
                            continue
                        break
                    pairs.append((s, d))
                if pairs:
                    cf = (tuple(pairs[:-1]), pairs[-1][1])
                else:
                    cf = ((), 0)
            self._cf = cf
        return cf

    @property
    def _cute_static(self) -> bool:
        st = self._st
        if st is None:
            fs, fd = self._flat()
            st = True
            for x in fs:
                if type(x) is not int:
                    st = False
                    break
            if st:
                for x in fd:
                    if type(x) is not int and not (type(x) is ScaledBasis and type(x.value) is int):
                        st = False
                        break
            self._st = st
        return st

    def _key(self) -> Any:
        """A token shared by all equal static layouts (C-level hash and equality), or False."""
        k = self._k
        if k is None:
            if not (self._st or self._cute_static):
                k = False
            else:
                v = (self.shape, self.stride)
                k = _TOKENS.get(v)
                if k is None:
                    if len(_TOKENS) >= _MAX_TOKENS:
                        _TOKENS.clear()
                    k = _TOKENS[v] = object()
            self._k = k
        return k

    # -- protocol -----------------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if type(other) is not Layout:
            return NotImplemented
        return self.shape == other.shape and self.stride == other.stride  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self) -> int:
        h = self._h
        if h is None:
            if not (self._st or self._cute_static):
                raise TypeError(f"unhashable Layout {self}: it holds run-time values")
            h = self._h = hash((self.shape, self.stride))
        return h

    def __len__(self) -> int:
        return len(self.shape) if type(self.shape) is tuple else 1

    def __iter__(self) -> Any:
        if type(self.shape) is tuple:
            for s, d in zip(self.shape, self.stride):  # noqa: B905
                yield _mk(s, d)
        else:
            yield self

    def __getitem__(self, i: Any) -> Layout:
        if type(self.shape) is tuple:
            return _mk(self.shape[i], self.stride[i])
        if i in (0, -1):
            return self
        raise IndexError(f"Layout {self} has rank 1; mode {i} does not exist")

    def __call__(self, *args: Any) -> Any:
        if len(args) == 1:
            c = args[0]
            if type(c) is int:
                if c < 0:
                    return -self(-c)
                cf = self._cf
                head, dl = cf if cf is not None else self._callf()
                r = 0
                for s, d in head:
                    r += c % s * d
                    c //= s
                r += c * dl
                if type(r) is int:
                    return r
                return r.to_tuple() if type(r) is ScaledBasis else r
            if type(c) is tuple:
                if has_none(c):
                    return _mk(slice_(c, self.shape), slice_(c, self.stride))
                r = _crd2idx(c, self.shape, self.stride)
                return r.to_tuple() if type(r) is ScaledBasis else r
            if c is None:
                return self
            if _is_runtime(c):
                head, dl = self._callf()
                r = 0
                for s, d in head:
                    r = r + c % s * d
                    c = c // s
                return r + c * dl
            raise TypeError(f"Layout {self}: cannot be called with {type(c).__name__} {c!r}")
        if not args:
            raise TypeError(f"Layout {self}: call needs a coordinate")
        return self(args)

    def __str__(self) -> str:
        return f"{_fmt(self.shape)}:{_fmt(self.stride)}"

    def __repr__(self) -> str:
        return f"Layout({self.shape!r}, {self.stride!r})"

    def _flattened(self) -> Layout:
        """This layout with flat shape and stride (what int_tuple.flatten returns for a layout)."""
        fs, fd = self._flat()
        return _mk(fs, fd)

    def _diced(self, crd: Any) -> Layout:
        """The modes of this layout paired with a non-None entry of `crd` (what int_tuple.dice returns)."""
        if type(crd) is not tuple:
            return self if crd is not None else _mk((), ())
        return _mk(_dice(crd, self.shape), _dice(crd, self.stride))

    def _repr_svg_(self) -> str | None:
        """Jupyter's picture of this layout (up to 1024 cells of rank 1 or 2; None, i.e. text, beyond)."""
        from .picture import svg_or_none

        return svg_or_none(self, _REPR_SVG_CELLS)

    # -- pycute / CuTe methods ----------------------------------------------------------------------

    def size(self) -> Any:
        """Size of the domain: the product of the shape."""
        return product(self.shape)

    def cosize(self) -> Any:
        """Size of the codomain: one past the largest distance between images (negative strides ok)."""
        return product(_coshape(self))

    def rank(self) -> int:
        """Number of top-level modes."""
        return len(self.shape) if type(self.shape) is tuple else 1

    def compose(self, *tilers: Any) -> Any:
        """composition(self, tiler), or composition by mode when several tilers are given."""
        return _ALGEBRA["composition"](self, tilers[0] if len(tilers) == 1 else tilers)

    def with_shape(self, *shape: Any) -> Any:
        """This layout reshaped: composition(self, make_layout(shape))."""
        return _ALGEBRA["composition"](self, make_layout(shape[0] if len(shape) == 1 else shape))

    def tile(self, *tilers: Any) -> Any:
        """tiled_divide(self, tiler)."""
        return _ALGEBRA["tiled_divide"](self, tilers[0] if len(tilers) == 1 else tilers)

    def get_hier_coord(self, idx: Any) -> Any:
        """The coordinate (congruent to shape) whose image is `idx` (compact layouts only)."""
        return idx2crd(idx, self.shape, self.stride)

    def get_flat_coord(self, idx: Any) -> Any:
        """The per-mode 1-D coordinate (rank-R tuple, or an int for rank 1) whose image is `idx`."""
        crd = self.get_hier_coord(idx)
        if type(self.shape) is not tuple:
            return crd2idx(crd, self.shape)
        return tuple([crd2idx(c, s) for c, s in zip(crd, self.shape)])  # noqa: B905

    def get_1d_coord(self, idx: Any) -> Any:
        """The colexicographic 1-D coordinate whose image is `idx` (compact layouts only)."""
        return crd2idx(self.get_hier_coord(idx), self.shape)


_new = object.__new__


def _mk(shape: Any, stride: Any) -> Layout:
    """Build a Layout from already valid shape and stride (no checks)."""
    obj = _new(Layout)
    obj.shape = shape
    obj.stride = stride
    return obj


def _modes(layout: Layout) -> list[Layout]:
    """Top-level modes of a layout (a rank-1 layout with int shape is its own only mode)."""
    if type(layout.shape) is tuple:
        return [_mk(s, d) for s, d in zip(layout.shape, layout.stride)]  # noqa: B905
    return [layout]


def _concat(layouts: Any) -> Layout:
    """The layout whose modes are `layouts` (CuTe's make_layout of layouts)."""
    return _mk(tuple([a.shape for a in layouts]), tuple([a.stride for a in layouts]))


# --------------------------------------------------------------------------------------------------
# Construction
# --------------------------------------------------------------------------------------------------


def _is_shape_like(x: Any) -> bool:
    t = type(x)
    if t is int or getattr(t, "__cute_int__", False):
        return True
    if t is tuple or t is list:
        return not any(isinstance(e, LayoutBase) for e in x)
    return False


def make_layout(*args: Any, stride: Any = None, order: Any = None) -> Layout:
    """Concatenate layouts into the modes of a new layout, or build a layout from a shape.

    ``make_layout(L0, L1, ...)`` and ``make_layout([L0, L1, ...])`` give ``(L0, L1, ...)`` (pycute).
    ``make_layout(shape)`` gives column-major compact strides (stride 0 on size-1 modes);
    ``make_layout(shape, stride)`` or ``stride=`` sets the strides; ``order=`` orders the modes as
    `make_ordered_layout`.
    """
    if len(args) == 1 or (len(args) == 2 and not isinstance(args[0], LayoutBase)):
        first = args[0]
        if _is_shape_like(first) and not isinstance(first, LayoutBase):
            if len(args) == 2:
                if stride is not None:
                    raise TypeError("make_layout: stride given both positionally and by keyword")
                stride = args[1]
            if order is not None:
                if stride is not None:
                    raise TypeError("make_layout: give either stride= or order=, not both")
                return make_ordered_layout(first, order)
            return Layout(first, stride)
        if len(args) == 1 and not isinstance(first, LayoutBase):
            try:
                args = tuple(first)
            except TypeError:
                raise TypeError(f"make_layout: cannot make a layout from {type(first).__name__}") from None
    if stride is not None or order is not None:
        raise TypeError("make_layout: stride= and order= apply to a shape, not to layouts")
    for a in args:
        if type(a) is not Layout:
            raise TypeError(f"make_layout: expected Layouts to concatenate, got {type(a).__name__} {a!r}")
    return _concat(args)


def make_ordered_layout(shape: Any, order: Any) -> Layout:
    """Compact layout of `shape` whose strides grow in the order given by `order` (CuTe)."""
    shape = _check_shape(shape, shape)
    return _mk(shape, compact_order(shape, order))


def make_identity_layout(shape: Any) -> Layout:
    """The layout that maps each coordinate of `shape` to itself (ScaledBasis strides)."""
    shape = _check_shape(shape, shape)
    return _mk(shape, make_basis_like(shape))


# --------------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------------


def _select_mode(x: Any, mode: Any) -> Any:
    if mode is None:
        return x
    if type(mode) is int:
        mode = (mode,)
    return get(x, *mode)


def size(layout: Any, mode: Any = None) -> Any:
    """Size of a layout's domain (or of an IntTuple), optionally of sub-mode `mode` (int or index path)."""
    if mode is not None:
        layout = _select_mode(layout, mode)
    if type(layout) is Layout:
        return product(layout.shape)
    if isinstance(layout, LayoutBase):
        return layout.size()  # type: ignore[attr-defined]
    return product(layout)


def _abs_stride(d: Any) -> Any:
    t = type(d)
    if t is int:
        return -d if d < 0 else d
    if t is ScaledBasis:
        return abs(d)
    try:
        return abs(d)
    except TypeError:
        raise TypeError("cosize: a stride must be a static int, got a run-time value") from None


def _leaf_plus_one(t: Any) -> Any:
    if isinstance(t, tuple):
        return tuple([_leaf_plus_one(e) for e in t])
    return t + 1


def _coshape(layout: Layout) -> Any:
    fs, fd = layout._flat()
    r: Any = 0
    for s, d in zip(fs, fd):  # noqa: B905
        r = r + (s - 1) * _abs_stride(d)
    if type(r) is ScaledBasis:
        r = r.to_tuple()
    if isinstance(r, tuple):
        return _leaf_plus_one(r)
    return r + 1


def coshape(layout: Any) -> Any:
    """Shape of the codomain: an int for integer strides, a tuple for ScaledBasis strides."""
    if type(layout) is not Layout:
        raise TypeError(f"coshape: expected a Layout, got {type(layout).__name__}")
    return _coshape(layout)


def cosize(layout: Any, mode: Any = None) -> Any:
    """Size of a layout's codomain, optionally of sub-mode `mode` (correct for negative strides)."""
    layout = _select_mode(layout, mode)
    if type(layout) is Layout:
        return product(_coshape(layout))
    if isinstance(layout, LayoutBase):
        return layout.cosize()  # type: ignore[attr-defined]
    raise TypeError(f"cosize: expected a layout, got {type(layout).__name__} {layout!r}")


# --------------------------------------------------------------------------------------------------
# Mode manipulation
# --------------------------------------------------------------------------------------------------


def _mode_tuple(x: Any) -> tuple:
    return x if type(x) is tuple else (x,)


def get(x: Any, *idx: int) -> Any:
    """The sub-mode of a layout (or IntTuple) at the nested index path `idx`."""
    for i in idx:
        if type(x) is Layout:
            x = x[i]
        elif type(x) is tuple:
            x = x[i]
        elif i in (0, -1) and not isinstance(x, LayoutBase):
            continue
        elif isinstance(x, LayoutBase):
            x = x[i]  # type: ignore[index]
        else:
            raise IndexError(f"get: {x!r} has rank 1; mode {i} does not exist")
    return x


def select(x: Any, *idx: int) -> Any:
    """The layout (or tuple) made of the modes `idx` of `x`, in that order."""
    if type(x) is Layout:
        shape, stride = _mode_tuple(x.shape), _mode_tuple(x.stride)
        return _mk(tuple([shape[i] for i in idx]), tuple([stride[i] for i in idx]))
    t = _mode_tuple(x)
    return tuple([t[i] for i in idx])


def take(x: Any, begin: int, end: int) -> Any:
    """The layout (or tuple) of modes [begin, end) of `x`."""
    if type(x) is Layout:
        return _mk(_mode_tuple(x.shape)[begin:end], _mode_tuple(x.stride)[begin:end])
    return _mode_tuple(x)[begin:end]


def group_modes(x: Any, begin: int, end: int) -> Any:
    """Group modes [begin, end) of a layout (or tuple) into a single mode."""

    def grp(t: Any) -> tuple:
        t = _mode_tuple(t)
        n = len(t)
        b = begin + n if begin < 0 else begin
        e = end + n if end < 0 else end
        if not 0 <= b <= e <= n:
            raise ValueError(f"group_modes: [{begin},{end}) is not a range of modes of {x}")
        return t[:b] + (t[b:e],) + t[e:]

    if type(x) is Layout:
        return _mk(grp(x.shape), grp(x.stride))
    return grp(x)


def _pad(x: Any, elem: Any, up_to_rank: Any, front: bool, func: str) -> Any:
    if type(x) is Layout:
        if elem is None:
            elem = _mk(1, 0)
        if type(elem) is not Layout:
            raise TypeError(f"{func}: the element added to a layout must be a Layout, got {elem!r}")
        sh = _pad(x.shape, elem.shape, up_to_rank, front, func)
        st = _pad(x.stride, elem.stride, up_to_rank, front, func)
        return _mk(sh, st)
    if up_to_rank is None:
        t = _mode_tuple(x)
        return (elem,) + t if front else t + (elem,)
    t = x if type(x) is tuple else (x,)
    if up_to_rank < len(t):
        raise ValueError(f"{func}: {x} already has rank {len(t)} > {up_to_rank}")
    if up_to_rank == 1 and type(x) is not tuple:
        return x
    fill = (elem,) * (up_to_rank - len(t))
    return fill + t if front else t + fill


def append(x: Any, elem: Any = None, up_to_rank: int | None = None) -> Any:
    """Append `elem` (default 1:0 for layouts) as a new last mode, or pad with it up to `up_to_rank`."""
    if elem is None and type(x) is not Layout:
        raise TypeError("append: an element to append to a tuple is required")
    return _pad(x, elem, up_to_rank, False, "append")


def prepend(x: Any, elem: Any = None, up_to_rank: int | None = None) -> Any:
    """Prepend `elem` (default 1:0 for layouts) as a new first mode, or pad with it up to `up_to_rank`."""
    if elem is None and type(x) is not Layout:
        raise TypeError("prepend: an element to prepend to a tuple is required")
    return _pad(x, elem, up_to_rank, True, "prepend")


def slice_and_offset(crd: Any, layout: Any) -> tuple[Any, Any]:
    """(the sub-layout kept by the None entries of `crd`, the offset of the fixed entries)."""
    if type(layout) is not Layout:
        if isinstance(layout, LayoutBase) and hasattr(layout, "slice_and_offset"):
            return layout.slice_and_offset(crd)  # type: ignore[attr-defined]
        raise TypeError(f"slice_and_offset: expected a layout, got {type(layout).__name__}")
    if crd is None:
        return layout, 0
    if type(crd) is not tuple:
        return _mk((), ()), crd2idx(crd, layout.shape, layout.stride)
    sliced = _mk(slice_(crd, layout.shape), slice_(crd, layout.stride))
    off = _crd2idx(crd, layout.shape, layout.stride)
    return sliced, off

"""The layout algebra on run-time values (the "PyCuTeBuilder"): cute_layout's own functions fed `Int`s.

cute_layout writes its algebra against an integer protocol, so `crd2idx`, `idx2crd`, `Layout.__call__`,
`composition`, `logical_divide`/`zipped_divide`, `slice_and_offset`, ... run unchanged on `cute_ir.values.Int`
leaves: static parts fold at build time and only dynamic parts emit `arith` at the current insertion point.
Where cute_layout must decide on a value (coalescing, divisibility, ordering) a run-time leaf raises
TypeError.

This module adds what needs a run-time answer rather than a Python bool, and converters between nested tuples
of SSA values and of Ints:

    shape = dynamic((m_value, n_value))          # ir.Values -> Ints (i1 -> Bool)
    L = make_dynamic_layout(shape, (s_value, 1)) # a cute_layout Layout with Int leaves
    off = L((i, j))                              # cute_layout's call: arith on the Ints
    ok = elem_less((i, j), shape)                # a Bool (i1), or a Python bool when everything is static
    vals = values_of((off, 3), i64)              # back to ir.Values (constants materialized)
"""

from __future__ import annotations

from cute_layout import Layout
from mlir import ir

from .values import Bool, Int, as_value, wrap

__all__ = ["dynamic", "elem_less", "make_dynamic_layout", "values_of"]


def _plain(c: object) -> object:
    """A coordinate (ArithTuple/ScaledBasis/tuple) as a plain nested tuple of IntLike."""
    to_tuple = getattr(c, "to_tuple", None)
    if to_tuple is not None:
        c = to_tuple()
    if isinstance(c, tuple):
        return tuple(_plain(e) for e in c)
    return c


def dynamic(t: object) -> object:
    """Nested tuple with every ir.Value leaf wrapped as an Int (or Bool for i1); other leaves unchanged."""
    if isinstance(t, tuple):
        return tuple(dynamic(e) for e in t)
    if isinstance(t, ir.Value):
        return wrap(t)
    return t


def values_of(t: object, ty: ir.Type | None = None) -> object:
    """Nested tuple with every leaf as an ir.Value (Python ints materialized, cast to `ty` when given)."""
    if isinstance(t, tuple):
        return tuple(values_of(e, ty) for e in t)
    return as_value(t, ty)


def make_dynamic_layout(shape: object, stride: object = None) -> Layout:
    """A cute_layout Layout whose ir.Value leaves (shape or stride) become Ints."""
    return Layout(dynamic(shape), None if stride is None else dynamic(stride))


def elem_less(a: object, b: object) -> Bool | bool:
    """Whether every leaf of coordinate `a` is less than the matching leaf of `b` (a Bool if run-time).

    Missing trailing modes of `a` pass, as in CuTe; ArithTuple/ScaledBasis coordinates are accepted.
    """
    a, b = _plain(a), _plain(b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) > len(b):
            return False
        r: Bool | bool = True
        for x, y in zip(a, b, strict=False):
            r = r & elem_less(x, y)
            if r is False:
                return False
        return r
    if isinstance(a, tuple) or isinstance(b, tuple):
        raise ValueError(f"elem_less: {a} and {b} are not congruent")
    if isinstance(a, Int) or isinstance(b, Int):
        return a < b if isinstance(a, Int) else b > a
    return a < b

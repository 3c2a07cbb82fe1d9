"""IntTuple algebra: integers, hierarchical tuples of integers, and coordinates.

An IntTuple is a leaf or a (possibly nested) Python ``tuple`` of IntTuples. A leaf is

* a Python ``int`` (``bool`` is rejected): a *static* value, or
* any object whose class has a truthy attribute ``__cute_int__``: a *run-time* value (cute-ir's SSA
  integers). Such an object implements ``+ - * // %``, unary ``-``, and comparisons with ints, and
  returns plain ints when both operands are static.

Functions that only do arithmetic (``crd2idx``, ``idx2crd``, ``product``, ``prefix_product``,
``ceil_div``, ...) accept run-time leaves and return expressions over them. Functions that must know a
value to decide (divisibility, ordering, equality with a size) require a static ``int`` there and
raise ``TypeError`` naming the operand otherwise (see ``static_int``).

Negative coordinates follow CuTe C++'s truncating division: ``crd2idx(-c, s, d) == -crd2idx(c, s, d)``.

Strides may also be ``ScaledBasis`` values (``E(0)``, ``E(1)``, ...) whose sums are ``ArithTuple``
coordinates; ``make_basis_like(shape)`` builds the strides of an identity layout.
"""

from __future__ import annotations

import builtins
from abc import ABC
from typing import Any

__all__ = [
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
]

IntTuple = int | tuple  # a leaf or a nested tuple of leaves (a type alias for annotations)


# --------------------------------------------------------------------------------------------------
# The integer protocol
# --------------------------------------------------------------------------------------------------


class Integer(ABC):  # noqa: B024 (an ABC used only for isinstance checks, as pycute's typing.Integer)
    """ABC matching pycute's ``Integer``: Python ints (not bools) and run-time integers."""

    @classmethod
    def __subclasshook__(cls, c: type) -> bool:
        if c is bool:
            return False
        return issubclass(c, int) or bool(getattr(c, "__cute_int__", False))


def is_int(x: Any) -> bool:
    """Whether `x` is an integer leaf: a Python int (not bool) or a run-time integer."""
    t = type(x)
    return t is int or (t is not bool and (isinstance(x, int) or bool(getattr(t, "__cute_int__", False))))


def is_static(x: Any) -> bool:
    """Whether `x` is a static leaf or tuple: only plain Python ints at its leaves."""
    t = type(x)
    if t is int:
        return True
    if t is tuple:
        return all(is_static(e) for e in x)
    return False


def is_tuple(x: Any) -> bool:
    """Whether `x` is a tuple (an IntTuple node rather than a leaf)."""
    return isinstance(x, tuple)


def _is_runtime(x: Any) -> bool:
    return bool(getattr(type(x), "__cute_int__", False))


def static_int(x: Any, func: str, what: str) -> int:
    """Return `x` if it is a static int; raise TypeError naming `func` and the operand `what` otherwise."""
    if type(x) is int:
        return x
    if _is_runtime(x):
        raise TypeError(f"{func}: {what} must be a static int, got a run-time value")
    raise TypeError(f"{func}: {what} must be an int, got {type(x).__name__} {x!r}")


def signum(a: Any) -> int:
    """Sign of `a`: -1, 0 or 1."""
    return (a > 0) - (a < 0)


def shiftr(a: Any, s: int) -> Any:
    """`a` shifted right by `s` bits (left by -s when s is negative), as pycute's shiftr."""
    return a >> s if s >= 0 else a << -s


def shiftl(a: Any, s: int) -> Any:
    """`a` shifted left by `s` bits (right by -s when s is negative), as pycute's shiftl."""
    return a << s if s >= 0 else a >> -s


def _tdiv(a: int, b: int) -> int:
    """C-style division of static ints (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _tmod(a: int, b: int) -> int:
    """C-style remainder of static ints (takes the dividend's sign)."""
    return a - b * _tdiv(a, b)


# --------------------------------------------------------------------------------------------------
# Structure
# --------------------------------------------------------------------------------------------------


def _flatten_into(t: tuple, out: list) -> None:
    for e in t:
        if type(e) is tuple:
            _flatten_into(e, out)
        else:
            out.append(e)


def _flatten(t: Any) -> tuple:
    """Leaves of `t` as a flat tuple (a leaf gives a 1-tuple)."""
    if type(t) is not tuple:
        return (t,)
    for e in t:
        if type(e) is tuple:
            out: list = []
            _flatten_into(t, out)
            return tuple(out)
    return t


def _plain(t: Any) -> Any:
    """`t` with every tuple subclass (ArithTuple) turned into a plain tuple."""
    if isinstance(t, tuple):
        return tuple([_plain(e) for e in t])
    return t


def flatten(t: Any) -> Any:
    """Leaves of an IntTuple as a flat tuple; for a layout, the layout with flattened shape and stride."""
    if type(t) is tuple:
        return _flatten(t)
    if isinstance(t, tuple):  # an ArithTuple
        return _flatten(_plain(t))
    if hasattr(t, "stride") and hasattr(t, "shape"):
        flat = getattr(t, "_flattened", None)  # a Layout flattens itself (this module knows no layouts)
        if flat is None:
            raise TypeError(f"flatten: cannot flatten a {type(t).__name__}")
        return flat()
    return (t,)


def _unflatten_from(profile: Any, it: Any) -> Any:
    if type(profile) is tuple:
        return tuple([_unflatten_from(p, it) for p in profile])
    return next(it)


def unflatten(flat: Any, profile: Any) -> Any:
    """Rebuild the flat tuple `flat` with the nesting of `profile` (as many leaves as `flat`)."""
    flat = _flatten(flat)
    n = len(_flatten(profile))
    if n != len(flat):
        raise ValueError(f"unflatten: {flat} has {len(flat)} leaves but profile {profile} has {n}")
    return _unflatten_from(profile, iter(flat))


def rank(t: Any) -> int:
    """Number of top-level modes: len of a tuple, 1 for a leaf; for a layout, its shape's rank."""
    if type(t) is tuple:
        return len(t)
    shape = getattr(t, "shape", None)
    if shape is not None and not isinstance(t, int):
        return len(shape) if type(shape) is tuple else 1
    return 1


def depth(t: Any) -> int:
    """Nesting depth: 0 for a leaf, 1 for a flat tuple, and so on; for a layout, its shape's depth."""
    if type(t) is tuple:
        return 1 + max((depth(e) for e in t), default=0)
    shape = getattr(t, "shape", None)
    if shape is not None and not isinstance(t, int):
        return depth(shape)
    return 0


def product(a: Any) -> Any:
    """Product of all leaves (1 for an empty tuple)."""
    if type(a) is not tuple:
        if not isinstance(a, tuple):
            return a
        a = tuple(a)
    r = 1
    for e in a:
        r = r * (product(e) if type(e) is tuple else e)
    return r


def product_each(a: Any) -> tuple:
    """Tuple of the products of each top-level mode (a leaf counts as one mode)."""
    if type(a) is not tuple:
        return (a,)
    return tuple([product(e) if type(e) is tuple else e for e in a])


def product_like(a: Any, guide: Any) -> Any:
    """Products of the sub-tuples of `a` found at the leaves of `guide` (weakly congruent to `a`)."""
    if type(guide) is tuple:
        if type(a) is not tuple or len(a) != len(guide):
            raise ValueError(f"product_like: {a} is not weakly congruent with guide {guide}")
        return tuple([product_like(x, g) for x, g in zip(a, guide)])  # noqa: B905
    return product(a)


def inner_product(a: Any, b: Any) -> Any:
    """Sum of the products of corresponding leaves of congruent `a` and `b`."""
    if type(a) is tuple:
        if type(b) is not tuple or len(a) != len(b):
            raise ValueError(f"inner_product: {a} and {b} are not congruent")
        r = 0
        for x, y in zip(a, b):  # noqa: B905
            r = r + inner_product(x, y)
        return r
    if type(b) is tuple:
        raise ValueError(f"inner_product: {a} and {b} are not congruent")
    return a * b


def prefix_product(a: Any, init: Any = 1) -> Any:
    """Exclusive prefix product of `a`, congruent to `a`, starting at `init`."""
    if type(a) is tuple:
        if type(init) is tuple:
            if len(a) != len(init):
                raise ValueError(f"prefix_product: {a} and init {init} have different ranks")
            return tuple([prefix_product(x, i) for x, i in zip(a, init)])  # noqa: B905
        r = []
        for v in a:
            r.append(prefix_product(v, init))
            init = init * product(v)
        return tuple(r)
    if type(init) is tuple:
        raise ValueError(f"prefix_product: an int {a} cannot take a tuple init {init}")
    return init


def _shape_div_int(a: Any, b: Any) -> int:
    a = static_int(a, "shape_div", "the dividend")
    b = static_int(b, "shape_div", "the divisor")
    if a == 0 or b == 0:
        raise ValueError(f"shape_div: cannot divide {a} by {b}")
    if a % b == 0:
        return a // b
    if b % a == 0:
        return signum(a) * signum(b)
    raise ValueError(f"shape_div: {a} and {b} do not divide each other (divisibility condition)")


def shape_div(a: Any, b: Any) -> Any:
    """Division for shapes: `a / b` where one divides the other; folds an int `b` across a tuple `a`."""
    if type(a) is tuple:
        if type(b) is tuple:
            if len(a) != len(b):
                raise ValueError(f"shape_div: {a} and {b} have different ranks")
            return tuple([shape_div(x, y) for x, y in zip(a, b)])  # noqa: B905
        r = []
        for v in a:
            r.append(shape_div(v, b))
            b = shape_div(b, product(v))
        return tuple(r)
    if type(b) is tuple:
        return shape_div(a, product(b))
    return _shape_div_int(a, b)


def ceil_div(a: Any, b: Any) -> Any:
    """Ceiling division: elementwise for tuples (missing modes of `b` count as 1), folded for tuple/int."""
    if type(a) is tuple:
        if type(b) is tuple:
            if len(a) < len(b):
                raise ValueError(f"ceil_div: {b} has more modes than {a}")
            return tuple([ceil_div(x, b[i] if i < len(b) else 1) for i, x in enumerate(a)])
        r = []
        for v in a:
            r.append(ceil_div(v, b))
            b = ceil_div(b, product(v))
        return tuple(r)
    if type(b) is tuple:
        b = product(b)
    if type(a) is int and type(b) is int:
        if b == 0:
            raise ValueError(f"ceil_div: division of {a} by zero")
        return -(-a // b)
    return (a + b - 1) // b


def round_up(a: Any, b: Any) -> Any:
    """Round `a` up to a multiple of `b` (elementwise for tuples)."""
    if type(a) is tuple and type(b) is tuple:
        if len(a) < len(b):
            raise ValueError(f"round_up: {b} has more modes than {a}")
        return tuple([round_up(x, b[i] if i < len(b) else 1) for i, x in enumerate(a)])
    return ceil_div(a, b) * b


def elem_scale(a: Any, b: Any) -> Any:
    """Scale each leaf of `a` by the product of the corresponding mode of `b`."""
    if type(a) is tuple:
        if type(b) is not tuple or len(a) != len(b):
            raise ValueError(f"elem_scale: {a} and {b} are not congruent")
        return tuple([elem_scale(x, y) for x, y in zip(a, b)])  # noqa: B905
    return a * product(b)


def tuple_max(a: Any) -> int:
    """Largest leaf of `a` (static)."""
    if type(a) is tuple:
        return builtins.max(tuple_max(x) for x in a)
    return static_int(a, "tuple_max", "a leaf")


def tuple_min(a: Any) -> int:
    """Smallest leaf of `a` (static)."""
    if type(a) is tuple:
        return builtins.min(tuple_min(x) for x in a)
    return static_int(a, "tuple_min", "a leaf")


# --------------------------------------------------------------------------------------------------
# Profiles
# --------------------------------------------------------------------------------------------------


def congruent(a: Any, b: Any) -> bool:
    """Whether `a` and `b` have the same profile (nesting structure)."""
    if type(a) is tuple:
        return type(b) is tuple and len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))  # noqa: B905
    return type(b) is not tuple


def weakly_congruent(a: Any, b: Any) -> bool:
    """Whether the profile of `a` is a coarsening of the profile of `b` (a leaf of `a` matches anything)."""
    if type(a) is tuple:
        return type(b) is tuple and len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))  # noqa: B905
    return True


def compatible(a: Any, b: Any) -> bool:
    """Whether every coordinate of shape `a` is a coordinate of shape `b` (sizes equal at `a`'s leaves)."""
    if type(a) is tuple:
        return type(b) is tuple and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))  # noqa: B905
    return static_int(a, "compatible", "a leaf of a") == static_int(product(b), "compatible", "a size of b")


def repeat_like(t: Any, x: Any) -> Any:
    """A tuple congruent to `t` with `x` at every leaf."""
    if type(t) is tuple:
        return tuple([repeat_like(e, x) for e in t])
    return x


def has_none(a: Any) -> bool:
    """Whether None appears at any leaf of `a`."""
    if type(a) is tuple:
        for v in a:
            if v is None or (type(v) is tuple and has_none(v)):
                return True
        return False
    return a is None


def slice_(crd: Any, trg: Any) -> Any:
    """Keep the modes of `trg` paired with None in `crd`, flattened one level per tuple (pycute/CuTe)."""
    if type(crd) is tuple:
        if type(trg) is not tuple or len(crd) != len(trg):
            raise ValueError(f"slice_: coordinate {crd} does not match the profile of {trg}")
        out: list = []
        for c, s in zip(crd, trg):  # noqa: B905
            if c is None:
                out.append(s)
            elif type(c) is tuple:
                out.extend(slice_(c, s))
        return tuple(out)
    if crd is None:
        return (trg,)
    return ()


def _dice(crd: Any, trg: Any) -> tuple:
    if type(crd) is tuple:
        if type(trg) is not tuple or len(crd) != len(trg):
            raise ValueError(f"dice: coordinate {crd} does not match the profile of {trg}")
        out: list = []
        for c, s in zip(crd, trg):  # noqa: B905
            out.extend(_dice(c, s))
        return tuple(out)
    if crd is None:
        return ()
    return (trg,)


def dice(crd: Any, trg: Any) -> Any:
    """Keep the modes of `trg` paired with a non-None entry of `crd` (the opposite of slice_)."""
    diced = getattr(trg, "_diced", None)  # a Layout dices itself (this module knows no layouts)
    if diced is not None:
        return diced(crd)
    if type(crd) is tuple:
        return _dice(crd, trg)
    return () if crd is None else trg


# --------------------------------------------------------------------------------------------------
# Coordinates and indices
# --------------------------------------------------------------------------------------------------


def _int_into(c: Any, shape: tuple, stride: Any) -> Any:
    """Index of the 1-D coordinate `c` in a tuple shape: colexicographic, the last leaf unwrapped."""
    fs = _flatten(shape)
    fd = _flatten(stride)
    if len(fs) != len(fd):
        raise ValueError(f"crd2idx: shape {shape} and stride {stride} are not congruent")
    if not fs:
        return 0
    if type(c) is int and c < 0:
        return -_int_into(-c, shape, stride)
    r = 0
    n = len(fs) - 1
    for i in range(n):
        s = fs[i]
        r = r + (c % s) * fd[i]
        c = c // s
    return r + c * fd[n]


def _crd2idx(crd: Any, shape: Any, stride: Any) -> Any:
    if type(crd) is tuple:
        if type(shape) is not tuple or len(crd) != len(shape) or type(stride) is not tuple:
            raise ValueError(f"crd2idx: coordinate {crd} does not match shape {shape}")
        if len(stride) != len(shape):
            raise ValueError(f"crd2idx: shape {shape} and stride {stride} are not congruent")
        r = 0
        for c, s, d in zip(crd, shape, stride):  # noqa: B905
            if c is None:
                continue
            r = r + _crd2idx(c, s, d)
        return r
    if crd is None:
        return 0
    if type(shape) is tuple:
        return _int_into(crd, shape, stride)
    if type(stride) is tuple:
        raise ValueError(f"crd2idx: shape {shape} and stride {stride} are not congruent")
    return crd * stride


def crd2idx(crd: Any, shape: Any, stride: Any = None) -> Any:
    """Map a (hierarchical or 1-D) coordinate to an index through `shape` and `stride`.

    Without `stride`, the index is the colexicographic position (an int `crd` is returned as is).
    An int coordinate into a tuple mode is split colexicographically; its last leaf does not wrap.
    None entries count as 0.
    """
    if stride is None:
        if type(crd) is not tuple:
            return 0 if crd is None else crd
        stride = prefix_product(shape)
    return _crd2idx(crd, shape, stride)


def _neg_tree(t: Any) -> Any:
    if type(t) is tuple:
        return tuple([_neg_tree(e) for e in t])
    return -t


def _idx2crd_leaf(idx: Any, s: Any, d: Any) -> Any:
    if type(s) is int and s == 1:
        return 0
    if type(d) is int:
        if d == 0:
            raise ValueError(f"idx2crd: a mode of size {s} has stride 0, so the index does not determine it")
        if type(idx) is int and (idx < 0 or d < 0):
            return _tmod(_tdiv(idx, d), s)
    return (idx // d) % s


def _idx2crd_strided(idx: Any, shape: Any, stride: Any) -> Any:
    if type(shape) is tuple:
        if type(stride) is not tuple or len(stride) != len(shape):
            raise ValueError(f"idx2crd: shape {shape} and stride {stride} are not congruent")
        return tuple([_idx2crd_strided(idx, s, d) for s, d in zip(shape, stride)])  # noqa: B905
    if type(stride) is tuple:
        raise ValueError(f"idx2crd: shape {shape} and stride {stride} are not congruent")
    return _idx2crd_leaf(idx, shape, stride)


def idx2crd(idx: Any, shape: Any, stride: Any = None) -> Any:
    """Split an index into a coordinate of `shape`.

    With `shape` only: colexicographic, the last mode does not wrap. With `stride` too: every mode
    wraps, ``crd_i = (idx // stride_i) % shape_i``. A tuple `idx` is split mode by mode.
    """
    if type(idx) is tuple:
        if type(shape) is not tuple or len(idx) != len(shape):
            raise ValueError(f"idx2crd: index {idx} does not match shape {shape}")
        if stride is None:
            return tuple([idx2crd(i, s) for i, s in zip(idx, shape)])  # noqa: B905
        if type(stride) is not tuple or len(stride) != len(shape):
            raise ValueError(f"idx2crd: shape {shape} and stride {stride} are not congruent")
        return tuple([idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride)])  # noqa: B905
    if stride is None:
        if type(shape) is not tuple:
            return idx
        if type(idx) is int and idx < 0:
            return _neg_tree(idx2crd(-idx, shape))
        fs = _flatten(shape)
        out = []
        for s in fs[:-1]:
            out.append(idx % s)
            idx = idx // s
        if fs:
            out.append(idx)
        return _unflatten_from(shape, iter(out))
    if type(shape) is tuple and type(stride) is not tuple:
        stride = compact_col_major(shape, stride)
    return _idx2crd_strided(idx, shape, stride)


def crd2crd(crd: Any, dst_shape: Any, src_shape: Any = None) -> Any:
    """Transform coordinate `crd` of `src_shape` into the equivalent coordinate of `dst_shape`."""
    if type(crd) is tuple and type(dst_shape) is tuple and (src_shape is None or type(src_shape) is tuple):
        if len(crd) != len(dst_shape) or (src_shape is not None and len(src_shape) != len(crd)):
            raise ValueError(f"crd2crd: coordinate {crd} does not match shapes {src_shape} -> {dst_shape}")
        if src_shape is None:
            return tuple([crd2crd(c, d) for c, d in zip(crd, dst_shape)])  # noqa: B905
        return tuple([crd2crd(c, d, s) for c, d, s in zip(crd, dst_shape, src_shape)])  # noqa: B905
    if type(crd) is tuple:
        if src_shape is None:
            raise ValueError(f"crd2crd: coordinate {crd} into {dst_shape} needs src_shape")
        crd = crd2idx(crd, src_shape)
    return idx2crd(crd, dst_shape)


# --------------------------------------------------------------------------------------------------
# Comparisons (static)
# --------------------------------------------------------------------------------------------------


def _leaf_less(a: Any, b: Any, func: str) -> bool:
    return static_int(a, func, "a leaf of a") < static_int(b, func, "a leaf of b")


def elem_less(a: Any, b: Any) -> bool:
    """Whether every leaf of `a` is less than the matching leaf of `b` (missing modes of `a` pass)."""
    if type(a) is tuple and type(b) is tuple:
        if len(a) > len(b):
            return False
        return all(elem_less(x, y) for x, y in zip(a, b))  # noqa: B905
    if type(a) is tuple or type(b) is tuple:
        raise ValueError(f"elem_less: {a} and {b} are not congruent")
    return _leaf_less(a, b, "elem_less")


def elem_leq(a: Any, b: Any) -> bool:
    """Negation of elem_less(b, a)."""
    return not elem_less(b, a)


def elem_gtr(a: Any, b: Any) -> bool:
    """elem_less(b, a)."""
    return elem_less(b, a)


def elem_geq(a: Any, b: Any) -> bool:
    """Negation of elem_less(a, b)."""
    return not elem_less(a, b)


def _equal(a: Any, b: Any, func: str) -> bool:
    if type(a) is tuple or type(b) is tuple:
        return (
            type(a) is tuple
            and type(b) is tuple
            and len(a) == len(b)
            and all(
                _equal(x, y, func)
                for x, y in zip(a, b)  # noqa: B905
            )
        )
    return static_int(a, func, "a leaf of a") == static_int(b, func, "a leaf of b")


def lex_less(a: Any, b: Any) -> bool:
    """Lexicographic comparison (first mode most significant); a prefix is less than a longer tuple."""
    if type(a) is tuple and type(b) is tuple:
        for x, y in zip(a, b):  # noqa: B905
            if lex_less(x, y):
                return True
            if not _equal(x, y, "lex_less"):
                return False
        return len(a) < len(b)
    return _leaf_less(a, b, "lex_less")


def lex_leq(a: Any, b: Any) -> bool:
    """Negation of lex_less(b, a)."""
    return not lex_less(b, a)


def lex_gtr(a: Any, b: Any) -> bool:
    """lex_less(b, a)."""
    return lex_less(b, a)


def lex_geq(a: Any, b: Any) -> bool:
    """Negation of lex_less(a, b)."""
    return not lex_less(a, b)


def colex_less(a: Any, b: Any) -> bool:
    """Colexicographic comparison (last mode most significant), as CuTe's colex_less."""
    if type(a) is tuple and type(b) is tuple:
        for x, y in zip(reversed(a), reversed(b)):  # noqa: B905
            if colex_less(x, y):
                return True
            if not _equal(x, y, "colex_less"):
                return False
        return len(a) < len(b)
    return _leaf_less(a, b, "colex_less")


def colex_leq(a: Any, b: Any) -> bool:
    """Negation of colex_less(b, a)."""
    return not colex_less(b, a)


def colex_gtr(a: Any, b: Any) -> bool:
    """colex_less(b, a)."""
    return colex_less(b, a)


def colex_geq(a: Any, b: Any) -> bool:
    """Negation of colex_less(a, b)."""
    return not colex_less(a, b)


# --------------------------------------------------------------------------------------------------
# Compact strides
# --------------------------------------------------------------------------------------------------


def _compact(shape: Any, current: Any, rev: bool) -> tuple:
    if type(shape) is tuple:
        out = [None] * len(shape)
        order = range(len(shape) - 1, -1, -1) if rev else range(len(shape))
        for i in order:
            out[i], current = _compact(shape[i], current, rev)
        return tuple(out), current
    if type(shape) is int and shape == 1:
        return 0, current
    return current, current * shape


def compact_col_major(shape: Any, current: Any = 1) -> Any:
    """Column-major compact strides for `shape` (stride 0 for static size-1 modes, as CuTe)."""
    if type(current) is tuple:
        if type(shape) is not tuple or len(shape) != len(current):
            raise ValueError(f"compact_col_major: {shape} and {current} have different ranks")
        return tuple([compact_col_major(s, c) for s, c in zip(shape, current)])  # noqa: B905
    return _compact(shape, current, False)[0]


def compact_row_major(shape: Any, current: Any = 1) -> Any:
    """Row-major compact strides for `shape` (stride 0 for static size-1 modes, as CuTe)."""
    if type(current) is tuple:
        if type(shape) is not tuple or len(shape) != len(current):
            raise ValueError(f"compact_row_major: {shape} and {current} have different ranks")
        return tuple([compact_row_major(s, c) for s, c in zip(shape, current)])  # noqa: B905
    return _compact(shape, current, True)[0]


def compact_order(shape: Any, order: Any) -> Any:
    """Compact strides for `shape` whose modes are ordered by the (weakly congruent) `order`."""
    if not weakly_congruent(order, shape):
        raise ValueError(f"compact_order: order {order} is not weakly congruent with shape {shape}")
    ref_shape = _flatten(product_like(shape, order))
    ref_order = tuple([static_int(o, "compact_order", "an order entry") for o in _flatten(order)])

    def build(s: Any, o: Any) -> Any:
        if type(o) is tuple:
            return tuple([build(x, y) for x, y in zip(s, o)])  # noqa: B905
        start = 1
        for rs, ro in zip(ref_shape, ref_order):  # noqa: B905
            if ro < o:
                start = start * rs
        return compact_col_major(s, start)

    return build(shape, order)


# --------------------------------------------------------------------------------------------------
# Scaled basis strides (identity layouts)
# --------------------------------------------------------------------------------------------------


class ScaledBasis:
    """`value` times the unit vector along the (nested) mode path `mode`: CuTe's ``E<i...>`` strides."""

    __slots__ = ("value", "mode")

    def __init__(self, value: Any, mode: Any) -> None:
        self.value = value
        self.mode = (mode,) if type(mode) is int else tuple(mode)

    @property
    def _cute_static(self) -> bool:
        return type(self.value) is int

    def to_tuple(self) -> ArithTuple:
        """The coordinate this basis value stands for, as an ArithTuple."""
        t: Any = self.value
        for m in reversed(self.mode):
            t = ArithTuple((0,) * m + (t,))
        return t

    def __mul__(self, k: Any) -> ScaledBasis:
        if type(k) is tuple or isinstance(k, ScaledBasis):
            return NotImplemented
        return ScaledBasis(self.value * k, self.mode)

    __rmul__ = __mul__

    def __neg__(self) -> ScaledBasis:
        return ScaledBasis(-self.value, self.mode)

    def __abs__(self) -> ScaledBasis:
        return ScaledBasis(abs(self.value), self.mode)

    def __add__(self, other: Any) -> Any:
        if type(other) is int and other == 0:
            return self
        if isinstance(other, ScaledBasis):
            other = other.to_tuple()
        if isinstance(other, tuple):
            return _at_add(self.to_tuple(), other)
        return NotImplemented

    __radd__ = __add__

    def __eq__(self, other: Any) -> bool:
        return type(other) is ScaledBasis and self.mode == other.mode and self.value == other.value

    def __hash__(self) -> int:
        return hash((ScaledBasis, self.value, self.mode))

    def __str__(self) -> str:
        return str(self.value) + "".join(f"@{m}" for m in reversed(self.mode))

    __repr__ = __str__


class ArithTuple(tuple):
    """A coordinate tuple with elementwise addition (sums of ScaledBasis values)."""

    __slots__ = ()

    def __add__(self, other: Any) -> Any:  # type: ignore[override]
        if type(other) is int and other == 0:
            return self
        if isinstance(other, ScaledBasis):
            other = other.to_tuple()
        if isinstance(other, tuple):
            return _at_add(self, other)
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, k: Any) -> ArithTuple:  # type: ignore[override]
        return ArithTuple(e * k for e in self)

    __rmul__ = __mul__

    def __neg__(self) -> ArithTuple:
        return ArithTuple(-e for e in self)

    def __str__(self) -> str:
        return "(" + ",".join(str(e) for e in self) + ")"

    __repr__ = __str__


def _at_add(a: Any, b: Any) -> Any:
    ta, tb = isinstance(a, tuple), isinstance(b, tuple)
    if not ta and not tb:
        return a + b
    if not ta:
        if type(a) is int and a == 0:
            return b
        raise ValueError(f"cannot add {a} and {b}: not congruent")
    if not tb:
        if type(b) is int and b == 0:
            return a
        raise ValueError(f"cannot add {a} and {b}: not congruent")
    n = builtins.max(len(a), len(b))
    return ArithTuple(_at_add(a[i] if i < len(a) else 0, b[i] if i < len(b) else 0) for i in range(n))


def E(*mode: int) -> ScaledBasis:
    """The unit basis stride along the mode path `mode`, e.g. E(0), E(1), E(0, 1)."""
    return ScaledBasis(1, mode)


def make_basis_like(shape: Any) -> Any:
    """Strides of the identity layout of `shape`: 1 for an int, E(i...) at every leaf of a tuple."""
    if type(shape) is not tuple:
        return 1

    def build(s: Any, path: tuple) -> Any:
        if type(s) is tuple:
            return tuple([build(e, path + (i,)) for i, e in enumerate(s)])
        return ScaledBasis(1, path)

    return tuple([build(e, (i,)) for i, e in enumerate(shape)])

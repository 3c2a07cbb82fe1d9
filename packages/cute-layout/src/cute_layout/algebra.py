"""The layout algebra with CuTe C++ semantics, made exact.

coalesce, filter, composition, complement, right_inverse, left_inverse, max_common_layout/vector,
nullspace, with_shape, upcast, downcast, recast_layout.

Exactness: where CuTe C++ would return a truncated or wrong layout (or fail a static assertion),
these functions raise ``ValueError`` naming the operands and the condition that failed:

* composition checks the stride divisibility and shape divisibility conditions of CuTe's
  ``composition_impl`` and, beyond CuTe, rejects (a) a stride that neither divides nor is divided by
  a mode of the lhs when the rhs runs past that mode (CuTe returns a wrong layout there, e.g.
  ``(8,8):(8,1) o 6:3``) and (b) rhs modes whose images carry into each other across lhs modes, or
  mix signs across lhs modes (CuTe returns ``(4,8):(1,10) o (2,2):(3,1) = (2,2):(3,1)``, wrong at
  (1,1)). Where a check fails but CuTe's own result is nevertheless right (an lhs mode of stride 0,
  say), that result is confirmed by enumerating the rhs domain (up to 2**14 points) and returned.
  The lhs is extended past its size along its last mode (CuTe's coalesce_x). Negative rhs strides
  use CuTe's truncating division: ``A(-x) == -A(x)``.
* complement returns CuTe's complement (a floored gap where a stride is not a multiple of the span
  below it) when it is lawful, and rejects negative strides, overlapping modes (CuTe's "Non-injective
  Layout" assertion) and results that do not cover the cotarget.
* left_inverse rejects strides that fail CuTe's left-inverse divisibility condition, and layouts
  whose non-zero modes overlap (not injective: CuTe's quasi-inverse can be wrong there). Stride-0
  modes are ignored, so ``layout(R(layout(i))) == layout(i)`` still holds for broadcast layouts.

Run-time leaves (see :mod:`cute_layout.int_tuple`) pass through where only arithmetic is needed;
where a decision needs a value, a ``TypeError`` names the operand that must be static.
"""

from __future__ import annotations

from math import prod
from typing import Any

from ._memo import memoize
from .int_tuple import (
    ScaledBasis,
    _flatten,
    ceil_div,
    compact_col_major,
    is_int,
    product,
    rank,
    repeat_like,
    static_int,
)
from .layout import _ALGEBRA, Layout, LayoutBase, _concat, _mk, _modes, get, make_layout

__all__ = [
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
    "evenly_divides",
]


def _delegate(obj: Any, method: str, func: str, *args: Any) -> Any:
    """Call `obj.method(*args)` for a non-Layout LayoutBase; TypeError when that is not possible."""
    m = getattr(obj, method, None) if isinstance(obj, LayoutBase) else None
    if m is None:
        raise TypeError(f"{func}: unsupported operand {type(obj).__name__} {obj!r}")
    return m(*args)


def _known(x: Any) -> bool:
    t = type(x)
    return t is int or (t is ScaledBasis and type(x.value) is int)


def _pack(rs: list, rd: list) -> tuple[Any, Any]:
    if not rs:
        return 1, 0
    if len(rs) == 1:
        return rs[0], rd[0]
    return tuple(rs), tuple(rd)


# --------------------------------------------------------------------------------------------------
# coalesce / filter
# --------------------------------------------------------------------------------------------------


def _coalesce_flat(fs: Any, fd: Any, strict: bool, func: str) -> tuple[list, list]:
    """Merge adjacent flat modes (s0:d0, s1:s0*d0 -> s0*s1:d0) and drop size-1 modes.

    With `strict`, a decision that needs a run-time value raises TypeError; otherwise such modes are
    kept apart (CuTe C++'s behaviour for dynamic values), which preserves the function.
    """
    rs: list = []
    rd: list = []
    for s, d in zip(fs, fd):  # noqa: B905
        if type(s) is int:
            if s == 1:
                continue
        elif strict:
            raise TypeError(f"{func}: shape leaf must be a static int, got a run-time value")
        if rs:
            ps = rs[-1]
            pd = rd[-1]
            if (type(pd) is int and type(d) is int) or (_known(pd) and _known(d)):
                if type(ps) is int and type(s) is int and ps * pd == d:
                    rs[-1] = ps * s
                    continue
            elif strict:
                raise TypeError(f"{func}: stride leaf must be a static int, got a run-time value")
        rs.append(s)
        rd.append(d)
    return rs, rd


def _coalesce(layout: Layout, profile: Any, strict: bool) -> Layout:
    if type(profile) is tuple:
        modes = _modes(layout)
        if len(profile) > len(modes):
            raise ValueError(f"coalesce: profile {profile} has more modes than {layout}")
        parts = [_coalesce(modes[i], p, strict) for i, p in enumerate(profile)]
        return _concat(parts + modes[len(profile) :])
    fs, fd = layout._flat()
    s, d = _pack(*_coalesce_flat(fs, fd, strict, "coalesce"))
    return _mk(s, d)


def coalesce(layout: Any, profile: Any = None) -> Any:
    """Flatten and merge modes while preserving the layout's function and size (by mode with `profile`)."""
    if profile is not None or type(layout) is not Layout:
        return _coalesce_by_profile(layout, profile)
    r = layout._co  # kept on the (immutable) layout: a first call pays no cache key
    if r is not None:
        return r
    # the common case inline (leaves all ints): merge s0:d0, s1:s0*d0 and drop size-1 modes
    fs, fd = layout._fl or layout._flat()
    rs: list = []
    rd: list = []
    ps = pd = 0
    same = fs is layout.shape  # a flat layout (its flat shape is its shape) that may already be coalesced
    i = -1
    for s in fs:  # indexing, not zip(): cheaper for these short tuples on this hot path
        i += 1
        d = fd[i]
        if type(d) is not int or type(s) is not int:  # run-time or ScaledBasis leaves: the checked path
            r = layout._co = _mk(*_pack(*_coalesce_flat(fs, fd, True, "coalesce")))
            return r
        if s == 1:
            same = False
            continue
        if rs and ps * pd == d:
            ps *= s
            rs[-1] = ps
            same = False
            continue
        rs.append(s)
        rd.append(d)
        ps = s
        pd = d
    n = len(rs)
    if n == 1:
        r = _mk(rs[0], rd[0])
    elif same and n > 1:
        r = layout
    elif n == 0:
        r = _mk(1, 0)
    else:
        r = _mk(tuple(rs), tuple(rd))
    layout._co = r
    return r


@memoize
def _coalesce_by_profile(layout: Any, profile: Any) -> Any:
    """coalesce with a profile, or of a layout-like object (memoized)."""
    if type(layout) is not Layout:
        if profile is None:
            return _delegate(layout, "coalesce", "coalesce")
        return _delegate(layout, "coalesce", "coalesce", profile)
    return _coalesce(layout, profile, True)


def _filter_zeros(profile: Any, shape: Any) -> Any:
    if type(profile) is tuple:
        if type(shape) is not tuple or len(shape) != len(profile):
            raise ValueError(f"filter_zeros: profile {profile} does not match shape {shape}")
        return tuple([_filter_zeros(p, s) for p, s in zip(profile, shape)])  # noqa: B905
    if type(profile) is int and profile == 0:
        return repeat_like(shape, 1)
    return shape


@memoize
def filter_zeros(layout: Any, profile: Any = None) -> Layout:
    """Replace the shape of every stride-0 mode (or mode marked 0 in `profile`) by 1."""
    if type(layout) is not Layout:
        return _delegate(layout, "filter_zeros", "filter_zeros")
    return _mk(_filter_zeros(layout.stride if profile is None else profile, layout.shape), layout.stride)


def _filter(layout: Layout, profile: Any) -> Layout:
    if type(profile) is tuple:
        modes = _modes(layout)
        if len(profile) > len(modes):
            raise ValueError(f"filter: profile {profile} has more modes than {layout}")
        parts = [_filter(modes[i], p) for i, p in enumerate(profile)]
        return _concat(parts + modes[len(profile) :])
    fs, fd = layout._flat()
    ks, kd = [], []
    for s, d in zip(fs, fd):  # noqa: B905
        if type(d) is int and d == 0:
            continue
        ks.append(s)
        kd.append(d)
    s, d = _pack(*_coalesce_flat(ks, kd, True, "filter"))
    return _mk(s, d)


@memoize
def filter(layout: Any, profile: Any = None) -> Any:  # noqa: A001 (pycute's name)
    """Remove stride-0 and size-1 modes and coalesce (by mode with `profile`); 1:0 if nothing is left."""
    if type(layout) is not Layout:
        return _delegate(layout, "filter", "filter")
    return _filter(layout, profile)


# --------------------------------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------------------------------


def _cx_flat(fs: tuple, fd: tuple) -> tuple[tuple, tuple]:
    """CuTe's coalesce_x on flat modes: merge and drop size-1 modes, keeping the last (unbounded) mode."""
    n = len(fs)
    if n == 0:
        return (1,), (0,)
    if n == 1:
        return fs, fd
    rs: list = []
    rd: list = []
    last = n - 1
    for i in range(n):
        s = fs[i]
        d = fd[i]
        if type(s) is int and s == 1:
            if i != last:
                continue
            s = 2
        if rs:
            ps = rs[-1]
            pd = rd[-1]
            if type(ps) is int and type(s) is int and _known(pd) and _known(d) and ps * pd == d:
                rs[-1] = ps * s
                continue
        rs.append(s)
        rd.append(d)
    return tuple(rs), tuple(rd)


def _coalesce_x(layout: Layout) -> tuple[tuple, tuple]:
    """Flat coalesced modes of `layout` that preserve its function past its size too (CuTe's coalesce_x).

    The last mode stands for the unbounded extension of the layout; its shape is never used.
    """
    cx = layout._cx
    if cx is None:
        cx = layout._cx = _cx_flat(*layout._flat())
    return cx


def _cx_sd(shape: Any, stride: Any) -> tuple[tuple, tuple]:
    if type(shape) is not tuple:
        return (shape,), (stride,)
    return _cx_flat(_flatten(shape), _flatten(stride))


def _comp_leaf(LS: tuple, LD: tuple, s: Any, d: Any, P: Any, N: Any) -> tuple[Any, Any]:
    """Compose the flat, coalesced lhs (LS:LD, last mode unbounded) with the rank-1 layout s:d.

    Raises ValueError where CuTe's result for this mode would be wrong or where CuTe's static
    divisibility assertions fail. When P and N (lists, one slot per lhs mode) are given, the largest
    digit this mode puts in each lhs mode is added to P (positive strides) or N (negative strides),
    so that `_check_carries` can verify the modes of the rhs do not interfere.
    """
    if type(d) is int and d == 0:
        return s, 0
    n = len(LS)
    if n == 1:
        return s, d * LD[0]
    if type(s) is not int:
        static_int(s, "composition", "a shape of the rhs")
    if type(d) is not int:
        static_int(d, "composition", "a stride of the rhs")
    rs: list = []
    rd: list = []
    rest_shape = s
    rest_stride = d
    neg = d < 0
    for i in range(n - 1):
        cs = LS[i]
        if type(cs) is not int:
            static_int(cs, "composition", "a shape of the lhs")
        a = -rest_stride if neg else rest_stride
        if rest_shape == 1 or a % cs == 0:
            q = -(-a // cs)
            rest_stride = -q if neg else q
            continue
        if a > cs:
            raise ValueError(
                f"stride divisibility condition fails: rhs stride {d} meets lhs mode of size {cs} "
                f"at residual stride {a}, which neither divides nor is a multiple of it"
            )
        nxt = -(-cs // a)
        if cs % a == 0:
            if rest_shape <= nxt:
                new = rest_shape
            elif rest_shape % nxt:
                raise ValueError(
                    f"shape divisibility condition fails: rhs shape {s} would be split by {nxt} "
                    f"(lhs mode of size {cs} at stride {a}), which does not divide the remaining {rest_shape}"
                )
            else:
                new = nxt
        else:
            if rest_shape > nxt:
                raise ValueError(
                    f"stride divisibility condition fails: residual stride {a} does not divide lhs mode "
                    f"of size {cs}, and the rhs's {rest_shape} remaining elements run past it"
                )
            new = rest_shape
        rs.append(new)
        rd.append(rest_stride * LD[i])
        if P is not None:
            if neg:
                N[i] += (new - 1) * a
            else:
                P[i] += (new - 1) * a
        rest_shape //= new
        rest_stride = -1 if neg else 1
    if rest_shape != 1 and P is not None:
        if neg:
            N[n - 1] += 1
        else:
            P[n - 1] += 1
    if not rs:
        return rest_shape, rest_stride * LD[-1]
    if rest_shape == 1:
        return (rs[0], rd[0]) if len(rs) == 1 else (tuple(rs), tuple(rd))
    rs.append(rest_shape)
    rd.append(rest_stride * LD[-1])
    return tuple(rs), tuple(rd)


def _check_carries(LS: tuple, P: list, N: list) -> None:
    """Raise ValueError if digits of different rhs modes can carry or mix signs in an lhs mode."""
    last = len(LS) - 1
    touched = 0
    pos = negs = False
    for i in range(last + 1):
        p = P[i]
        q = N[i]
        if p or q:
            touched += 1
            if p:
                pos = True
            if q:
                negs = True
            if i < last and (p >= LS[i] or q >= LS[i]):
                raise ValueError(
                    f"the modes of the rhs interfere: together they reach digit {max(p, q)} in the lhs "
                    f"mode of size {LS[i]}, so their images carry into the next lhs mode"
                )
    if pos and negs and touched > 1:
        raise ValueError("the modes of the rhs interfere: positive and negative strides mix across lhs modes")


def _comp_tree(lsh: Any, lst: Any, LS: tuple, LD: tuple, s: Any, d: Any, P: Any, N: Any) -> tuple[Any, Any]:
    """Compose lhs (lsh:lst, coalesced as LS:LD) with the rhs s:d, leaf by leaf of the rhs."""
    if type(s) is not tuple:
        if type(d) is ScaledBasis:
            return _comp_basis(lsh, lst, s, d)
        return _comp_leaf(LS, LD, s, d, P, N)
    shapes = []
    strides = []
    for si, di in zip(s, d):  # noqa: B905
        if type(si) is tuple:
            a, b = _comp_tree(lsh, lst, LS, LD, si, di, P, N)
        elif type(di) is ScaledBasis:
            a, b = _comp_basis(lsh, lst, si, di)
        else:
            a, b = _comp_leaf(LS, LD, si, di, P, N)
        shapes.append(a)
        strides.append(b)
    return tuple(shapes), tuple(strides)


def _comp_basis(lsh: Any, lst: Any, s: Any, d: ScaledBasis) -> tuple[Any, Any]:
    """Compose with a ScaledBasis stride: the rhs mode reads the lhs mode at the basis's path."""
    sub = get(_mk(lsh, lst), *d.mode)
    return _comp_leaf(*_coalesce_x(sub), s, d.value, None, None)


# Largest rhs domain that a composition CuTe's checks reject is enumerated on to confirm CuTe's result.
_ENUMERATION_LIMIT = 1 << 14


def _cpp_leaf(LS: tuple, LD: tuple, s: int, d: int) -> Any:
    """CuTe C++'s composition of one rhs mode, unchecked (None where its static assertions fail)."""
    if d == 0:
        return s, 0
    if len(LS) == 1:
        return s, d * LD[0]
    rs: list = []
    rd: list = []
    rest_shape, rest_stride = s, d
    for i in range(len(LS) - 1):
        cs = LS[i]
        a = abs(rest_stride)
        if not (a % cs == 0 or a < cs):
            return None
        next_shape = -(-cs // a)
        next_stride = -(-a // cs) * (1 if rest_stride > 0 else -1)
        if next_shape == 1 or rest_shape == 1:
            rest_stride = next_stride
            continue
        new = min(next_shape, rest_shape)
        if rest_shape % new:
            return None
        rs.append(new)
        rd.append(rest_stride * LD[i])
        rest_shape //= new
        rest_stride = next_stride
    if not rs:
        return rest_shape, rest_stride * LD[-1]
    if rest_shape == 1:
        return (rs[0], rd[0]) if len(rs) == 1 else (tuple(rs), tuple(rd))
    return tuple(rs) + (rest_shape,), tuple(rd) + (rest_stride * LD[-1],)


def _cpp_tree(lsh: Any, lst: Any, LS: tuple, LD: tuple, s: Any, d: Any) -> Any:
    if type(s) is tuple:
        parts = [_cpp_tree(lsh, lst, LS, LD, x, y) for x, y in zip(s, d)]  # noqa: B905
        if any(p is None for p in parts):
            return None
        return tuple([p[0] for p in parts]), tuple([p[1] for p in parts])
    if type(d) is ScaledBasis:
        sub = get(_mk(lsh, lst), *d.mode)
        return _cpp_leaf(*_coalesce_x(sub), s, d.value)
    return _cpp_leaf(LS, LD, s, d)


def _confirm_cpp(lsh: Any, lst: Any, LS: tuple, LD: tuple, rsh: Any, rst: Any) -> Any:
    """CuTe's unchecked result if it is exact on the whole (small, static) rhs domain, else None."""
    lhs, rhs = _mk(lsh, lst), _mk(rsh, rst)
    if not (lhs._cute_static and rhs._cute_static):
        return None
    n = product(rsh)
    if n > _ENUMERATION_LIMIT:
        return None
    cand = _cpp_tree(lsh, lst, LS, LD, rsh, rst)
    if cand is None:
        return None
    res = _mk(*cand)
    for i in range(n):
        if res(i) != lhs(rhs(i)):
            return None
    return cand


def _compose_sd(lsh: Any, lst: Any, rsh: Any, rst: Any, cx: Any = None) -> tuple[Any, Any]:
    """(shape, stride) of lsh:lst composed with the layout rsh:rst (`cx`: lhs's coalesce_x, if known)."""
    LS, LD = cx if cx is not None else _cx_sd(lsh, lst)
    n = len(LS)
    if n == 1:
        return _comp_tree(lsh, lst, LS, LD, rsh, rst, None, None)
    P = [0] * n
    N = [0] * n
    try:
        r = _comp_tree(lsh, lst, LS, LD, rsh, rst, P, N)
        if type(rsh) is tuple:
            _check_carries(LS, P, N)
        return r
    except ValueError as e:
        cand = _confirm_cpp(lsh, lst, LS, LD, rsh, rst)
        if cand is not None:
            return cand
        raise ValueError(f"composition({_mk(lsh, lst)}, {_mk(rsh, rst)}): {e}") from None


def _compose(lhs: Layout, rhs: Any) -> Any:
    """composition of a Layout with a tiler (no memoization, no delegation of the lhs)."""
    tr = type(rhs)
    if tr is Layout:
        return _mk(*_compose_sd(lhs.shape, lhs.stride, rhs.shape, rhs.stride, _coalesce_x(lhs)))
    if tr is tuple:
        modes = _modes(lhs)
        if len(rhs) > len(modes):
            raise ValueError(f"composition: tiler {rhs} has more modes than {lhs}")
        return _concat([_compose(modes[i], r) for i, r in enumerate(rhs)])
    if rhs is None:
        return lhs
    if tr is int or is_int(rhs):
        return _mk(*_compose_sd(lhs.shape, lhs.stride, rhs, 1, _coalesce_x(lhs)))
    if isinstance(rhs, LayoutBase):
        composed_on = getattr(rhs, "composed_on", None)
        if composed_on is not None:
            return composed_on(lhs)
    raise TypeError(f"composition: the tiler must be a layout, int, None or tuple of tilers, got {rhs!r}")


@memoize
def composition(layoutA: Any, layoutB: Any) -> Any:
    """The layout R with R(c) == A(B(c)) for every coordinate c of B (B: a layout or a by-mode tiler).

    A tiler is a Layout, an int n (n:1), None (keep the mode), or a tuple of tilers applied by mode
    (modes of A past the tiler are dropped, as CuTe C++ does).
    """
    if layoutB is None:
        return layoutA
    if type(layoutA) is not Layout:
        return _delegate(layoutA, "compose", "composition", layoutB)
    return _compose(layoutA, layoutB)


# --------------------------------------------------------------------------------------------------
# complement
# --------------------------------------------------------------------------------------------------


def _check_cotarget(c: Any) -> None:
    if type(c) is tuple:
        for e in c:
            _check_cotarget(e)
    elif not is_int(c):
        raise TypeError(f"complement: the cotarget must be an int or a shape, got {type(c).__name__} {c!r}")
    elif type(c) is int and c < 1:
        raise ValueError(f"complement: the cotarget must be positive, got {c}")


def _complement_sd(fs: tuple, fd: tuple, cotarget: Any, who: Any) -> tuple[Any, Any]:
    """(shape, stride) of CuTe's complement of the flat layout fs:fd (named `who` in errors).

    CuTe C++ (``detail::complement``): drop stride-0 and size-1 modes, coalesce, sort by stride, and
    for each mode s:d emit the gap ``d // cur`` at stride ``cur`` (then ``cur = s * d``), then the rest
    ``ceil_div(cotarget, cur)`` at stride ``cur``; coalesce. Where a stride does not divide evenly the
    floor leaves a hole, and the result is returned only if it is still lawful: a gap of 0 (CuTe's
    "Non-injective Layout" assertion) or a result that does not cover the cotarget raises ValueError.
    With every gap >= 1 the completed layout ``(layout, result)`` sorted by stride has each stride at
    least the span of the modes below it, so it is ordered and injective (the result is ordered and
    disjoint from the layout's image); covering is the remaining condition, checked exactly.
    """
    pairs: list = []
    ps = pd = 0
    for s, d in zip(fs, fd):  # noqa: B905
        if type(s) is not int or type(d) is not int:
            static_int(s, "complement", f"a shape of {who}")
            static_int(d, "complement", f"a stride of {who}")
        if s == 1 or d == 0:
            continue
        if d < 0:
            raise ValueError(
                f"complement: {who} has the negative stride {d}; a complement needs positive strides"
            )
        if pd and ps * pd == d:  # coalesce with the previous kept mode
            ps *= s
            pairs[-1] = (pd, ps)
            continue
        ps = s
        pd = d
        pairs.append((d, s))
    if type(cotarget) is not int or cotarget < 1:
        _check_cotarget(cotarget)
    if not pairs:
        n = product(cotarget)
        return (n, 0) if type(n) is int and n == 1 else (n, 1)
    if len(pairs) > 1:
        pairs.sort()
    cur = 1
    rs: list = []
    rd: list = []
    span = 1  # 1 + the largest value of the completed layout so far (its cosize), when a gap was floored
    exact = True
    for d, s in pairs:
        q = d // cur
        if q == 0:
            raise ValueError(
                f"complement: the modes of {who} overlap (stride {d} lies inside the span {cur} "
                f"of the modes below it; CuTe asserts 'Non-injective Layout')"
            )
        if q * cur != d:
            exact = False
        span += (q - 1) * cur + (s - 1) * d
        if q != 1:
            if rs and rs[-1] * rd[-1] == cur:
                rs[-1] *= q
            else:
                rs.append(q)
                rd.append(cur)
        cur = d * s
    if type(cotarget) is int:
        rest: Any = -(-cotarget // cur)
    else:
        rest = ceil_div(cotarget, cur)
        if type(rest) is tuple:
            rest = product(rest)
    if not exact:
        need = static_int(product(cotarget), "complement", "the cotarget (a stride leaves a hole)")
        rest_i = static_int(rest, "complement", "the cotarget (a stride leaves a hole)")
        if span + (rest_i - 1) * cur < need:
            raise ValueError(
                f"complement: the complement of {who} does not cover the cotarget {cotarget}: its strides leave "
                f"holes, and {who} with CuTe's complement reaches only {span + (rest_i - 1) * cur} points"
            )
    if type(rest) is not int:
        rs.append(rest)
        rd.append(cur)
    elif rest != 1:
        if rs and rs[-1] * rd[-1] == cur:
            rs[-1] *= rest
        else:
            rs.append(rest)
            rd.append(cur)
    n = len(rs)
    if n == 1:
        return rs[0], rd[0]
    if n == 0:
        return 1, 0
    return tuple(rs), tuple(rd)


def complement(layout: Any, max_idx: Any = 1) -> Any:
    """The ordered layout of the codomain points [0, max_idx) that `layout` does not reach (CuTe).

    `max_idx` is the cotarget: an int or a shape. Stride-0 and size-1 modes of `layout` are ignored.
    """
    if type(layout) is Layout and type(max_idx) is int:  # kept on the (immutable) layout, by cotarget
        cm = layout._cm
        if cm is None:
            cm = layout._cm = {}
        r = cm.get(max_idx)
        if r is None:
            fs, fd = layout._fl or layout._flat()
            r = cm[max_idx] = _mk(*_complement_sd(fs, fd, max_idx, layout))
        return r
    return _complement_memo(layout, max_idx)


@memoize
def _complement_memo(layout: Any, max_idx: Any) -> Any:
    """complement with a shape cotarget, or of a layout-like object (memoized)."""
    if type(layout) is not Layout:
        if type(layout) is int:
            layout = Layout(layout, 1)
        else:
            return _delegate(layout, "complement", "complement", max_idx)
    fl = layout._fl
    if fl is None:
        fl = layout._flat()
    s, d = _complement_sd(fl[0], fl[1], max_idx, layout)
    return _mk(s, d)


# --------------------------------------------------------------------------------------------------
# inverses
# --------------------------------------------------------------------------------------------------


def _ints(t: Any) -> bool:
    """Whether `t` is an int or a flat tuple of ints."""
    if type(t) is int:
        return True
    for x in t:
        if type(x) is not int:
            return False
    return True


def _static_flat(layout: Layout, func: str) -> tuple[list, list]:
    fs, fd = layout._flat()
    rs, rd = _coalesce_flat(fs, fd, True, func)
    if not rs:
        rs, rd = [1], [0]
    for d in rd:
        if type(d) is not int:
            static_int(d, func, f"a stride of {layout}")
    return rs, rd


def _prefix(fs: list) -> list:
    out = []
    p = 1
    for s in fs:
        out.append(p)
        p *= s
    return out


def right_inverse(layout: Any) -> Any:
    """The largest layout R with layout(R(i)) == i for all i < size(R) (CuTe)."""
    if type(layout) is Layout:  # kept on the (immutable) layout: a first call pays no cache key
        r = layout._ri
        if r is None:
            r = layout._ri = _right_inverse(layout)
        return r
    if layout is None:
        return None
    if type(layout) is int:
        return Layout(layout, 1)
    return _delegate(layout, "right_inverse", "right_inverse")


def _right_inverse(layout: Layout) -> Layout:
    if type(layout) is not Layout:
        if type(layout) is int:
            return Layout(layout, 1)
        return _delegate(layout, "right_inverse", "right_inverse")
    try:
        c = layout._co or coalesce(layout)
    except TypeError:  # a run-time leaf: the checked path names it for right_inverse
        _static_flat(layout, "right_inverse")
        raise
    fs, fd = c.shape, c.stride
    if type(fs) is int:
        if type(fd) is int:
            return _mk(fs, 1) if fd == 1 else _mk(1, 0)
        fs, fd = (fs,), (fd,)
    if not _ints(fd):
        fs, fd = _static_flat(layout, "right_inverse")  # raises, naming the stride that must be static
    # follow the chain of strides from 1: the mode of stride `cur`, then the one of stride size * cur, ...
    rs: list = []
    rd: list = []
    cur = 1
    while cur in fd:
        i = fd.index(cur)
        s = fs[i]
        p = prod(fs[:i])  # the mode's stride in the inverse: its position in the layout's domain
        if rs and rs[-1] * rd[-1] == p:  # coalesce with the previous mode of the inverse
            rs[-1] *= s
        else:
            rs.append(s)
            rd.append(p)
        cur *= s
    if not rs:
        return _mk(1, 0)
    return _mk(rs[0], rd[0]) if len(rs) == 1 else _mk(tuple(rs), tuple(rd))


def left_inverse(layout: Any) -> Any:
    """A layout R with R(layout(i)) == i for all i < size(layout) (CuTe's left inverse).

    Stride-0 modes are ignored (then only layout(R(layout(i))) == layout(i) holds); overlapping
    modes raise ValueError.
    """
    if type(layout) is Layout:  # kept on the (immutable) layout: a first call pays no cache key
        r = layout._li
        if r is None:
            r = layout._li = _left_inverse(layout)
        return r
    if layout is None:
        return None
    if type(layout) is int:
        return Layout(layout, 1)
    return _delegate(layout, "left_inverse", "left_inverse")


def _left_inverse(layout: Layout) -> Layout:
    if type(layout) is not Layout:
        if type(layout) is int:
            return Layout(layout, 1)
        return _delegate(layout, "left_inverse", "left_inverse")
    fs, fd = _static_flat(layout, "left_inverse")
    pre = _prefix(fs)
    order = sorted(range(len(fd)), key=fd.__getitem__)
    rs: list = []
    rd: list = [0]
    sz = 1
    span = 1
    for i in order:
        d = fd[i]
        if d == 0:
            continue
        if d < 0:
            raise ValueError(f"left_inverse: {layout} has the negative stride {d}")
        if d % sz:
            raise ValueError(
                f"left_inverse: divisibility condition fails for {layout}: "
                f"stride {d} is not a multiple of {sz}"
            )
        if d < span:
            raise ValueError(
                f"left_inverse: {layout} is not injective (stride {d} lies inside the span {span} "
                f"of the modes below it); CuTe's quasi-inverse would be wrong"
            )
        rs.append(d // sz)
        rd.append(pre[i])
        sz = d
        span = d * fs[i]
    rs.append(fs[order[-1]])
    s, d = _pack(*_coalesce_flat(rs, rd, True, "left_inverse"))
    return _mk(s, d)


# --------------------------------------------------------------------------------------------------
# max common layout / vector, nullspace
# --------------------------------------------------------------------------------------------------


def _common(a: Layout, b: Layout) -> tuple[Layout, Layout | None]:
    """(right_inverse(b), the coalesced composition of a with it) or (inv_b, None) if not exact."""
    if type(a) is not Layout or type(b) is not Layout:
        raise TypeError(f"max_common_layout: expected two Layouts, got {a!r} and {b!r}")
    inv_b = right_inverse(b)
    try:
        return inv_b, coalesce(_compose(a, inv_b))
    except ValueError:
        pass
    first = _modes(inv_b)[0] if type(inv_b.shape) is tuple else inv_b
    try:
        return first, coalesce(_compose(a, first))
    except ValueError:
        return inv_b, None


@memoize
def max_common_layout(a: Any, b: Any) -> Layout:
    """The layout R of the most contiguous elements on which a and b agree: a(R(i)) == b(R(i)) == i."""
    inv_b, common = _common(a, b)
    if common is None:
        return _mk(1, 0)
    s0 = common.shape[0] if type(common.shape) is tuple else common.shape
    d0 = common.stride[0] if type(common.stride) is tuple else common.stride
    if type(s0) is int and type(d0) is int and d0 == 1:
        return _compose(inv_b, _mk(s0, d0))
    return _mk(1, 0)


@memoize
def max_common_vector(a: Any, b: Any) -> int:
    """The largest N such that a and b map the first N elements of b's domain to 0..N-1 alike."""
    _, common = _common(a, b)
    if common is None:
        return 1
    s0 = common.shape[0] if type(common.shape) is tuple else common.shape
    d0 = common.stride[0] if type(common.stride) is tuple else common.stride
    if type(s0) is int and type(d0) is int and d0 == 1:
        return s0
    return 1


@memoize
def nullspace(layout: Any) -> Layout:
    """The layout of the coordinates that `layout` maps to 0 (its stride-0 modes)."""
    if type(layout) is not Layout:
        raise TypeError(f"nullspace: expected a Layout, got {type(layout).__name__}")
    fs, fd = layout._flat()
    keep = [i for i, d in enumerate(fd) if type(d) is int and d == 0]
    if not keep:
        return _mk(1, 0)
    rstride = _flatten(compact_col_major(fs))
    rs = [fs[i] for i in keep]
    rd = [rstride[i] for i in keep]
    return _mk(rs[0], rd[0]) if len(rs) == 1 else _mk(tuple(rs), tuple(rd))


def with_shape(layout: Any, *shape: Any) -> Any:
    """`layout` reshaped to `shape`: composition(layout, make_layout(shape))."""
    return composition(layout, make_layout(shape[0] if len(shape) == 1 else shape))


# --------------------------------------------------------------------------------------------------
# upcast / downcast / recast
# --------------------------------------------------------------------------------------------------


def _upcast(s: Any, d: Any, n: int, layout: Layout) -> tuple[Any, Any]:
    if type(s) is tuple:
        pairs = [_upcast(x, y, n, layout) for x, y in zip(s, d)]  # noqa: B905
        return tuple([p[0] for p in pairs]), tuple([p[1] for p in pairs])
    if type(d) is int:
        if d == 0:
            return s, d
        a = -d if d < 0 else d
        if a % n and n % a:
            raise ValueError(f"upcast({layout}, {n}): stride {d} and {n} do not divide each other")
        return ceil_div(s, -(-n // a)), (-1 if d < 0 else 1) * -(-a // n)
    if type(d) is ScaledBasis:
        raise TypeError(f"upcast({layout}, {n}): ScaledBasis strides cannot be upcast")
    return s, d // n  # run-time stride: assumed a multiple of n, as CuTe does


@memoize
def upcast(layout: Any, n: int) -> Layout:
    """View `layout` in units n times larger: stride-1 modes shrink by n, other strides divide by n."""
    n = static_int(n, "upcast", "the factor")
    if n <= 0:
        raise ValueError(f"upcast: the factor must be positive, got {n}")
    if type(layout) is not Layout:
        return _delegate(layout, "upcast", "upcast", n)
    s, d = _upcast(layout.shape, layout.stride, n, layout)
    return _mk(s, d)


def _downcast(s: Any, d: Any, n: int) -> tuple[Any, Any]:
    if type(s) is tuple:
        pairs = [_downcast(x, y, n) for x, y in zip(s, d)]  # noqa: B905
        return tuple([p[0] for p in pairs]), tuple([p[1] for p in pairs])
    if type(d) is int and (d == 1 or d == -1):
        return s * n, d
    return s, d * n


@memoize
def downcast(layout: Any, n: int) -> Layout:
    """View `layout` in units n times smaller: stride-1 modes grow by n, other strides multiply by n."""
    n = static_int(n, "downcast", "the factor")
    if n <= 0:
        raise ValueError(f"downcast: the factor must be positive, got {n}")
    if type(layout) is not Layout:
        return _delegate(layout, "downcast", "downcast", n)
    if not any(type(d) is int and d in (1, -1) for d in layout._flat()[1]):
        raise ValueError(f"downcast({layout}, {n}): needs a mode of stride 1 (adjacent elements)")
    s, d = _downcast(layout.shape, layout.stride, n)
    return _mk(s, d)


def recast_layout(new_type_bits: int, old_type_bits: int, layout: Any) -> Layout:
    """`layout` over elements of old_type_bits viewed as elements of new_type_bits (CuTeDSL's order)."""
    from math import gcd

    new = static_int(new_type_bits, "recast_layout", "new_type_bits")
    old = static_int(old_type_bits, "recast_layout", "old_type_bits")
    if new <= 0 or old <= 0:
        raise ValueError(f"recast_layout: bit widths must be positive, got {new} and {old}")
    g = gcd(new, old)
    num, den = new // g, old // g
    if num == 1 and den == 1:
        return layout
    if num == 1:
        return downcast(layout, den)
    if den == 1:
        return upcast(layout, num)
    return downcast(upcast(layout, num), den)


def evenly_divides(shape: Any, tiler: Any) -> bool:
    """Whether `tiler` (int, tuple or layout, by mode) divides `shape` into whole tiles."""
    if type(tiler) is tuple:
        if len(tiler) > rank(shape):
            return False
        modes = shape if type(shape) is tuple else (shape,)
        return all(t is None or evenly_divides(s, t) for s, t in zip(modes, tiler))  # noqa: B905
    if tiler is None:
        return True
    if hasattr(tiler, "stride") and hasattr(tiler, "shape"):
        rest = complement(tiler, shape).shape
        total, tsize, rsize = product(shape), product(tiler.shape), product(rest)
    else:
        total, tsize, rsize = product(shape), product(tiler), product(ceil_div(shape, tiler))
    total = static_int(total, "evenly_divides", "the size of shape")
    return total == static_int(tsize, "evenly_divides", "the size of tiler") * static_int(
        rsize, "evenly_divides", "the number of tiles"
    )


_ALGEBRA["composition"] = composition

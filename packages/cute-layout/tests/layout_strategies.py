"""Hypothesis strategies and brute-force helpers for the cute_layout tests."""

from __future__ import annotations

from typing import Any

from cute_layout import Layout
from cute_layout.int_tuple import product
from hypothesis import strategies as st

# ------------------------------------------------------------------------------------------------
# Profiles: nest a flat list of leaves into a random tuple structure
# ------------------------------------------------------------------------------------------------


@st.composite
def nestings(draw: Any, n: int, max_depth: int = 3) -> Any:
    """A random profile (nested tuple of None leaves) with exactly n leaves."""

    def build(k: int, depth: int) -> Any:
        if k == 1:
            if depth == 0 or depth >= max_depth or draw(st.integers(0, 3)) > 0:
                return None
            return (None,)
        if depth >= max_depth:
            return tuple(None for _ in range(k))
        groups = draw(st.integers(min_value=1, max_value=k))
        cuts = sorted(
            draw(st.lists(st.integers(1, k - 1), min_size=groups - 1, max_size=groups - 1, unique=True))
        )
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [k])]  # noqa: B905
        return tuple(build(s, depth + 1) for s in sizes)

    return build(n, 0)


def fill(profile: Any, leaves: list) -> Any:
    """Put `leaves` (in order) at the None leaves of `profile`."""
    it = iter(leaves)

    def go(p: Any) -> Any:
        if p is None:
            return next(it)
        return tuple(go(e) for e in p)

    return go(profile)


def _nest(draw: Any, shapes: list, strides: list, max_depth: int = 3) -> Layout:
    prof = draw(nestings(len(shapes), max_depth))
    return Layout(fill(prof, shapes), fill(prof, strides))


# ------------------------------------------------------------------------------------------------
# Layout strategies
# ------------------------------------------------------------------------------------------------

SMALL = st.integers(min_value=1, max_value=6)


@st.composite
def layouts(
    draw: Any, max_leaves: int = 4, max_size: int = 256, zero: bool = True, negative: bool = True
) -> Layout:
    """Arbitrary layouts: nested shapes, strides compact-like or random, stride-0 and negative allowed."""
    n = draw(st.integers(min_value=1, max_value=max_leaves))
    shapes = [draw(SMALL) for _ in range(n)]
    while product(tuple(shapes)) > max_size:
        i = shapes.index(max(shapes))
        shapes[i] = max(1, shapes[i] // 2)
    strides = []
    acc = 1
    for s in shapes:
        kind = draw(
            st.sampled_from(["compact", "random", "zero", "gap"] if zero else ["compact", "random", "gap"])
        )
        if kind == "compact":
            d = acc
        elif kind == "gap":
            d = acc * draw(st.integers(1, 3))
        elif kind == "zero":
            d = 0
        else:
            d = draw(st.integers(1, 40))
        if negative and draw(st.integers(0, 5)) == 0:
            d = -d
        strides.append(d)
        acc *= s
    perm = draw(st.permutations(range(n)))
    shapes = [shapes[i] for i in perm]
    strides = [strides[i] for i in perm]
    return _nest(draw, shapes, strides)


@st.composite
def nested_injective(draw: Any, max_leaves: int = 4, max_size: int = 256, extras: bool = True) -> Layout:
    """Injective layouts whose sorted modes nest (stride_k+1 a multiple of stride_k * shape_k).

    With `extras`, stride-0 and size-1 modes are mixed in (they are ignored by complement).
    """
    n = draw(st.integers(min_value=1, max_value=max_leaves))
    shapes = [draw(st.integers(2, 6)) for _ in range(n)]
    while product(tuple(shapes)) > max_size:
        i = shapes.index(max(shapes))
        shapes[i] = max(2, shapes[i] // 2)
        if product(tuple(shapes)) > max_size and len(shapes) > 1:
            shapes.pop()
    strides = []
    acc = draw(st.integers(1, 3))
    for s in shapes:
        strides.append(acc)
        acc *= s * draw(st.sampled_from([1, 1, 2, 3]))
    modes = list(zip(shapes, strides))  # noqa: B905
    if extras:
        for _ in range(draw(st.integers(0, 2))):
            kind = draw(st.sampled_from(["zero", "one"]))
            modes.append((draw(st.integers(2, 4)), 0) if kind == "zero" else (1, draw(st.integers(0, 50))))
    perm = draw(st.permutations(range(len(modes))))
    modes = [modes[i] for i in perm]
    return _nest(draw, [m[0] for m in modes], [m[1] for m in modes])


@st.composite
def compact_permutations(draw: Any, max_leaves: int = 4, max_size: int = 256) -> Layout:
    """Bijective layouts onto [0, size): compact strides in a random mode order, randomly nested."""
    n = draw(st.integers(min_value=1, max_value=max_leaves))
    shapes = [draw(st.integers(1, 6)) for _ in range(n)]
    while product(tuple(shapes)) > max_size:
        i = shapes.index(max(shapes))
        shapes[i] = max(1, shapes[i] // 2)
    order = draw(st.permutations(range(n)))
    strides = [0] * n
    acc = 1
    for i in order:
        strides[i] = acc
        acc *= shapes[i]
    return _nest(draw, shapes, strides)


def image(layout: Any) -> list:
    """The layout's values on its whole domain, in index order."""
    return [layout(i) for i in range(product(layout.shape))]


def leaves(t: Any) -> list:
    """Flat list of the leaves of an IntTuple."""
    if isinstance(t, tuple):
        out: list = []
        for e in t:
            out.extend(leaves(e))
        return out
    return [t]


def cpp_composition(lhs: Layout, rhs: Layout) -> Layout | None:
    """CuTe C++'s composition, transcribed without this package's extra checks.

    Returns None where CuTe's static assertions (stride / shape divisibility) would fail.
    """
    from cute_layout.algebra import _coalesce_x

    LS, LD = _coalesce_x(lhs)

    def leaf(s: int, d: int) -> Any:
        if d == 0:
            return s, 0
        if len(LS) == 1:
            return s, d * LD[0]
        rs: list = []
        rd: list = []
        rest_shape, rest_stride = s, d
        for i in range(len(LS) - 1):
            cs, cd = LS[i], LD[i]
            a = abs(rest_stride)
            if not (a % cs == 0 or a < cs):
                return None  # stride divisibility static assertion
            next_shape = -(-cs // a)
            next_stride = -(-a // cs) * (1 if rest_stride > 0 else -1)
            if next_shape == 1 or rest_shape == 1:
                rest_stride = next_stride
                continue
            new_shape = min(next_shape, rest_shape)
            if rest_shape % new_shape:
                return None  # shape divisibility static assertion
            rs.append(new_shape)
            rd.append(rest_stride * cd)
            rest_shape //= new_shape
            rest_stride = next_stride
        if not rs:
            return rest_shape, rest_stride * LD[-1]
        if rest_shape == 1:
            return (rs[0], rd[0]) if len(rs) == 1 else (tuple(rs), tuple(rd))
        return tuple(rs) + (rest_shape,), tuple(rd) + (rest_stride * LD[-1],)

    def tree(s: Any, d: Any) -> Any:
        if isinstance(s, tuple):
            parts = [tree(x, y) for x, y in zip(s, d)]  # noqa: B905
            if any(p is None for p in parts):
                return None
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        return leaf(s, d)

    r = tree(rhs.shape, rhs.stride)
    return None if r is None else Layout(*r)


def cpp_complement(layout: Layout, cotarget: Any) -> Layout | None:
    """CuTe C++'s complement (``detail::complement``), transcribed without this package's checks.

    Filter (drop stride-0 and size-1 modes) and coalesce, sort by stride, take the floored gap below each
    mode, then the rest up to the cotarget; coalesce. Returns None where CuTe asserts "Non-injective
    Layout" (a gap of 0).
    """
    from cute_layout import ceil_div, coalesce

    modes: list = []
    for s, d in zip(leaves(layout.shape), leaves(layout.stride)):  # noqa: B905
        if s == 1 or d == 0:
            continue
        if modes and modes[-1][0] * modes[-1][1] == d:
            modes[-1] = (modes[-1][0] * s, modes[-1][1])
        else:
            modes.append((s, d))
    if not modes:
        return coalesce(Layout(product(cotarget) if isinstance(cotarget, tuple) else cotarget))
    modes.sort(key=lambda m: m[1])
    shapes, strides, cur = [], [], 1
    for s, d in modes:
        if d // cur == 0:
            return None
        shapes.append(d // cur)
        strides.append(cur)
        cur = s * d
    shapes.append(product(ceil_div(cotarget, cur)))
    strides.append(cur)
    return coalesce(Layout(tuple(shapes), tuple(strides)))


def complement_is_lawful(layout: Layout, r: Layout, cotarget: Any) -> bool:
    """NVIDIA's post-conditions of a complement, by enumeration: covering, ordered, disjoint, (A, R) injective."""
    from cute_layout import cosize, filter, make_layout

    if cosize(make_layout(layout, r)) < product(cotarget):  # covering
        return False
    ri = image(r)
    if any(ri[i - 1] >= ri[i] for i in range(1, len(ri))):  # ordered
        return False
    img = set(image(layout))
    if any(v in img for v in ri[1:]):  # disjoint
        return False
    both = image(make_layout(filter(layout), r))
    return len(set(both)) == len(both)  # (filter(A), R) injective

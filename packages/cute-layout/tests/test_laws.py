"""Property-based tests of the laws CuTe states for its layout algebra (hypothesis, brute force)."""

from __future__ import annotations

import cute_layout as cl
import pytest
from cute_layout import Layout
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from layout_strategies import (
    compact_permutations,
    cpp_composition,
    image,
    layouts,
    leaves,
    nested_injective,
)

LAWS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
MANY = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))


def _size(layout: Layout) -> int:
    return cl.size(layout)


def _cpp_odd(a: Layout, x: int) -> int:
    """The lhs function CuTe composes with: extended past its size along its last mode, odd for x < 0."""
    return -a(-x) if x < 0 else a(x)


# ------------------------------------------------------------------------------------------------
# coalesce / filter
# ------------------------------------------------------------------------------------------------


@MANY
@given(layouts(max_leaves=5))
def test_coalesce_preserves_size_and_function(layout: Layout) -> None:
    c = cl.coalesce(layout)
    assert cl.size(c) == cl.size(layout)
    assert cl.depth(c) <= 1
    assert image(c) == image(layout)


@LAWS
@given(layouts(max_leaves=5))
def test_coalesce_by_mode_keeps_rank(layout: Layout) -> None:
    profile = tuple(1 for _ in range(cl.rank(layout))) if isinstance(layout.shape, tuple) else 1
    c = cl.coalesce(layout, profile)
    assert cl.rank(c) == cl.rank(layout)
    for i in range(cl.rank(layout)) if isinstance(layout.shape, tuple) else []:
        assert image(c[i]) == image(layout[i])
        assert cl.depth(c[i]) <= 1


@LAWS
@given(layouts(max_leaves=5))
def test_filter_keeps_the_image_and_drops_zeros(layout: Layout) -> None:
    f = cl.filter(layout)
    assert set(image(f)) == set(image(layout))
    assert all(d != 0 or s == 1 for s, d in zip(leaves(f.shape), leaves(f.stride)))  # noqa: B905
    zero = 1
    for s, d in zip(leaves(layout.shape), leaves(layout.stride)):  # noqa: B905
        if d == 0:
            zero *= s
    assert cl.size(f) * zero == cl.size(layout)


@LAWS
@given(layouts(max_leaves=5))
def test_nullspace_maps_to_zero(layout: Layout) -> None:
    k = cl.nullspace(layout)
    assert all(layout(k(i)) == 0 for i in range(cl.size(k)))
    assert cl.size(k) == cl.size(layout) // cl.size(cl.filter(layout))


# ------------------------------------------------------------------------------------------------
# composition: R(i) == A(B(i)) on all of B's domain, and CuTe's result wherever CuTe is right
# ------------------------------------------------------------------------------------------------


def _check_composition(a: Layout, b: Layout) -> None:
    truth = [_cpp_odd(a, b(i)) for i in range(_size(b))]
    try:
        r = cl.composition(a, b)
    except ValueError as e:
        r = None
        assert "composition(" in str(e)
    if r is not None:
        assert image(r) == truth, (a, b, r)
        assert cl.compatible(b.shape, r.shape)
    ref = cpp_composition(a, b)
    if ref is not None:
        if image(ref) == truth:
            assert r == ref, (a, b, r, ref)  # CuTe is right: same layout
        else:
            assert r is None, (a, b, r, ref)  # CuTe would be wrong: raise


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(layouts(max_leaves=4), layouts(max_leaves=3, max_size=64))
def test_composition_law_random(a: Layout, b: Layout) -> None:
    _check_composition(a, b)


@MANY
@given(compact_permutations(max_leaves=4), layouts(max_leaves=3, max_size=128, zero=True, negative=False))
def test_composition_law_compact_lhs(a: Layout, b: Layout) -> None:
    _check_composition(a, b)


@LAWS
@given(layouts(max_leaves=4), st.integers(1, 3))
def test_composition_with_a_multiple_of_the_size_succeeds(a: Layout, k: int) -> None:
    """Reading a layout 1-D over k times its size never raises: it extends along the last mode."""
    n = k * cl.size(a)
    r = cl.composition(a, Layout(n, 1))
    assert image(r) == [_cpp_odd(a, i) for i in range(n)]
    if k == 1:
        assert image(r) == image(a)


@LAWS
@given(layouts(max_leaves=4), layouts(max_leaves=2, max_size=32), layouts(max_leaves=2, max_size=32))
def test_composition_by_mode_tiler(a: Layout, b0: Layout, b1: Layout) -> None:
    if cl.rank(a) < 2:
        return
    try:
        r = cl.composition(a, (b0, b1))
    except ValueError:
        return
    assert cl.rank(r) == 2
    for i, b in enumerate((b0, b1)):
        assert image(r[i]) == [_cpp_odd(a[i], b(j)) for j in range(cl.size(b))]


# ------------------------------------------------------------------------------------------------
# complement: the properties CuTe's complement unit test asserts
# ------------------------------------------------------------------------------------------------


@MANY
@given(nested_injective(max_leaves=4, max_size=128), st.integers(1, 600))
def test_complement_properties(layout: Layout, cotarget: int) -> None:
    r = cl.complement(layout, cotarget)
    completed = cl.make_layout(layout, r)
    filtered = cl.filter(layout)
    # (1) the layout and its complement cover the cotarget
    assert cl.cosize(completed) >= cotarget
    # (2) the complement stays within the cotarget rounded up to the span of the layout's modes
    # (CuTe's test bounds it by round_up(cotarget, cosize(layout)), which its own algorithm can
    # exceed, e.g. complement(2:2, 57) = (2,15):(1,4) has cosize 58 > 57)
    span = max([s * d for s, d in zip(leaves(filtered.shape), leaves(filtered.stride)) if d > 0] or [1])  # noqa: B905
    assert cl.cosize(r) <= cl.round_up(cotarget, span)
    # (3) ordered, (4) disjoint from the layout
    img = set(image(layout))
    ri = image(r)
    assert all(ri[i - 1] < ri[i] for i in range(1, len(ri)))
    assert all(v not in img for v in ri[1:])
    # other observations
    assert all(d > 0 for s, d in zip(leaves(r.shape), leaves(r.stride)) if s > 1)  # noqa: B905
    assert cl.size(r) >= cotarget // cl.size(filtered)
    assert cl.cosize(r) >= cotarget // cl.size(filtered)
    assert cl.cosize(completed) <= cl.cosize(r) + cl.cosize(layout)
    # nothing is left over once the complement is appended
    assert cl.size(cl.complement(completed)) == 1
    # the complement of the complement (within the layout's codomain) gives it back
    assert cl.complement(cl.complement(r, cl.cosize(layout)), cotarget) == r
    # the filtered layout completed by its complement is injective
    ci = image(cl.make_layout(filtered, r))
    assert len(set(ci)) == len(ci)


@LAWS
@given(nested_injective(max_leaves=3, max_size=64), st.integers(1, 8), st.integers(1, 8))
def test_complement_with_a_shape_cotarget(layout: Layout, m: int, n: int) -> None:
    r = cl.complement(layout, (m, n))
    img = set(image(layout))
    ri = image(r)
    assert all(ri[i - 1] < ri[i] for i in range(1, len(ri)))
    assert all(v not in img for v in ri[1:])
    # CuTe folds the shape: it equals the int cotarget m*n when the layout's span and m divide
    span = max([s * d for s, d in zip(leaves(layout.shape), leaves(layout.stride)) if s > 1 and d > 0] or [1])  # noqa: B905
    if m % span == 0 or span % m == 0:
        assert r == cl.complement(layout, m * n)


@LAWS
@given(layouts(max_leaves=4, zero=False, negative=False), st.integers(1, 300))
def test_complement_raises_instead_of_overlapping(layout: Layout, cotarget: int) -> None:
    try:
        r = cl.complement(layout, cotarget)
    except ValueError as e:
        assert "overlap" in str(e) or "does not cover" in str(e)
        return
    img = set(image(layout))
    ri = image(r)
    assert all(ri[i - 1] < ri[i] for i in range(1, len(ri)))
    assert all(v not in img for v in ri[1:])


# ------------------------------------------------------------------------------------------------
# inverses
# ------------------------------------------------------------------------------------------------


@MANY
@given(layouts(max_leaves=5))
def test_right_inverse_law(layout: Layout) -> None:
    r = cl.right_inverse(layout)
    assert all(layout(r(i)) == i for i in range(cl.size(r)))


@LAWS
@given(compact_permutations(max_leaves=5))
def test_right_inverse_of_a_bijection_is_its_inverse(layout: Layout) -> None:
    r = cl.right_inverse(layout)
    assert cl.size(r) == cl.size(layout)
    assert all(r(layout(i)) == i for i in range(cl.size(layout)))


@MANY
@given(nested_injective(max_leaves=4, max_size=128, extras=False))
def test_left_inverse_law(layout: Layout) -> None:
    r = cl.left_inverse(layout)
    assert all(r(layout(i)) == i for i in range(cl.size(layout)))


@LAWS
@given(compact_permutations(max_leaves=5))
def test_left_inverse_of_a_bijection(layout: Layout) -> None:
    r = cl.left_inverse(layout)
    assert all(r(layout(i)) == i for i in range(cl.size(layout)))
    assert cl.left_inverse(layout) == cl.right_inverse(layout) or image(cl.left_inverse(layout)) == image(
        cl.right_inverse(layout)
    )


@LAWS
@given(layouts(max_leaves=4))
def test_left_inverse_is_exact_or_raises(layout: Layout) -> None:
    try:
        r = cl.left_inverse(layout)
    except ValueError as e:
        assert "left_inverse" in str(e)
        return
    n = cl.size(layout)
    assert all(layout(r(layout(i))) == layout(i) for i in range(n))
    if all(d != 0 or s == 1 for s, d in zip(leaves(layout.shape), leaves(layout.stride))):  # noqa: B905
        assert all(r(layout(i)) == i for i in range(n))


# ------------------------------------------------------------------------------------------------
# divides and products equal their definitions
# ------------------------------------------------------------------------------------------------


@MANY
@given(layouts(max_leaves=4, negative=False), nested_injective(max_leaves=2, max_size=16, extras=False))
def test_logical_divide_is_its_definition(a: Layout, b: Layout) -> None:
    cot = cl.coalesce(a).shape
    try:
        d = cl.logical_divide(a, b)
    except ValueError:
        with pytest.raises(ValueError):
            cl.composition(a, cl.make_layout(b, cl.complement(b, cot)))
        return
    definition = cl.composition(a, cl.make_layout(b, cl.complement(b, cot)))
    assert d == definition
    assert image(d[0]) == [_cpp_odd(a, b(i)) for i in range(cl.size(b))]
    # the tile mode of zipped_divide is the composition with the tiler
    z = cl.zipped_divide(a, b)
    assert image(z[0]) == image(d[0])
    assert image(z) == image(d)


@LAWS
@given(
    layouts(max_leaves=2, max_size=16, negative=False),
    layouts(max_leaves=2, max_size=16, negative=False),
    st.integers(1, 4),
    st.integers(1, 4),
)
def test_zipped_tiled_flat_divide_agree(m0: Layout, m1: Layout, t0: int, t1: int) -> None:
    a = cl.make_layout(m0, m1)
    tiler = (t0, t1)
    try:
        ld = cl.logical_divide(a, tiler)
    except ValueError:
        return
    z = cl.zipped_divide(a, tiler)
    t = cl.tiled_divide(a, tiler)
    f = cl.flat_divide(a, tiler)
    r0, r1 = cl.size(ld[0][1]), cl.size(ld[1][1])
    assert cl.size(ld[0][0]) == t0 and cl.size(ld[1][0]) == t1
    for i0 in range(t0):
        for i1 in range(t1):
            for j0 in range(r0):
                for j1 in range(r1):
                    ref = ld((i0, j0), (i1, j1))
                    assert z((i0, i1), (j0, j1)) == ref
                    assert t((i0, i1), j0, j1) == ref
                    assert f(i0, i1, j0, j1) == ref


@MANY
@given(
    nested_injective(max_leaves=3, max_size=32),
    layouts(max_leaves=2, max_size=16, zero=False, negative=False),
)
def test_logical_product_is_its_definition(a: Layout, b: Layout) -> None:
    try:
        p = cl.logical_product(a, b)
    except ValueError:
        return
    comp = cl.complement(a, cl.size(a) * cl.cosize(b))
    rest = [comp(b(i)) for i in range(cl.size(b))]
    assert image(p[0]) == image(a)
    assert image(p[1]) == rest
    assert cl.compatible(b.shape, p[1].shape)


@LAWS
@given(compact_permutations(max_leaves=2, max_size=16), compact_permutations(max_leaves=2, max_size=16))
def test_blocked_and_raked_products_reassociate_modes(a: Layout, b: Layout) -> None:
    a2 = cl.append(a, up_to_rank=2) if cl.rank(a) < 2 else a
    b2 = cl.append(b, up_to_rank=2) if cl.rank(b) < 2 else b
    if cl.rank(a2) != 2 or cl.rank(b2) != 2:
        return
    lp = cl.logical_product(a2, b2)
    bp = cl.blocked_product(a2, b2)
    rp = cl.raked_product(a2, b2)
    (a0, a1), (b0, b1) = (cl.size(a2[0]), cl.size(a2[1])), (cl.size(b2[0]), cl.size(b2[1]))
    for i0 in range(a0):
        for i1 in range(a1):
            for j0 in range(b0):
                for j1 in range(b1):
                    ref = lp((i0, i1), (j0, j1))
                    assert bp((i0, j0), (i1, j1)) == ref
                    assert rp((j0, i0), (j1, i1)) == ref
    # a blocked product of bijections onto [0,n) is a bijection onto [0, n*m)
    assert sorted(image(bp)) == list(range(cl.size(bp)))


# ------------------------------------------------------------------------------------------------
# coordinates
# ------------------------------------------------------------------------------------------------


@MANY
@given(compact_permutations(max_leaves=5), st.data())
def test_idx2crd_crd2idx_roundtrip(layout: Layout, data: st.DataObject) -> None:
    n = cl.size(layout)
    i = data.draw(st.integers(0, n - 1))
    crd = cl.idx2crd(i, layout.shape)
    assert cl.crd2idx(crd, layout.shape) == i
    assert cl.congruent(crd, layout.shape)
    # with the layout's own (compact) strides every mode wraps and the round trip holds too
    crd2 = cl.idx2crd(layout(crd), layout.shape, layout.stride)
    assert crd2 == crd
    assert layout.get_hier_coord(layout(crd)) == crd


@LAWS
@given(layouts(max_leaves=5), st.data())
def test_call_forms_agree(layout: Layout, data: st.DataObject) -> None:
    n = cl.size(layout)
    i = data.draw(st.integers(0, n - 1))
    crd = cl.idx2crd(i, layout.shape)
    assert layout(i) == layout(crd) == cl.crd2idx(crd, layout.shape, layout.stride)
    assert layout(-i) == -layout(i)
    flat = cl.flatten(layout)
    assert flat(i) == layout(i)

"""cute_layout raises exactly where CuTe C++ would return a layout that breaks the operation's law (issue 19).

Where CuTe's answer is lawful, cute_layout returns the same function with CuTe's shape; the reference is a plain
transcription of CuTe C++ (``layout_strategies.cpp_complement`` / ``cpp_composition``) checked by enumeration.
"""

from __future__ import annotations

import cute_layout as cl
import pytest
from cute_layout import Layout
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from layout_strategies import complement_is_lawful, cpp_complement, image, layouts

MANY = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))

# ------------------------------------------------------------------------------------------------
# the examples of issue 19: CuTe C++'s answers, which are lawful
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "got, expected",
    [
        (lambda: cl.complement(Layout((2, 2), (3, 15)), 19), Layout((3, 2), (1, 6))),
        (lambda: cl.complement(Layout((2, 2), (32, 9)), 42), Layout(9, 1)),
        (
            lambda: cl.logical_divide(Layout(3, 2), Layout((2, 3), (21, 2))),
            Layout(((2, 3), (2, 3)), ((42, 4), (2, 12))),
        ),
        (lambda: cl.logical_product(Layout((4, 2), (4, 19)), Layout(3, 4)), Layout(((4, 2), 3), ((4, 19), 38))),
        (lambda: cl.complement(Layout((4, 6), (1, 6))), Layout(1, 0)),
        (lambda: cl.complement(Layout((4, 10), (1, 10))), Layout(2, 4)),
        (lambda: cl.complement(Layout((4, 2), (1, 10)), 128), Layout((2, 7), (4, 20))),
    ],
)
def test_lawful_cute_answers_are_returned(got, expected: Layout) -> None:
    assert got() == expected


@pytest.mark.parametrize(
    "call, match",
    [
        # CuTe C++ returns wrong functions for these three
        (lambda: cl.composition(Layout((3, 2), (15, 14)), Layout(8, 2)), "divisibility"),
        (lambda: cl.logical_divide(Layout((7, 1), (4, 27)), Layout(4, 1)), "interfere"),
        (lambda: cl.left_inverse(Layout((4, 5), (27, 9))), "not injective"),
        # CuTe's complement leaves holes and does not cover the cotarget (post-condition 1)
        (lambda: cl.complement(Layout((2, 2), (3, 8)), 16), "does not cover"),
        # CuTe asserts "Non-injective Layout detected in complement"
        (lambda: cl.complement(Layout((2, 2), (2, 3)), 19), "overlap"),
    ],
)
def test_unsound_cases_raise(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_raked_product_of_a_rank1_block_whose_tiler_composes_to_a_tuple() -> None:
    # used to raise TypeError in products._zip2
    assert cl.raked_product(Layout(2, 2), Layout(4, 1)) == Layout((((2, 2), 2),), (((1, 4), 2),))
    assert cl.blocked_product(Layout(2, 2), Layout(4, 1)) == Layout(((2, (2, 2)),), ((2, (1, 4)),))


def test_products_of_rank1_operands_have_rank1() -> None:
    assert cl.blocked_product(Layout(4, 10), Layout(6, 1)) == Layout(((4, 6),), ((10, 1),))
    assert cl.raked_product(Layout(4, 1), Layout(6, 1)) == Layout(((6, 4),), ((4, 1),))
    assert cl.rank(cl.blocked_product(Layout(4, 1), Layout((2, 3)))) == 2


# ------------------------------------------------------------------------------------------------
# laws over random operands (strides 0..40, not only nesting ones)
# ------------------------------------------------------------------------------------------------


@MANY
@given(layouts(max_leaves=4, max_size=128, negative=False), st.integers(1, 300))
def test_complement_is_cute_where_cute_is_lawful(layout: Layout, cotarget: int) -> None:
    ref = cpp_complement(layout, cotarget)
    if ref is None or not complement_is_lawful(layout, ref, cotarget):
        with pytest.raises(ValueError):
            cl.complement(layout, cotarget)
        return
    assert cl.complement(layout, cotarget) == ref


@MANY
@given(layouts(max_leaves=3, max_size=64, negative=False), layouts(max_leaves=2, max_size=16, negative=False))
def test_logical_divide_is_cute_where_cute_is_lawful(a: Layout, b: Layout) -> None:
    cot = cl.coalesce(a).shape
    ref = cpp_complement(b, cot)
    if ref is None or not complement_is_lawful(b, ref, cot):
        with pytest.raises(ValueError):
            cl.logical_divide(a, b)
        return
    try:
        expected = cl.composition(a, cl.make_layout(b, ref))
    except ValueError:
        with pytest.raises(ValueError):
            cl.logical_divide(a, b)
        return
    assert cl.logical_divide(a, b) == expected
    assert image(cl.zipped_divide(a, b)) == image(expected)


@MANY
@given(layouts(max_leaves=3, max_size=32, negative=False), layouts(max_leaves=2, max_size=16, negative=False))
def test_logical_product_is_cute_where_cute_is_lawful(a: Layout, b: Layout) -> None:
    cot = cl.size(a) * cl.cosize(b)
    ref = cpp_complement(a, cot)
    if ref is None or not complement_is_lawful(a, ref, cot):
        with pytest.raises(ValueError):
            cl.logical_product(a, b)
        return
    try:
        rest = cl.composition(ref, b)
    except ValueError:
        with pytest.raises(ValueError):
            cl.logical_product(a, b)
        return
    assert cl.logical_product(a, b) == cl.make_layout(a, rest)


def _mode_sizes(layout: Layout, r: int) -> list:
    return [cl.size(layout[m]) for m in range(r)] if r > 1 else [cl.size(layout)]


@MANY
@given(layouts(max_leaves=3, max_size=16, negative=False),
       layouts(max_leaves=3, max_size=16, negative=False), st.data())
def test_blocked_and_raked_products_zip_the_logical_product(a: Layout, b: Layout, data: st.DataObject) -> None:
    r = max(cl.rank(a), cl.rank(b))
    try:
        bp = cl.blocked_product(a, b)
    except ValueError:
        with pytest.raises(ValueError):
            cl.raked_product(a, b)
        return
    rp = cl.raked_product(a, b)
    assert cl.rank(bp) == cl.rank(rp) == r
    # the padded operands (CuTe's append<R>) and their logical product
    pa = Layout(tuple(cl.append(a, up_to_rank=r).shape) if r > 1 else (a.shape,),
                tuple(cl.append(a, up_to_rank=r).stride) if r > 1 else (a.stride,))
    pb = Layout(tuple(cl.append(b, up_to_rank=r).shape) if r > 1 else (b.shape,),
                tuple(cl.append(b, up_to_rank=r).stride) if r > 1 else (b.stride,))
    lp = cl.logical_product(pa, pb)
    sa = [cl.size(m) for m in lp[0]]
    sc = [cl.size(m) for m in lp[1]]
    for _ in range(8):
        i = tuple(data.draw(st.integers(0, n - 1)) for n in sa)
        j = tuple(data.draw(st.integers(0, n - 1)) for n in sc)
        ref = lp(i, j)
        assert bp(tuple((x, y) for x, y in zip(i, j))) == ref  # noqa: B905
        assert rp(tuple((y, x) for x, y in zip(i, j))) == ref  # noqa: B905


@MANY
@given(layouts(max_leaves=3, max_size=64, negative=False))
def test_left_inverse_is_cute_where_cute_is_lawful(layout: Layout) -> None:
    # CuTe C++: left_inverse(L) = right_inverse(make_layout(L, complement(L))), complement to cosize(L)
    c = cpp_complement(layout, cl.cosize(layout))
    cute = None if c is None else cl.right_inverse(cl.make_layout(layout, c))
    n = cl.size(layout)
    lawful = cute is not None and all(cute(layout(i)) == i for i in range(n))
    try:
        ours = cl.left_inverse(layout)
    except ValueError:
        assert not lawful, (layout, cute)  # raises only where CuTe's answer breaks R(L(i)) == i
        return
    if lawful:  # the same function on the layout's image
        assert all(ours(layout(i)) == cute(layout(i)) for i in range(n))
    if all(d != 0 for d in cl.flatten(layout.stride)):
        assert all(ours(layout(i)) == i for i in range(n))  # and where CuTe is wrong, ours is still exact

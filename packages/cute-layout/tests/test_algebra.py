"""Unit tests of coalesce, filter, composition, complement, inverses and the other algebra functions."""

from __future__ import annotations

import cute_layout as cl
import pytest
from cute_layout import Layout
from layout_strategies import image

# ------------------------------------------------------------------------------------------------
# coalesce / filter
# ------------------------------------------------------------------------------------------------


def test_coalesce_doc_examples() -> None:
    a = Layout((2, (1, 6)), (1, (6, 2)))
    assert cl.coalesce(a) == Layout(12, 1)
    b = Layout((2, (1, 6)), (1, (6, 2)))
    assert cl.coalesce(b, (1, 1)) == Layout((2, 6), (1, 2))
    assert cl.coalesce(b, (1, 1)) == cl.make_layout(cl.coalesce(b[0]), cl.coalesce(b[1]))


@pytest.mark.parametrize(
    "layout, expected",
    [
        (Layout(1, 0), Layout(1, 0)),
        (Layout(1, 1), Layout(1, 0)),
        (Layout((2, 4)), Layout(8, 1)),
        (Layout((2, 4, 6), (1, 6, 2)), Layout((2, 4, 6), (1, 6, 2))),
        (Layout((2, 1, 6), (1, 7, 2)), Layout(12, 1)),
        (Layout((2, 1, 6), (4, 7, 8)), Layout(12, 4)),
        (Layout((2, (4, 6))), Layout(48, 1)),
        (Layout((2, 4), (4, 1)), Layout((2, 4), (4, 1))),
        (Layout((2, 4, 6), (24, 6, 1)), Layout((2, 4, 6), (24, 6, 1))),
        (Layout((2, 1, 3), (2, 4, 4)), Layout(6, 2)),
        (Layout(((2, 2), (2, 2)), ((1, 4), (8, 32))), Layout((2, 4, 2), (1, 4, 32))),
        (Layout((4, 1), (1, 0)), Layout(4, 1)),
        (Layout((1, 1), (3, 5)), Layout(1, 0)),
    ],
)
def test_coalesce(layout: Layout, expected: Layout) -> None:
    c = cl.coalesce(layout)
    assert c == expected
    assert image(c) == image(layout)


def test_coalesce_profile_keeps_extra_modes() -> None:
    layout = Layout(((2, 2), (2, 2), 3), ((1, 2), (8, 16), 64))
    assert cl.coalesce(layout, (1,)) == Layout((4, (2, 2), 3), (1, (8, 16), 64))
    with pytest.raises(ValueError):
        cl.coalesce(layout, (1, 1, 1, 1))


def test_filter_and_filter_zeros() -> None:
    layout = Layout((2, (3, 4), 5), (0, (1, 0), 3))
    assert cl.filter_zeros(layout) == Layout((1, (3, 1), 5), (0, (1, 0), 3))
    assert cl.filter(layout) == Layout(15, 1)
    assert cl.filter(Layout((4, 2), (0, 0))) == Layout(1, 0)
    assert cl.filter(layout, (1, 1, 1)) == Layout((1, 3, 5), (0, 1, 3))
    assert cl.filter_zeros(Layout((4, 2), (1, 4)), (0, 1)) == Layout((1, 2), (1, 4))


# ------------------------------------------------------------------------------------------------
# composition
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, expected",
    [
        # CuTe's layout-algebra documentation
        (Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1)), Layout(((2, 2), 3), ((24, 2), 8))),
        (Layout(20, 2), Layout((5, 4), (4, 1)), Layout((5, 4), (8, 2))),
        (Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5)), Layout((5, (2, 2)), (16, (80, 4)))),
        # the example
        (Layout((8, 8), (8, 1)), Layout(2, 3), Layout(2, 24)),
        (
            Layout((8, 8), (8, 1)),
            Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))),
            Layout(((2, 2, 2), (2, 2, 2)), ((8, 2, 32), (1, 16, 4))),
        ),
        (Layout((4, 6, 8, 10), (2, 3, 5, 7)), Layout(6, 12), Layout((2, 3), (9, 5))),
        (Layout((4, 6, 8), (1, 4, 7)), Layout(6, 1), Layout(6, 1)),  # pre-coalesced lhs
        (Layout(12), Layout((4, 3), (3, 1)), Layout((4, 3), (3, 1))),
        (Layout((4, 3)), Layout((6, 2), (2, 1)), Layout((6, 2), (2, 1))),
        (Layout((4, 3), (3, 1)), Layout((6, 2), (2, 1)), Layout(((2, 3), 2), ((6, 1), 3))),
        (Layout(1, 0), Layout(4), Layout(4, 0)),
        (Layout(4), Layout(4, 0), Layout(4, 0)),
    ],
)
def test_composition_examples(a: Layout, b: Layout, expected: Layout) -> None:
    r = cl.composition(a, b)
    assert r == expected
    assert image(r) == [a(b(i)) for i in range(cl.size(b))]


def test_composition_by_mode_tilers() -> None:
    a = Layout((12, (4, 8)), (59, (13, 1)))
    assert cl.composition(a, (Layout(3, 4), Layout(8, 2))) == Layout((3, (2, 4)), (236, (26, 1)))
    assert cl.composition(a, (3, 8)) == Layout((3, (4, 2)), (59, (13, 1)))
    assert cl.composition(a, (None, 8)) == Layout((12, (4, 2)), (59, (13, 1)))
    # modes past the tiler are dropped, as CuTe C++ does
    assert cl.composition(Layout((4, 8, 2), (1, 4, 32)), (2,)) == Layout((2,), (1,))
    assert cl.composition(a, None) is a
    assert cl.composition(Layout(8, 2), 4) == Layout(4, 2)
    with pytest.raises(ValueError, match="more modes"):
        cl.composition(Layout(8, 1), (2, 2))


def test_composition_extends_the_lhs_past_its_size() -> None:
    # CuTe's coalesce_x: the last mode of the lhs continues
    assert cl.composition(Layout((4, 2), (1, 10)), Layout(16, 1)) == Layout((4, 4), (1, 10))
    assert cl.composition(Layout((4, 1), (1, 0)), Layout(8, 1)) == Layout((4, 2), (1, 0))


def test_composition_raises_where_cute_would_be_wrong() -> None:
    # the example: (4,6):(1,5) read contiguously 6 at a time is not a layout
    with pytest.raises(ValueError, match=r"composition\(\(4,6\):\(1,5\), 6:1\).*shape divisibility"):
        cl.composition(Layout((4, 6), (1, 5)), Layout(6, 1))
    # a stride that does not divide a mode and runs past it: CuTe returns (3,2):(24,1), which is wrong
    with pytest.raises(ValueError, match="stride divisibility"):
        cl.composition(Layout((8, 8), (8, 1)), Layout(6, 3))
    # a stride larger than a mode that is not a multiple of it
    with pytest.raises(ValueError, match="stride divisibility"):
        cl.composition(Layout((4, 6), (1, 5)), Layout(3, 6))
    # rhs modes that carry into each other: CuTe returns (2,2):(3,1), whose last value is 4, not 10
    with pytest.raises(ValueError, match="interfere"):
        cl.composition(Layout((4, 8), (1, 10)), Layout((2, 2), (3, 1)))
    with pytest.raises(ValueError, match="interfere"):
        cl.composition(Layout((4, 8), (1, 10)), Layout((2, 2), (1, -4)))


def test_composition_keeps_cute_results_that_are_right_despite_its_checks() -> None:
    # stride 3 does not divide 8, but the lhs ignores that mode (stride 0): CuTe's (3,2):(0,1) is right
    a, b = Layout((8, 8), (0, 1)), Layout(6, 3)
    r = cl.composition(a, b)
    assert r == Layout((3, 2), (0, 1))
    assert image(r) == [a(b(i)) for i in range(6)]
    # mixed signs within one lhs mode do not interfere
    a, b = Layout((4, 8), (1, 10)), Layout((2, 2), (1, -1))
    assert image(cl.composition(a, b)) == [a(b(i)) for i in range(4)]


def test_composition_with_basis_strides_reads_lhs_modes() -> None:
    a = Layout((4, 8), (8, 1))
    assert cl.composition(a, cl.make_identity_layout((4, 8))) == a
    ident = cl.make_identity_layout((4, 8))
    r = cl.composition(ident, Layout((2, 4), (2, 8)))
    assert [r(i) for i in range(8)] == [ident(Layout((2, 4), (2, 8))(i)) for i in range(8)]


def test_composition_negative_strides_are_odd() -> None:
    a, b = Layout((4, 8), (1, 10)), Layout(4, -1)
    r = cl.composition(a, b)
    assert r == Layout(4, -1)
    b = Layout(2, -4)
    assert cl.composition(a, b) == Layout(2, -10)


def test_composition_type_errors() -> None:
    with pytest.raises(TypeError):
        cl.composition(Layout(4), 2.5)
    with pytest.raises(TypeError):
        cl.composition((4, 2), Layout(4))


def test_with_shape() -> None:
    layout = Layout((4, 8), (8, 1))
    assert cl.with_shape(layout, (2, 16)) == cl.composition(layout, Layout((2, 16)))
    assert cl.with_shape(Layout(32, 1), 4, 8) == Layout((4, 8), (1, 4))


# ------------------------------------------------------------------------------------------------
# complement
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "layout, cotarget, expected",
    [
        # CuTe's documentation
        (Layout(4, 1), 24, Layout(6, 4)),
        (Layout(6, 4), 24, Layout(4, 1)),
        (Layout((4, 6), (1, 4)), 24, Layout(1, 0)),
        (Layout(4, 2), 24, Layout((2, 3), (1, 8))),
        (Layout((2, 4), (1, 6)), 24, Layout(3, 2)),
        (Layout((2, 2), (1, 6)), 24, Layout((3, 2), (2, 12))),
        # the issue: stride-0 and size-1 modes are ignored
        (Layout((2, 4, 8), (8, 1, 0)), 460, Layout((2, 29), (4, 16))),
        (Layout((4, 8), (1, 16)), 1024, Layout((4, 8), (4, 128))),
        (Layout(1, 0), 5, Layout(5, 1)),
        (Layout(4, 0), 1, Layout(1, 0)),
        (Layout(4, 0), 8, Layout(8, 1)),
        (Layout(12, 2), 53, Layout((2, 3), (1, 24))),
        (Layout(64), (32, 4, 4), Layout(8, 64)),
    ],
)
def test_complement(layout: Layout, cotarget: object, expected: Layout) -> None:
    assert cl.complement(layout, cotarget) == expected


@pytest.mark.parametrize(
    "layout",
    [
        # the inputs of CuTe's complement unit test
        Layout(1, 0),
        Layout(1, 1),
        Layout(1, 2),
        Layout(4, 0),
        Layout(4, 1),
        Layout(4, 2),
        Layout(4, 4),
        Layout((2, 4)),
        Layout((2, 3)),
        Layout((2, 4), (1, 4)),
        Layout((2, 4), (1, 6)),
        Layout((2, 4, 8), (8, 1, 64)),
        Layout((2, 4, 8), (8, 1, 0)),
        Layout(((2, 2), (2, 2)), ((1, 4), (8, 32))),
        Layout(((2, 2), (2, 2)), ((1, 32), (8, 4))),
        Layout((4, 2), (1, 16)),
        Layout(12),
        Layout(12, 2),
        Layout((3, 6), (1, 3)),
        Layout((3, 6), (1, 9)),
        Layout((2, (3, 4)), (3, (1, 6))),
    ],
)
def test_complement_cute_unit_test_inputs(layout: Layout) -> None:
    for cotarget in (1, 2, 5, 8, 16, 19, 53, 128, cl.cosize(layout)):
        r = cl.complement(layout, cotarget)
        completed = cl.make_layout(layout, r)
        assert cl.cosize(completed) >= cotarget
        ri = image(r)
        img = set(image(layout))
        assert all(ri[i - 1] < ri[i] for i in range(1, len(ri)))
        assert all(v not in img for v in ri[1:])
        assert cl.size(r) >= cotarget // cl.size(cl.filter(layout))
        assert cl.size(cl.complement(completed)) == 1
        assert cl.complement(cl.complement(r, cl.cosize(layout)), cotarget) == r


@pytest.mark.parametrize(
    "layout, expected",
    [
        (Layout((4, 6), (1, 6)), Layout(4, 36)),
        (Layout((4, 2), (1, 10)), Layout((2, 7), (4, 20))),
        (Layout((3, 6), (1, 10)), Layout((3, 3), (3, 60))),
        (Layout((4, 10), (1, 10)), Layout((2, 2), (4, 100))),
    ],
)
def test_complement_of_modes_that_do_not_nest_is_cute_s(layout: Layout, expected: Layout) -> None:
    # CuTe floors the gap (6/4 -> 1) and leaves the holes out; the result is lawful (covering, ordered,
    # disjoint), so it is returned as CuTe computes it
    assert cl.complement(layout, 128) == expected


def test_complement_default_cotarget_is_pycute_compatible() -> None:
    assert cl.complement(Layout((2, 4), (1, 6))) == Layout(3, 2)
    assert cl.complement(4) == Layout(1, 0)


def test_complement_raises_on_overlap_nesting_negative() -> None:
    with pytest.raises(ValueError, match="overlap"):
        cl.complement(Layout((2, 2), (2, 3)), 19)  # commented out of CuTe's test: non-injective
    with pytest.raises(ValueError, match="overlap"):
        cl.complement(Layout(((2, 2), (2, 2)), ((1, 8), (8, 4))))
    with pytest.raises(ValueError, match="does not cover"):
        cl.complement(Layout((3, 2), (1, 4)), 16)  # CuTe's 2:8 leaves 3 and 7 out and reaches only 15 points
    with pytest.raises(ValueError, match="negative"):
        cl.complement(Layout(4, -1), 8)
    with pytest.raises(ValueError, match="positive"):
        cl.complement(Layout(4, 1), 0)
    with pytest.raises(TypeError):
        cl.complement(Layout(4, 1), 2.0)


# ------------------------------------------------------------------------------------------------
# inverses
# ------------------------------------------------------------------------------------------------

INVERSE_INPUTS = [
    # pycute's right/left inverse test inputs
    Layout(1, 0),
    Layout((1, 1), (0, 0)),
    Layout((3, 7), (0, 0)),
    Layout(1, 1),
    Layout(4, 0),
    Layout(4, 1),
    Layout(4, 2),
    Layout((2, 4), (0, 2)),
    Layout((8, 4), (1, 8)),
    Layout((8, 4), (4, 1)),
    Layout((2, 4, 6), (1, 2, 8)),
    Layout((2, 4, 6), (4, 1, 8)),
    Layout((4, 2), (1, 16)),
]


@pytest.mark.parametrize("layout", INVERSE_INPUTS)
def test_right_inverse(layout: Layout) -> None:
    r = cl.right_inverse(layout)
    assert all(layout(r(i)) == i for i in range(cl.size(r)))


def test_right_inverse_values() -> None:
    assert cl.right_inverse(Layout((4, 8), (8, 1))) == Layout((8, 4), (4, 1))
    assert cl.right_inverse(Layout((2, 4), (0, 1))) == Layout(4, 2)  # CuTe skips the stride-0 mode
    assert cl.right_inverse(Layout(4, 2)) == Layout(1, 0)
    assert cl.right_inverse(Layout((4, 2), (-1, 4))) == Layout(1, 0)
    assert cl.right_inverse(None) is None
    assert cl.right_inverse(8) == Layout(8, 1)


@pytest.mark.parametrize("layout", INVERSE_INPUTS)
def test_left_inverse(layout: Layout) -> None:
    r = cl.left_inverse(layout)
    n = cl.size(layout)
    assert all(layout(r(layout(i))) == layout(i) for i in range(n))
    if 0 not in [d for s, d in zip(cl.flatten(layout.shape), cl.flatten(layout.stride)) if s > 1]:  # noqa: B905
        assert all(r(layout(i)) == i for i in range(n))


def test_left_inverse_values_and_errors() -> None:
    assert cl.left_inverse(Layout((4, 8), (8, 1))) == Layout((8, 4), (4, 1))
    # CuTe's algorithm, not pycute's: the gaps of 4:2 map back by the left inverse
    assert cl.left_inverse(Layout(4, 2)) == Layout((2, 4), (0, 1))
    assert cl.left_inverse(Layout((2, 4, 6), (4, 1, 8))) == Layout((4, 2, 6), (2, 1, 8))
    with pytest.raises(ValueError, match="divisibility"):
        cl.left_inverse(Layout((2, 3), (3, 2)))
    with pytest.raises(ValueError, match="not injective"):
        cl.left_inverse(Layout((2, 2, 2), (2, 1, 1)))
    with pytest.raises(ValueError, match="negative"):
        cl.left_inverse(Layout(4, -1))


# ------------------------------------------------------------------------------------------------
# max common layout / vector, nullspace
# ------------------------------------------------------------------------------------------------


def test_max_common_vector_and_layout() -> None:
    a = Layout((4, 8), (1, 4))
    assert cl.max_common_vector(a, a) == 32
    assert cl.max_common_layout(a, a) == Layout(32, 1)
    assert cl.max_common_vector(a, Layout((4, 8), (8, 1))) == 1
    assert cl.max_common_layout(a, Layout((4, 8), (8, 1))) == Layout(1, 0)
    b = Layout((4, 2, 4), (1, 16, 4))
    assert cl.max_common_vector(a, b) == 4
    common = cl.max_common_layout(a, b)
    assert all(a(common(i)) == i and b(common(i)) == i for i in range(cl.size(common)))
    assert cl.max_common_vector(Layout((4, 6), (1, 5)), Layout(24, 1)) == 4


def test_nullspace() -> None:
    assert cl.nullspace(Layout((4, 2, 3), (1, 0, 4))) == Layout(2, 4)
    assert cl.nullspace(Layout((4, 2, 3), (0, 1, 0))) == Layout((4, 3), (1, 8))
    assert cl.nullspace(Layout((4, 2), (1, 4))) == Layout(1, 0)


# ------------------------------------------------------------------------------------------------
# upcast / downcast / recast
# ------------------------------------------------------------------------------------------------


def test_upcast_downcast_recast() -> None:
    layout = Layout((4, 8), (1, 4))
    assert cl.upcast(layout, 2) == Layout((2, 8), (1, 2))
    assert cl.downcast(Layout((2, 8), (1, 2)), 2) == layout
    assert cl.upcast(Layout((8, 4), (4, 1)), 4) == Layout((8, 1), (1, 1))
    assert cl.upcast(Layout((4, 8), (0, 1)), 2) == Layout((4, 4), (0, 1))
    assert cl.downcast(Layout((4, 8), (-1, 4)), 2) == Layout((8, 8), (-1, 8))
    assert cl.recast_layout(16, 8, layout) == cl.upcast(layout, 2)
    assert cl.recast_layout(8, 16, layout) == cl.downcast(layout, 2)
    assert cl.recast_layout(32, 32, layout) is layout
    assert cl.recast_layout(48, 32, Layout((6, 4), (1, 6))) == cl.downcast(
        cl.upcast(Layout((6, 4), (1, 6)), 3), 2
    )
    with pytest.raises(ValueError, match="divide"):
        cl.upcast(Layout((4, 8), (1, 6)), 4)
    with pytest.raises(ValueError, match="stride 1"):
        cl.downcast(Layout((4, 8), (2, 8)), 2)
    with pytest.raises(ValueError):
        cl.upcast(layout, 0)

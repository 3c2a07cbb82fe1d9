"""Unit tests of the Layout class, its constructors and mode utilities."""

from __future__ import annotations

import cute_layout as cl
import pytest
from cute_layout import Layout


def test_default_strides_are_column_major_with_zero_for_size_one() -> None:
    assert Layout((4, 2)).stride == (1, 4)
    assert Layout((2, (3, 4))).stride == (1, (2, 6))
    assert Layout((1, 4, 1, 2)).stride == (0, 1, 0, 4)
    assert Layout(8).stride == 1
    assert Layout(1).stride == 0
    assert Layout(()).stride == ()


def test_str_and_repr() -> None:
    assert str(Layout((4, 2), (1, 4))) == "(4,2):(1,4)"
    assert str(Layout(8, 1)) == "8:1"
    assert str(Layout((4,), (1,))) == "(4):(1)"
    assert str(Layout(((2, 2), (2, 4)), ((1, 4), (2, 8)))) == "((2,2),(2,4)):((1,4),(2,8))"
    assert str(Layout((4, 2), (-1, 0))) == "(4,2):(-1,0)"
    assert repr(Layout((4, 2), (1, 4))) == "Layout((4, 2), (1, 4))"
    assert eval(repr(Layout((2, (3, 4)), (1, (2, 6)))), {"Layout": Layout}) == Layout((2, (3, 4)))


def test_equality_and_hash() -> None:
    a, b = Layout((4, 2), (1, 4)), Layout((4, 2))
    assert a == b and hash(a) == hash(b)
    assert a != Layout((4, 2), (2, 1))
    assert Layout(4, 1) != Layout((4,), (1,))
    assert a != (4, 2)
    assert len({a, b, Layout((2, 4))}) == 2


def test_call_with_index_coordinate_and_slice() -> None:
    layout = Layout((4, (2, 3)), (2, (1, 8)))
    assert layout(0) == 0
    assert layout(5) == 2 + 1
    assert layout(1, (1, 2)) == 2 + 1 + 16
    assert layout((1, (1, 2))) == 2 + 1 + 16
    assert layout(1, 5) == layout(1, (1, 2))
    assert [layout(i) for i in range(4)] == [0, 2, 4, 6]
    assert layout(30) == layout(6 + 24)  # the last mode extends past the size
    # slicing with None keeps modes, as CuTe's underscore
    assert layout(None, 3) == Layout((4,), (2,))
    assert layout(2, None) == Layout(((2, 3),), ((1, 8),))
    assert layout((None, (1, None))) == Layout((4, 3), (2, 8))
    assert layout(None) is layout
    with pytest.raises(TypeError):
        layout(1.5)


def test_call_negative_index_is_odd() -> None:
    layout = Layout((4, 3), (3, 1))
    assert [layout(-i) for i in range(12)] == [-layout(i) for i in range(12)]


def test_getitem_len_iter() -> None:
    layout = Layout((4, (2, 3)), (2, (1, 8)))
    assert len(layout) == 2
    assert layout[0] == Layout(4, 2)
    assert layout[1] == Layout((2, 3), (1, 8))
    assert layout[1][1] == Layout(3, 8)
    assert layout[-1] == layout[1]
    assert layout[0:1] == Layout((4,), (2,))
    assert list(layout) == [layout[0], layout[1]]
    single = Layout(8, 2)
    assert len(single) == 1 and single[0] == single and list(single) == [single]
    with pytest.raises(IndexError):
        single[1]


def test_size_cosize_coshape_rank_depth() -> None:
    layout = Layout((4, (2, 3)), (2, (1, 8)))
    assert cl.size(layout) == layout.size() == 24
    assert cl.cosize(layout) == layout.cosize() == 3 * 2 + 1 * 1 + 2 * 8 + 1
    assert cl.coshape(layout) == cl.cosize(layout)
    assert cl.rank(layout) == layout.rank() == 2
    assert cl.depth(layout) == 2
    assert cl.size(layout, 1) == 6 and cl.size(layout, (1, 0)) == 2
    assert cl.cosize(layout, 0) == 7
    assert cl.size((2, (3, 4))) == 24


def test_cosize_with_negative_and_zero_strides() -> None:
    # pycute's cosize (layout(size-1)+1) is wrong here; CuTe's is the span of the image
    layout = Layout((4, 2), (-1, 4))
    values = [layout(i) for i in range(8)]
    assert cl.cosize(layout) == max(values) - min(values) + 1 == 8
    assert cl.cosize(Layout((4, 2), (0, 0))) == 1
    assert cl.cosize(Layout((3, 2), (2, -7))) == 2 * 2 + 7 + 1


def test_malformed_layouts_raise() -> None:
    with pytest.raises(ValueError, match="congruent"):
        Layout((4, 2), (1,))
    with pytest.raises(ValueError, match="congruent"):
        Layout((4, 2), 1)
    with pytest.raises(ValueError, match="congruent"):
        Layout(4, (1, 2))
    with pytest.raises(ValueError, match="positive"):
        Layout((4, 0))
    with pytest.raises(ValueError, match="positive"):
        Layout((4, -2), (1, 4))
    for bad in (4.0, "4", True, None, (4, 2.0), (4, "a"), (False, 2)):
        with pytest.raises(TypeError):
            Layout(bad)
    with pytest.raises(TypeError):
        Layout((4, 2), (1.0, 4))
    with pytest.raises(TypeError):
        Layout((4, 2), (True, 4))


def test_index_like_leaves_are_accepted() -> None:
    class Idx:
        def __index__(self) -> int:
            return 3

    assert Layout((Idx(), 2)) == Layout((3, 2))
    assert Layout([4, 2], [1, 4]) == Layout((4, 2), (1, 4))


def test_make_layout_concatenates_or_builds() -> None:
    a, b = Layout(4, 1), Layout((2, 3), (4, 8))
    assert cl.make_layout(a, b) == Layout((4, (2, 3)), (1, (4, 8)))
    assert cl.make_layout([a, b]) == cl.make_layout(a, b)
    assert cl.make_layout(x for x in (a, b)) == cl.make_layout(a, b)
    assert cl.make_layout(a) == Layout((4,), (1,))
    assert cl.make_layout((4, 2)) == Layout((4, 2), (1, 4))
    assert cl.make_layout((4, 2), stride=(2, 1)) == Layout((4, 2), (2, 1))
    assert cl.make_layout((4, 2), (2, 1)) == Layout((4, 2), (2, 1))
    assert cl.make_layout((4, 2, 3), order=(1, 0, 2)) == Layout((4, 2, 3), (2, 1, 8))
    assert cl.make_layout(8) == Layout(8, 1)
    with pytest.raises(TypeError):
        cl.make_layout(a, 3)
    with pytest.raises(TypeError):
        cl.make_layout((4, 2), stride=(1, 4), order=(0, 1))


def test_make_ordered_layout() -> None:
    assert cl.make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1)) == Layout((2, 2, 2, 2), (1, 4, 8, 2))
    assert cl.make_ordered_layout((4, 8), (1, 0)) == Layout((4, 8), (8, 1))
    assert cl.make_ordered_layout((2, (3, 4)), (1, (0, 2))) == Layout((2, (3, 4)), (3, (1, 6)))


def test_make_identity_layout() -> None:
    ident = cl.make_identity_layout((4, 8))
    assert str(ident) == "(4,8):(1@0,1@1)"
    assert all(ident(i, j) == (i, j) for i in range(4) for j in range(8))
    assert ident(13) == (1, 3)
    assert cl.size(ident) == 32 and cl.cosize(ident) == 32 and cl.coshape(ident) == (4, 8)
    nested = cl.make_identity_layout(((2, 2), 3))
    assert nested(((1, 0), 2)) == ((1, 0), 2)
    assert cl.coshape(nested) == ((2, 2), 3) and cl.cosize(nested) == 12
    assert cl.flatten(nested(((1, 1), 2))) == (1, 1, 2)
    assert cl.make_identity_layout(8) == Layout(8, 1)
    # tiles of an identity layout give the coordinates of the tile's elements (predication)
    tiles = cl.zipped_divide(ident, (2, 4))
    assert tiles((1, 3), (1, 1)) == (3, 7)


def test_get_select_take_group() -> None:
    layout = Layout((4, (2, 3), 5), (1, (4, 8), 24))
    assert cl.get(layout, 1) == Layout((2, 3), (4, 8))
    assert cl.get(layout, 1, 0) == Layout(2, 4)
    assert cl.get((1, (2, 3)), 1, 1) == 3
    assert cl.get(7, 0) == 7
    assert cl.select(layout, 2, 0) == Layout((5, 4), (24, 1))
    assert cl.select((1, 2, 3), 0, 2) == (1, 3)
    assert cl.take(layout, 1, 3) == Layout(((2, 3), 5), ((4, 8), 24))
    assert cl.group_modes(layout, 0, 2) == Layout(((4, (2, 3)), 5), ((1, (4, 8)), 24))
    assert cl.group_modes((1, 2, 3, 4), 1, 3) == (1, (2, 3), 4)
    with pytest.raises(ValueError):
        cl.group_modes((1, 2), 1, 5)


def test_append_prepend() -> None:
    layout = Layout((4, 2), (1, 4))
    assert cl.append(layout) == Layout((4, 2, 1), (1, 4, 0))
    assert cl.append(layout, Layout(3, 8)) == Layout((4, 2, 3), (1, 4, 8))
    assert cl.append(Layout(4, 1), up_to_rank=3) == Layout((4, 1, 1), (1, 0, 0))
    assert cl.append(layout, up_to_rank=2) == layout
    assert cl.prepend(layout) == Layout((1, 4, 2), (0, 1, 4))
    assert cl.prepend(Layout(4, 1), Layout(2, 8)) == Layout((2, 4), (8, 1))
    assert cl.append((1, 2), 3) == (1, 2, 3)
    assert cl.prepend((1, 2), 0) == (0, 1, 2)
    assert cl.append(5, 1, up_to_rank=3) == (5, 1, 1)
    with pytest.raises(ValueError):
        cl.append(layout, up_to_rank=1)


def test_slice_and_offset() -> None:
    layout = Layout((4, (2, 3)), (2, (1, 8)))
    sub, off = cl.slice_and_offset((None, (1, 2)), layout)
    assert sub == Layout((4,), (2,)) and off == 1 + 16
    sub, off = cl.slice_and_offset((3, None), layout)
    assert sub == Layout(((2, 3),), ((1, 8),)) and off == 6
    assert cl.slice_and_offset((1, 1), layout) == (Layout((), ()), 2 + 1)
    assert all(sub(i) + off == layout(3, i) for i in range(6))


def test_layout_methods_compose_with_shape_tile_coords() -> None:
    layout = Layout((4, 8), (8, 1))
    assert layout.compose(Layout(2, 3)) == cl.composition(layout, Layout(2, 3))
    assert layout.compose(2, 4) == cl.composition(layout, (2, 4))
    assert layout.with_shape(8, 4) == cl.composition(layout, Layout((8, 4)))
    assert layout.with_shape((2, 16)) == cl.composition(layout, Layout((2, 16)))
    assert layout.tile(2, 4) == cl.tiled_divide(layout, (2, 4))
    compact = Layout((4, (2, 3)), (6, (1, 2)))
    for i in range(24):
        hier = compact.get_hier_coord(i)
        assert compact(hier) == i
        flat = compact.get_flat_coord(i)
        assert compact(flat) == i and all(isinstance(c, int) for c in flat)
        assert compact(compact.get_1d_coord(i)) == i

"""Unit tests of the divides, products, partitioners and thread-value layouts."""

from __future__ import annotations

import cute_layout as cl
import pytest
from cute_layout import Layout
from layout_strategies import image

A2 = Layout((9, (4, 8)), (59, (13, 1)))
T2 = (Layout(3, 3), Layout((2, 4), (1, 8)))


def test_logical_divide_doc_examples() -> None:
    assert cl.logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2)) == Layout(
        ((2, 2), (2, 3)), ((4, 1), (2, 8))
    )
    assert cl.logical_divide(A2, T2) == Layout(((3, 3), ((2, 4), (2, 2))), ((177, 59), ((13, 2), (26, 1))))


def test_zipped_tiled_flat_divide_doc_examples() -> None:
    z = cl.zipped_divide(A2, T2)
    assert z == Layout(((3, (2, 4)), (3, (2, 2))), ((177, (13, 2)), (59, (26, 1))))
    assert str(z) == "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
    assert z[0] == cl.composition(A2, T2)  # the tile mode is the composition with the tiler
    assert cl.tiled_divide(A2, T2) == Layout(((3, (2, 4)), 3, (2, 2)), ((177, (13, 2)), 59, (26, 1)))
    assert cl.flat_divide(A2, T2) == Layout((3, (2, 4), 3, (2, 2)), (177, (13, 2), 59, (26, 1)))
    # the shapes of the doc's (9,32) / (3,8) example
    assert cl.product_each(cl.zipped_divide(A2, T2).shape) == (24, 12)


def test_divide_of_the_issue_benchmark() -> None:
    layout = Layout((4096, 4096), (4096, 1))
    tiler = (Layout(16, 1), Layout(128, 1))
    assert cl.logical_divide(layout, tiler) == Layout(((16, 256), (128, 32)), ((4096, 65536), (1, 128)))
    assert cl.zipped_divide(layout, tiler) == Layout(((16, 128), (256, 32)), ((4096, 1), (65536, 128)))
    assert cl.zipped_divide(layout, (16, 128)) == cl.zipped_divide(layout, tiler)


def test_divide_tilers_int_none_and_extra_modes() -> None:
    layout = Layout((8, 6, 5), (1, 8, 48))
    assert cl.logical_divide(layout, (2, None)) == Layout(((2, 4), 6, 5), ((1, 2), 8, 48))
    assert cl.logical_divide(layout, None) is layout
    assert cl.logical_divide(Layout(12, 1), 4) == Layout((4, 3), (1, 4))
    assert cl.zipped_divide(layout, (2, 3)) == Layout(((2, 3), (4, 2, 5)), ((1, 8), (2, 24, 48)))
    assert cl.zipped_divide(layout, (2, None)) == Layout(((2, 1), (4, 6, 5)), ((1, 0), (2, 8, 48)))
    assert cl.tiled_divide(layout, (2, 3)) == Layout(((2, 3), 4, 2, 5), ((1, 8), 2, 24, 48))
    with pytest.raises(ValueError, match="more modes"):
        cl.logical_divide(Layout(8, 1), (2, 2))
    with pytest.raises(TypeError):
        cl.logical_divide(layout, 2.0)


def test_divide_that_does_not_fit_extends_the_layout() -> None:
    # 10 elements in tiles of 4: three tiles, the last one past the end (predicated in kernels)
    d = cl.logical_divide(Layout(10, 1), 4)
    assert d == Layout((4, 3), (1, 4))


def test_divide_raises_where_the_composition_is_not_a_layout() -> None:
    with pytest.raises(ValueError, match="logical_divide"):
        cl.logical_divide(Layout((4, 6), (1, 5)), 6)


def test_hier_unzip_is_pycute_compatible() -> None:
    assert cl.hier_unzip(cl.logical_divide, A2, T2) == cl.zipped_divide(A2, T2)
    assert cl.hier_unzip(cl.logical_divide, A2, None) == Layout((1, A2.shape), (0, A2.stride))
    assert cl.tile_unzip(cl.logical_divide(A2, T2), T2) == cl.zipped_divide(A2, T2)


def test_logical_product_doc_examples() -> None:
    assert cl.logical_product(Layout((2, 2), (4, 1)), Layout(6, 1)) == Layout(
        ((2, 2), (2, 3)), ((4, 1), (2, 8))
    )
    assert cl.logical_product(Layout((2, 5), (5, 1)), 4) == Layout(((2, 5), 4), ((5, 1), 10))
    assert cl.logical_product(Layout((2, 5), (5, 1)), 4) == cl.logical_product(
        Layout((2, 5), (5, 1)), Layout(4)
    )
    product = cl.logical_product(Layout((2, 2), (4, 1)), Layout((4, 2), (2, 1)))
    assert sorted(image(product)) == list(range(32))


@pytest.mark.parametrize(
    "a, b",
    [
        (Layout(1, 0), Layout(1, 0)),
        (Layout(1, 1), Layout(1, 0)),
        (Layout(1, 0), Layout(1, 1)),
        (Layout(1, 1), Layout(1, 1)),
        (Layout(3, 1), Layout(4, 0)),
        (Layout(3, 0), Layout(4, 1)),
        (Layout(3, 0), Layout(4, 0)),
        (Layout(3, 2), Layout(4, 1)),
        (Layout(3), Layout((2, 4))),
    ],
)
def test_logical_product_pycute_post_conditions(a: Layout, b: Layout) -> None:
    r = cl.logical_product(a, b)
    assert cl.rank(r) == 2
    assert r[0] == a
    assert cl.size(r[1]) == cl.size(b)


def test_zipped_tiled_flat_product() -> None:
    block = Layout((2, 5), (5, 1))
    tiler = (Layout(3, 1), Layout(4, 1))
    # by mode: each mode of the block is reproduced within its own mode
    lp = cl.logical_product(block, tiler)
    assert lp == Layout(((2, 3), (5, 4)), ((5, 1), (1, 5)))
    assert cl.zipped_product(block, tiler) == Layout(((2, 5), (3, 4)), ((5, 1), (1, 5)))
    assert cl.tiled_product(block, tiler) == Layout(((2, 5), 3, 4), ((5, 1), 1, 5))
    assert cl.flat_product(block, tiler) == Layout((2, 5, 3, 4), (5, 1, 1, 5))
    assert cl.zipped_product(block, 4) == cl.zipped_product(block, Layout(4))
    assert cl.logical_product(block, None) is block


def test_blocked_and_raked_products_doc_examples() -> None:
    block, tiler = Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))
    assert cl.blocked_product(block, tiler) == Layout(((2, 3), (5, 4)), ((5, 10), (1, 30)))
    assert cl.raked_product(block, tiler) == Layout(((3, 2), (4, 5)), ((10, 5), (30, 1)))
    # ranks are padded to the larger one
    assert cl.blocked_product(Layout(4, 1), Layout((2, 3))) == Layout(((4, 2), (1, 3)), ((1, 4), (0, 8)))
    assert cl.blocked_product(Layout(4, 1), Layout(3, 1)) == Layout(((4, 3),), ((1, 4),))  # rank 1, as CuTe


def test_tile_to_shape() -> None:
    assert cl.tile_to_shape(Layout((8, 8), (8, 1)), (64, 64)) == Layout(((8, 8), (8, 8)), ((8, 64), (1, 512)))
    r = cl.tile_to_shape(Layout((2, 2), (1, 2)), (4, 6), (1, 0))
    assert cl.product_each(r.shape) == (4, 6)
    assert sorted(image(r)) == list(range(24))
    assert r == Layout(((2, 2), (2, 3)), ((1, 12), (2, 4)))
    assert r((0, 1), (0, 0)) == 4 * 3  # the repeats run along mode 1 first
    with pytest.raises(ValueError, match="divide"):
        cl.tile_to_shape(Layout((8, 8), (8, 1)), (60, 64))


def test_local_tile_and_partition() -> None:
    data = Layout((8, 24), (24, 1))  # row-major 8x24
    tile, offset = cl.local_tile(data, (4, 8), (1, 2))
    assert tile == Layout((4, 8), (24, 1)) and offset == 4 * 24 + 16
    assert all(tile(i, j) + offset == data(4 + i, 16 + j) for i in range(4) for j in range(8))
    # projections select the tiler and coordinate modes that apply
    tile2, offset2 = cl.local_tile(data, (4, 99, 8), (1, 0, 2), proj=(1, None, 1))
    assert (tile2, offset2) == (tile, offset)
    # thread 3 of a 2x16 row-major thread layout owns one element of every 2x16 block
    part, off = cl.local_partition(data, Layout((2, 16), (16, 1)), 3)
    assert part == Layout((4, 2), (48, 16)) and off == 3
    assert all(part(i, j) + off == data(2 * i, 16 * j + 3) for i in range(4) for j in range(2))
    part, off = cl.local_partition(Layout(64, 1), Layout(8, 1), 5)
    assert part == Layout((8,), (8,)) and off == 5
    tile, off = cl.inner_partition(data, (4, 8), 4)  # flat index 4 into the (2,3) grid of tiles
    assert off == data(0, 16)
    part, off = cl.outer_partition(data, (4, 8), (1, 1))
    assert part == Layout((2, 3), (96, 8)) and off == data(1, 1)


def test_make_layout_tv_elementwise_add() -> None:
    tiler, tv = cl.make_layout_tv(Layout((4, 32), (32, 1)), Layout((4, 4), (4, 1)))
    assert tiler == (16, 128)
    assert tv == Layout(((32, 4), (4, 4)), ((64, 4), (16, 1)))
    # every (thread, value) hits a distinct element of the 16x128 tile
    assert sorted(image(tv)) == list(range(16 * 128))
    # thread t owns a 4x4 block at row 4*(t // 32), column 4*(t % 32), values row-major
    m = Layout(tiler)  # (16,128) column-major tile coordinates
    for t in (0, 1, 33, 127):
        for v in range(16):
            row, col = 4 * (t // 32) + v // 4, 4 * (t % 32) + v % 4
            assert tv(t, v) == m(row, col)


def test_make_layout_tv_other_cases() -> None:
    tiler, tv = cl.make_layout_tv(Layout((32, 4), (1, 32)), Layout((4, 1), (1, 0)))
    assert tiler == (128, 4)
    assert sorted(image(tv)) == list(range(512))
    with pytest.raises(TypeError):
        cl.make_layout_tv((4, 32), Layout(4))

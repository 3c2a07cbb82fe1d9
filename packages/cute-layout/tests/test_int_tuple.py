"""Unit tests of the IntTuple algebra (cute_layout.int_tuple)."""

from __future__ import annotations

import cute_layout as cl
import pytest
from cute_layout.int_tuple import ArithTuple, E, ScaledBasis


def test_is_int_is_static_is_tuple() -> None:
    assert cl.is_int(3) and cl.is_int(-1) and cl.is_int(0)
    assert not cl.is_int(True) and not cl.is_int(1.0) and not cl.is_int("1") and not cl.is_int((1,))
    assert cl.is_static(3) and cl.is_static((1, (2, 3)))
    assert not cl.is_static(True) and not cl.is_static((1, 2.0))
    assert cl.is_tuple(()) and cl.is_tuple((1, 2)) and not cl.is_tuple(1)


def test_integer_abc_matches_pycute_typing() -> None:
    assert issubclass(int, cl.Integer) and isinstance(1, cl.Integer)
    for cls, obj in ((float, 1.0), (str, "hi"), (bool, False)):
        assert not issubclass(cls, cl.Integer)
        assert not isinstance(obj, cl.Integer)


def test_static_int_names_the_operand() -> None:
    assert cl.static_int(4, "f", "x") == 4
    with pytest.raises(TypeError, match="f: x must be an int"):
        cl.static_int(4.0, "f", "x")


def test_signum() -> None:
    assert (cl.signum(-3), cl.signum(0), cl.signum(5)) == (-1, 0, 1)


def test_flatten_unflatten() -> None:
    assert cl.flatten(3) == (3,)
    assert cl.flatten(()) == ()
    assert cl.flatten((1, (2, (3, 4)), ())) == (1, 2, 3, 4)
    assert cl.unflatten((1, 2, 3, 4), (0, (0, (0, 0)))) == (1, (2, (3, 4)))
    assert cl.unflatten((5,), 0) == 5
    with pytest.raises(ValueError):
        cl.unflatten((1, 2), (0, (0, 0)))
    layout = cl.Layout(((2, 3), 4), ((1, 2), 6))
    assert cl.flatten(layout) == cl.Layout((2, 3, 4), (1, 2, 6))


def test_rank_depth() -> None:
    assert cl.rank(4) == 1 and cl.rank((1, 2, 3)) == 3 and cl.rank(()) == 0
    assert cl.depth(4) == 0 and cl.depth((1, 2)) == 1 and cl.depth((1, (2, (3,)))) == 3 and cl.depth(()) == 1
    assert cl.rank(cl.Layout((2, (3, 4)))) == 2 and cl.depth(cl.Layout((2, (3, 4)))) == 2


def test_product_and_friends() -> None:
    assert cl.product(2) == 2
    assert cl.product((3, 2)) == 6
    assert cl.product(((2, 3), 4)) == 24
    assert cl.product(()) == 1
    assert cl.product_each(((2, 3), 4, (5, (1, 2)))) == (6, 4, 10)
    assert cl.product_each(7) == (7,)
    assert cl.product_like(((2, 3), 4), (0, 0)) == (6, 4)
    assert cl.product_like(((2, 3), 4), ((0, 0), 0)) == ((2, 3), 4)


def test_inner_product() -> None:
    assert cl.inner_product(2, 3) == 6
    assert cl.inner_product((1, 2), (3, 2)) == 7
    assert cl.inner_product(((2, 3), 4), ((2, 1), 2)) == 15
    with pytest.raises(ValueError):
        cl.inner_product((1, 2), (1, 2, 3))


def test_prefix_product() -> None:
    assert cl.prefix_product(2) == 1
    assert cl.prefix_product((3, 2)) == (1, 3)
    assert cl.prefix_product((3, 2, 4)) == (1, 3, 6)
    assert cl.prefix_product(((2, 3), 4)) == ((1, 2), 6)
    assert cl.prefix_product(((2, 3), (2, 1, 2), (5, 2, 1))) == ((1, 2), (6, 12, 12), (24, 120, 240))
    assert cl.prefix_product((2, 3), (5, 7)) == (5, 7)


def test_shape_div() -> None:
    assert cl.shape_div((3, 4), 6) == (1, 2)
    assert cl.shape_div((3, 4), 12) == (1, 1)
    assert cl.shape_div((3, 4), 36) == (1, 1)
    assert cl.shape_div(((3, 4), 6), 36) == ((1, 1), 2)
    assert cl.shape_div((6, (3, 4)), 36) == (1, (1, 2))
    assert cl.shape_div((4, 5, 6), 40) == (1, 1, 3)  # CuTe's doc example
    assert cl.shape_div(12, (2, 3)) == 2
    assert cl.shape_div((8, 6), (2, 3)) == (4, 2)
    with pytest.raises(ValueError, match="divisibility"):
        cl.shape_div(6, 4)


def test_ceil_div_and_round_up() -> None:
    assert cl.ceil_div(7, 2) == 4
    assert cl.ceil_div(8, 2) == 4
    assert cl.ceil_div((3, 4), 6) == (1, 2)
    assert cl.ceil_div((7, 9), (2, 4)) == (4, 3)
    assert cl.ceil_div((7, 9), (2,)) == (4, 9)  # missing modes of b are 1
    assert cl.ceil_div(12, (2, 4)) == 2
    assert cl.round_up(7, 4) == 8
    assert cl.round_up((7, 9), (4, 3)) == (8, 9)


def test_elem_scale_tuple_max_min() -> None:
    assert cl.elem_scale((2, 3), (4, (1, 5))) == (8, 15)
    assert cl.elem_scale(2, (3, 4)) == 24
    assert cl.tuple_max((1, (7, 3), 2)) == 7
    assert cl.tuple_min((4, (7, 3), 2)) == 2


def test_congruent_weakly_congruent_compatible() -> None:
    assert cl.congruent((1, (2, 3)), (4, (5, 6)))
    assert not cl.congruent((1, (2, 3)), (4, 5))
    assert cl.congruent(3, 5)
    assert cl.weakly_congruent((1, 2), ((1, 2), (3, 4)))
    assert cl.weakly_congruent(1, ((1, 2), 3))
    assert not cl.weakly_congruent((1, 2), (1, 2, 3))
    assert not cl.weakly_congruent(((1, 2), 3), (1, 3))
    assert cl.compatible(24, (4, 6))
    assert cl.compatible((4, 6), (4, (2, 3)))
    assert not cl.compatible((4, 6), (2, 12))
    assert not cl.compatible((4, 6), 24)


def test_evenly_divides() -> None:
    assert cl.evenly_divides((8, 12), (4, 4))
    assert not cl.evenly_divides((8, 12), (3, 4))
    assert cl.evenly_divides(12, 4)
    assert not cl.evenly_divides(12, 5)
    assert not cl.evenly_divides((8,), (2, 2))
    assert cl.evenly_divides((8, 12), (cl.Layout(4, 2), None))
    assert not cl.evenly_divides(10, cl.Layout(4, 1))


def test_crd2idx() -> None:
    shape, stride = ((2, 3), 4), ((1, 2), 6)
    assert cl.crd2idx(((1, 2), 3), shape, stride) == 1 + 4 + 18
    assert cl.crd2idx((5, 3), shape, stride) == cl.crd2idx(((1, 2), 3), shape, stride)
    assert cl.crd2idx(23, shape, stride) == cl.crd2idx(((1, 2), 3), shape, stride)
    # with a shape only the index is colexicographic and an int is its own index
    assert cl.crd2idx(((1, 2), 3), shape) == 23
    assert cl.crd2idx(17, shape) == 17
    # the last mode does not wrap: coordinates past the size extend it
    assert cl.crd2idx(30, (4, 2), (1, 10)) == 2 + 7 * 10
    # None counts as 0 (pycute)
    assert cl.crd2idx((None, 1), (4, 2), (1, 10)) == 10
    # negative coordinates follow C's truncating division: odd symmetry
    assert cl.crd2idx(-5, (4, 2), (1, 10)) == -cl.crd2idx(5, (4, 2), (1, 10))
    with pytest.raises(ValueError):
        cl.crd2idx((1, 2, 3), (4, 2), (1, 4))


def test_idx2crd_last_mode_does_not_wrap_without_stride() -> None:
    assert cl.idx2crd(5, 4) == 5
    assert cl.idx2crd(5, (2, 4)) == (1, 2)
    assert cl.idx2crd(23, ((2, 3), 4)) == ((1, 2), 3)
    assert cl.idx2crd(30, (2, 4)) == (0, 15)  # last mode unwrapped (CuTe C++)
    assert cl.idx2crd((3, 5), ((2, 2), 8)) == ((1, 1), 5)
    assert cl.idx2crd(-5, (2, 4)) == (-1, -2)


def test_idx2crd_with_stride_wraps_every_mode() -> None:
    assert cl.idx2crd(30, (2, 4), (1, 2)) == (0, 3)
    assert cl.idx2crd(7, (4, 2), (2, 1)) == (3, 1)
    assert cl.idx2crd(17, ((2, 4), 3), ((1, 2), 8)) == ((1, 0), 2)
    assert cl.idx2crd(5, (1, 4), (0, 1)) == (0, 1)  # size-1 modes give 0, even with stride 0
    assert cl.idx2crd(5, (2, 4), 3) == cl.idx2crd(5, (2, 4), (3, 6))  # int stride: compact from it
    with pytest.raises(ValueError, match="stride 0"):
        cl.idx2crd(5, (2, 4), (0, 1))


def test_crd2crd() -> None:
    assert cl.crd2crd((1, 2), ((2, 2), 3)) == ((1, 0), 2)
    assert cl.crd2crd(((1, 0), 2), 12, ((2, 2), 3)) == 9
    assert cl.crd2crd(7, (2, 4)) == (1, 3)
    assert cl.crd2crd((3, 1), (2, (2, 2)), (4, 2)) == (3, (1, 0))  # mode by mode, as CuTe C++
    with pytest.raises(ValueError):
        cl.crd2crd((1, 2), 6)


def test_comparisons() -> None:
    assert cl.elem_less((1, 2), (2, 3)) and not cl.elem_less((1, 3), (2, 3))
    assert cl.elem_less((1,), (2, 3))  # missing modes of a pass
    assert cl.elem_leq((2, 3), (2, 3)) and cl.elem_geq((2, 3), (2, 3)) and cl.elem_gtr((3, 4), (2, 3))
    assert cl.lex_less((1, 9), (2, 0)) and not cl.lex_less((2, 0), (1, 9))
    assert cl.lex_less((1, 2), (1, 2, 0)) and not cl.lex_less((1, 2), (1, 2))
    assert cl.lex_leq((1, 2), (1, 2)) and cl.lex_gtr((2, 0), (1, 9)) and cl.lex_geq((2, 0), (2, 0))
    assert cl.colex_less((9, 1), (0, 2)) and not cl.colex_less((0, 2), (9, 1))
    assert cl.colex_leq((1, 2), (1, 2)) and cl.colex_gtr((0, 2), (9, 1)) and cl.colex_geq((3, 3), (3, 3))
    assert cl.lex_less(((1, 2), 3), ((1, 3), 0))


def test_slice_dice_has_none() -> None:
    assert cl.slice_((None, 0), (4, 2)) == (4,)
    assert cl.slice_((None, (0, None)), (4, (2, 3))) == (4, 3)
    assert cl.slice_(None, (4, 2)) == ((4, 2),)
    assert cl.slice_(1, 4) == ()
    assert cl.dice((None, 0), (4, 2)) == (2,)
    assert cl.dice((1, None, 1), (4, 8, 16)) == (4, 16)
    assert cl.dice((None, (0, None)), (4, (2, 3))) == (2,)
    assert cl.dice(1, (4, 2)) == (4, 2)
    assert cl.dice((1, None), cl.Layout((4, 2), (1, 4))) == cl.Layout((4,), (1,))
    assert cl.has_none((1, (2, None))) and not cl.has_none((1, (2, 3))) and cl.has_none(None)
    with pytest.raises(ValueError):
        cl.slice_((None, 0), (4, 2, 1))


def test_repeat_like_and_compact_strides() -> None:
    assert cl.repeat_like((1, (2, 3)), 0) == (0, (0, 0))
    assert cl.compact_col_major((2, (3, 4))) == (1, (2, 6))
    assert cl.compact_col_major((2, 1, 4)) == (1, 0, 2)  # static size-1 modes get stride 0
    assert cl.compact_row_major((2, (3, 4))) == (12, (4, 1))
    assert cl.compact_col_major((2, 3), 5) == (5, 10)
    assert cl.compact_order((2, 2, 2, 2), (0, 2, 3, 1)) == (1, 4, 8, 2)  # CuTe's example
    assert cl.compact_order(((2, 3), 4), (1, 0)) == ((4, 8), 1)
    with pytest.raises(ValueError):
        cl.compact_order((2, 3), (0, 1, 2))


def test_scaled_basis_arithmetic() -> None:
    e0, e1 = E(0), E(1)
    assert str(e0) == "1@0" and str(3 * E(0, 1)) == "3@1@0"
    assert 2 * e0 + 3 * e1 == (2, 3)
    assert isinstance(e0 + e1, ArithTuple)
    assert 0 + e1 * 5 == ScaledBasis(5, 1)
    assert (e0 * 4).to_tuple() == (4,)
    assert (e1 * 4).to_tuple() == (0, 4)
    assert E(1, 0) * 2 + E(0) == (1, (2,))
    assert abs(-3 * e0) == 3 * e0
    assert cl.make_basis_like(8) == 1
    assert cl.make_basis_like((4, (2, 3))) == (E(0), (E(1, 0), E(1, 1)))

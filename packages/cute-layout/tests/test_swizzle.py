"""Swizzles, composed layouts and max_alignment: unit tests and laws (hypothesis)."""

from __future__ import annotations

import itertools

import cute_layout as cl
import pytest
from cute_layout.swizzle import ComposedLayout, Swizzle, make_composed_layout, make_swizzle, max_alignment
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reference_swizzle(bits: int, base: int, shift: int, x: int) -> int:
    """CuTe's definition, written out independently of the implementation."""
    ymask = ((1 << bits) - 1) << (base + max(0, shift))
    y = x & ymask
    return x ^ (y >> shift if shift >= 0 else y << -shift)


@st.composite
def swizzles(draw: st.DrawFn, max_bits: int = 3) -> Swizzle:
    bits = draw(st.integers(0, max_bits))
    base = draw(st.integers(0, 3))
    magnitude = draw(st.integers(bits, bits + 3))
    shift = magnitude if draw(st.booleans()) else -magnitude
    return Swizzle(bits, base, shift)


@st.composite
def layouts(draw: st.DrawFn, max_modes: int = 3, negative: bool = True, zero: bool = True) -> cl.Layout:
    """Small layouts with optional nesting, zero and negative strides."""
    rank = draw(st.integers(1, max_modes))
    lo = -6 if negative else (0 if zero else 1)
    shape, stride = [], []
    for _ in range(rank):
        if draw(st.integers(0, 4)) == 0:
            sub = draw(st.integers(2, 3))
            shape.append(tuple(draw(st.integers(1, 4)) for _ in range(sub)))
            strides = st.integers(lo, 24).filter(lambda d: zero or d != 0)
            stride.append(tuple(draw(strides) for _ in range(sub)))
        else:
            shape.append(draw(st.integers(1, 6)))
            stride.append(draw(st.integers(lo, 24).filter(lambda d: zero or d != 0)))
    return cl.Layout(tuple(shape), tuple(stride))


@st.composite
def compact_layouts(draw: st.DrawFn) -> cl.Layout:
    """Bijections onto [0, 2**k): a permutation of power-of-two modes with compact strides."""
    exps = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    shape = [1 << e for e in exps]
    order = draw(st.permutations(range(len(shape))))
    stride = [0] * len(shape)
    acc = 1
    for i in order:
        stride[i] = acc
        acc *= shape[i]
    return cl.Layout(tuple(shape), tuple(stride))


def domain(layout: cl.LayoutBase) -> range:
    return range(cl.size(layout))


# -- Swizzle ---------------------------------------------------------------------------------------------


def test_swizzle_masks_follow_cute() -> None:
    sw = Swizzle(3, 4, 3)
    assert (sw.yyy_msk, sw.zzz_msk) == (0b111 << 7, 0b111 << 4)
    neg = Swizzle(2, 0, -2)
    assert (neg.yyy_msk, neg.zzz_msk) == (0b11, 0b1100)
    assert sw.size() == sw.cosize() == 1 << 10
    assert sw.swizzle_code == sw.yyy_msk | sw.zzz_msk


def test_swizzle_values_and_text() -> None:
    sw = Swizzle(3, 4, 3)
    assert sw(0b1010000000) == 0b1010000000 ^ 0b0001010000
    assert sw(0x7F) == 0x7F  # no Y bit set: unchanged
    assert str(sw) == "S<3,4,3>"
    assert repr(sw) == "Swizzle(3,4,3)"
    assert Swizzle(1, 2, -3)(0b100) == 0b100000 | 0b100
    assert Swizzle(0, 0, 0)(12345) == 12345


def test_swizzle_equality_and_hash() -> None:
    assert Swizzle(2, 3, 3) == Swizzle(2, 3, 3)
    assert Swizzle(2, 3, 3) != Swizzle(2, 3, 4)
    assert len({Swizzle(2, 3, 3), Swizzle(2, 3, 3), Swizzle(1, 3, 3)}) == 2


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((-1, 0, 0), ValueError),
        ((0, -1, 0), ValueError),
        ((3, 4, 2), ValueError),
        ((3, 4, -2), ValueError),
        ((True, 0, 1), TypeError),
        ((1.0, 0, 1), TypeError),
        (("3", 4, 3), TypeError),
    ],
)
def test_swizzle_rejects_bad_parameters(args: tuple[object, ...], error: type[Exception]) -> None:
    with pytest.raises(error):
        Swizzle(*args)  # type: ignore[arg-type]


def test_swizzle_rejects_bad_offsets() -> None:
    with pytest.raises(TypeError):
        Swizzle(1, 0, 1)(1.5)
    with pytest.raises(TypeError):
        Swizzle(1, 0, 1)((1, 2))


@SETTINGS
@given(sw=swizzles(max_bits=4), blocks=st.integers(1, 3))
def test_swizzle_is_the_xor_formula_and_a_bijection(sw: Swizzle, blocks: int) -> None:
    n = sw.size() * blocks
    images = [sw(x) for x in range(n)]
    assert images == [reference_swizzle(sw.bits, sw.base, sw.shift, x) for x in range(n)]
    assert sorted(images) == list(range(n))
    assert all(sw(y) == x for x, y in enumerate(images))  # an involution
    assert cl.right_inverse(sw) == sw == cl.left_inverse(sw)


def test_make_swizzle_builds_from_masks() -> None:
    assert make_swizzle(0b111 << 7, 0b111 << 4) == Swizzle(3, 4, 3)
    assert make_swizzle(0b11, 0b1100) == Swizzle(2, 0, -2)
    assert make_swizzle(0, 0) == Swizzle(0, 0, 0)
    with pytest.raises(ValueError, match="same number of bits"):
        make_swizzle(0b11, 0b100)
    with pytest.raises(ValueError, match="not contiguous"):
        make_swizzle(0b101 << 6, 0b101)
    with pytest.raises(ValueError, match="overlap"):
        make_swizzle(0b0110, 0b0011)
    with pytest.raises(ValueError, match="non-negative"):
        make_swizzle(-1, 1)


@SETTINGS
@given(sw=swizzles(max_bits=4))
def test_make_swizzle_round_trips(sw: Swizzle) -> None:
    assume(sw.bits > 0)
    assert make_swizzle(sw.yyy_msk, sw.zzz_msk) == sw


@SETTINGS
@given(a=swizzles(), b=swizzles())
def test_swizzle_composition_is_exact_or_raises(a: Swizzle, b: Swizzle) -> None:
    try:
        c = cl.composition(a, b)
    except ValueError:
        return
    n = max(a.size(), b.size(), c.size())
    assert all(c(x) == a(b(x)) for x in range(n))


def test_swizzle_composition_examples() -> None:
    a, b = Swizzle(1, 4, 3), Swizzle(1, 5, 3)
    both = cl.composition(a, b)
    assert both == Swizzle(2, 4, 3)
    assert cl.composition(a, a) == Swizzle(0, 0, 0)
    with pytest.raises(ValueError, match="shifts differ"):
        cl.composition(Swizzle(1, 0, 2), Swizzle(1, 0, 3))


# -- ComposedLayout ----------------------------------------------------------------------------------------


def test_composed_layout_prints_like_cute() -> None:
    layout = cl.Layout((8, 64), (64, 1))
    sl = ComposedLayout(Swizzle(3, 4, 3), 0, layout)
    assert str(sl) == "S<3,4,3> o 0 o (8,64):(64,1)"
    assert repr(sl).startswith("ComposedLayout(Swizzle(3,4,3),0,")
    assert make_composed_layout(Swizzle(3, 4, 3), 0, layout) == sl
    assert cl.composition(Swizzle(3, 4, 3), layout) == sl


def test_composed_layout_accessors_follow_pycute_and_cute() -> None:
    sw, layout = Swizzle(2, 1, 2), cl.Layout((4, 8), (8, 1))
    sl = ComposedLayout(sw, 3, layout)
    assert sl.layoutB is sw and sl.layoutA is layout and sl.offset == 3  # pycute's names
    assert sl.layout_a() is sw and sl.layout_b() is layout  # CuTe's names
    assert sl.outer is sw and sl.inner is layout
    assert sl.shape == (4, 8) and sl.rank() == 2 and len(sl) == 2
    assert cl.size(sl) == 32
    assert sl[1] == ComposedLayout(sw, 3, layout[1])


def test_composed_layout_rejects_bad_parts() -> None:
    with pytest.raises(TypeError, match="outer"):
        ComposedLayout(lambda x: x, 0, cl.Layout(4, 1))
    with pytest.raises(TypeError, match="inner"):
        ComposedLayout(Swizzle(1, 0, 1), 0, Swizzle(1, 0, 1))
    with pytest.raises(TypeError, match="offset"):
        ComposedLayout(Swizzle(1, 0, 1), 1.5, cl.Layout(4, 1))


def test_composed_layout_evaluates_outer_of_offset_plus_inner() -> None:
    sw, layout = Swizzle(3, 4, 3), cl.Layout((8, 64), (64, 1))
    sl = ComposedLayout(sw, 0, layout)
    for m, n in itertools.product(range(8), range(64)):
        assert sl(m, n) == sw(layout(m, n)) == sl((m, n))
    assert sorted(sl(i) for i in range(512)) == list(range(512))
    shifted = ComposedLayout(sw, 512, layout)
    assert [shifted(i) for i in range(512)] == [sw(512 + layout(i)) for i in range(512)]


def test_composed_layout_slicing_keeps_the_offset() -> None:
    sw, layout = Swizzle(2, 0, 2), cl.Layout((4, 8), (8, 1))
    sl = ComposedLayout(sw, 0, layout)
    col = sl(None, 3)
    assert isinstance(col, ComposedLayout)
    assert [col(i) for i in range(4)] == [sl(i, 3) for i in range(4)]
    row = sl(2, None)
    assert [row(j) for j in range(8)] == [sl(2, j) for j in range(8)]
    sub, off = cl.slice_and_offset((2, None), sl)
    assert off == 0 and [sub(j) for j in range(8)] == [sl(2, j) for j in range(8)]


@SETTINGS
@given(sw=swizzles(), layout=layouts(), offset=st.integers(-20, 40))
def test_composed_layout_cosize_is_exact(sw: Swizzle, layout: cl.Layout, offset: int) -> None:
    sl = ComposedLayout(sw, offset, layout)
    assert cl.cosize(sl) == max(sl(i) for i in domain(sl)) + 1


def test_composed_layout_cosize_of_a_large_swizzled_tile() -> None:
    sl = ComposedLayout(Swizzle(3, 4, 3), 0, cl.Layout((64, 64), (64, 1)))
    assert cl.cosize(sl) == 4096
    sparse = ComposedLayout(Swizzle(3, 4, 3), 0, cl.Layout((64, 8), (1, 1024)))
    assert cl.cosize(sparse) == max(sparse(i) for i in range(512)) + 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sw=swizzles(), inner=layouts(max_modes=2), rhs=layouts(max_modes=2, negative=False))
def test_composed_layout_composition_law(sw: Swizzle, inner: cl.Layout, rhs: cl.Layout) -> None:
    sl = ComposedLayout(sw, 5, inner)
    if not all(0 <= rhs(i) < cl.size(inner) for i in domain(rhs)):
        return  # past the inner layout's domain its extension is the core algebra's business
    try:
        result = cl.composition(sl, rhs)
    except ValueError:
        return
    assert isinstance(result, ComposedLayout)
    assert all(result(i) == sl(rhs(i)) for i in domain(rhs))


def test_composed_layout_composition_with_a_tiler() -> None:
    sl = ComposedLayout(Swizzle(3, 4, 3), 0, cl.Layout((8, 64), (64, 1)))
    tile = cl.composition(sl, (cl.Layout(4, 1), cl.Layout(16, 2)))
    assert isinstance(tile, ComposedLayout) and tile.shape == (4, 16)
    assert all(tile(m, n) == sl(m, 2 * n) for m in range(4) for n in range(16))


@SETTINGS
@given(lhs=compact_layouts(), sw=swizzles(max_bits=2))
def test_layout_o_swizzle_law(lhs: cl.Layout, sw: Swizzle) -> None:
    try:
        result = cl.composition(lhs, sw)
    except ValueError:
        assert any(sw(i) >= cl.size(lhs) for i in domain(lhs))  # only refused when sw leaves the domain
        return
    assert all(result(i) == lhs(sw(i)) for i in domain(lhs))


def test_layout_o_swizzle_moves_the_swizzle_outside() -> None:
    # Transposing (8,8) moves the swizzle's bits: the result is S' o 0 o (8,8):(8,1), as CuTe computes it.
    lhs = cl.Layout((8, 8), (8, 1))
    result = cl.composition(lhs, Swizzle(3, 0, 3))
    assert isinstance(result, ComposedLayout) and isinstance(result.outer, Swizzle)
    assert result.outer == Swizzle(3, 0, -3)  # make_swizzle<a(Y), a(Z)> = make_swizzle<7, 56>
    assert all(result(i) == lhs(Swizzle(3, 0, 3)(i)) for i in range(64))
    # A layout that does not move bits to bits keeps the general form, still exact.
    odd = cl.Layout((2, 3, 2), (1, 2, 6))
    general = cl.composition(odd, Swizzle(1, 0, 1))
    assert all(general(i) == odd(Swizzle(1, 0, 1)(i)) for i in range(12))


@SETTINGS
@given(lhs=compact_layouts(), sw=swizzles(max_bits=2), inner=compact_layouts())
def test_layout_o_composed_layout_law(lhs: cl.Layout, sw: Swizzle, inner: cl.Layout) -> None:
    sl = ComposedLayout(sw, 0, inner)
    try:
        result = cl.composition(lhs, sl)
    except ValueError:
        return
    assert all(result(i) == lhs(sl(i)) for i in domain(sl))


@SETTINGS
@given(sw=swizzles(), inner=layouts(max_modes=3, negative=False))
def test_composed_layout_right_inverse_law(sw: Swizzle, inner: cl.Layout) -> None:
    sl = ComposedLayout(sw, 0, inner)
    r = cl.right_inverse(sl)
    assert all(sl(r(i)) == i for i in domain(r))


@SETTINGS
@given(sw=swizzles(), inner=compact_layouts())
def test_composed_layout_right_inverse_of_a_bijection_covers_it(sw: Swizzle, inner: cl.Layout) -> None:
    sl = ComposedLayout(sw, 0, inner)
    r = cl.right_inverse(sl)
    n = cl.size(inner)
    if n % sw.size() == 0:
        assert cl.size(r) == n
    assert all(sl(r(i)) == i for i in domain(r))


@SETTINGS
@given(sw=swizzles(), inner=layouts(max_modes=3, negative=False, zero=False))
def test_composed_layout_left_inverse_law(sw: Swizzle, inner: cl.Layout) -> None:
    points = [inner(i) for i in domain(inner)]
    assume(len(set(points)) == len(points))  # injective
    sl = ComposedLayout(sw, 0, inner)
    try:
        g = cl.left_inverse(sl)
    except ValueError:
        return
    assert all(g(sl(i)) == i for i in domain(sl))


def test_composed_layout_inverses_examples() -> None:
    sl = ComposedLayout(Swizzle(3, 4, 3), 0, cl.Layout((8, 64), (64, 1)))
    r = cl.right_inverse(sl)
    assert cl.size(r) == 512 and all(sl(r(i)) == i for i in range(512))
    g = cl.left_inverse(sl)
    assert all(g(sl(i)) == i for i in range(512))
    with pytest.raises(ValueError, match="Swizzle o 0 o Layout"):
        cl.right_inverse(ComposedLayout(Swizzle(3, 4, 3), 8, cl.Layout((8, 64), (64, 1))))


def test_composed_layout_equality_hash_and_static_flag() -> None:
    a = ComposedLayout(Swizzle(1, 0, 1), 0, cl.Layout(4, 1))
    b = ComposedLayout(Swizzle(1, 0, 1), 0, cl.Layout(4, 1))
    assert a == b and hash(a) == hash(b)
    assert a != ComposedLayout(Swizzle(1, 0, 1), 4, cl.Layout(4, 1))
    assert a._cute_static and Swizzle(1, 0, 1)._cute_static


# -- max_alignment -----------------------------------------------------------------------------------------


def test_max_alignment_examples() -> None:
    assert max_alignment(Swizzle(3, 4, 3)) == 16
    assert max_alignment(cl.Layout((8, 64), (64, 1))) == 512
    assert max_alignment(cl.Layout((4, 2), (1, 8))) == 4
    assert max_alignment(cl.Layout((4, 2), (1, 6))) == 2
    assert max_alignment(cl.Layout((4, 2), (2, 1))) == 8  # a bijection onto [0,8)
    assert max_alignment(cl.Layout((2, 2), (3, 1))) == 1
    assert max_alignment(cl.Layout((4, 2), (1, 0))) == 4
    assert max_alignment(ComposedLayout(Swizzle(3, 4, 3), 0, cl.Layout((8, 64), (64, 1)))) == 16
    assert max_alignment(ComposedLayout(Swizzle(3, 4, 3), 8, cl.Layout((8, 64), (64, 1)))) == 8
    with pytest.raises(TypeError):
        max_alignment("16")  # type: ignore[arg-type]


@SETTINGS
@given(layout=layouts(max_modes=3, negative=False, zero=False))
def test_max_alignment_image_is_made_of_aligned_runs(layout: cl.Layout) -> None:
    points = [layout(i) for i in domain(layout)]
    assume(len(set(points)) == len(points))
    n = max_alignment(layout)
    image = set(points)
    assert n >= 1
    assert all(x - x % n + j in image for x in image for j in range(n))


@SETTINGS
@given(sw=swizzles(), layout=compact_layouts(), blocks=st.integers(0, 3))
def test_max_alignment_of_a_swizzled_layout(sw: Swizzle, layout: cl.Layout, blocks: int) -> None:
    sl = ComposedLayout(sw, blocks * 64, layout)
    n = max_alignment(sl)
    image = {sl(i) for i in domain(sl)}
    assert all(x - x % n + j in image for x in image for j in range(n))


class RunTime:
    """A stand-in for a run-time integer (cute-ir's SSA values): arithmetic only, no decisions, no bits."""

    __cute_int__ = True

    def __init__(self, expr: str) -> None:
        self.expr = expr

    def _op(self, op: str, other: object, swap: bool = False) -> RunTime:
        a, b = (other, self) if swap else (self, other)
        return RunTime(f"({_text(a)}{op}{_text(b)})")

    def __add__(self, o: object) -> RunTime:
        return self._op("+", o)

    def __radd__(self, o: object) -> RunTime:
        return self._op("+", o, True)

    def __mul__(self, o: object) -> RunTime:
        return self._op("*", o)

    def __rmul__(self, o: object) -> RunTime:
        return self._op("*", o, True)

    def __floordiv__(self, o: object) -> RunTime:
        return self._op("//", o)

    def __mod__(self, o: object) -> RunTime:
        return self._op("%", o)


def _text(x: object) -> str:
    return x.expr if isinstance(x, RunTime) else str(x)


def test_run_time_offsets_flow_through_a_layout_outer_function() -> None:
    sl = ComposedLayout(cl.Layout(8, 2), RunTime("off"), cl.Layout(4, 1))
    assert not sl._cute_static
    value = sl(3)
    assert isinstance(value, RunTime) and "off" in value.expr and "3" in value.expr
    sub = sl(None)
    assert isinstance(sub, ComposedLayout) and isinstance(sub.offset, RunTime)


def test_swizzles_reject_values_without_bit_operations() -> None:
    with pytest.raises(TypeError, match="does not support"):
        Swizzle(1, 0, 1)(RunTime("x"))
    with pytest.raises(TypeError, match="static int"):
        Swizzle(RunTime("b"), 0, 1)  # type: ignore[arg-type]

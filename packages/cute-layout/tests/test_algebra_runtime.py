"""Run-time leaves (the integer protocol): they flow through arithmetic, and decisions on them raise."""

from __future__ import annotations

from typing import Any

import cute_layout as cl
import pytest
from cute_layout import Layout


class Sym:
    """A fake SSA integer: not an int, records its expression, and refuses to be branched on."""

    __cute_int__ = True

    def __init__(self, value: int, expr: str | None = None) -> None:
        self.value = value
        self.expr = expr if expr is not None else f"%{value}"

    @staticmethod
    def _parts(x: Any) -> tuple[int, str]:
        if isinstance(x, Sym):
            return x.value, x.expr
        assert type(x) is int, f"unexpected operand {x!r}"
        return x, str(x)

    def _op(self, other: Any, sym: str, fn: Any, reflected: bool = False) -> Sym:
        (a, ea), (b, eb) = self._parts(self), self._parts(other)
        if reflected:
            (a, ea), (b, eb) = (b, eb), (a, ea)
        return Sym(fn(a, b), f"({ea}{sym}{eb})")

    def __add__(self, o: Any) -> Sym:
        return self._op(o, "+", lambda a, b: a + b)

    def __radd__(self, o: Any) -> Sym:
        return self._op(o, "+", lambda a, b: a + b, True)

    def __sub__(self, o: Any) -> Sym:
        return self._op(o, "-", lambda a, b: a - b)

    def __rsub__(self, o: Any) -> Sym:
        return self._op(o, "-", lambda a, b: a - b, True)

    def __mul__(self, o: Any) -> Sym:
        return self._op(o, "*", lambda a, b: a * b)

    def __rmul__(self, o: Any) -> Sym:
        return self._op(o, "*", lambda a, b: a * b, True)

    def __floordiv__(self, o: Any) -> Sym:
        return self._op(o, "//", lambda a, b: a // b)

    def __rfloordiv__(self, o: Any) -> Sym:
        return self._op(o, "//", lambda a, b: a // b, True)

    def __mod__(self, o: Any) -> Sym:
        return self._op(o, "%", lambda a, b: a % b)

    def __rmod__(self, o: Any) -> Sym:
        return self._op(o, "%", lambda a, b: a % b, True)

    def __neg__(self) -> Sym:
        return Sym(-self.value, f"-{self.expr}")

    def _cmp(self, o: Any, sym: str) -> SymBool:
        return SymBool(f"({self.expr}{sym}{self._parts(o)[1]})")

    def __lt__(self, o: Any) -> SymBool:
        return self._cmp(o, "<")

    def __le__(self, o: Any) -> SymBool:
        return self._cmp(o, "<=")

    def __gt__(self, o: Any) -> SymBool:
        return self._cmp(o, ">")

    def __ge__(self, o: Any) -> SymBool:
        return self._cmp(o, ">=")

    def __eq__(self, o: Any) -> SymBool:  # type: ignore[override]
        return self._cmp(o, "==")

    def __ne__(self, o: Any) -> SymBool:  # type: ignore[override]
        return self._cmp(o, "!=")

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise AssertionError(f"a run-time value was branched on: {self.expr}")


class SymBool:
    def __init__(self, expr: str) -> None:
        self.expr = expr

    def __bool__(self) -> bool:
        raise AssertionError(f"a run-time comparison was branched on: {self.expr}")


def val(x: Any) -> Any:
    """Concrete value of a result that may hold Syms."""
    if isinstance(x, tuple):
        return tuple(val(e) for e in x)
    return x.value if isinstance(x, Sym) else x


def test_protocol_predicates() -> None:
    s = Sym(3)
    assert cl.is_int(s) and not cl.is_static(s) and isinstance(s, cl.Integer)
    with pytest.raises(TypeError, match="f: x must be a static int, got a run-time value"):
        cl.static_int(s, "f", "x")


def test_crd2idx_with_run_time_coordinates() -> None:
    shape, stride = ((2, 2), 8), ((1, 16), 2)
    for i in (0, 5, 13, 31, 40):
        r = cl.crd2idx(Sym(i), shape, stride)
        assert isinstance(r, Sym) and r.value == cl.crd2idx(i, shape, stride)
    r = cl.crd2idx((Sym(1), Sym(3)), (4, 8), (1, 4))
    assert isinstance(r, Sym) and r.value == 13
    r = cl.crd2idx(((Sym(1), 1), Sym(5)), shape, stride)
    assert r.value == cl.crd2idx(((1, 1), 5), shape, stride)
    assert "%5" in r.expr


def test_idx2crd_with_run_time_index() -> None:
    crd = cl.idx2crd(Sym(13), (4, 8))
    assert val(crd) == (1, 3) and all(isinstance(c, Sym) for c in crd)
    assert val(cl.idx2crd(Sym(45), (4, 8))) == cl.idx2crd(45, (4, 8))
    assert val(cl.idx2crd(Sym(45), (4, 8), (1, 4))) == cl.idx2crd(45, (4, 8), (1, 4))
    assert val(cl.idx2crd(Sym(23), ((2, 3), 4))) == ((1, 2), 3)


def test_layout_call_and_slicing_with_run_time_values() -> None:
    layout = Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))
    for i in (0, 7, 37, 63):
        r = layout(Sym(i))
        assert isinstance(r, Sym) and r.value == layout(i)
    r = layout((Sym(1), Sym(2)))
    assert r.value == layout(1, 2)
    sub, off = cl.slice_and_offset((None, Sym(5)), layout)
    assert sub == Layout(((2, 2, 2),), ((1, 16, 4),)) and isinstance(off, Sym) and off.value == layout(0, 5)
    sliced = layout(None, Sym(5))
    assert sliced == sub


def test_layouts_with_run_time_shapes_and_strides() -> None:
    m, n = Sym(64), Sym(256)
    layout = Layout((m, n), (n, 1))
    assert not layout._cute_static
    assert val(cl.size(layout)) == 64 * 256
    assert val(layout(Sym(3), 5)) == 3 * 256 + 5
    assert val(layout(3, 5)) == 3 * 256 + 5
    with pytest.raises(TypeError, match="unhashable"):
        hash(layout)
    # composition only multiplies the lhs strides: static shapes with run-time strides compose
    a = Layout((4, 8), (1, Sym(16)))
    b = Layout((2, 2), (1, 4))
    r = cl.composition(a, b)
    assert [val(r(i)) for i in range(4)] == [0, 1, 16, 17]
    # a divide of a tensor whose shape is only known at run time (the elementwise-add case)
    z = cl.zipped_divide(layout, (16, 128))
    assert val(z.shape) == ((16, 128), (4, 2))
    assert val(z((1, 2), (3, 1))) == (16 * 3 + 1) * 256 + 128 + 2


def test_decisions_on_run_time_values_raise_type_error() -> None:
    s = Sym(4)
    # a 1-D lhs needs no decision (4x8 compact coalesces to 32:1)...
    assert val(cl.composition(Layout((4, 8), (1, 4)), Layout(s, 1)).shape) == 4
    # ...but splitting a run-time size over the lhs modes does
    with pytest.raises(TypeError, match="composition: a shape of the rhs must be a static int"):
        cl.composition(Layout((4, 8), (1, 10)), Layout(s, 1))
    with pytest.raises(TypeError, match="composition: a shape of the lhs must be a static int"):
        cl.composition(Layout((s, 8), (1, 4)), Layout(8, 1))
    with pytest.raises(TypeError, match="coalesce: shape leaf must be a static int"):
        cl.coalesce(Layout((s, 8), (1, 4)))
    with pytest.raises(TypeError, match="coalesce: stride leaf must be a static int"):
        cl.coalesce(Layout((4, 8), (1, s)))
    with pytest.raises(TypeError, match="complement: a stride of .* must be a static int"):
        cl.complement(Layout(4, s), 32)
    with pytest.raises(TypeError, match="right_inverse"):
        cl.right_inverse(Layout((4, 8), (s, 1)))
    with pytest.raises(TypeError, match="left_inverse"):
        cl.left_inverse(Layout((4, 8), (1, s)))
    with pytest.raises(TypeError, match="shape_div: the dividend must be a static int"):
        cl.shape_div(s, 2)
    with pytest.raises(TypeError, match="tuple_max"):
        cl.tuple_max((s, 2))
    with pytest.raises(TypeError, match="elem_less"):
        cl.elem_less((s, 1), (5, 2))
    with pytest.raises(TypeError, match="compatible"):
        cl.compatible(s, 4)
    with pytest.raises(TypeError, match="upcast"):
        cl.upcast(Layout(4, 1), s)


def test_run_time_results_are_never_cached() -> None:
    cl.clear_caches()
    a = Layout((4, 8), (1, Sym(16)))
    cl.composition(a, Layout(4, 2))
    cl.complement(Layout(4, 1), Sym(32))
    sizes = cl.cache_sizes()
    assert sizes["cute_layout.algebra.composition"] == 0
    assert sizes["cute_layout.algebra._complement_memo"] == 0
    r1 = cl.complement(Layout(4, 1), Sym(32))
    r2 = cl.complement(Layout(4, 1), Sym(64))
    assert val(r1.shape) == 8 and val(r2.shape) == 16

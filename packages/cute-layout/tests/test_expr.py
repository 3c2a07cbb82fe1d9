"""The layout expression language: parsing, evaluation, errors and printing back."""

from __future__ import annotations

import cute_layout as cl
import pytest
from cute_layout.expr import ExprError, Node, evaluate, format_value, functions, parse
from cute_layout.swizzle import ComposedLayout, Swizzle
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("-7", -7),
        ("None", None),
        ("_", None),
        ("()", ()),
        ("(4)", (4,)),
        ("(4,)", (4,)),
        ("(4,2)", (4, 2)),
        (" ( (2 , 2) ,4 ) ", ((2, 2), 4)),
        ("(1,_,None,-3)", (1, None, None, -3)),
    ],
)
def test_ints_tuples_and_none(text: str, value: object) -> None:
    assert evaluate(text) == value


@pytest.mark.parametrize(
    ("text", "shape", "stride"),
    [
        ("(4,2):(1,4)", (4, 2), (1, 4)),
        ("8:1", 8, 1),
        ("8:-1", 8, -1),
        ("((2,2),4):((1,4),2)", ((2, 2), 4), ((1, 4), 2)),
        ("(4):(1)", (4,), (1,)),
    ],
)
def test_layouts(text: str, shape: object, stride: object) -> None:
    assert evaluate(text) == cl.Layout(shape, stride)


def test_tilers_and_tuples_of_layouts() -> None:
    assert evaluate("<3:3,(2,4):(1,8)>") == (cl.Layout(3, 3), cl.Layout((2, 4), (1, 8)))
    assert evaluate("(16:1,128:1)") == (cl.Layout(16, 1), cl.Layout(128, 1))
    assert evaluate("<_, 4:1>") == (None, cl.Layout(4, 1))


def test_swizzles_and_composed_layouts() -> None:
    assert evaluate("S<3,4,3>") == Swizzle(3, 4, 3)
    assert evaluate("S<2,0,-2>") == Swizzle(2, 0, -2)
    expected = ComposedLayout(Swizzle(3, 4, 3), 0, cl.Layout((8, 64), (64, 1)))
    assert evaluate("S<3,4,3> o 0 o (8,64):(64,1)") == expected
    assert evaluate("S<3,4,3> o (8,64):(64,1)") == expected
    assert evaluate("S<3,4,3> o 16 o (8,64):(64,1)") == ComposedLayout(Swizzle(3, 4, 3), 16, expected.inner)


def test_composition_operator_and_calls() -> None:
    assert evaluate("(8,8):(8,1) o 2:3") == cl.composition(cl.Layout((8, 8), (8, 1)), cl.Layout(2, 3))
    assert evaluate("composition((8,8):(8,1), 2:3)") == evaluate("(8,8):(8,1) o 2:3")
    assert evaluate("complement((4,8):(1,16), 1024)") == cl.complement(cl.Layout((4, 8), (1, 16)), 1024)
    assert evaluate("size((4,8):(1,16))") == 32
    assert evaluate("make_layout((4,2), stride=(2,1))") == cl.Layout((4, 2), (2, 1))


def test_zipped_divide_with_a_by_mode_tiler() -> None:
    result = evaluate("zipped_divide((9,(4,8)):(59,(13,1)), <3:3,(2,4):(1,8)>)")
    assert str(result) == "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"


def test_make_layout_tv_pair() -> None:
    tiler, tv = evaluate("make_layout_tv((4,32):(32,1), (4,4):(4,1))")
    assert format_value(tiler) == "(16,128)"
    assert str(tv) == "((32,4),(4,4)):((64,4),(16,1))"


def test_parse_gives_a_syntax_tree() -> None:
    node = parse("zipped_divide((4,2):(1,4), (2,1))")
    assert isinstance(node, Node) and node.kind == "call" and node.value == "zipped_divide"
    args, kwargs = node.items
    assert [a.kind for a in args] == ["layout", "tuple"] and kwargs == ()
    assert parse("S<1,2,3> o 4:1").kind == "compose"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(4,2", "column 5: expected ',' or ')'"),
        ("(4,2):", "expected a value"),
        ("4:(1,2", "expected ',' or ')'"),
        ("S<3,4>", "expected ','"),
        ("S<3,4,x>", "expected an integer"),
        ("foo((4,2):(1,4))", "unknown function 'foo'"),
        ("__import__(1)", "unknown function '__import__'"),
        ("foo", "unknown name 'foo'"),
        ("1 2", "expected end of input"),
        ("4 @ 2", "unexpected character '@'"),
        ("(4,2):((1,4):1)", "stride of a layout must be an int or a tuple of ints"),
        ("(2:1):(1)", "shape of a layout must be"),
        ("make_layout(stride=1, 4)", "positional argument after a keyword"),
        ("make_layout(4, stride=1, stride=2)", "given twice"),
        ("o 4:1", "'o' (composition) needs a value"),
        ("<>", "at least one mode"),
        ("", "expected a value"),
        ("- x", "expected an integer after '-'"),
        ("9" * 5000, "integer literal too long"),
        ("\u0663", "unexpected character"),
    ],
)
def test_errors_are_one_line_expr_errors(text: str, message: str) -> None:
    with pytest.raises(ExprError) as info:
        evaluate(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_algebra_errors_pass_through() -> None:
    with pytest.raises(ValueError) as info:
        evaluate("composition((4,6):(1,5), 6:1)")
    assert not isinstance(info.value, ExprError)
    with pytest.raises(TypeError):
        evaluate("Layout((4,2), (1,2), (3,4), (5,6))")


def test_functions_are_the_public_api_only() -> None:
    names = functions()
    assert {"composition", "zipped_divide", "make_layout_tv", "Layout", "Swizzle"} <= set(names)
    assert not any(name.startswith("_") for name in names)
    assert "eval" not in names and "open" not in names


@pytest.mark.parametrize(
    "text",
    [
        "(4,2):(1,4)",
        "((2,2),4):((1,4),-2)",
        "S<3,4,3> o 0 o (8,64):(64,1)",
        "(1,(2,_),-3)",
        "(16:1,128:1)",
        "S<2,1,-3>",
    ],
)
def test_format_value_round_trips(text: str) -> None:
    value = evaluate(text)
    assert evaluate(format_value(value)) == value


def test_format_value_writes_cute_notation() -> None:
    assert format_value((16, 128)) == "(16,128)"
    assert format_value((cl.Layout(2, 1), None, 3)) == "(2:1,_,3)"
    assert format_value(cl.Layout((4, 2), (1, 4))) == "(4,2):(1,4)"
    assert format_value([1, (2, 3)]) == "[1,(2,3)]"


@st.composite
def int_tuples(draw: st.DrawFn, depth: int = 2) -> object:
    if depth == 0 or draw(st.booleans()):
        return draw(st.integers(1, 9))
    return tuple(draw(int_tuples(depth - 1)) for _ in range(draw(st.integers(1, 3))))


@st.composite
def layouts(draw: st.DrawFn) -> cl.Layout:
    shape = draw(int_tuples())
    flat = cl.flatten(shape)
    strides = iter([draw(st.integers(-40, 40)) for _ in (flat if isinstance(flat, tuple) else (flat,))])

    def like(t: object) -> object:
        return tuple(like(e) for e in t) if isinstance(t, tuple) else next(strides)

    return cl.Layout(shape, like(shape))


@settings(max_examples=200, deadline=None)
@given(layout=layouts(), bits=st.integers(0, 3), base=st.integers(0, 3), offset=st.integers(0, 99))
def test_printed_layouts_parse_back(layout: cl.Layout, bits: int, base: int, offset: int) -> None:
    assert evaluate(str(layout)) == layout
    composed = ComposedLayout(Swizzle(bits, base, bits + 1), offset, layout)
    assert evaluate(str(composed)) == composed
    assert evaluate(format_value((layout, None, (offset, -offset)))) == (layout, None, (offset, -offset))

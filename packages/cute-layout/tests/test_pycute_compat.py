"""`import cute_layout as pycute` works: pycute's names, signatures and (where it agrees with C++) results."""

from __future__ import annotations

import inspect

import cute_layout as pycute
import pytest

# NVIDIA pycute's public names (int_tuple.py, layout.py, swizzle.py, typing.py) and their parameters.
PYCUTE_SIGNATURES = {
    "is_int": ["x"],
    "is_tuple": ["x"],
    "flatten": ["t"],
    "signum": ["a"],
    "product": ["a"],
    "inner_product": ["a", "b"],
    "tuple_max": ["a"],
    "elem_scale": ["a", "b"],
    "shape_div": ["a", "b"],
    "prefix_product": ["a", "init"],
    "idx2crd": ["idx", "shape", "stride"],
    "crd2idx": ["crd", "shape", "stride"],
    "crd2crd": ["crd", "dst_shape", "src_shape"],
    "slice_": ["crd", "trg"],
    "has_none": ["a"],
    "is_layout": ["x"],
    "make_layout": ["*"],
    "size": ["layout"],
    "cosize": ["layout"],
    "coalesce": ["layout", "profile"],
    "filter": ["layout", "profile"],
    "composition": ["layoutA", "layoutB"],
    "complement": ["layout", "max_idx"],
    "right_inverse": ["layout"],
    "left_inverse": ["layout"],
    "logical_divide": ["layoutA", "layoutB"],
    "logical_product": ["layoutA", "layoutB"],
    "hier_unzip": ["splitter", "layoutA", "layoutB"],
    "zipped_divide": ["layoutA", "layoutB"],
    "tiled_divide": ["layoutA", "layoutB"],
    "zipped_product": ["layoutA", "layoutB"],
    "tiled_product": ["layoutA", "layoutB"],
    "slice_and_offset": ["crd", "layout"],
    "shiftr": ["a", "s"],
    "shiftl": ["a", "s"],
}
PYCUTE_CLASSES = ["LayoutBase", "Layout", "Integer"]
PYCUTE_SWIZZLE_CLASSES = ["Swizzle", "ComposedLayout"]


@pytest.mark.parametrize("name", sorted(PYCUTE_SIGNATURES))
def test_pycute_function_exists_with_a_compatible_signature(name: str) -> None:
    fn = getattr(pycute, name)
    assert name in pycute.__all__
    params = list(inspect.signature(fn).parameters.values())
    expected = PYCUTE_SIGNATURES[name]
    if expected == ["*"]:
        assert params[0].kind is inspect.Parameter.VAR_POSITIONAL
        return
    assert [p.name for p in params[: len(expected)]] == expected
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params[: len(expected)])
    # anything beyond pycute's parameters is optional
    assert all(p.default is not inspect.Parameter.empty for p in params[len(expected) :])


@pytest.mark.parametrize("name", PYCUTE_CLASSES)
def test_pycute_classes_exist(name: str) -> None:
    assert isinstance(getattr(pycute, name), type) and name in pycute.__all__
    assert issubclass(pycute.Layout, pycute.LayoutBase)


def test_pycute_swizzle_classes_exist_when_the_swizzle_module_is_there() -> None:
    pytest.importorskip("cute_layout.swizzle")
    for name in PYCUTE_SWIZZLE_CLASSES:
        assert issubclass(getattr(pycute, name), object) and name in pycute.__all__
    assert issubclass(pycute.ComposedLayout, pycute.LayoutBase)


def test_pycute_defaults() -> None:
    assert pycute.prefix_product((3, 2)) == (1, 3)
    assert pycute.complement(pycute.Layout((2, 4), (1, 6))) == pycute.complement(
        pycute.Layout((2, 4), (1, 6)), 1
    )
    assert pycute.shiftr(0b1000, 2) == 0b10 and pycute.shiftr(1, -3) == 8 and pycute.shiftl(1, 0) == 1


# pycute's own unit tests, ported: only their post-conditions are asserted, as pycute does.

COMPOSITION_CASES = [
    ((1, 0), (1, 0)),
    ((1, 0), (1, 1)),
    ((1, 1), (1, 0)),
    ((1, 1), (1, 1)),
    ((4,), (4,)),
    ((4, 2), (4,)),
    ((4,), (4, 2)),
    ((4, 0), (4,)),
    ((4,), (4, 0)),
    ((1, 0), (4,)),
    ((4,), (1, 0)),
    ((4,), (2,)),
    ((4, 2), (2,)),
    ((4,), (2, 2)),
    ((4, 2), (2, 2)),
    ((12,), ((4, 3),)),
    ((12, 2), ((4, 3),)),
    ((12,), ((4, 3), (3, 1))),
    ((12, 2), ((4, 3), (3, 1))),
    ((12,), ((2, 3), (2, 4))),
    (((4, 3),), ((4, 3),)),
    (((4, 3),), (12,)),
    (((4, 3),), (6, 2)),
    (((4, 3),), ((6, 2), (2, 1))),
    (((4, 3), (3, 1)), ((4, 3),)),
    (((4, 3), (3, 1)), (12,)),
    (((4, 3), (3, 1)), (6, 2)),
    (((4, 3), (3, 1)), ((6, 2), (2, 1))),
    (((8, 8),), (((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))),
    (((8, 8), (8, 1)), (((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))),
    ((((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))), (8, 4)),
    (((4, 2), (1, 16)), ((4, 2), (2, 1))),
    (((2, 2), (2, 1)), ((2, 2), (2, 1))),
    (((4, 8, 2),), ((2, 2, 2), (2, 8, 1))),
    (((4, 8, 2), (2, 8, 1)), ((2, 2, 2), (1, 8, 2))),
    (((4, 8, 2), (2, 8, 1)), ((4, 2, 2), (2, 8, 1))),
    (((4, 6, 8), (1, 4, 7)), (6, 1)),
    (((4, 6, 8, 10), (2, 3, 5, 7)), (6, 12)),
]


@pytest.mark.parametrize("a, b", COMPOSITION_CASES)
def test_pycute_composition_cases(a: tuple, b: tuple) -> None:
    layout_a, layout_b = pycute.Layout(*a), pycute.Layout(*b)
    r = pycute.composition(layout_a, layout_b)
    for i in range(pycute.size(r)):
        assert r(i) == layout_a(layout_b(i))
    assert pycute.size(r) == pycute.size(layout_b)


@pytest.mark.parametrize(
    "args",
    [
        (1, 0),
        (1, 1),
        ((2, 4),),
        ((2, 4, 6),),
        ((2, 4, 6), (1, 6, 2)),
        ((2, 1, 6), (1, 7, 2)),
        ((2, 1, 6), (4, 7, 8)),
        ((2, (4, 6)),),
        ((2, 4), (4, 1)),
        ((2, 4, 6), (24, 6, 1)),
        ((2, 1, 3), (2, 4, 4)),
        (((2, 2), (2, 2)), ((1, 4), (8, 32))),
    ],
)
def test_pycute_coalesce_cases(args: tuple) -> None:
    layout = pycute.Layout(*args)
    r = pycute.coalesce(layout)
    assert pycute.size(r) == pycute.size(layout)
    assert all(r(i) == layout(i) for i in range(pycute.size(layout)))


@pytest.mark.parametrize(
    "args",
    [
        (1, 0),
        (1, 1),
        (4, 0),
        ((2, 4), (1, 2)),
        ((2, 3), (1, 2)),
        ((2, 4), (1, 4)),
        ((2, 4, 8), (8, 1, 64)),
        (((2, 2), (2, 2)), ((1, 4), (8, 32))),
        ((2, (3, 4)), (3, (1, 6))),
    ],
)
def test_pycute_complement_cases(args: tuple) -> None:
    layout = pycute.Layout(*args)
    r = pycute.complement(layout)
    for a in range(pycute.size(layout)):
        for b in range(pycute.size(r)):
            assert layout(a) != r(b) or (layout(a) == 0 and r(b) == 0)


def test_pycute_complement_cases_that_cute_rejects() -> None:
    # pycute returns a complement that leaves the holes out; these modes do not nest
    for args in (((4, 6), (1, 6)), ((4, 10), (1, 10))):
        with pytest.raises(ValueError, match="nest"):
            pycute.complement(pycute.Layout(*args))


def test_pycute_typing() -> None:
    assert issubclass(int, pycute.Integer) and isinstance(1, pycute.Integer)
    assert not isinstance(1.0, pycute.Integer) and not isinstance("hi", pycute.Integer)
    assert not isinstance(False, pycute.Integer)


def test_pycute_logical_product_and_int_tilers() -> None:
    a = pycute.Layout((2, 5), (5, 1))
    r = pycute.logical_product(a, 4)
    assert r == pycute.Layout(((2, 5), 4), ((5, 1), 10))
    assert pycute.logical_product(a, (4, 2)) == pycute.make_layout(
        pycute.logical_product(a[0], pycute.Layout(4)), pycute.logical_product(a[1], pycute.Layout(2))
    )
    assert pycute.logical_product(a, None) is a
    assert pycute.size(pycute.zipped_product(a, 4)) == 40 and pycute.size(pycute.tiled_product(a, 4)) == 40


def test_pycute_layout_protocol() -> None:
    layout = pycute.Layout((4, 2), (1, 4))
    assert len(layout) == 2 and layout[1] == pycute.Layout(2, 4)
    assert layout(1, 1) == 5 and layout((1, 1)) == 5 and layout(5) == 5
    assert layout(None, 1) == pycute.Layout((4,), (1,))
    assert layout.size() == 8 and layout.cosize() == 8
    assert pycute.slice_and_offset((None, 1), layout) == (pycute.Layout((4,), (1,)), 4)
    assert pycute.is_layout(layout) and not pycute.is_layout((4, 2))

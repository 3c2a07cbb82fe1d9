"""`import cute_layout as pycute` works: pycute's names, signatures and NVIDIA's pycute unit tests (104 of 104)."""

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


# NVIDIA's pycute unit tests (cutlass test/python/pycute/: test_coalesce, test_complement, test_composition,
# test_int_tuple, test_left_inverse, test_right_inverse, test_typing), ported as data: 104 checks, each the
# post-condition pycute's test asserts for one case. All 104 pass; the count is asserted below.

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



COALESCE_CASES = [
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
]

COMPLEMENT_CASES = [
    (1, 0),
    (1, 1),
    (4, 0),
    ((2, 4), (1, 2)),
    ((2, 3), (1, 2)),
    ((2, 4), (1, 4)),
    ((2, 4, 8), (8, 1, 64)),
    (((2, 2), (2, 2)), ((1, 4), (8, 32))),
    ((2, (3, 4)), (3, (1, 6))),
    ((4, 6), (1, 6)),
    ((4, 10), (1, 10)),
]

LEFT_INVERSE_CASES = [
    (1, 0),
    ((1, 1), (0, 0)),
    (1, 1),
    (4, 1),
    (4, 2),
    ((8, 4), (1, 8)),
    ((8, 4), (4, 1)),
    ((2, 4, 6), (1, 2, 8)),
    ((2, 4, 6), (4, 1, 8)),
    ((4, 2), (1, 16)),
]

RIGHT_INVERSE_CASES = [
    (1, 0),
    ((1, 1), (0, 0)),
    ((3, 7), (0, 0)),
    (1, 1),
    (4, 0),
    (4, 1),
    (4, 2),
    ((2, 4), (0, 2)),
    ((8, 4), (1, 8)),
    ((8, 4), (4, 1)),
    ((2, 4, 6), (1, 2, 8)),
    ((2, 4, 6), (4, 1, 8)),
    ((4, 2), (1, 16)),
]

INT_TUPLE_CASES = [
    ("product", (2,), 2),
    ("product", ((3, 2),), 6),
    ("product", (((2, 3), 4),), 24),  # pycute applies product twice; product of an int is the int
    ("inner_product", (2, 3), 6),
    ("inner_product", ((1, 2), (3, 2)), 7),
    ("inner_product", (((2, 3), 4), ((2, 1), 2)), 15),
    ("shape_div", ((3, 4), 6), (1, 2)),
    ("shape_div", ((3, 4), 12), (1, 1)),
    ("shape_div", ((3, 4), 36), (1, 1)),
    ("shape_div", (((3, 4), 6), 36), ((1, 1), 2)),
    ("shape_div", ((6, (3, 4)), 36), (1, (1, 2))),
    ("prefix_product", (2,), 1),
    ("prefix_product", ((3, 2),), (1, 3)),
    ("prefix_product", ((3, 2, 4),), (1, 3, 6)),
    ("prefix_product", (((2, 3), 4),), ((1, 2), 6)),
    ("prefix_product", (((2, 3), (2, 1, 2), (5, 2, 1)),), ((1, 2), (6, 12, 12), (24, 120, 240))),
]

TYPING_CASES = [(int, 1, True), (float, 1.0, False), (str, "hi", False), (bool, False, False)]


def _check_coalesce(args: tuple) -> None:
    layout = pycute.Layout(*args)
    r = pycute.coalesce(layout)
    assert pycute.size(r) == pycute.size(layout)
    assert all(r(i) == layout(i) for i in range(pycute.size(layout)))


def _check_complement(args: tuple) -> None:
    layout = pycute.Layout(*args)
    r = pycute.complement(layout)
    for a in range(pycute.size(layout)):
        for b in range(pycute.size(r)):
            assert layout(a) != r(b) or (layout(a) == 0 and r(b) == 0)


def _check_composition(a: tuple, b: tuple) -> None:
    layout_a, layout_b = pycute.Layout(*a), pycute.Layout(*b)
    r = pycute.composition(layout_a, layout_b)
    for i in range(pycute.size(r)):
        assert r(i) == layout_a(layout_b(i))


def _check_left_inverse(args: tuple) -> None:
    layout = pycute.Layout(*args)
    inv = pycute.left_inverse(layout)
    assert all(inv(layout(i)) == i for i in range(pycute.size(layout)))


def _check_right_inverse(args: tuple) -> None:
    layout = pycute.Layout(*args)
    inv = pycute.right_inverse(layout)
    assert all(layout(inv(i)) == i for i in range(pycute.size(inv)))


def _check_int_tuple(name: str, args: tuple, expected: object) -> None:
    assert getattr(pycute, name)(*args) == expected


def _check_typing(cls: type, obj: object, expected: bool) -> None:
    assert issubclass(cls, pycute.Integer) == expected
    assert isinstance(obj, pycute.Integer) == expected


PYCUTE_CHECKS = (
    [(f"coalesce-{i}", _check_coalesce, (c,)) for i, c in enumerate(COALESCE_CASES)]
    + [(f"complement-{i}", _check_complement, (c,)) for i, c in enumerate(COMPLEMENT_CASES)]
    + [(f"composition-{i}", _check_composition, c) for i, c in enumerate(COMPOSITION_CASES)]
    + [(f"int_tuple-{i}", _check_int_tuple, c) for i, c in enumerate(INT_TUPLE_CASES)]
    + [(f"left_inverse-{i}", _check_left_inverse, (c,)) for i, c in enumerate(LEFT_INVERSE_CASES)]
    + [(f"right_inverse-{i}", _check_right_inverse, (c,)) for i, c in enumerate(RIGHT_INVERSE_CASES)]
    + [(f"typing-{i}", _check_typing, c) for i, c in enumerate(TYPING_CASES)]
)


def test_the_pycute_suite_has_104_checks() -> None:
    per_file = {}
    for name, _, _ in PYCUTE_CHECKS:
        per_file[name.rsplit("-", 1)[0]] = per_file.get(name.rsplit("-", 1)[0], 0) + 1
    assert per_file == {
        "coalesce": 12, "complement": 11, "composition": 38, "int_tuple": 16,
        "left_inverse": 10, "right_inverse": 13, "typing": 4,
    }
    assert len(PYCUTE_CHECKS) == 104


@pytest.mark.parametrize("check, args", [(c[1], c[2]) for c in PYCUTE_CHECKS], ids=[c[0] for c in PYCUTE_CHECKS])
def test_pycute_check(check, args: tuple) -> None:
    check(*args)


def test_pycute_suite_passes_104_of_104() -> None:
    """Run all of NVIDIA's pycute checks and report the count (visible with -rA / -s)."""
    failed = []
    for name, check, args in PYCUTE_CHECKS:
        try:
            check(*args)
        except Exception as e:  # noqa: BLE001 - a failing check of any kind is counted
            failed.append(f"{name}: {type(e).__name__}: {e}")
    print(f"pycute unit tests against cute_layout: {len(PYCUTE_CHECKS) - len(failed)} of {len(PYCUTE_CHECKS)} pass")
    assert not failed, failed


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

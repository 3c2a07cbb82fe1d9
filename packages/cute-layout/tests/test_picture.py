"""print_layout tables and SVG pictures."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import cute_layout as cl
import pytest
from cute_layout.picture import MAX_PICTURE_CELLS, format_layout, print_layout, to_svg, to_svg_tv
from cute_layout.swizzle import ComposedLayout, Swizzle

SVG = "{http://www.w3.org/2000/svg}"

# cute::print_layout of (4,2):(1,4): cosize 8 has one digit, cells are 3 wide (CuTe's header ends in a space).
TABLE_4x2 = "\n".join([
    "(4,2):(1,4)",
    "      0   1 ",
    "    +---+---+",
    " 0  | 0 | 4 |",
    "    +---+---+",
    " 1  | 1 | 5 |",
    "    +---+---+",
    " 2  | 2 | 6 |",
    "    +---+---+",
    " 3  | 3 | 7 |",
    "    +---+---+",
    "",
])

# cosize 16 has two digits: cells are 4 wide.
TABLE_2x4 = "\n".join([
    "(2,4):(8,1)",
    "       0    1    2    3 ",
    "    +----+----+----+----+",
    " 0  |  0 |  1 |  2 |  3 |",
    "    +----+----+----+----+",
    " 1  |  8 |  9 | 10 | 11 |",
    "    +----+----+----+----+",
    "",
])


def test_print_layout_matches_cute_format() -> None:
    assert format_layout(cl.Layout((4, 2), (1, 4))) == TABLE_4x2
    assert format_layout(cl.Layout((2, 4), (8, 1))) == TABLE_2x4


def test_print_layout_writes_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    print_layout(cl.Layout((4, 2), (1, 4)))
    assert capsys.readouterr().out == TABLE_4x2
    buf = io.StringIO()
    print_layout(cl.Layout((2, 4), (8, 1)), file=buf)
    assert buf.getvalue() == TABLE_2x4


def test_print_layout_of_hierarchical_and_swizzled_layouts() -> None:
    nested = cl.Layout((2, (2, 2)), (4, (2, 1)))
    lines = format_layout(nested).splitlines()
    assert lines[0] == "(2,(2,2)):(4,(2,1))"
    assert lines[3] == " 0  | 0 | 2 | 1 | 3 |"
    assert lines[5] == " 1  | 4 | 6 | 5 | 7 |"
    sl = ComposedLayout(Swizzle(1, 0, 1), 0, cl.Layout((2, 2), (2, 1)))
    table = format_layout(sl).splitlines()
    assert table[0] == "S<1,0,1> o 0 o (2,2):(2,1)"
    assert table[3] == " 0  | 0 | 1 |"
    assert table[5] == " 1  | 3 | 2 |"


def test_print_layout_needs_rank_two() -> None:
    with pytest.raises(ValueError, match="rank 2"):
        format_layout(cl.Layout((2, 2, 2), (1, 2, 4)))
    with pytest.raises(TypeError):
        format_layout((4, 2))


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def cells(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"]


def test_to_svg_draws_every_cell_with_its_offset() -> None:
    layout = cl.Layout((4, 8), (8, 1))
    root = parse(to_svg(layout))
    assert root.find(f"{SVG}title").text == "(4,8):(8,1)"
    rects = cells(root)
    assert len(rects) == 32
    values = [int(t.text) for t in root.iter(f"{SVG}text") if t.get("class") == "value"]
    assert values == [layout(m, n) for m in range(4) for n in range(8)]
    for rect in rects:
        m, n = int(rect.get("data-m")), int(rect.get("data-n"))
        assert rect.get("fill") == ("#ffffff", "#999999", "#cccccc", "#666666",
                                    "#e6e6e6", "#808080", "#b3b3b3", "#4d4d4d")[layout(m, n) % 8]
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "label"]
    assert labels == [str(i) for i in range(4)] + [str(j) for j in range(8)]


def test_to_svg_of_a_rank_one_and_a_swizzled_layout() -> None:
    root = parse(to_svg(cl.Layout(6, 2)))
    assert len(cells(root)) == 6
    sl = ComposedLayout(Swizzle(2, 0, 2), 0, cl.Layout((4, 4), (4, 1)))
    root = parse(to_svg(sl))
    values = [int(t.text) for t in root.iter(f"{SVG}text") if t.get("class") == "value"]
    assert values == [sl(m, n) for m in range(4) for n in range(4)]
    assert root.find(f"{SVG}title").text == "S<2,0,2> o 0 o (4,4):(4,1)"


def test_to_svg_tv_of_the_elementwise_add_layout() -> None:
    tiler, tv = cl.make_layout_tv(cl.Layout((4, 32), (32, 1)), cl.Layout((4, 4), (4, 1)))
    root = parse(to_svg_tv(tv, tiler))
    rects = cells(root)
    assert len(rects) == 16 * 128
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "tv"]
    assert len(labels) == 2 * 16 * 128
    assert labels[:2] == ["T0", "V0"]
    seen = set()
    for rect in rects:
        m, n, t, v = (int(rect.get(k)) for k in ("data-m", "data-n", "data-t", "data-v"))
        assert tv(t, v) == m + 16 * n
        seen.add((t, v))
        assert rect.get("fill") == ("#afafff", "#afffaf", "#ffffaf", "#ffafaf",
                                    "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2")[t % 8]
    assert len(seen) == 128 * 16


def test_to_svg_tv_leaves_uncovered_cells_blank_and_rejects_escapes() -> None:
    tv = cl.Layout((2, 2), (1, 4))  # covers 0,1,4,5 of a 4x2 tile
    root = parse(to_svg_tv(tv, (4, 2)))
    rects = cells(root)
    assert len(rects) == 8
    assert sum(1 for r in rects if r.get("data-t") is not None) == 4
    with pytest.raises(ValueError, match="outside"):
        to_svg_tv(cl.Layout((2, 2), (1, 8)), (4, 2))
    with pytest.raises(ValueError, match="two modes"):
        to_svg_tv(tv, (8,))


def test_pictures_refuse_too_many_cells() -> None:
    side = 1 << 9
    assert side * side > MAX_PICTURE_CELLS
    with pytest.raises(ValueError, match="picture limit"):
        to_svg(cl.Layout((side, side), (1, side)))
    with pytest.raises(ValueError, match="rank 1 or 2"):
        to_svg(cl.Layout((2, 2, 2), (1, 2, 4)))


def test_pictures_need_integer_offsets() -> None:
    identity = cl.make_identity_layout((2, 3))  # its offsets are coordinates
    with pytest.raises(TypeError, match="must be ints"):
        format_layout(identity)
    with pytest.raises(TypeError, match="must be ints"):
        to_svg(identity)
    with pytest.raises(TypeError, match="must be ints"):
        to_svg_tv(identity, (2, 3))

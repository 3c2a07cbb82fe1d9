"""Pictures of layouts: CuTe's ``print_layout`` table and SVG drawings in the style of ``print_latex``."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ._notation import format_value
from .int_tuple import product
from .int_tuple import rank as _rank

__all__ = ["format_layout", "print_layout", "to_svg", "to_svg_tv", "svg_or_none", "MAX_PICTURE_CELLS"]

# Largest number of cells drawn in one picture.
MAX_PICTURE_CELLS = 1 << 16

# print_latex's 8-value grey scale ("black!00", "black!40", ...) as SVG colours.
_GREYS = ("#ffffff", "#999999", "#cccccc", "#666666", "#e6e6e6", "#808080", "#b3b3b3", "#4d4d4d")
# print_latex's 8 thread colours ({rgb,255:red,175;green,175;blue,255}, ...).
_THREAD_COLOURS = (
    "#afafff", "#afffaf", "#ffffaf", "#ffafaf", "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2",
)

_CELL = 40  # pixels per cell (print_latex's 1cm box)
_MARGIN = 36  # room for the row and column labels
_CAPTION = 24  # room for the caption line


def _escape(text: str) -> str:
    """Return `text` escaped for SVG character data and attribute values."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _is_layout(x: Any) -> bool:
    """Whether `x` is layout-like (a Layout or ComposedLayout: callable, with a shape)."""
    return callable(x) and hasattr(x, "shape") and hasattr(x, "size")


def _num_digits(x: int) -> int:
    """Return the number of decimal digits of ``x`` as CuTe's ``num_digits`` counts them."""
    digits = 1
    bound = 10
    while x >= bound and digits < 10:
        digits += 1
        bound *= 10
    return digits


def _extent(mode: Any) -> int:
    """Return the static number of points of a shape, a layout or a tiler mode."""
    n = mode.size() if _is_layout(mode) else product(mode)
    if type(n) is not int:
        raise TypeError(f"picture: the size of {mode} must be a static int, got a run-time value")
    return n


def _modes_2d(layout: Any, func: str) -> tuple[int, int]:
    """Return the sizes (M, N) of the two modes of a rank-2 layout."""
    if not _is_layout(layout):
        raise TypeError(f"{func}: expected a Layout or a ComposedLayout, got {layout!r}")
    shape = layout.shape
    if not isinstance(shape, tuple) or len(shape) != 2:
        raise ValueError(f"{func}: the layout must have rank 2, got {layout} of rank {_rank(shape)}")
    return _extent(shape[0]), _extent(shape[1])


def format_layout(layout: Any) -> str:
    """Return the table that CuTe's ``print_layout`` prints for a rank-2 layout, ending in a newline."""
    m_size, n_size = _modes_2d(layout, "print_layout")
    values = [[layout(m, n) for n in range(n_size)] for m in range(m_size)]
    if any(type(v) is not int for row in values for v in row):
        raise TypeError(f"print_layout: the offsets of {layout} must be ints")
    idx_width = _num_digits(layout.cosize()) + 2
    delim = "+-----------------------"[: idx_width + 1]
    rule = "    " + delim * n_size + "+"
    lines = [str(layout)]
    lines.append("    " + "".join(f"  {n:>{idx_width - 2}d} " for n in range(n_size)))
    for m in range(m_size):
        lines.append(rule)
        cells = "".join(f"| {v:>{idx_width - 2}d} " for v in values[m])
        lines.append(f"{m:>2d}  {cells}|")
    lines.append(rule)
    return "\n".join(lines) + "\n"


def print_layout(layout: Any, file: TextIO | None = None) -> None:
    """Print a rank-2 layout as a table of offsets, as CuTe's ``print_layout``."""
    (file if file is not None else sys.stdout).write(format_layout(layout))


def _svg_document(rows: int, cols: int, caption: str, body: list[str]) -> str:
    """Return an SVG document with a caption, row and column labels and the given cell elements."""
    width = _MARGIN + cols * _CELL + 8
    height = _CAPTION + _MARGIN + rows * _CELL + 8
    top = _CAPTION + _MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">',
        f"<title>{_escape(caption)}</title>",
        '<style>.cell{stroke:#000;stroke-width:1.5}.label{font-size:14px;fill:#333}'
        ".caption{font-size:14px}text{text-anchor:middle;dominant-baseline:central}</style>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text class="caption" x="{width // 2}" y="{_CAPTION // 2 + 2}">{_escape(caption)}</text>',
    ]
    for i in range(rows):
        out.append(f'<text class="label" x="{_MARGIN // 2}" y="{top + i * _CELL + _CELL // 2}">{i}</text>')
    for j in range(cols):
        x = _MARGIN + j * _CELL + _CELL // 2
        out.append(f'<text class="label" x="{x}" y="{_CAPTION + _MARGIN // 2}">{j}</text>')
    out.extend(body)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _int_offset(value: Any, layout: Any, func: str) -> int:
    """Return an offset of the layout, raising TypeError when it is not an int."""
    if type(value) is not int:
        raise TypeError(f"{func}: the offsets of {layout} must be ints, got {value!r}")
    return value


def _check_cells(rows: int, cols: int, func: str) -> None:
    """Raise ValueError when a picture would have more than MAX_PICTURE_CELLS cells."""
    if rows * cols > MAX_PICTURE_CELLS:
        raise ValueError(f"{func}: {rows}x{cols} cells exceed the picture limit of {MAX_PICTURE_CELLS} cells")


def to_svg(layout: Any) -> str:
    """Return an SVG picture of a rank-1 or rank-2 layout: cell (m,n) shows its offset, as print_latex."""
    if not _is_layout(layout):
        raise TypeError(f"to_svg: expected a Layout or a ComposedLayout, got {layout!r}")
    shape = layout.shape
    if isinstance(shape, tuple) and len(shape) == 2:
        rows, cols = _extent(shape[0]), _extent(shape[1])

        def value(i: int, j: int) -> int:
            return _int_offset(layout(i, j), layout, "to_svg")
    elif not isinstance(shape, tuple) or len(shape) == 1:
        rows, cols = _extent(shape), 1

        def value(i: int, j: int) -> int:
            return _int_offset(layout(i), layout, "to_svg")
    else:
        raise ValueError(f"to_svg: the layout must have rank 1 or 2, got {layout} of rank {len(shape)}")
    _check_cells(rows, cols, "to_svg")
    top = _CAPTION + _MARGIN
    body = []
    for i in range(rows):
        for j in range(cols):
            idx = value(i, j)
            shade = idx % 8
            x, y = _MARGIN + j * _CELL, top + i * _CELL
            ink = ' fill="#ffffff"' if shade in (3, 7) else ""
            body.append(
                f'<rect class="cell" x="{x}" y="{y}" width="{_CELL}" height="{_CELL}" fill="{_GREYS[shade]}" '
                f'data-m="{i}" data-n="{j}"/>'
                f'<text class="value" x="{x + _CELL // 2}" y="{y + _CELL // 2}"{ink}>{idx}</text>'
            )
    return _svg_document(rows, cols, str(layout), body)


def to_svg_tv(layout_tv: Any, tiler: Any) -> str:
    """Return an SVG picture of a thread-value layout over its (M,N) tile, coloured by thread, T/V labels."""
    if not _is_layout(layout_tv):
        raise TypeError(f"to_svg_tv: expected a (thread,value) Layout, got {layout_tv!r}")
    tv_shape = layout_tv.shape
    if not isinstance(tv_shape, tuple) or len(tv_shape) != 2:
        raise ValueError(f"to_svg_tv: the TV layout must have rank 2 (thread, value), got {layout_tv}")
    if not isinstance(tiler, tuple) or len(tiler) != 2:
        raise ValueError(f"to_svg_tv: the tiler must have two modes (M, N), got {tiler!r}")
    rows, cols = _extent(tiler[0]), _extent(tiler[1])
    _check_cells(rows, cols, "to_svg_tv")
    threads, values = _extent(tv_shape[0]), _extent(tv_shape[1])
    cells: dict[tuple[int, int], tuple[int, int]] = {}
    for t in range(threads):
        for v in range(values):
            idx = _int_offset(layout_tv(t, v), layout_tv, "to_svg_tv")
            if not 0 <= idx < rows * cols:
                raise ValueError(f"to_svg_tv: {layout_tv} maps (T{t},V{v}) to {idx}, outside the "
                                 f"{rows}x{cols} tile")
            cells[(idx % rows, idx // rows)] = (t, v)
    top = _CAPTION + _MARGIN
    body = []
    for i in range(rows):
        for j in range(cols):
            x, y = _MARGIN + j * _CELL, top + i * _CELL
            hit = cells.get((i, j))
            if hit is None:
                body.append(f'<rect class="cell" x="{x}" y="{y}" width="{_CELL}" height="{_CELL}" '
                            f'fill="#ffffff" data-m="{i}" data-n="{j}"/>')
                continue
            t, v = hit
            cx = x + _CELL // 2
            body.append(
                f'<rect class="cell" x="{x}" y="{y}" width="{_CELL}" height="{_CELL}" '
                f'fill="{_THREAD_COLOURS[t % 8]}" data-m="{i}" data-n="{j}" data-t="{t}" data-v="{v}"/>'
                f'<text class="tv" x="{cx}" y="{y + _CELL // 2 - 7}">T{t}</text>'
                f'<text class="tv" x="{cx}" y="{y + _CELL // 2 + 7}">V{v}</text>'
            )
    caption = f"{layout_tv}  over tile {_format_tiler(tiler)}"
    return _svg_document(rows, cols, caption, body)


def _format_tiler(tiler: tuple[Any, ...]) -> str:
    """Return a tiler in CuTe's notation: (16,128) or <3:3,(2,4):(1,8)>."""
    if all(_is_layout(mode) for mode in tiler):
        return "<" + ",".join(str(mode) for mode in tiler) + ">"
    return format_value(tiler)


def svg_or_none(layout: Any, max_cells: int) -> str | None:
    """Return to_svg(layout) for a static rank-1 or rank-2 layout of at most `max_cells` cells, else None."""
    shape = getattr(layout, "shape", None)
    if isinstance(shape, tuple) and len(shape) > 2:
        return None
    try:
        cells = _extent(shape)
        if cells > max_cells:
            return None
        return to_svg(layout)
    except (TypeError, ValueError):  # run-time sizes, coordinate-valued offsets: Jupyter shows the text
        return None

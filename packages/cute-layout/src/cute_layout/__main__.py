"""Command line: ``python -m cute_layout "<expr>" [--svg out.svg]`` evaluates a layout expression.

It prints the result in CuTe's notation and, for a rank-2 layout, CuTe's ``print_layout`` table.  ``--svg``
writes a picture: a thread-value picture when the result is the ``(tiler, layout_tv)`` pair of
``make_layout_tv``, else a picture of the layout.  Exit status: 0 on success, 2 for a syntax error, an unknown
function or a bad command line, 1 when the algebra rejects the operands or the picture cannot be drawn.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .cli_contract import ContractParser, positive_int

__all__ = ["main"]

_PROG = "cute_layout"

_NOTATION = """\
notation:
  8, -3, (4,2), ((2,2),4)         ints and tuples ((4) is a 1-tuple)
  (4,2):(1,4), 8:1                a Layout shape:stride
  <3:3,(2,4):(1,8)>               a by-mode tiler (a tuple of layouts)
  _ or None                       keep this mode
  S<3,4,3>                        a Swizzle(bits, base, shift)
  S<3,4,3> o 0 o (8,64):(64,1)    a ComposedLayout(outer, offset, inner)
  A o B                           composition(A, B)
  name(args, key=value)           a call of a cute_layout function (see --list)

exit status: 0 ok, 2 syntax error / unknown function / bad command line, 1 rejected by the algebra.
Put -- before an expression that starts with '-'."""


def _error(message: str, status: int) -> int:
    """Print a one-line error on stderr and return the exit status."""
    first = str(message).strip().splitlines()[0] if str(message).strip() else "error"
    print(f"{_PROG}: error: {first}", file=sys.stderr)
    return status


def _rank2_extents(value: Any) -> tuple[int, int] | None:
    """Return (M, N) for a rank-2 layout with static mode sizes, else None."""
    from .layout import LayoutBase, size

    if not isinstance(value, LayoutBase) or not hasattr(value, "shape"):
        return None
    shape = value.shape
    if not isinstance(shape, tuple) or len(shape) != 2:
        return None
    m, n = size(shape[0]), size(shape[1])
    if type(m) is not int or type(n) is not int:
        return None
    return m, n


def _is_tv_pair(value: Any) -> bool:
    """Return True for make_layout_tv's (tiler_mn, layout_tv) pair."""
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], tuple)
        and len(value[0]) == 2
        and _rank2_extents(value[1]) is not None
    )


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keep the epilog's layout; wrap option help as usual."""


def _parser() -> argparse.ArgumentParser:
    """Return the argument parser."""
    parser = ContractParser(
        prog=f"python -m {_PROG}",
        description="Evaluate a CuTe layout expression, e.g. \"zipped_divide((8,8):(8,1), (2,4))\".",
        epilog=_NOTATION,
        formatter_class=_Formatter,
    )
    parser.add_argument(
        "expression", nargs="?", default=None,
        help="layout expression in CuTe's notation (default: none; required unless --list), "
        "e.g. \"composition((8,8):(8,1), 2:3)\"",
    )
    parser.add_argument(
        "--svg", metavar="OUT", default=None,
        help="write a picture of the result to this SVG file (default: none, no picture), e.g. --svg tv.svg",
    )
    parser.add_argument(
        "--max-cells", type=positive_int, default=1024, metavar="N",
        help="print the 2-D table only up to N cells (default: 1024), e.g. --max-cells 4096",
    )
    parser.add_argument(
        "--no-table", action="store_true", default=False,
        help="never print the 2-D table (default: off, the table is printed), e.g. --no-table",
    )
    parser.add_argument(
        "--list", action="store_true", default=False,
        help="list the functions an expression may call and exit (default: off), e.g. --list",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, its one line already printed)
        return int(exc.code or 0)
    if args.svg is not None:
        folder = os.path.dirname(os.path.abspath(args.svg))
        if not os.path.isdir(folder):
            return _error(f"argument --svg: the folder {folder} does not exist", 2)
    # the arguments are checked: now load the expression language and the pictures
    from .expr import ExprError, evaluate, format_value, functions
    from .layout import LayoutBase
    from .picture import format_layout, to_svg, to_svg_tv

    if args.list:
        print("\n".join(sorted(functions())))
        return 0
    if args.expression is None:
        return _error("no expression given (try --help)", 2)
    try:
        value = evaluate(args.expression)
    except ExprError as exc:
        return _error(str(exc), 2)
    except RecursionError:
        return _error("the expression is nested too deeply", 2)
    except Exception as exc:  # the algebra's ValueError/TypeError and anything else: one line, no traceback
        return _error(f"{type(exc).__name__}: {exc}", 1)
    try:
        print(format_value(value))
        extents = _rank2_extents(value)
        if extents is not None and not args.no_table:
            cells = extents[0] * extents[1]
            if cells <= args.max_cells:
                try:
                    table = format_layout(value)
                except TypeError as exc:  # e.g. an identity layout: its offsets are coordinates
                    print(f"(2-D table omitted: {exc})", file=sys.stderr)
                else:
                    print(table, end="")
            else:
                print(f"(2-D table omitted: {extents[0]}x{extents[1]} = {cells} cells > --max-cells "
                      f"{args.max_cells})", file=sys.stderr)
        if args.svg:
            if _is_tv_pair(value):
                picture = to_svg_tv(value[1], value[0])
            elif isinstance(value, LayoutBase) and hasattr(value, "shape"):
                picture = to_svg(value)
            else:
                return _error(f"--svg: cannot draw {format_value(value)}: expected a layout of rank 1 "
                              "or 2 or a (tiler, layout_tv) pair", 1)
            with open(args.svg, "w", encoding="utf-8") as out:
                out.write(picture)
            print(f"wrote {args.svg}", file=sys.stderr)
    except BrokenPipeError:  # `... | head`: the reader went away; nothing is wrong
        sys.stderr.close()
        return 0
    except Exception as exc:
        return _error(f"{type(exc).__name__}: {exc}", 1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

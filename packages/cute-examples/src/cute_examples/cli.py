"""The one place the example CLIs declare options, parse and fail.

Every option is added through `option`, `switch` or `positional`: its help shows the default and an example.
A usage error is one line on stderr (`prog: error: ...`) and exit status 2, never a traceback; values that
start with '-' (`--mnkl -128,128,128,1`) are taken as values and then judged by the option's own check.
Nothing here imports torch or MLIR, so arguments are checked before any heavy import.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from cute_nvarch.numeric import numeric_type

__all__ = [
    "Parser",
    "add_bundle_flag",
    "apply_bundle_flag",
    "checked",
    "dtype_of",
    "int_list",
    "make_parser",
    "number",
    "option",
    "parse_dtype",
    "positional",
    "switch",
    "targets",
]


def parse_dtype(text: str, allowed: tuple[str, ...], flag: str) -> str:
    """torch's lower-case dtype name for `Float32`/`float32`-style text; SystemExit naming the flag otherwise."""
    try:
        name = numeric_type(text).canonical
    except ValueError:
        name = None
    if name is None or name not in allowed:
        raise SystemExit(f"error: {flag} must be one of {', '.join(allowed)} (CuTeDSL or torch spelling), got {text!r}")
    return name


def add_bundle_flag(parser: Parser) -> None:
    """Add `--bundle DIR` (default: CUTE_BUNDLE_DIR) to a CLI."""
    option(parser, "--bundle", type=_existing_path, default=None, metavar="DIR", example="build/aot",
           shown="$CUTE_BUNDLE_DIR, else compile here", help="serve kernels from this AOT bundle")


def _existing_path(text: str) -> str:
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"{text!r} does not exist")
    return text


def apply_bundle_flag(args: argparse.Namespace) -> None:
    """Make the examples load kernels from args.bundle (checked to exist by the parser) when it is given: the
    examples' own kernels and the JIT kernels (the add, the transpose: CUTE_BUNDLE_DIR, read at each miss)."""
    if args.bundle is not None:
        from ._compiled import use_bundle

        use_bundle(args.bundle)
        os.environ["CUTE_BUNDLE_DIR"] = args.bundle


_NEGATIVE_VALUE = re.compile(r"^-[0-9.]")


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit status 2) and values that may start with '-'."""

    def __init__(self, prog: str, description: str, examples: Sequence[str]) -> None:
        epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples) if examples else None
        super().__init__(prog=prog, description=description, epilog=epilog,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
        self.value_options: set[str] = set()

    def error(self, message: str) -> NoReturn:
        """Print one line on stderr and exit with status 2."""
        first = message.strip().splitlines()[0] if message.strip() else "bad command line"
        self.exit(2, f"{self.prog}: error: {first} (see --help)\n")

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        """argparse's parse, after joining `--flag -value` into `--flag=-value` for options that take a value."""
        argv = list(sys.argv[1:] if args is None else args)
        joined: list[str] = []
        i = 0
        while i < len(argv):
            if argv[i] in self.value_options and i + 1 < len(argv) and _NEGATIVE_VALUE.match(argv[i + 1]):
                joined.append(f"{argv[i]}={argv[i + 1]}")
                i += 2
            else:
                joined.append(argv[i])
                i += 1
        return super().parse_known_args(joined, namespace)


def make_parser(prog: str, description: str, examples: Sequence[str]) -> Parser:
    """The parser of one example CLI: `description` on top, the example command lines at the bottom."""
    return Parser(prog, description, examples)


def _shown(default: object) -> str:
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, (tuple, list)):
        return ",".join(str(v) for v in default)
    return str(default)


def _help(text: str, shown: str, example: str | None) -> str:
    tail = f"default: {shown}" + (f"; example: {example}" if example is not None else "")
    return f"{text} ({tail})".replace("%", "%%")


def option(parser: Parser, flag: str, *, help: str, default: object, example: str,
           type: Callable[[str], Any] = str, choices: Sequence[str] | None = None, metavar: str | None = None,
           shown: str | None = None, repeat: bool = False) -> None:
    """Add `flag VALUE` (given again to add more values when repeat): its help names the default (`shown`
    where the default is not the value itself)."""
    text = _help(help, shown if shown is not None else _shown(default), f"{flag} {example}")
    parser.add_argument(flag, type=type, default=default, choices=choices, metavar=metavar, help=text,
                        action="append" if repeat else "store")
    parser.value_options.add(flag)


def switch(parser: Parser, flag: str, *, help: str) -> None:
    """Add an on/off `flag` (off unless given)."""
    parser.add_argument(flag, action="store_true", help=_help(help, "off", flag))


def positional(parser: Parser, name: str, *, help: str, example: str, metavar: str | None = None) -> None:
    """Add a required positional argument."""
    parser.add_argument(name, metavar=metavar, help=_help(help, "none, required", example))


def checked(fn: Callable[[str], Any]) -> Callable[[str], Any]:
    """`fn` as an argparse type whose ValueError/TypeError message becomes the one-line usage error."""

    def parse(text: str) -> Any:
        try:
            return fn(text)
        except (ValueError, TypeError) as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    parse.__name__ = getattr(fn, "__name__", "value")
    return parse


def number(kind: type, minimum: float, *, exclusive: bool = False, below: float | None = None) -> Callable[[str], Any]:
    """An argparse type: an int or float >= minimum (> minimum when exclusive; < below when given)."""
    rule = f"{'>' if exclusive else '>='} {minimum}" + (f" and < {below}" if below is not None else "")

    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {'an integer' if kind is int else 'a number'} {rule}, "
                                             f"got {text!r}") from None
        if v < minimum or (exclusive and v == minimum) or (below is not None and v >= below) or v != v:
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text!r}")
        return v

    return parse


def int_list(n: int, minimum: int = 1) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: n comma-separated integers, each >= minimum."""

    def parse(text: str) -> tuple[int, ...]:
        try:
            vals = tuple(int(x) for x in text.split(","))
        except ValueError:
            vals = ()
        if len(vals) != n:
            raise argparse.ArgumentTypeError(f"must be {n} comma-separated integers, got {text!r}")
        if min(vals) < minimum:
            raise argparse.ArgumentTypeError(f"values must be >= {minimum}, got {text!r}")
        return vals

    return parse


def dtype_of(allowed: tuple[str, ...], flag: str) -> Callable[[str], str]:
    """An argparse type: a dtype name of `allowed` in CuTeDSL or torch spelling (torch's name comes back)."""

    def parse(text: str) -> str:
        try:
            return parse_dtype(text, allowed, flag)
        except SystemExit as e:
            raise argparse.ArgumentTypeError(str(e).removeprefix("error: ").removeprefix(f"{flag} ")) from None

    return parse


def targets(text: str) -> tuple[str, ...]:
    """An argparse type: comma-separated compile targets the example kernels support (sm_80 and newer)."""
    from cute_nvarch.target import TARGETS, get_target

    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"must name at least one of {', '.join(TARGETS)}, got {text!r}")
    out = []
    for name in names:
        try:
            out.append(get_target(name).name)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"unknown target {name!r}: the example kernels compile for {', '.join(TARGETS)}"
            ) from None
    return tuple(dict.fromkeys(out))

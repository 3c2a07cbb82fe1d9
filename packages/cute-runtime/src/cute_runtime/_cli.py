"""What cute-runtime's command lines share: one-line usage errors (exit status 2) and checked integer options."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

__all__ = ["Parser", "int_at_least"]


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line on stderr and exit status 2; help keeps its own line breaks."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(**kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        first = message.strip().splitlines()[0] if message.strip() else "bad command line"
        self.exit(2, f"{self.prog}: error: {first} (see --help)\n")


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= minimum."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {text!r}")
        return value

    return parse

"""The command-line contract: a parser that keeps it, and the checks a test runs on any argparse parser.

The contract (issue 17): ``--help`` documents every option with its default and an example; a usage error
exits with status 2 and one line on stderr, never a traceback. `ContractParser` prints argparse's usage errors
as that one line; `positive_int` is an argparse type. `action_problems` checks one parser action's help text;
`bad_argv` gives a command line that misuses it; `run_contract` asserts both. Any package's CLI test can use
them with its own ``argparse.ArgumentParser`` (standard library only).
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

__all__ = ["ContractParser", "positive_int", "documented_actions", "action_problems", "bad_argv", "run_contract"]


class ContractParser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit status 2) and no usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message.splitlines()[0] if message else 'bad command line'}\n")


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def documented_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's actions that need documentation (all but --help and --version)."""
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


def action_problems(parser: argparse.ArgumentParser, action: argparse.Action) -> list[str]:
    """What is missing from an action's help: text, the default it shows, an example ("e.g.")."""
    name = action.option_strings[0] if action.option_strings else action.dest
    text = action.help or ""
    problems = []
    if not text.strip() or text == argparse.SUPPRESS:
        problems.append(f"{name}: no help text")
    if "default" not in text and "%(default)" not in text:
        problems.append(f"{name}: the help does not show the default")
    if "e.g." not in text:
        problems.append(f"{name}: the help gives no example (e.g. ...)")
    rendered = parser.format_help()
    if action.option_strings and action.option_strings[0] not in rendered:
        problems.append(f"{name}: not listed in --help")
    return problems


def bad_argv(action: argparse.Action, valid: list[str] | None = None) -> list[str]:
    """A command line that misuses `action` (argparse must reject it), after the `valid` arguments given."""
    base = list(valid or [])
    if not action.option_strings:  # a positional: one too many
        return base + ["--", "first", "second", "third"]
    opt = action.option_strings[0]
    if action.nargs == 0:  # a flag: a value is not allowed
        return base + [f"{opt}=1"]
    if action.type is not None and action.type is not str:  # a typed value: not a number
        return base + [opt, "not-a-value"]
    return base + [opt]  # a value is required but none is given


def run_contract(parser: argparse.ArgumentParser, main: Any, action: argparse.Action, capsys: Any) -> None:
    """Assert the contract for one action: documented, and `main(bad_argv)` exits 2 with one stderr line."""
    assert not action_problems(parser, action), action_problems(parser, action)
    status = main(bad_argv(action))
    err = capsys.readouterr().err
    assert status == 2, (bad_argv(action), status, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err

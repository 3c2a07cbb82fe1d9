"""Every command line of cute-nvarch, cute-runtime and cute-examples, action by action: the help text says what
the action does and shows its default; a usage error is one line on stderr and exit status 2, never a traceback.
(cute-layout's own command line is tested in packages/cute-layout/tests.)"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

# (command, module that defines `parser()`)
CLIS = {
    "python -m cute_nvarch.pictures": "cute_nvarch.pictures",
    "python -m cute_runtime": "cute_runtime.__main__",
    "python -m cute_runtime.bench": "cute_runtime.bench",
    "python -m cute_examples": "cute_examples.__main__",
    "python -m cute_examples.build_bundle": "cute_examples.build_bundle",
    "python -m cute_examples.bench": "cute_examples.bench",
    "python -m cute_examples.elementwise_add": "cute_examples.elementwise_add.__main__",
    "python -m cute_examples.dense_gemm": "cute_examples.dense_gemm.__main__",
    "python -m cute_examples.dense_gemm.bench": "cute_examples.dense_gemm.bench",
    "python -m cute_examples.dense_gemm.bench_host": "cute_examples.dense_gemm.bench_host",
    "python -m cute_examples.dense_gemm.configs": "cute_examples.dense_gemm.configs",
}


def _parser(module: str) -> argparse.ArgumentParser:
    return importlib.import_module(module).parser()


def _actions(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list:
    """(argv prefix that selects the parser, parser, action) for every action, sub-commands included."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        out.append((prefix, parser, action))
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _actions(sub, (*prefix, name))
    return out


def _cases() -> list:
    cases = []
    for command, module in CLIS.items():
        for prefix, _, action in _actions(_parser(module)):
            name = action.option_strings[0] if action.option_strings else action.dest
            cases.append(pytest.param(module, prefix, name, id=f"{command} {' '.join(prefix)} {name}".strip()))
    return cases


def _find(module: str, prefix: tuple[str, ...], name: str) -> tuple[argparse.ArgumentParser, argparse.Action]:
    for pre, parser, action in _actions(_parser(module)):
        if pre == prefix and name in (action.option_strings or [action.dest]):
            return parser, action
    raise AssertionError(f"{module}: no action {name}")


def _usage_errors(prefix: tuple[str, ...], action: argparse.Action) -> list[list[str]]:
    """Command lines that misuse this one action."""
    if isinstance(action, argparse._SubParsersAction):
        return [[*prefix, "no-such-command"]]
    if not action.option_strings:  # a required positional, left out
        return [list(prefix)]
    flag = action.option_strings[0]
    if action.nargs == 0:  # an on/off switch given a value
        return [[*prefix, f"{flag}=on"]]
    return [[*prefix, flag], [*prefix, flag, "@not-a-value@"]]  # the value left out; a value no rule accepts


@pytest.mark.parametrize(("module", "prefix", "name"), _cases())
def test_action_has_help_default_and_exit_2(module: str, prefix: tuple[str, ...], name: str, capsys) -> None:
    parser, action = _find(module, prefix, name)
    assert action.help and len(action.help) > 10, f"{name}: no help text"
    assert "default: " in action.help, f"{name}: the help shows no default: {action.help!r}"
    assert "example: " in action.help, f"{name}: the help shows no example: {action.help!r}"
    assert f"default: {action.help.split('default: ')[1][:8]}" in " ".join(parser.format_help().split())
    for argv in _usage_errors(prefix, action):
        with pytest.raises(SystemExit) as exc:
            _parser(module).parse_args(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2, f"{argv}: exit status {exc.value.code}"
        assert err.count("\n") == 1 and ": error: " in err, f"{argv}: not one line: {err!r}"


@pytest.mark.parametrize("module", CLIS.values())
def test_help_exits_0_with_examples(module: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        _parser(module).parse_args(["--help"])
    assert exc.value.code == 0
    assert "example" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["cute_examples", "--targets", "sm_75"], "unknown target 'sm_75'"),
        (["cute_examples.dense_gemm", "--mnkl", "-128,128,128,1"], "argument --mnkl: values must be >= 1"),
        (["cute_examples.dense_gemm", "--tolerance", "-1"], "argument --tolerance: must be > 0"),
        (["cute_examples.elementwise_add", "--M", "0"], "argument --M: must be >= 1"),
    ],
)
def test_usage_errors_in_a_process(argv: list[str], message: str) -> None:
    """The real entry points: one line on stderr, exit status 2, no traceback."""
    out = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
    assert out.stdout == ""

"""The command line ``python -m cute_layout`` and the benchmark's tiny mode."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cute_layout import bench
from cute_layout.__main__ import main

SVG = "{http://www.w3.org/2000/svg}"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cute_layout", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )


def test_prints_the_layout_and_its_table() -> None:
    proc = run("(4,2):(1,4)")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "(4,2):(1,4)"  # the result
    assert lines[1] == "(4,2):(1,4)"  # print_layout's first line
    assert lines[2] == "      0   1 "
    assert lines[3] == "    +---+---+"
    assert lines[4] == " 0  | 0 | 4 |"
    assert proc.stderr == ""


def test_syntax_error_exits_2_with_one_line() -> None:
    proc = run("(4,2):(1,")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("cute_layout: error: syntax error")
    assert "Traceback" not in proc.stderr


def test_unknown_function_exits_2_with_one_line() -> None:
    proc = run("frobnicate((4,2):(1,4))")
    assert proc.returncode == 2
    assert proc.stderr == "cute_layout: error: unknown function 'frobnicate' at column 1\n"


def test_algebra_error_exits_1_with_one_line() -> None:
    proc = run("composition((4,6):(1,5), 6:1)")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("cute_layout: error: ValueError")
    assert "Traceback" not in proc.stderr


def test_svg_of_a_tv_layout(tmp_path: Path) -> None:
    out = tmp_path / "tv.svg"
    proc = run("make_layout_tv((4,32):(32,1), (4,4):(4,1))", "--svg", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "((16,128),((32,4),(4,4)):((64,4),(16,1)))"
    root = ET.parse(out).getroot()
    rects = [e for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"]
    assert len(rects) == 16 * 128
    assert all(e.get("data-t") is not None for e in rects)


def test_svg_of_a_layout_and_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "zd.svg"
    assert main(["zipped_divide((8,8):(8,1), (2,4))", "--svg", str(out), "--no-table"]) == 0
    printed = capsys.readouterr()
    assert printed.out.strip() == "((2,4),(4,2)):((8,1),(16,4))"
    root = ET.parse(out).getroot()
    assert len([e for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"]) == 64
    assert main(["(2,4)", "--svg", str(tmp_path / "no.svg")]) == 1
    assert "cannot draw (2,4)" in capsys.readouterr().err
    assert not (tmp_path / "no.svg").exists()


def test_large_results_skip_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["zipped_divide((4096,4096):(4096,1), (16,128))"]) == 0
    printed = capsys.readouterr()
    assert printed.out.splitlines() == ["((16,128),(256,32)):((4096,1),(65536,128))"]
    assert "table omitted" in printed.err


def test_identity_layout_prints_without_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["make_identity_layout((2,3))"]) == 0
    printed = capsys.readouterr()
    assert printed.out == "(2,3):(1@0,1@1)\n"
    assert "table omitted" in printed.err


def test_list_and_missing_expression(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list"]) == 0
    names = capsys.readouterr().out.split()
    assert "composition" in names and "make_layout_tv" in names and "Swizzle" in names
    assert main([]) == 2
    assert "no expression" in capsys.readouterr().err


def test_bench_runs_in_tiny_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for case in bench.cases():
        assert case.name in out
    assert "first" in out and "repeated" in out and "targets" in out


def test_docs_pictures_are_up_to_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[3]
    guide = (root / "docs" / "layout.md").read_text(encoding="utf-8")
    section = guide.split("## Regenerating the pictures", 1)[1]
    lines = section.splitlines()
    commands = [shlex.split(line) for line in lines if line.startswith("python -m cute_layout ")]
    assert len(commands) == 4
    for command in commands:
        assert command[:3] == ["python", "-m", "cute_layout"] and command[4] == "--svg"
        committed = root / command[5]
        fresh = tmp_path / committed.name
        assert main([command[3], "--svg", str(fresh), "--no-table"]) == 0
        assert fresh.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
            f"{committed} is stale: run {' '.join(shlex.quote(c) for c in command)}"
        )
    capsys.readouterr()


# ------------------------------------------------------------------------------------------------
# the CLI contract (issue 17): every option documented with its default and an example, usage errors exit 2
# ------------------------------------------------------------------------------------------------

from cute_layout.__main__ import _parser  # noqa: E402
from cute_layout.cli_contract import documented_actions, run_contract  # noqa: E402

_CLIS = {"python -m cute_layout": (_parser, main), "python -m cute_layout.bench": (bench.parser_, bench.main)}
_CASES = [(cli, action) for cli, (make, _) in _CLIS.items() for action in documented_actions(make())]
_IDS = [f"{cli} {a.option_strings[0] if a.option_strings else a.dest}" for cli, a in _CASES]


@pytest.mark.parametrize("cli, action", _CASES, ids=_IDS)
def test_every_option_is_documented_and_misuse_exits_2(cli: str, action, capsys: pytest.CaptureFixture[str]) -> None:
    make, run = _CLIS[cli]
    run_contract(make(), run, action, capsys)


def test_help_exits_0_and_shows_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "default: 1024" in out and "e.g." in out


@pytest.mark.parametrize(
    "argv", [["--max-cells", "0"], ["--max-cells", "-3"], ["(4,2)", "--svg", "/no/such/dir/x.svg"]]
)
def test_bad_values_exit_2_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_usage_error_is_checked_before_the_expression_language_loads() -> None:
    code = (
        "import sys\n"
        "from cute_layout.__main__ import main\n"
        "status = main(['--max-cells', 'x'])\n"
        "assert status == 2, status\n"
        "assert 'cute_layout.expr' not in sys.modules and 'cute_layout.picture' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

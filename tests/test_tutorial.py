"""docs/tutorial.md: its module blocks are cute_examples/transpose.py, and every block runs (GPU ones on a GPU).

Blocks after `<!-- cpu -->` run on the CPU (compiling through ptxas), after `<!-- gpu -->` only with a GPU; the
other python blocks, concatenated, are the module's code (its docstring aside).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from cute_runtime.testing import requires_gpu

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"
MODULE = ROOT / "packages" / "cute-examples" / "src" / "cute_examples" / "transpose.py"
_BLOCK = re.compile(r"(?:<!-- (cpu|gpu) -->\n)?```python\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str]]:
    return [(tag or "module", code) for tag, code in _BLOCK.findall(TUTORIAL.read_text())]


def _lines(code: str) -> list[str]:
    return [line for line in code.splitlines() if line.strip()]


def _module_code() -> str:
    src = MODULE.read_text()
    doc = ast.parse(src).body[0]
    assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
    return "\n".join(src.splitlines()[doc.end_lineno :])


def test_module_blocks_are_the_example_file() -> None:
    module_blocks = [code for tag, code in _blocks() if tag == "module"]
    assert _lines("".join(module_blocks)) == _lines(_module_code())


def _namespace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("CUTE_CACHE_DIR", str(tmp_path / "cache"))
    ns: dict = {"__name__": "cute_examples.transpose"}
    import cute_examples.transpose as module

    ns.update(vars(module))  # the kernel itself, so that the blocks compile the module's own function
    return ns


def test_cpu_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("mlir")  # the blocks compile through ptxas
    ns = _namespace(tmp_path, monkeypatch)
    ran = 0
    for tag, code in _blocks():
        if tag == "cpu":
            exec(compile(code, f"{TUTORIAL}:cpu-block", "exec"), ns)
            ran += 1
    assert ran >= 2
    out = capsys.readouterr().out
    assert "pack 1: naive 32-way, swizzled 32 banks" in out
    assert "pack 2: naive 32-way, swizzled 32 banks" in out
    assert "registers" in out
    assert "vector pack 4: naive 8-way, swizzled 8 unit groups" in out
    assert "vector pack 8: naive 8-way, swizzled 8 unit groups" in out
    assert "vector registers" in out


@requires_gpu
def test_gpu_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU blocks (kernels from cute-ir, or from the AOT bundle of CUTE_BUNDLE_DIR on a host without it)."""
    ns = _namespace(tmp_path, monkeypatch)
    ran = 0
    for tag, code in _blocks():
        if tag == "gpu":
            exec(compile(code, f"{TUTORIAL}:gpu-block", "exec"), ns)
            ran += 1
    assert ran >= 1

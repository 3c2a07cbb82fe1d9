"""cute_examples is written with the public API: no `mlir.dialects` import, no private name of another package.

An AST scan of every module under packages/cute-examples/src: kernels build IR through cute_ir's builders
(Int/Bool/Tensor, if_/for_/while_, the Hopper blocks), never raw MLIR dialect ops, and import no name with a
leading underscore (a module or an attribute) from cute_ir, cute_nvarch, cute_runtime, cute_layout or any
other package. Dunder names (`__future__`, `__version__`) are not private.
"""

from __future__ import annotations

import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "cute_examples"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def violations(source: str, where: str = "<string>") -> list[str]:
    """The forbidden imports of one module's source, as 'where:line: what' strings."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if alias.name == "mlir.dialects" or alias.name.startswith("mlir.dialects."):
                    out.append(f"{where}:{node.lineno}: import {alias.name}")
                elif parts[0] != "cute_examples" and any(_private(p) for p in parts):
                    out.append(f"{where}:{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            names = [a.name for a in node.names]
            if parts[:2] == ["mlir", "dialects"] or (parts == ["mlir"] and "dialects" in names):
                out.append(f"{where}:{node.lineno}: from {node.module} import {', '.join(names)}")
            elif parts[0] != "cute_examples" and (
                any(_private(p) for p in parts) or any(_private(n) for n in names)
            ):
                out.append(f"{where}:{node.lineno}: from {node.module} import {', '.join(names)}")
    return out


def test_no_mlir_dialects_and_no_private_names_of_other_packages():
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 20 and any(f.name == "kernel.py" for f in files)
    bad = [v for f in files for v in violations(f.read_text(), str(f.relative_to(SRC.parent)))]
    assert bad == [], "\n".join(bad)


def test_the_scan_catches_each_kind_of_forbidden_import():
    """Control: the scan flags dialect imports and private names, and passes public and relative ones."""
    flagged = [
        "from mlir.dialects import arith",
        "from mlir.dialects.nvvm import barrier",
        "import mlir.dialects.scf",
        "from mlir import dialects",
        "from cute_ir.hopper._values import const",
        "from cute_ir.values import _div_of",
        "import cute_runtime._loader",
    ]
    for src in flagged:
        assert violations(src), src
    for src in (
        "from __future__ import annotations",
        "from mlir import ir",
        "from cute_ir import hopper as H",
        "from cute_ir.__about__ import __version__",
        "from ._compiled import x",
        "from cute_examples._compiled import _helper",
    ):
        assert not violations(src), src

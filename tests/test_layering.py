"""The layers hold in every file under packages/ (sources and tests), and no package has an import loop.

Every import counts: module-level, function-level, the module names given to `pytest.importorskip`,
`importlib.import_module` and `__import__` as string literals, and the imports of string literals that are
Python code (snippets run with `python -c`). The cycle check follows the explicit imports
between the modules of one package (not the implicit import of a parent package's __init__, not the
imports under `if TYPE_CHECKING:`, which never run, nor those of snippets, which run in another process).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGES_DIR = Path(__file__).resolve().parent.parent / "packages"

# package directory -> (import name, the sibling import names it may use)
LAYERS = {
    "cute-layout": ("cute_layout", set()),
    "cute-nvarch": ("cute_nvarch", {"cute_layout"}),
    "cute-ir": ("cute_ir", {"cute_layout", "cute_nvarch"}),
    "cute-runtime": ("cute_runtime", {"cute_layout", "cute_nvarch"}),
    "cute-examples": ("cute_examples", {"cute_layout", "cute_nvarch", "cute_ir", "cute_runtime"}),
}
PROJECT = {name for name, _ in LAYERS.values()}
# third-party modules a layer must never import (in its sources and its tests)
FORBIDDEN_THIRD_PARTY = {"cute-layout": {"mlir", "cuda", "torch"}, "cute-nvarch": {"mlir"}, "cute-runtime": {"mlir"}}
_DYNAMIC_IMPORTS = {"importorskip", "import_module", "__import__"}


def _python_files(package_dir: Path) -> list[Path]:
    return sorted(p for p in package_dir.rglob("*.py") if "build" not in p.relative_to(package_dir).parts)


def _module_name(path: Path, package_dir: Path) -> str | None:
    """The dotted module name of a source file (None for files outside src/)."""
    rel = path.relative_to(package_dir)
    if rel.parts[0] != "src":
        return None
    parts = list(rel.with_suffix("").parts[1:])
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str | None, is_package: bool) -> Iterator[tuple[str, list[str], bool]]:
    """(imported module, names taken from it, runs at import/call time) for every import in the tree."""

    def visit(node: ast.AST, runs: bool) -> Iterator[tuple[str, list[str], bool]]:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from visit(child, False)
            for child in node.orelse:
                yield from visit(child, runs)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], runs
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            elif module is None:
                base = node.module or ""  # a test's relative import: stays inside the tests
                if base:
                    yield "." + base, [], runs
                return
            else:
                parts = module.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                base = ".".join(parts[:keep] + ([node.module] if node.module else []))
            yield base, [a.name for a in node.names], runs
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "import " in node.value:
            try:  # code run in a subprocess (`python -c SNIPPET`) imports too
                snippet = ast.parse(textwrap.dedent(node.value))
            except SyntaxError:
                snippet = None
            if snippet is not None:
                for imported, names, _ in _imports(snippet, None, False):  # another process: no import loop
                    yield imported, names, False
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in _DYNAMIC_IMPORTS and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield arg.value, [], runs
        for child in ast.iter_child_nodes(node):
            yield from visit(child, runs)

    yield from visit(tree, True)


def _parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@pytest.mark.parametrize("package", list(LAYERS))
def test_no_file_imports_a_higher_or_unrelated_layer(package: str) -> None:
    """Sources and tests of each package import only the sibling packages below it."""
    own, allowed = LAYERS[package]
    forbidden_3p = FORBIDDEN_THIRD_PARTY.get(package, set())
    package_dir = PACKAGES_DIR / package
    files = _python_files(package_dir)
    assert files, f"no Python files under {package_dir}"
    bad = []
    for path in files:
        module = _module_name(path, package_dir)
        for imported, _, _ in _imports(_parse(path), module, path.name == "__init__.py"):
            top = imported.split(".")[0]
            if (top in PROJECT and top != own and top not in allowed) or top in forbidden_3p:
                bad.append(f"{path.relative_to(PACKAGES_DIR)} imports {imported}")
    assert not bad, f"{package} may use only {sorted(allowed) or 'no sibling'}:\n" + "\n".join(bad)


def _module_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports explicitly (at run time)."""
    own, _ = LAYERS[package]
    package_dir = PACKAGES_DIR / package
    sources = {}
    for path in _python_files(package_dir / "src"):
        name = _module_name(path, package_dir)
        if name is not None:
            sources[name] = path
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, path in sources.items():
        for imported, names, runs in _imports(_parse(path), name, path.name == "__init__.py"):
            if not runs or imported.split(".")[0] != own:
                continue
            targets = [f"{imported}.{n}" for n in names if f"{imported}.{n}" in sources]
            if len(targets) < len(names) or not names:  # names that are attributes come from `imported` itself
                targets.append(imported)
            graph[name].update(t for t in targets if t in sources and t != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


@pytest.mark.parametrize("package", ["cute-nvarch", "cute-ir", "cute-runtime", "cute-examples"])
def test_no_import_loop_inside_the_package(package: str) -> None:
    """No two modules of one package import each other, directly or through others (function-level too)."""
    graph = _module_graph(package)
    assert len(graph) > 3
    loops = _cycles(graph)
    assert not loops, f"{package} has import loops: " + "; ".join(" <-> ".join(c) for c in loops)


def test_the_scanner_sees_every_kind_of_import() -> None:
    """Function-level, relative, dynamic, snippet and TYPE_CHECKING imports are all found; a loop is found."""
    src = (
        "import a.b\nfrom . import c\nfrom .d import e\nif TYPE_CHECKING:\n    from f import g\n"
        "def h():\n    from i import j\n    pytest.importorskip('k.l')\n    importlib.import_module('m')\n"
    )
    src += 'CODE = "import n\\nprint(1)"\n'
    found = {(m, runs) for m, _, runs in _imports(ast.parse(src), "p.q", False)}
    assert found == {
        ("a.b", True), ("p", True), ("p.d", True), ("f", False), ("i", True), ("k.l", True), ("m", True), ("n", False)
    }
    assert _cycles({"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": {"x"}}) == [["x", "y", "z"]]
    assert _cycles({"x": {"y"}, "y": set()}) == []


def test_cute_ir_registers_the_compiler_cute_runtime_looks_up() -> None:
    """cute-runtime finds its compiler through an entry point that cute-ir's pyproject declares (no import)."""
    from cute_runtime.compilers import COMPILER_GROUP, compiler

    tomllib = pytest.importorskip("tomllib")

    project = tomllib.loads((PACKAGES_DIR / "cute-ir" / "pyproject.toml").read_text())["project"]
    target = project["entry-points"][COMPILER_GROUP]["cute-ir"]
    module, _, name = target.partition(":")
    assert module.split(".")[0] == "cute_ir"
    source = (PACKAGES_DIR / "cute-ir" / "src" / Path(*module.split("."))).with_suffix(".py")
    assert f"def {name}(" in source.read_text()
    assert callable(compiler)

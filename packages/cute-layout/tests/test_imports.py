"""What ``import cute_layout`` loads, and no import cycles among the package's modules (issues 10 and 17)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import cute_layout

SRC = Path(cute_layout.__file__).parent


def _loaded_by_import() -> set[str]:
    code = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import cute_layout\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(proc.stdout))


def test_import_loads_no_picture_cli_bench_nor_xml_urllib_http_email() -> None:
    loaded = _loaded_by_import()
    for name in ("cute_layout.picture", "cute_layout.expr", "cute_layout.__main__", "cute_layout.bench",
                 "cute_layout.cli_contract", "argparse", "dataclasses"):
        assert name not in loaded, name
    for top in ("xml", "urllib", "http", "email"):
        assert not any(m == top or m.startswith(top + ".") for m in loaded), top
    # the algebra itself is loaded
    assert {"cute_layout.algebra", "cute_layout.layout", "cute_layout.swizzle"} <= loaded


def test_lazy_names_load_on_first_use() -> None:
    assert callable(cute_layout.to_svg) and callable(cute_layout.evaluate)
    assert issubclass(cute_layout.ExprError, ValueError)
    assert {"to_svg", "parse", "print_layout"} <= set(dir(cute_layout))


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules that `path` imports anywhere (module level or inside functions)."""
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:  # `from . import algebra` imports the submodule
                if f"{target}.{alias.name}" in modules:
                    out.add(f"{target}.{alias.name}")
            if target in modules and (node.module or not any(f"{target}.{a.name}" in modules for a in node.names)):
                out.add(target)
    # importlib.import_module(f"{__name__}.{module}") in __init__: every lazily loaded module is an edge
    text = path.read_text(encoding="utf-8")
    if "import_module" in text:
        for name in modules:
            short = name.rsplit(".", 1)[-1]
            if f'"{short}"' in text and name != me:
                out.add(name)
    out.discard(me)
    return out


def import_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports, for every module under `src`."""
    files = sorted(src.rglob("*.py"))
    modules = {_module_name(f) for f in files}
    return {_module_name(f): _imports(f, modules) for f in files}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph (a list of modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycles_in_cute_layout() -> None:
    graph = import_graph(SRC)
    assert "cute_layout.algebra" in graph and graph["cute_layout.algebra"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_layout_renders_as_svg_in_jupyter_up_to_1024_cells() -> None:
    small = cute_layout.Layout((4, 8), (8, 1))
    svg = small._repr_svg_()
    assert svg is not None and svg.startswith("<svg") and "(4,8):(8,1)" in svg
    assert cute_layout.Layout((32, 32))._repr_svg_() is not None  # exactly 1024 cells
    assert cute_layout.Layout((32, 33))._repr_svg_() is None  # text beyond
    assert cute_layout.Layout((2, 2, 2))._repr_svg_() is None  # rank 3: text
    assert cute_layout.make_identity_layout((2, 2))._repr_svg_() is None  # coordinate offsets: text

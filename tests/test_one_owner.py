"""One owner per fact: an AST scan of packages/*/src finds where the compiled-kernel facts are defined.

A fact is *defined* by a literal that restates it: a dict/set/tuple/list literal naming two or more numeric
types (`"float16"`, `"bf16"`, ...: every spelling cute-nvarch's numeric table reads), two or more target names
(`"sm_80"`, `"sm_90a"`), the literal 128 bound to a tensor-map/TMA-descriptor size name, or the bundle
manifest's keys ("kernels" with "format" or "version"; four of an entry's fields). Export lists (`__all__`)
and lazy-import maps (`_LAZY`) name Python objects, not facts, and are not scanned. Each fact must have
at most one defining module, and that module is cute-nvarch's (target.py builds its set from the Target
objects, so no module spells one out).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from cute_nvarch.entry import ENTRY_FIELDS
from cute_nvarch.numeric import NUMERIC_TYPES

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(ROOT.glob("packages/*/src/**/*.py"))

DTYPE_SPELLINGS = frozenset(
    s for t in NUMERIC_TYPES for s in (t.name, t.name.lower(), t.canonical, t.short, t.ptx_type)
) | {"half", "float", "double", "fp16", "fp32"}
TARGET_RE = re.compile(r"^sm_\d{2,3}[af]?$")
TMA_SIZE_NAME_RE = re.compile(r"(TENSOR_?MAP|TMA|DESCRIPTOR).*(BYTES|SIZE)", re.IGNORECASE)
MANIFEST_HEADER = frozenset({"format", "version"})
NOT_SCANNED = frozenset({"__all__", "_LAZY"})

# fact -> the one module allowed to define it
OWNERS = {
    "dtype-name table": "packages/cute-nvarch/src/cute_nvarch/numeric.py",
    "target-name set": "packages/cute-nvarch/src/cute_nvarch/target.py",
    "TMA descriptor size": "packages/cute-nvarch/src/cute_nvarch/params.py",
    "bundle manifest keys": "packages/cute-nvarch/src/cute_nvarch/bundle_format.py",
    "kernel entry fields": "packages/cute-nvarch/src/cute_nvarch/entry.py",
}


def _strings(node: ast.AST) -> list[str]:
    """The string constants a container literal lists directly (a dict's keys and values)."""
    if isinstance(node, ast.Dict):
        items = [*node.keys, *node.values]
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = list(node.elts)
    else:
        return []
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def facts_defined(source: str) -> set[str]:
    """The facts a module's source restates (see the module doc)."""
    found: set[str] = set()
    tree = ast.parse(source)
    skipped = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in NOT_SCANNED for t in node.targets)
        for sub in ast.walk(node.value)
    }
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        strings = _strings(node)
        if len({s for s in strings if s in DTYPE_SPELLINGS}) >= 2:
            found.add("dtype-name table")
        if len({s for s in strings if TARGET_RE.match(s)}) >= 2:
            found.add("target-name set")
        if "kernels" in strings and MANIFEST_HEADER.intersection(strings):
            found.add("bundle manifest keys")
        if len(set(ENTRY_FIELDS).intersection(strings)) >= 4:
            found.add("kernel entry fields")
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if (
                isinstance(value, ast.Constant)
                and value.value == 128
                and any(isinstance(t, ast.Name) and TMA_SIZE_NAME_RE.search(t.id) for t in targets)
            ):
                found.add("TMA descriptor size")
    return found


def definers() -> dict[str, list[str]]:
    """fact -> the modules (paths relative to the repository) that define it."""
    out: dict[str, list[str]] = {fact: [] for fact in OWNERS}
    for path in SOURCES:
        for fact in facts_defined(path.read_text()):
            out[fact].append(str(path.relative_to(ROOT)))
    return out


@pytest.mark.parametrize("fact", sorted(OWNERS))
def test_each_fact_has_one_owner(fact: str) -> None:
    assert SOURCES, "no sources found under packages/*/src"
    where = definers()[fact]
    assert set(where) <= {OWNERS[fact]}, f"{fact} is defined in {where}; its one owner is {OWNERS[fact]}"


@pytest.mark.parametrize(
    ("snippet", "fact"),
    [
        ('_T = {"float16": 6, "bfloat16": 9}', "dtype-name table"),
        ('DTYPES = ("f32", "bf16")', "dtype-name table"),
        ('def f(x):\n    return {"Float16": 1, "Int32": 2}[x]', "dtype-name table"),
        ('OK = {"sm_80", "sm_90a"}', "target-name set"),
        ("TENSOR_MAP_BYTES = 128", "TMA descriptor size"),
        ("tma_descriptor_size: int = 128", "TMA descriptor size"),
        ('m = {"format": "cute-bundle", "version": 1, "kernels": []}', "bundle manifest keys"),
        ('F = ("spec", "name", "arch", "params", "launch")', "kernel entry fields"),
        ('KEYS = ("format", "version", "kernels")', "bundle manifest keys"),
    ],
)
def test_the_scan_finds_a_restated_fact(snippet: str, fact: str) -> None:
    assert fact in facts_defined(snippet)


@pytest.mark.parametrize(
    "snippet",
    [
        'name = "float16"',  # one spelling is a use, not a table
        "DTYPES = tuple(t.canonical for t in (Float16, Float32))",  # derived from the table
        'target: str = "sm_90a"',
        "TMA_MAX_RANK = 5\nBOX = 128",
        'kinds = (("i32", 32),)',
        '__all__ = ["Float16", "BFloat16"]',
        '{"format": "cute-gemm-tune", "version": 1, "entries": {}}',  # another file format
    ],
)
def test_the_scan_leaves_uses_alone(snippet: str) -> None:
    assert facts_defined(snippet) == set()

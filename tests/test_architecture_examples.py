"""Every `### Block:` section of docs/architecture.md carries a complete example that compiles with 0 spills.

Each example is a program that builds a small kernel with cute-ir's public builders and compiles it through
ptxas for sm_90a (`cute_ir.compile`), leaving the Artifact in `art`. This test extracts the first ```python
block of every `### Block:` section, runs it in a fresh namespace and checks ptxas's report: no spill stores or
loads. It needs the MLIR bindings and ptxas (no GPU); without MLIR it is skipped.
"""

from __future__ import annotations

import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
# the blocks that must keep a section (others may be added; each needs an example)
REQUIRED = (
    "builder vocabulary", "pipeline", "wgmma from an MMA atom", "TMA plan", "tile scheduler", "shared-memory allocator"
)


def block_examples(text: str) -> dict[str, str]:
    """{block name: the first python code block of its section} for every `### Block: <name>` heading.

    A section ends at the next heading of level 1 to 3 outside a code fence (a `# comment` line inside a
    code block is not a heading).
    """
    out: dict[str, str] = {}
    name, fence, code = None, None, None
    for line in text.splitlines(keepends=True):
        if fence is not None:
            if line.startswith("```"):
                if name is not None and code is not None and not out[name]:
                    out[name] = "".join(code)
                fence, code = None, None
            elif code is not None:
                code.append(line)
            continue
        if line.startswith("```"):
            fence = line[3:].strip()
            code = [] if (fence == "python" and name is not None) else None
        elif re.match(r"#{1,3} ", line):
            m = re.match(r"### Block: (.+?)\s*$", line)
            name = m.group(1) if m else None
            if name is not None:
                out[name] = ""
    return out


EXAMPLES = block_examples(DOC.read_text())


def test_every_block_section_has_an_example():
    assert all(name in EXAMPLES for name in REQUIRED), sorted(EXAMPLES)
    missing = [name for name, code in EXAMPLES.items() if not code.strip()]
    assert missing == [], f"### Block: sections without a ```python example: {missing}"


def test_extraction_finds_sections_and_stops_at_the_next_heading():
    """Control: the extractor takes each section's first python block and nothing of the next section."""
    text = (
        "### Block: a\ntext\n```python\n# a comment, not a heading\nx = 1\n```\n```python\ny = 2\n```\n"
        "## Next\n```python\nz = 3\n```\n### Block: b\nno code\n"
    )
    assert block_examples(text) == {"a": "# a comment, not a heading\nx = 1\n", "b": ""}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_block_example_compiles_without_spills(name):
    pytest.importorskip("mlir")
    ns: dict[str, object] = {"__name__": f"architecture_example_{name}"}
    exec(compile(EXAMPLES[name], f"docs/architecture.md (Block: {name})", "exec"), ns)  # noqa: S102
    art = ns.get("art")
    assert art is not None and hasattr(art, "resources"), "the example must leave its Artifact in `art`"
    res = art.resources
    assert res["spill_stores"] == 0 and res["spill_loads"] == 0, art.resource_line()
    assert art.arch == "sm_90a" and art.cubin

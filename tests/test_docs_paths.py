"""The Markdown files name only files in the repository: every relative link resolves, no path of one machine
(`/work/...`, `../shared/...`) appears, and docs/index.md lists every page of docs/."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")
FOREIGN = re.compile(r"(?<![\w.])(/work/|\.\./shared/|env\.sh\b|cd /work)")


def _markdown() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
        files = [ROOT / line for line in out.stdout.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an unpacked sdist)
        files = [p for p in ROOT.rglob("*.md") if not {".venv", ".nox", "build"} & set(p.parts)]
    return [p for p in files if p.exists()]


@pytest.mark.parametrize("path", _markdown(), ids=lambda p: str(p.relative_to(ROOT)))
def test_markdown_names_only_repository_files(path: Path) -> None:
    text = path.read_text()
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same page
        assert (path.parent / target.split("#")[0]).exists(), f"{path.name}: link to a missing file {target!r}"
    bad = [m.group(0) for m in FOREIGN.finditer(text)]
    assert not bad, f"{path.name}: names paths outside the repository: {bad}"


def test_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "index.md")
    assert pages and [p for p in pages if f"]({p})" not in index] == []

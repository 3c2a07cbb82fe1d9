"""Each package README's install commands name, by path from the clone, exactly the package and the packages of
this repository it depends on (read from the pyproject files): a fresh venv resolves no sibling from an index.
The `package` nox sessions run those installs for real."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())


def _project(package: str) -> dict:
    return tomllib.loads((ROOT / "packages" / package / "pyproject.toml").read_text())["project"]


def _needs(package: str) -> set[str]:
    """The package and every package of this repository it depends on, transitively."""
    out = {package}
    for req in _project(package).get("dependencies", []):
        name = re.split(r"[\s\[<>=!~;@]", req, maxsplit=1)[0].lower()
        if name in PACKAGES:
            out |= _needs(name)
    return out


def _install_commands(package: str) -> list[str]:
    """The `pip install` command lines of the README (backslash continuations joined)."""
    text = (ROOT / "packages" / package / "README.md").read_text().replace("\\\n", " ")
    return [line for line in text.splitlines() if re.search(r"\bpip install\b", line)]


@pytest.mark.parametrize("package", PACKAGES)
def test_readme_installs_the_siblings_by_path(package: str) -> None:
    commands = _install_commands(package)
    assert commands, f"{package}/README.md gives no install command"
    for line in commands:
        named = set(re.findall(r"\./packages/([\w-]+)", line.split("#")[0]))
        assert named == _needs(package), f"{package}/README.md: {line.strip()!r} installs {sorted(named)}"


@pytest.mark.parametrize("package", [p for p in PACKAGES if "test" in _project(p).get("optional-dependencies", {})])
def test_readme_test_command_installs_the_test_extra(package: str) -> None:
    assert any(f"./packages/{package}[test]" in line for line in _install_commands(package)), package

"""Sessions per package and across packages: `nox -t ci` is the test line, `nox -s demo` the main job."""

from __future__ import annotations

import re
from pathlib import Path

import nox

try:
    import tomllib
except ImportError:  # Python < 3.11, where nox depends on tomli
    import tomli as tomllib

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True  # no Python 3.11: an error, never a skipped session and exit 0

PYTHON = "3.11"
_ORDER = ["cute-layout", "cute-nvarch", "cute-ir", "cute-runtime", "cute-examples"]
PACKAGES = [p for p in _ORDER if (Path(__file__).parent / "packages" / p / "pyproject.toml").exists()]
TEST_DEPS = ["pytest>=8", "hypothesis>=6.100", "numpy"]  # numpy: cute-runtime's parameter and GPU tests
# A CPU wheel of this torch lies on local disk; pin it first so nothing pulls a CUDA build.
TORCH = "torch==2.13.0"


def _install_all(session: nox.Session) -> None:
    session.install(TORCH)
    session.install(*TEST_DEPS)
    session.install(*[f"-e./packages/{p}" + ("[sass]" if p == "cute-ir" else "") for p in PACKAGES])


@nox.session(python=PYTHON, tags=["ci"])
def tests(session: nox.Session) -> None:
    """The cross-package tests (tests/), with every package installed; each package's own tests run in `package`."""
    _install_all(session)
    session.run("pytest", "-q", "tests", *session.posargs)


def _project(package: str) -> dict:
    with open(Path(__file__).parent / "packages" / package / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def siblings(package: str) -> list[str]:
    """The packages of this repository that `package` depends on, transitively, from the pyproject files."""
    out: set[str] = set()
    for requirement in _project(package).get("dependencies", []):
        if _name(requirement) in PACKAGES:
            out |= {_name(requirement), *siblings(_name(requirement))}
    return [p for p in PACKAGES if p in out]


# Run in a package session's venv: the cute-* distributions installed are exactly the expected ones, and each came
# from this clone (pip's direct_url.json names the directory packages/<name>), never from an index.
_FROM_CLONE = """
import json, sys
from importlib.metadata import distributions
from pathlib import Path
from urllib.parse import unquote, urlparse
root, expected = Path(sys.argv[1]).resolve(), set(sys.argv[2:])
found = {}
for dist in distributions():
    name = dist.metadata["Name"].lower().replace("_", "-")
    if name.startswith("cute-"):
        url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
        found[name] = Path(unquote(urlparse(url).path)).resolve() if url.startswith("file:") else None
assert set(found) == expected, f"installed cute-* packages {sorted(found)}, expected {sorted(expected)}"
bad = {n: str(p) for n, p in found.items() if p != (root / "packages" / n).resolve()}
assert not bad, f"not installed from this clone's packages/ directory: {bad}"
print("from this clone:", ", ".join(f"{n} ({found[n]})" for n in sorted(found)))
"""


@nox.session(python=PYTHON, reuse_venv=False, tags=["ci"])
@nox.parametrize("package", PACKAGES)
def package(session: nox.Session, package: str) -> None:
    """One package alone in a fresh venv, installed as its README says: imports, siblings from the clone, tests pass.

    The README's commands: the siblings by path from this clone with the package, then its `[test]` extra.
    """
    project = _project(package)
    test_extra = project.get("optional-dependencies", {}).get("test", [])
    if any(_name(r) == "torch" for r in [*project.get("dependencies", []), *test_extra]):
        session.install(TORCH)  # the CPU wheel on local disk, before anything can pull another build
    paths = [f"./packages/{p}" for p in siblings(package)]
    session.install(*paths, f"./packages/{package}")
    if not project.get("dependencies"):  # a package without dependencies brings nothing else along
        frozen = session.run("python", "-m", "pip", "list", "--format=freeze", silent=True)
        own = {package, "pip", "setuptools"}  # a fresh venv has pip and setuptools
        extra = [line for line in frozen.splitlines() if line.split("==")[0].lower() not in own]
        if extra:
            session.error(f"{package} pulled in other packages: {extra}")
    module = package.replace("-", "_")
    session.run("python", "-c", f"import {module}; print('{module}', {module}.__version__)")
    check = Path(session.create_tmp()) / "from_clone.py"
    check.write_text(_FROM_CLONE)
    session.run("python", str(check), str(Path(__file__).parent), *siblings(package), package)
    if test_extra:
        session.install(*paths, f"./packages/{package}[test]")
    else:
        session.install(*TEST_DEPS)
    session.run("pytest", "-q", f"packages/{package}/tests", *session.posargs)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: compile the example kernels end to end; with a GPU, run, check and time them."""
    _install_all(session)
    session.run("python", "-m", "cute_examples", *session.posargs)


@nox.session(python=PYTHON)
def configs(session: nox.Session) -> None:
    """Compile all 1,728 GEMM configs through ptxas, one worker per core (`--jobs N`, `--sample N` after --)."""
    _install_all(session)
    session.run("python", "-m", "cute_examples.dense_gemm.configs", *session.posargs)


@nox.session(python=PYTHON)
def bench_layout(session: nox.Session) -> None:
    """Per-call cost of the common layout-algebra operations."""
    session.install("./packages/cute-layout")
    session.run("python", "-m", "cute_layout.bench", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff over the whole tree."""
    session.install("ruff")
    session.run("ruff", "check", ".")

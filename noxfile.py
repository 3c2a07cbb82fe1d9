"""Sessions per package and across packages: `nox -t ci` is the test line, `nox -s demo` the main job."""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True

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
def layout(session: nox.Session) -> None:
    """cute-layout alone: installs nothing else, and its tests pass without any other package."""
    session.install("./packages/cute-layout")
    frozen = session.run("python", "-m", "pip", "list", "--format=freeze", silent=True)
    allowed = {"cute-layout", "pip", "setuptools"}
    extra = [line for line in frozen.splitlines() if line.split("==")[0].lower() not in allowed]
    if extra:
        session.error(f"cute-layout pulled in other packages: {extra}")
    session.run("python", "-c", "import cute_layout; print('cute_layout', cute_layout.__version__)")
    session.install(*TEST_DEPS)
    session.run("pytest", "-q", "packages/cute-layout/tests", *session.posargs)


@nox.session(python=PYTHON, tags=["ci"])
def tests(session: nox.Session) -> None:
    """Every other package's tests and the cross-package tests, in one environment."""
    _install_all(session)
    paths = [f"packages/{p}/tests" for p in PACKAGES[1:]] + ["tests"]
    session.run("pytest", "-q", *paths, *session.posargs)


# What each package's own test suite needs besides the package: its dependencies in this repo, plus test-only ones.
CUDA_BINDINGS = "cuda-bindings>=13.3,<14"
_TEST_NEEDS = {
    "cute-layout": [],
    "cute-nvarch": ["cute-layout", CUDA_BINDINGS],  # the TMA enum cross-checks read cuda.bindings' values
    "cute-ir": ["cute-layout", "cute-nvarch"],
    "cute-runtime": ["cute-layout", "cute-nvarch", TORCH],
    "cute-examples": ["cute-layout", "cute-nvarch", "cute-ir", "cute-runtime", TORCH],
}


@nox.session(python=PYTHON)
@nox.parametrize("package", PACKAGES)
def package(session: nox.Session, package: str) -> None:
    """One package's tests, with only that package, its dependencies and its test needs installed."""
    needs = _TEST_NEEDS[package]
    if TORCH in needs:
        session.install(TORCH)
    local = [f"./packages/{p}" + ("[sass]" if p == "cute-ir" else "") for p in [*needs, package] if p in PACKAGES]
    other = [p for p in needs if p not in PACKAGES and p != TORCH]
    session.install(*TEST_DEPS, *other, *local)
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

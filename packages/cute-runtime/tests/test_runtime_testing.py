from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cute_runtime
import pytest
from cute_runtime.testing import gpu_missing_reason, sm90_missing_reason

SAMPLE = """
from cute_runtime.testing import requires_gpu, requires_sm90


@requires_gpu
def test_function():
    pass


@requires_gpu()
def test_called_form():
    pass


@requires_sm90
class TestHopper:
    def test_method(self):
        pass

    def helper(self):
        pass
"""

INI = """[pytest]
addopts = --strict-markers -p no:cacheprovider
markers =
    gpu: needs a GPU
    sm90: needs sm_90
"""


def _run(tmp_path: Path, require: str | None, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "pytest.ini").write_text(INI)
    env = dict(os.environ)
    env.pop("CUTE_REQUIRE_GPU", None)
    # the sample runs from tmp_path: make every import path absolute
    src = str(Path(cute_runtime.__file__).resolve().parents[1])
    paths = [src] + [str(Path(p).resolve()) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # a bare pytest starts faster
    if require is not None:
        env["CUTE_REQUIRE_GPU"] = require
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", str(tmp_path), *extra],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_skip_without_gpu_and_fail_when_required(tmp_path: Path) -> None:
    gpu_reason, sm90_reason = gpu_missing_reason(), sm90_missing_reason()
    relaxed = _run(tmp_path, None)
    required = _run(tmp_path, "1")
    selected = _run(tmp_path, None, "-m", "sm90", "--collect-only", "-q")
    assert "1/3 tests collected" in selected.stdout, selected.stdout
    if gpu_reason is None and sm90_reason is None:
        assert relaxed.returncode == 0 and "3 passed" in relaxed.stdout
        assert required.returncode == 0 and "3 passed" in required.stdout
        return
    if gpu_reason is not None:
        assert relaxed.returncode == 0, relaxed.stdout
        assert "3 skipped" in relaxed.stdout and "no NVIDIA driver/GPU found" in relaxed.stdout
        assert required.returncode == 1, required.stdout
        assert "3 failed" in required.stdout
        assert "CUTE_REQUIRE_GPU=1 but this test cannot run" in required.stdout
    else:  # a GPU that is not sm_90: only the Hopper class skips or fails
        assert "2 passed, 1 skipped" in relaxed.stdout
        assert "1 failed, 2 passed" in required.stdout


def test_markers_added() -> None:
    from cute_runtime.testing import requires_gpu, requires_sm90

    def test_f() -> None:
        pass

    class TestC:
        def test_m(self) -> None:
            pass

    def names(obj: object) -> set[str]:
        return {m.name for m in getattr(obj, "pytestmark", [])}

    assert {"gpu"} <= names(requires_gpu(test_f)) and "sm90" not in names(requires_gpu(test_f))
    assert {"gpu", "sm90"} <= names(requires_sm90(test_f))
    assert {"gpu", "sm90"} <= names(requires_sm90(TestC))
    assert {"gpu"} <= names(requires_gpu()(TestC))


@pytest.mark.skipif(gpu_missing_reason() is None, reason="checks the reasons given without a GPU")
def test_reasons_without_gpu() -> None:
    assert "no NVIDIA driver/GPU found" in (gpu_missing_reason() or "")
    assert sm90_missing_reason() == gpu_missing_reason()

"""JIT kernels through cute-ir's compile cache: a warm cache needs no MLIR, CUTE_DUMP_DIR writes every stage,
and the key covers the kernel's own source and what it reaches, not the other files next to the script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlir")

SCRIPT = '''
import sys
from cute_runtime import Tensor, kernel
from helper import SCALE

class Fake:
    def __init__(self, shape):
        self.__cuda_array_interface__ = {"data": (1 << 20, False), "shape": shape, "typestr": "<f4",
                                          "strides": None, "version": 3}

def offset(i):
    return i * SCALE

@kernel(block=128)
def scale(k, x: Tensor(rank=1), y: Tensor(rank=1)):
    from cute_ir.control import if_
    i = k.block_idx(0) * 128 + k.thread_idx(0)
    if_(i < x.shape[0], lambda: y.store((i,), x.load((offset(i) % x.shape[0],))))

if __name__ == "__main__":
    loaded = "mlir" in sys.modules
    scale.compile(Fake((1000,)), Fake((1000,)), target="sm_90a")
    from cute_ir.cache import stats
    art = next(iter(scale.artifacts.values()))
    print(repr((loaded, "mlir" in sys.modules, stats["builds"], stats["disk_hits"], art.name)))
'''


def _run(d: Path, env: dict) -> tuple:
    out = subprocess.run([sys.executable, "kern.py"], cwd=d, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return eval(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict]:
    d = tmp_path / "proj"
    d.mkdir()
    (d / "kern.py").write_text(SCRIPT)
    (d / "helper.py").write_text("SCALE = 1\n")
    (d / "unrelated.py").write_text("X = 1\n")
    env = {**os.environ, "CUTE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(d)}
    env.pop("CUTE_DUMP_DIR", None)
    return d, env


def test_warm_cache_needs_no_mlir_and_ignores_unrelated_files(project: tuple[Path, dict]) -> None:
    d, env = project
    imported, _, builds, _, name = _run(d, env)
    assert not imported and builds == 1  # importing the module that defines the kernel imports no MLIR
    (d / "unrelated.py").write_text("X = 2\n")  # a file the kernel does not reach
    imported, after, builds, hits, again = _run(d, env)
    assert (imported, after, builds, hits, again) == (False, False, 0, 1, name)
    (d / "kern.py").write_text(SCRIPT.replace("i * SCALE", "i * SCALE * 1"))  # the kernel's helper changed
    assert _run(d, env)[2] == 1


def test_a_module_the_kernel_reaches_is_in_the_key(project: tuple[Path, dict]) -> None:
    d, env = project
    _run(d, env)
    (d / "helper.py").write_text("SCALE = 3\n")  # a value the kernel reaches through a global
    assert _run(d, env)[2] == 1


def test_dump_dir_writes_every_stage(project: tuple[Path, dict], tmp_path: Path) -> None:
    d, env = project
    dump = tmp_path / "dump"
    *_, name = _run(d, {**env, "CUTE_DUMP_DIR": str(dump)})
    assert sorted(p.name for p in dump.iterdir()) == sorted(
        f"{name}{s}" for s in (".mlir", ".nvvm.mlir", ".ptx", ".cubin", ".ptxas.txt", ".json")
    )
    entry = json.loads((dump / f"{name}.json").read_text())
    assert entry["spec"]["kernel"] == "scale" and entry["name"] == name


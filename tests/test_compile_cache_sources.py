"""cute-ir's compile cache on the example kernels, run from copies of the five packages' sources.

Editing the elementwise-add kernel leaves the GEMM's entry a hit; editing a module the GEMM reaches only
indirectly (cute-nvarch's GMMA descriptors, through cute-ir's Hopper builders) makes it a miss; a second copy
at another path, with new mtimes, hits both entries in a new process that never imports MLIR.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlir")

PACKAGES = Path(__file__).resolve().parent.parent / "packages"
IMPORTS = {"cute-layout": "cute_layout", "cute-nvarch": "cute_nvarch", "cute-ir": "cute_ir",
           "cute-runtime": "cute_runtime", "cute-examples": "cute_examples"}  # fmt: skip

# Compiles the GEMM and the add for sm_90a through the cache; prints which were built and where they came from.
_RUN = r"""
import json, sys
from cute_examples.dense_gemm.kernel import compile_gemm
from cute_examples.dense_gemm.spec import GemmConfig
from cute_examples.elementwise_add.kernel import add_kernel
from cute_ir import cache
from cute_runtime import Placeholder
from cute_runtime.compilers import compiler
add_spec = add_kernel.specialize(*[Placeholder((64, 1024), "float32")] * 3)[0]
built = {}
for kind, fn in (("gemm", lambda: compile_gemm(GemmConfig(), "sm_90a")),
                 ("add", lambda: compiler()(add_kernel.fn, add_spec, "sm_90a"))):
    before = cache.stats["builds"]
    fn()
    built[kind] = cache.stats["builds"] > before
import cute_examples
print(json.dumps({"built": built, "mlir": any(m == "mlir" or m.startswith("mlir.") for m in sys.modules),
                  "from": cute_examples.__file__}))
"""


def _copy_sources(dest: Path) -> Path:
    """The five packages' import trees under dest, written afresh (new mtimes), without bytecode."""
    for package, name in IMPORTS.items():
        shutil.copytree(PACKAGES / package / "src" / name, dest / name, copy_function=shutil.copyfile,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    return dest


def _run(sources: Path, cache_dir: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(sources), CUTE_CACHE_DIR=str(cache_dir))
    env.pop("CUTE_DUMP_DIR", None)
    env.pop("CUTE_CACHE", None)
    out = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["from"].startswith(str(sources)), got["from"]  # the copy was imported, not the checkout
    return got


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + line)


def test_edits_and_clones_of_the_example_sources(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    first = _copy_sources(tmp_path / "checkout-a")
    assert _run(first, cache_dir)["built"] == {"gemm": True, "add": True}
    clone = _copy_sources(tmp_path / "elsewhere" / "checkout-b")
    got = _run(clone, cache_dir)
    assert got["built"] == {"gemm": False, "add": False} and not got["mlir"]
    kernel = clone / "cute_examples" / "elementwise_add" / "kernel.py"  # the kernel's source key: its functions
    kernel.write_text(kernel.read_text().replace("def emit_elementwise_add(", "def emit_elementwise_add(  # edit\n"))
    assert _run(clone, cache_dir)["built"] == {"gemm": False, "add": True}
    _append(clone / "cute_nvarch" / "gmma_desc.py", "# an edit of a module the GEMM reaches indirectly\n")
    assert _run(clone, cache_dir)["built"]["gemm"] is True

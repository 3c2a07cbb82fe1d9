"""The GEMM's host path (problem checks, config choice, TMA boxes) runs where MLIR and cute-ir are missing."""

from __future__ import annotations

import os
import subprocess
import sys

_CODE = """
import builtins
real = builtins.__import__
def guard(name, *a, **k):
    if name == "mlir" or name.startswith("mlir.") or name == "cute_ir" or name.startswith("cute_ir."):
        raise ImportError("blocked: " + name)
    return real(name, *a, **k)
builtins.__import__ = guard
from cute_examples.dense_gemm.aot import aot_configs
from cute_examples.dense_gemm.launch_plan import gemm  # noqa: F401
from cute_examples.dense_gemm.plan import tma_boxes
cfg = aot_configs()[0]
a, b, c = tma_boxes(cfg)
print(a.box_dims, b.box_dims, c.box_dims, a.swizzle, c.swizzle)
"""


def test_host_path_needs_no_mlir() -> None:
    out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr[-2000:]
    dims = out.stdout.strip()
    assert dims.startswith("(") and dims.count("(") == 3, dims

"""A bundle with the tutorial transpose dispatches `load_bundle(path)["transpose"](...)` in a process where
cute-ir and MLIR cannot be imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlir")

HOST = r'''
import sys
sys.modules["cute_ir"] = None  # a venv without cute-ir: importing it fails
sys.modules["mlir"] = None
from cute_runtime import KernelNotFoundError, Placeholder, load_bundle
b = load_bundle(sys.argv[1])
t = b["transpose"]
k = t.compile(Placeholder((1000, 2048)), Placeholder((2048, 1000)), 1, True, target="sm_90a")
try:
    t.compile(Placeholder((10, 10), "float64"), Placeholder((10, 10), "float64"), 1, True, target="sm_90a")
except KernelNotFoundError:
    missing = "missing"
print(k.name, missing, sorted(b.signatures))
'''


def test_bundle_host_without_cute_ir(tmp_path: Path) -> None:
    from cute_examples.catalogue import jit_kernels
    from cute_examples.transpose import transpose
    from cute_ir.bundle import write_bundle
    from cute_runtime import Placeholder

    art = transpose.artifact(Placeholder((64, 64)), Placeholder((64, 64)), 1, True, target="sm_90a")
    write_bundle(tmp_path / "aot", [art], {n: k.signature() for n, k in jit_kernels().items()})
    out = subprocess.run([sys.executable, "-c", HOST, str(tmp_path / "aot")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [art.name, "missing", "['add',", "'dense_gemm',", "'dense_gemm_fused',",
                                  "'dense_gemm_scaled',", "'dense_gemm_split',", "'dense_gemm_split_fused',",
                                  "'dense_gemm_split_scaled',",
                                  "'transpose',", "'transpose_vec']"]

"""The example CLIs without a GPU: they compile, print the resource report and `no GPU found`, and exit 0."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import torch

REPORT = re.compile(
    r"^registers: \d+, shared memory: \d+ bytes, spill stores: 0 bytes, spill loads: 0 bytes, compile: \d+ ms$",
    re.M,
)
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="requires_no_gpu: checks the CPU-only path")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=dict(os.environ),
                          timeout=600)


def test_elementwise_add_cli_without_gpu() -> None:
    pytest.importorskip("mlir")
    out = _run("cute_examples.elementwise_add", "--M", "127", "--N", "129", "--dtype", "BFloat16")
    assert out.returncode == 0, out.stderr
    assert REPORT.search(out.stdout), out.stdout
    assert "no GPU found" in out.stdout


def test_elementwise_add_cli_bad_dtype() -> None:
    out = _run("cute_examples.elementwise_add", "--dtype", "Float64")
    assert out.returncode != 0
    assert "--dtype must be one of" in out.stderr
    assert "Traceback" not in out.stderr

"""The example CLIs without a GPU: they compile, print the resource report and `no GPU found`, and exit 0."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import torch

REPORT = re.compile(
    r"^registers: \d+, shared memory: \d+ bytes, spill stores: 0 bytes, spill loads: 0 bytes, "
    r"compile: (\d+ ms|\(cached\))$",
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
    assert out.returncode == 2
    assert "argument --dtype: must be one of" in out.stderr and out.stderr.count("\n") == 1


def test_elementwise_add_cli_rejects_before_importing_torch() -> None:
    """`--M 0` is a usage error found by the parser: cute_examples.elementwise_add's CLI loads no torch first."""
    code = ("import sys\nfrom cute_examples.elementwise_add.__main__ import main\n"
            "try:\n    main(['--M', '0'])\nexcept SystemExit as e:\n    print(e.code, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["2", "False"], out.stderr
    assert "argument --M: must be >= 1" in out.stderr

"""AOT bundle round trip across packages: cute-ir writes it, cute-runtime reads it without MLIR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlir")

from cute_examples.elementwise_add.kernel import add_kernel  # noqa: E402
from cute_ir.bundle import write_bundle  # noqa: E402
from cute_ir.jit import compile_jit  # noqa: E402
from cute_nvarch.jit_spec import kernel_params  # noqa: E402
from cute_runtime import Kernel, Placeholder, load_bundle  # noqa: E402
from cute_runtime.errors import ArchMismatchError, BundleError  # noqa: E402

F32 = add_kernel.specialize(*[Placeholder((64, 1024), "float32")] * 3)[0]  # 2-D, 16-byte aligned rows, i32
BF16 = add_kernel.specialize(*[Placeholder((2, 100), "bfloat16", strides=(2**31, 3))] * 3)[0]  # strided, i64


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    arts = [compile_jit(add_kernel.fn, F32, t) for t in ("sm_90a", "sm_80")]
    arts.append(compile_jit(add_kernel.fn, BF16, "sm_90a"))
    path = tmp_path_factory.mktemp("bundle")
    write_bundle(path, arts)
    return path


def test_reader_finds_every_kernel_with_its_signature(bundle_dir: Path) -> None:
    bundle = load_bundle(bundle_dir)
    assert len(bundle) == 3
    entry = bundle.find(F32, "sm_90a")
    assert entry is not None and entry["arch"] == "sm_90a"
    assert [p["name"] for p in entry["params"]] == [p.name for p in kernel_params(F32)]
    assert [p["kind"] for p in entry["params"]] == ["ptr", "i32", "i32", "i32"] * 3
    kernel = bundle.load_kernel(F32, (9, 0))
    assert isinstance(kernel, Kernel) and kernel.cubin is not None
    assert bundle.select(F32, (8, 6)).entry.target == "sm_80"  # the sm_80 cubin serves an Ampere device
    assert bundle.find({"kernel": "nope"}) is None


def test_wrong_arch_is_a_clear_error(bundle_dir: Path) -> None:
    with pytest.raises(ArchMismatchError, match="sm_90a"):
        load_bundle(bundle_dir).load_kernel(BF16, (8, 0))


def test_corrupt_payload_is_a_clear_error(bundle_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in bundle_dir.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    manifest = json.loads((copy / "manifest.json").read_text())
    victim = copy / manifest["kernels"][0]["cubin"]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    with pytest.raises(BundleError, match=victim.name):
        load_bundle(copy)


def test_reader_needs_no_mlir(bundle_dir: Path) -> None:
    code = (
        "import sys, builtins\n"
        "real = builtins.__import__\n"
        "def guard(name, *a, **k):\n"
        "    if name == 'mlir' or name.startswith('mlir.') or name.startswith('cute_ir'):\n"
        "        raise ImportError('blocked: ' + name)\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = guard\n"
        "from cute_runtime import load_bundle\n"
        f"b = load_bundle({str(bundle_dir)!r})\n"
        "print(len(b))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"

from __future__ import annotations

import subprocess
import sys
import types

import pytest
from cute_runtime import NoDeviceError, device_properties, driver, gpu_available

no_gpu_only = pytest.mark.skipif(gpu_available(), reason="checks the no-driver path; a GPU is present")


def test_import_needs_no_gpu_mlir_or_torch() -> None:
    code = (
        "import sys, cute_runtime, cute_runtime.testing, cute_runtime.bundle, cute_runtime.tma\n"
        "bad = [m for m in ('mlir', 'torch', 'cuda.bindings.driver', 'pytest') if m in sys.modules]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@no_gpu_only
def test_no_driver_errors() -> None:
    assert driver.available() is False
    assert "no NVIDIA driver/GPU found" in (driver.unavailable_reason() or "")
    with pytest.raises(NoDeviceError, match="no NVIDIA driver/GPU found"):
        device_properties()
    with pytest.raises(RuntimeError, match="no NVIDIA driver/GPU found"):
        driver.device_count()


def _fresh_driver_state(monkeypatch: pytest.MonkeyPatch, fake: object) -> None:
    monkeypatch.setattr(driver, "_driver", None)
    monkeypatch.setattr(driver, "_init_error", None)
    monkeypatch.setattr(driver, "_import_bindings", lambda: fake)


def test_cuinit_exception_becomes_no_device_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class DynamicLibNotFoundError(RuntimeError):
        pass

    def cu_init(flags: int) -> tuple[int]:
        raise DynamicLibNotFoundError("libcuda.so.1 not found")

    _fresh_driver_state(monkeypatch, types.SimpleNamespace(cuInit=cu_init))
    with pytest.raises(NoDeviceError, match="no NVIDIA driver/GPU found: DynamicLibNotFoundError: libcuda"):
        driver.init()
    # the failure is remembered: a second call raises the same error without retrying
    with pytest.raises(NoDeviceError, match="DynamicLibNotFoundError"):
        driver.init()


def test_cuinit_error_code_becomes_no_device_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.SimpleNamespace(
        cuInit=lambda flags: (100,),
        cuGetErrorName=lambda err: (0, b"CUDA_ERROR_NO_DEVICE"),
        cuGetErrorString=lambda err: (0, b"no CUDA-capable device is detected"),
    )
    _fresh_driver_state(monkeypatch, fake)
    with pytest.raises(NoDeviceError, match=r"cuInit failed with CUDA_ERROR_NO_DEVICE \(100\)"):
        driver.init()


def test_zero_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.SimpleNamespace(cuInit=lambda flags: (0,), cuDeviceGetCount=lambda: (0, 0))
    _fresh_driver_state(monkeypatch, fake)
    with pytest.raises(NoDeviceError, match="reports no CUDA devices"):
        driver.init()


def test_check_raises_driver_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.SimpleNamespace(
        cuGetErrorName=lambda err: (0, b"CUDA_ERROR_INVALID_VALUE"),
        cuGetErrorString=lambda err: (0, b"invalid argument"),
    )
    monkeypatch.setattr(driver, "_driver", fake)
    with pytest.raises(driver.DriverError, match=r"cuThing failed: CUDA_ERROR_INVALID_VALUE \(1\): invalid"):
        driver.check((1,), "cuThing")
    assert driver.check((0,), "x") is None
    assert driver.check((0, 5), "x") == 5
    assert driver.check((0, 5, 6), "x") == (5, 6)

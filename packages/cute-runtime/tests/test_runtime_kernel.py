from __future__ import annotations

import copy
import ctypes
import struct
import threading
import types

import pytest
import runtime_kernels as rk
from cute_nvarch.params import PARAM_KINDS
from cute_runtime import DriverError, Kernel, KernelEntry, NoDeviceError, TensorMap, gpu_available
from cute_runtime import stream as stream_mod
from cute_runtime.kernel import _grid3

no_gpu_only = pytest.mark.skipif(gpu_available(), reason="checks the no-driver path; a GPU is present")


def test_kernel_builds_without_gpu() -> None:
    k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
    assert k.name == "add_f32" and k.block == (128, 1, 1) and k.cluster == (1, 1, 1)
    assert k.ptx_arch == "sm_80" and k.loaded_from is None
    assert "add_f32(a: ptr, b: ptr, c: ptr, n: u32)" in repr(k)
    assert k.pack(0x1000, 0x2000, 0x3000, 7) == struct.pack("<QQQI", 0x1000, 0x2000, 0x3000, 7)


def test_kernel_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError, match="give a cubin, a PTX text, or both"):
        Kernel(rk.ADD_F32_ENTRY)
    with pytest.raises(ValueError, match="declares no `.entry add_f32`"):
        Kernel(rk.ADD_F32_ENTRY, None, rk.DUMP_PTX)
    with pytest.raises(TypeError, match="cubin must be bytes"):
        Kernel(rk.ADD_F32_ENTRY, "not bytes", rk.ADD_F32_PTX)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="device must be"):
        Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX, device=-1)
    bad = copy.deepcopy(rk.ADD_F32_ENTRY)
    bad["params"][0]["kind"] = "pointer"
    with pytest.raises(ValueError, match=r"entry.params\[0\] \('a'\).kind 'pointer'"):
        Kernel(bad, None, rk.ADD_F32_PTX)


def test_entry_round_trip() -> None:
    entry = KernelEntry.from_dict(rk.ADD_F32_ENTRY)
    again = KernelEntry.from_dict(entry.to_dict())
    assert again == entry and again.spec == rk.ADD_F32_ENTRY["spec"]
    assert entry.to_dict()["launch"] == rk.ADD_F32_ENTRY["launch"]
    assert not entry.launch.is_cluster_launch
    assert KernelEntry.from_dict(rk.CLUSTER_ENTRY).launch.is_cluster_launch


def test_launch_validates_args_before_gpu_work() -> None:
    k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
    with pytest.raises(TypeError, match=r"kernel 'add_f32' takes 4 arguments \(a, b, c, n\), got 3"):
        k.launch(1, 0, 0, 0)
    with pytest.raises(TypeError, match=r"argument 'n' \(u32\) expects a Python int, got float"):
        k.launch(1, 0, 0, 0, 2.0)
    with pytest.raises(ValueError, match=r"argument 'n' \(u32\) value -1 is outside"):
        k.launch(1, 0, 0, 0, -1)
    with pytest.raises(TypeError, match=r"argument 'b' \(ptr\)"):
        k.launch(1, 0, "b", 0, 1)
    with pytest.raises(TypeError, match="grid must be"):
        k.launch("x", 0, 0, 0, 1)
    with pytest.raises(ValueError, match="grid"):
        k.launch((1, 0), 0, 0, 0, 1)
    with pytest.raises(ValueError, match="more than 1024 threads"):
        k.launch(1, 0, 0, 0, 1, block=(64, 32, 1))
    with pytest.raises(ValueError, match="smem must be"):
        k.launch(1, 0, 0, 0, 1, smem=-4)
    with pytest.raises(TypeError, match="stream must be"):
        k.launch(1, 0, 0, 0, 1, stream="default")
    t = Kernel(rk.TMA_LOAD_ENTRY, None, rk.TMA_LOAD_PTX)
    with pytest.raises(TypeError, match=r"argument 'tmap' \(tma\) expects a cute_runtime TensorMap"):
        t.launch(1, b"\0" * 128, 0, 0, 0)


@no_gpu_only
def test_launch_without_driver_raises_clear_error() -> None:
    k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
    with pytest.raises(RuntimeError, match="no NVIDIA driver/GPU found"):
        k.launch(1, 0x1000, 0x2000, 0x3000, 4)
    with pytest.raises(NoDeviceError, match="no NVIDIA driver/GPU found"):
        k.load()
    with pytest.raises(NoDeviceError):
        k.launch_packed((1, 1, 1))


def test_grid3() -> None:
    assert _grid3(5) == (5, 1, 1)
    assert _grid3((2, 3)) == (2, 3, 1)
    assert _grid3([2, 3, 4]) == (2, 3, 4)
    for bad in ((), (1, 2, 3, 4), 1.0, True, (1, None)):
        with pytest.raises(TypeError):
            _grid3(bad)
    for bad in (0, -1, (1, 1 << 31)):
        with pytest.raises(ValueError):
            _grid3(bad)


def test_prepare_packs_a_separate_buffer() -> None:
    k = Kernel(rk.DUMP_ENTRY, None, rk.DUMP_PTX)
    tm = TensorMap(bytes(range(128)))
    buf = k.prepare(0x10, -1, 2, -3, 4, 0.5, 0.25, tm)
    assert buf.packed() == k.pack(0x10, -1, 2, -3, 4, 0.5, 0.25, tm)
    assert buf.kernel_params != 0


class FakeLaunch:
    """Stands in for cuda-bindings' cuLaunchKernel: records the call and the parameter values it copies."""

    def __init__(self, kernel: Kernel, result: int = 0) -> None:
        self.kernel = kernel
        self.result = result
        self.calls: list[tuple] = []

    def __call__(self, f: object, *dims_smem_stream_params_extra: int) -> tuple[int]:
        gx, gy, gz, bx, by, bz, smem, stream, kernel_params, extra = dims_smem_stream_params_extra
        if not all(0 <= v < (1 << 32) for v in (gx, gy, gz, bx, by, bz, smem)):
            raise OverflowError("can't convert to C unsigned int")  # as cuda-bindings' unsigned int arguments
        layout = self.kernel.layout
        n = len(layout.params)
        pointers = (ctypes.c_uint64 * n).from_address(kernel_params)
        blob = b"".join(
            ctypes.string_at(pointers[i], struct.calcsize("<" + PARAM_KINDS[p.kind].struct_code))
            for i, p in enumerate(layout.params)
        )
        self.calls.append((f, (gx, gy, gz), (bx, by, bz), smem, stream, blob))
        return (self.result,)


def _fake_loaded(entry: dict, ptx: str, result: int = 0) -> tuple[Kernel, FakeLaunch]:
    k = Kernel(entry, None, ptx)
    fake = FakeLaunch(k, result)
    k._drv = types.SimpleNamespace()
    k._launch_fn, k._f, k.device, k._owner = fake, "F", 0, threading.get_ident()
    k._ready = True
    k._install_fast_launch()
    return k, fake


def test_generated_launch_path() -> None:
    k, fake = _fake_loaded(rk.ADD_F32_ENTRY, rk.ADD_F32_PTX)
    assert "launch" in vars(k)  # the instance now carries the generated hot path
    stream_mod.set_stream_provider(lambda device: 0x5000 + device)
    try:
        k.launch(3, 0x1000, 0x2000, 0x3000, 77)
        k.launch((4, 2), 0x1000, 0x2000, 0x3000, 78, stream=0x99)
        k.launch((1, 1, 2), 0x1000, 0x2000, 0x3000, 79, stream=types.SimpleNamespace(cuda_stream=0x42))
        k.launch(5, 0x1000, 0x2000, 0x3000, 80, block=(64, 1, 1), smem=16)  # the checked path
    finally:
        stream_mod.set_stream_provider(None)
    params = struct.pack("<QQQ", 0x1000, 0x2000, 0x3000)
    assert fake.calls == [
        ("F", (3, 1, 1), (128, 1, 1), 0, 0x5000, params + struct.pack("<I", 77)),
        ("F", (4, 2, 1), (128, 1, 1), 0, 0x99, params + struct.pack("<I", 78)),
        ("F", (1, 1, 2), (128, 1, 1), 0, 0x42, params + struct.pack("<I", 79)),
        ("F", (5, 1, 1), (64, 1, 1), 16, 0x5000, params + struct.pack("<I", 80)),
    ]


def test_generated_launch_rejects_like_the_checked_path() -> None:
    k, fake = _fake_loaded(rk.ADD_F32_ENTRY, rk.ADD_F32_PTX)
    with pytest.raises(TypeError, match=r"takes 4 arguments \(a, b, c, n\), got 5"):
        k.launch(1, 1, 2, 3, 4, 5)
    with pytest.raises(ValueError, match=r"argument 'n' \(u32\) value 4294967296 is outside"):
        k.launch(1, 1, 2, 3, 1 << 32)
    with pytest.raises(TypeError, match=r"argument 'a' \(ptr\)"):
        k.launch(1, None, 2, 3, 4)
    with pytest.raises(ValueError, match="grid"):
        k.launch(-1, 1, 2, 3, 4)
    with pytest.raises(TypeError, match="stream must be"):
        k.launch(1, 1, 2, 3, 4, stream=1.5)
    assert fake.calls == []


def test_generated_launch_reports_driver_errors() -> None:
    k, fake = _fake_loaded(rk.ADD_F32_ENTRY, rk.ADD_F32_PTX, result=1)
    with pytest.raises(
        DriverError, match=r"launch of kernel 'add_f32' \(grid=\(2, 1, 1\), block=\(128, 1, 1\)"
    ):
        k.launch(2, 1, 2, 3, 4, stream=0)
    with pytest.raises(ValueError, match="grid"):
        k.launch((1, 0), 1, 2, 3, 4, stream=0)


def test_generated_launch_tma_and_other_threads() -> None:
    k, fake = _fake_loaded(rk.TMA_LOAD_ENTRY, rk.TMA_LOAD_PTX)
    tm = TensorMap(bytes(range(128)))
    k.launch(1, tm, 0x10, 3, -4, stream=0)
    errors: list[BaseException] = []

    def other() -> None:
        try:
            k.launch(1, tm, 0x20, 5, 6, stream=0)
        except BaseException as exc:  # reported below
            errors.append(exc)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert not errors
    assert [c[5] for c in fake.calls] == [
        tm.raw + struct.pack("<Qii", 0x10, 3, -4),
        tm.raw + struct.pack("<Qii", 0x20, 5, 6),
    ]

"""GPU tests: run with `python3 -m pytest -m gpu` on a machine with an NVIDIA GPU (and torch with CUDA)."""

from __future__ import annotations

import copy
import struct
import threading
from pathlib import Path
from typing import Any

import pytest
import runtime_kernels as rk
from cute_runtime import (
    DriverError,
    Kernel,
    TensorMap,
    device_properties,
    encode_tiled,
    load_bundle,
)
from cute_runtime.testing import requires_gpu, requires_sm90


def _torch() -> Any:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.fail("a GPU is present but torch cannot use it")
    return torch


def _ptxas_or_skip() -> None:
    if rk.find_ptxas() is None:
        pytest.skip("ptxas not found: cannot build a cubin here")


class CudaArray:
    """Exposes a torch tensor only through __cuda_array_interface__."""

    def __init__(self, t: Any) -> None:
        self.__cuda_array_interface__ = t.__cuda_array_interface__
        self._t = t


class DLPackOnly:
    """Exposes a torch tensor only through the DLPack protocol."""

    def __init__(self, t: Any) -> None:
        self._t = t

    def __dlpack__(self, stream: Any = None) -> Any:
        return self._t.__dlpack__()

    def __dlpack_device__(self) -> Any:
        return self._t.__dlpack_device__()


def _inputs(torch: Any, n: int) -> tuple[Any, Any, Any]:
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    c = torch.full((n,), float("nan"), device="cuda")
    return a, b, c


@requires_gpu
class TestLaunch:
    def test_add_from_ptx(self) -> None:
        torch = _torch()
        k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
        n = 1_000_003
        a, b, c = _inputs(torch, n)
        k.launch((n + 127) // 128, a, b, c, n)
        torch.cuda.synchronize()
        assert k.loaded_from == "ptx" and k.attributes["registers"] > 0
        assert torch.equal(c, a + b)

    def test_add_from_cubin(self) -> None:
        torch = _torch()
        _ptxas_or_skip()
        props = device_properties()
        k = Kernel(dict(rk.ADD_F32_ENTRY, arch=props.arch), rk.assemble(rk.ADD_F32_PTX, props.arch), None)
        n = 4099
        a, b, c = _inputs(torch, n)
        k.launch(((n + 127) // 128, 1, 1), a, b, c, n)
        torch.cuda.synchronize()
        assert k.loaded_from == "cubin"
        assert torch.equal(c, a + b)

    def test_other_pointer_sources(self) -> None:
        torch = _torch()
        k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
        n = 1000
        a, b, c = _inputs(torch, n)
        k.launch(8, CudaArray(a), DLPackOnly(b), c.data_ptr(), n)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b)
        # a view: the pointer starts at its first element
        c2 = torch.zeros(2 * n, device="cuda")
        k.launch(8, a, b, c2[n:], n)
        torch.cuda.synchronize()
        assert torch.equal(c2[n:], a + b) and not c2[:n].any()

    def test_cpu_tensor_rejected(self) -> None:
        torch = _torch()
        k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
        a, b, c = _inputs(torch, 16)
        k.launch(1, a, b, c, 16)
        with pytest.raises(ValueError, match=r"argument 'b' \(ptr\): tensor is on cpu"):
            k.launch(1, a, b.cpu(), c, 16)

    def test_streams(self) -> None:
        torch = _torch()
        k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
        n = 1 << 20
        a, b, c = _inputs(torch, n)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        k.launch(n // 128, a, b, c, n, stream=s)
        s.synchronize()
        assert torch.equal(c, a + b)
        c.fill_(0)
        with torch.cuda.stream(s):  # the default is torch's current stream
            k.launch(n // 128, a, b, c, n)
        s.synchronize()
        assert torch.equal(c, a + b)
        c.fill_(0)
        torch.cuda.synchronize()
        k.launch(n // 128, a, b, c, n, stream=s.cuda_stream)
        s.synchronize()
        assert torch.equal(c, a + b)

    def test_launch_packed_and_prepare(self) -> None:
        torch = _torch()
        k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
        n = 4096
        a, b, c = _inputs(torch, n)
        params = k.prepare(a, b, c, n)
        k.launch_packed((n // 128, 1, 1), torch.cuda.current_stream().cuda_stream, params)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b)
        c.fill_(0)
        k.launch(n // 128, a, b, c, n)
        k.launch_packed((n // 128, 1, 1), torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b)

    def test_launch_from_other_thread(self) -> None:
        torch = _torch()
        k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
        n = 1 << 16
        a, b, c = _inputs(torch, n)
        k.launch(n // 128, a, b, c, n)
        torch.cuda.synchronize()
        c.fill_(0)
        errors: list[BaseException] = []

        def work() -> None:
            try:
                k.launch(n // 128, a, b, c, n)
                torch.cuda.synchronize()
            except BaseException as exc:  # reported to the main thread below
                errors.append(exc)

        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert not errors, errors
        assert torch.equal(c, a + b)

    def test_every_param_kind_reaches_the_kernel(self) -> None:
        torch = _torch()
        k = Kernel(rk.DUMP_ENTRY, None, rk.DUMP_PTX)
        out = torch.zeros(22, dtype=torch.int64, device="cuda")
        tm = TensorMap(bytes((7 * i + 3) % 256 for i in range(128)))
        args = (out, -123456, 0xFEDCBA98, -(1 << 62) - 5, (1 << 64) - 2, 3.25, -1e-300, tm)
        k.launch(1, *args)
        torch.cuda.synchronize()
        got = bytes(out.cpu().numpy().tobytes())
        assert got[0:4] == struct.pack("<i", -123456)
        assert got[8:12] == struct.pack("<I", 0xFEDCBA98)
        assert got[16:24] == struct.pack("<q", -(1 << 62) - 5)
        assert got[24:32] == struct.pack("<Q", (1 << 64) - 2)
        assert got[32:36] == struct.pack("<f", 3.25)
        assert got[40:48] == struct.pack("<d", -1e-300)
        assert got[48:176] == tm.raw

    def test_dynamic_smem_over_48k(self) -> None:
        torch = _torch()
        k = Kernel(rk.BIG_SMEM_ENTRY, None, rk.BIG_SMEM_PTX)
        out = torch.zeros(1, dtype=torch.int32, device="cuda")
        k.launch(1, out, 0x1234567, 100 * 1024 - 4)
        torch.cuda.synchronize()
        assert int(out.item()) == 0x1234567
        limit = device_properties().shared_memory_per_block_optin
        k.launch(1, out, 0x7654321, limit - 4, smem=limit)
        torch.cuda.synchronize()
        assert int(out.item()) == 0x7654321
        with pytest.raises(ValueError, match="exceed the device's"):
            k.launch(1, out, 1, 0, smem=limit + 1024)

    def test_driver_error_names_the_kernel(self) -> None:
        torch = _torch()
        k = Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX)
        a, b, c = _inputs(torch, 16)
        with pytest.raises(DriverError, match=r"launch of kernel 'add_f32' \(grid=\(1, 100000, 1\)"):
            k.launch((1, 100_000), a, b, c, 16)

    def test_bad_ptx_load_error(self) -> None:
        _torch()
        broken = rk.ADD_F32_PTX.replace("add.f32 %f3, %f1, %f2;", "add.f32 %f3, %f1, %nosuchreg;")
        k = Kernel(rk.ADD_F32_ENTRY, None, broken)
        with pytest.raises(DriverError, match="kernel 'add_f32': loading its PTX for sm_80 on sm_"):
            k.load()


@requires_gpu
class TestBundleOnGpu:
    def test_bundle_cubin_and_ptx_fallback(self, tmp_path: Path) -> None:
        torch = _torch()
        _ptxas_or_skip()
        props = device_properties()
        here = dict(copy.deepcopy(rk.ADD_F32_ENTRY), arch=props.arch)
        # a cubin for another major version cannot load here: the bundle falls back to the PTX
        other = "sm_80" if props.compute_capability[0] != 8 else "sm_90"
        other_spec = dict(rk.ADD_F32_ENTRY["spec"], variant="other")
        far = dict(copy.deepcopy(rk.ADD_F32_ENTRY), arch=other, spec=other_spec)
        path = rk.write_bundle(
            tmp_path / "b",
            [
                (here, rk.assemble(rk.ADD_F32_PTX, props.arch), rk.ADD_F32_PTX),
                (
                    far,
                    rk.assemble(rk.ADD_F32_PTX.replace(".target sm_80", f".target {other}"), other),
                    rk.ADD_F32_PTX,
                ),
            ],
        )
        bundle = load_bundle(path)
        n = 10_000
        for spec, source in ((here["spec"], "cubin"), (other_spec, "ptx")):
            k = bundle.load_kernel(spec)
            a, b, c = _inputs(torch, n)
            k.launch((n + 127) // 128, a, b, c, n)
            torch.cuda.synchronize()
            assert k.loaded_from == source
            assert torch.equal(c, a + b)


@requires_gpu
def test_device_properties_match_torch() -> None:
    torch = _torch()
    props = device_properties()
    tp = torch.cuda.get_device_properties(props.ordinal)
    assert props.compute_capability == (tp.major, tp.minor)
    assert props.arch == f"sm_{tp.major}{tp.minor}"
    assert props.sm_count == tp.multi_processor_count
    assert props.name == tp.name
    assert props.total_memory_bytes == tp.total_memory
    assert props.l2_cache_bytes == tp.L2_cache_size
    assert props.warp_size == 32 and props.max_threads_per_block == 1024
    assert props.shared_memory_per_block == 48 * 1024
    assert props.shared_memory_per_block_optin >= props.shared_memory_per_block
    assert props.as_dict()["arch"] == props.arch


@requires_gpu
def test_tma_encode_smoke() -> None:
    torch = _torch()
    props = device_properties()
    if props.compute_capability < (9, 0):
        pytest.skip("TMA descriptors need sm_90+")
    a = torch.zeros((128, 256), dtype=torch.float16, device="cuda")
    args = dict(
        data_type="f16",
        rank=2,
        global_dims=[256, 128],
        global_strides_bytes=[512],
        box_dims=[64, 32],
        element_strides=[1, 1],
        swizzle="128B",
    )
    tm = encode_tiled(global_address=a.data_ptr(), **args)
    assert len(tm.raw) == 128 and any(tm.raw)
    assert tm == encode_tiled(global_address=a.data_ptr(), **args)
    assert tm != encode_tiled(global_address=a.data_ptr() + 1024, **args)


@requires_sm90
class TestHopper:
    def test_cluster_launch(self) -> None:
        torch = _torch()
        k = Kernel(rk.CLUSTER_ENTRY, None, rk.CLUSTER_PTX)
        out = torch.full((8,), -1, dtype=torch.int32, device="cuda")
        k.launch(8, out)
        torch.cuda.synchronize()
        expected = [(i % 2) | (2 << 8) | ((i // 2) << 16) for i in range(8)]
        assert out.cpu().tolist() == expected
        with pytest.raises(ValueError, match="not a multiple of its cluster"):
            k.launch(7, out)
        # the driver's occupancy: a 32-thread kernel without shared memory fits one cluster per SM pair at least
        # (several CTAs share an SM), the same without a cluster (CTAs)
        sms = device_properties(0).sm_count
        size = k.cluster[0] * k.cluster[1] * k.cluster[2]
        assert k.max_active_clusters() >= sms // size
        assert Kernel(rk.ADD_F32_ENTRY, None, rk.ADD_F32_PTX).max_active_clusters() >= sms

    def test_tma_load_tile(self) -> None:
        torch = _torch()

        class Plan:  # the fields of a tiled TMA plan, as TensorMap.from_plan reads them
            data_type, rank = "f32", 2
            global_dims, global_strides_bytes = (64, 64), (256,)
            box_dims, element_strides = (32, 8), (1, 1)
            interleave, swizzle, l2_promotion, oob_fill = 0, 0, 0, 0

        a = torch.randn(64, 64, device="cuda")
        tm = TensorMap.from_plan(Plan(), a)
        k = Kernel(rk.TMA_LOAD_ENTRY, None, rk.TMA_LOAD_PTX)
        out = torch.full((256,), float("nan"), device="cuda")
        k.launch(1, tm, out, 16, 40)
        torch.cuda.synchronize()
        assert torch.equal(out.view(8, 32), a[40:48, 16:48])
        # out of bounds: the box hangs over the tensor's edge and is filled with zeros
        k.launch(1, tm, out, 48, 60)
        torch.cuda.synchronize()
        expect = torch.zeros(8, 32, device="cuda")
        expect[:4, :16] = a[60:64, 48:64]
        assert torch.equal(out.view(8, 32), expect)

    def test_tma_load_from_nvarch_plan(self) -> None:
        torch = _torch()
        tma = pytest.importorskip("cute_nvarch.tma")
        from cute_layout import Layout

        a = torch.randn(64, 64, device="cuda")
        plan = tma.make_tma_plan((64, 64), (64, 1), "f32", Layout((8, 32), (32, 1)))
        assert plan.tile_bytes == 1024  # what the kernel's mbarrier expects
        tm = TensorMap.from_plan(plan, a)
        k = Kernel(rk.TMA_LOAD_ENTRY, None, rk.TMA_LOAD_PTX)
        out = torch.full((256,), float("nan"), device="cuda")
        k.launch(1, tm, out, 32, 8)
        torch.cuda.synchronize()
        assert torch.equal(out.view(8, 32), a[8:16, 32:64])


@requires_gpu
def test_nvarch_target_from_live_device() -> None:
    props = device_properties()
    if props.compute_capability not in ((8, 0), (8, 9), (9, 0)):
        pytest.skip(f"cute-nvarch has no target for {props.arch}")
    target = props.target()
    assert target.compute_capability == props.compute_capability
    assert target.smem_per_block == props.shared_memory_per_block_optin
    assert target.smem_per_sm == props.shared_memory_per_sm

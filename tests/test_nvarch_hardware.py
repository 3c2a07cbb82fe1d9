"""On a Hopper GPU: TMA plans load the bytes the shared-memory layouts predict, and wgmma with cute-nvarch's
GMMA layouts and descriptors computes A @ B^T, read back through the wgmma C thread-value layout.

The kernels (nvarch_hardware_kernels.cu) are compiled with nvcc on the GPU machine; the launches go through
cuda-bindings, the memory through torch. Without an sm_90 device the tests skip (and fail with
CUTE_REQUIRE_GPU=1). A cross-package test: cute-nvarch's facts, checked with cute-runtime's GPU checks.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path
from typing import Any

import cute_nvarch as nv
import pytest
from cute_layout import Layout
from cute_nvarch import GmmaLayoutType as LT
from cute_runtime import testing

KERNELS = Path(__file__).with_name("nvarch_hardware_kernels.cu")
MAX_SMEM = 200 * 1024


class _Gpu:
    """The loaded kernels and a launcher."""

    def __init__(self, cubin: bytes) -> None:
        import numpy as np
        import torch
        from cuda.bindings import driver as cu

        self.np, self.torch, self.cu = np, torch, cu
        torch.zeros(1, device="cuda")  # the primary context, current on this thread
        self.ok(cu.cuInit(0))
        mod = self.ok(cu.cuModuleLoadData(cubin))
        names = ("tma_tile", "wgmma_00", "wgmma_01", "wgmma_10", "wgmma_11")
        self.fns = {n: self.ok(cu.cuModuleGetFunction(mod, n.encode())) for n in names}
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        for f in self.fns.values():
            self.ok(cu.cuFuncSetAttribute(f, attr, MAX_SMEM))

    def ok(self, result: tuple) -> Any:
        if result[0] != self.cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA error {result[0]}")
        return result[1] if len(result) == 2 else result[1:]

    def launch(self, name: str, smem: int, args: list) -> None:
        np, cu = self.np, self.cu
        keep, ptrs = [], []
        for v in args:
            if isinstance(v, cu.CUtensorMap):
                ptrs.append(v.getPtr())
                continue
            a = (
                np.array([v.data_ptr()], dtype=np.uint64)
                if hasattr(v, "data_ptr")
                else np.array([v], dtype=np.int32)
            )
            keep.append(a)
            ptrs.append(a.ctypes.data)
        params = np.array(ptrs, dtype=np.uint64)
        self.ok(cu.cuLaunchKernel(self.fns[name], 1, 1, 1, 128, 1, 1, smem, 0, params.ctypes.data, 0))
        self.torch.cuda.synchronize()

    def encode(self, plan: nv.TmaPlan, address: int) -> Any:
        """cuTensorMapEncodeTiled with the plan's tuple (cuda-bindings wants list entries as cuuintN_t)."""
        cu = self.cu
        dt, rank, addr, dims, strides, box, es, il, sw, l2, oob = plan.encode_args(address)
        u64, u32 = cu.cuuint64_t, cu.cuuint32_t
        return self.ok(
            cu.cuTensorMapEncodeTiled(
                dt, rank, addr, [u64(x) for x in dims], [u64(x) for x in strides], [u32(x) for x in box],
                [u32(x) for x in es], il, sw, l2, oob,
            )
        )  # fmt: skip


@pytest.fixture(scope="module")
def gpu(tmp_path_factory: pytest.TempPathFactory) -> _Gpu:
    pytest.importorskip("torch")
    pytest.importorskip("cuda.bindings")
    nvcc = shutil.which("nvcc") or next(
        (str(p) for p in (Path("/usr/local/cuda/bin/nvcc"),) if p.exists()), None
    )
    if nvcc is None:
        msg = "nvcc is not on PATH: the hardware check compiles its kernels on the GPU machine"
        if testing.config.require_gpu():
            pytest.fail(msg)
        pytest.skip(f"requires_nvcc: {msg}")
    cubin = tmp_path_factory.mktemp("nvarch") / "kernels.cubin"
    cmd = [nvcc, "-arch=sm_90a", "-cubin", "-O2", "-o", str(cubin), str(KERNELS)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        pytest.fail(f"nvcc failed on {KERNELS.name}:\n{proc.stderr}")
    return _Gpu(cubin.read_bytes())


MN_F16, K_F16 = ((300, 200), (1, 304)), ((300, 200), (208, 1))  # padded leading dimensions
MC_A, MC_B = {"cluster_shape": (1, 2), "multicast_axis": 1}, {"cluster_shape": (2, 1), "multicast_axis": 0}
# name: (global (shape, stride), dtype, buffer (major, tile_mn, tile_k, layout type) or Layout, tile, kw)
TMA_CASES = {
    "f16 MN-major 128x64 SW128 ragged": (MN_F16, "f16", ("mn", 128, 64, None), (2, 3), {}),
    "f16 K-major 128x64 SW128": (K_F16, "f16", ("k", 128, 64, None), (1, 1), {}),
    "bf16 K-major 64x128 2 boxes": (((256, 512), (512, 1)), "bf16", ("k", 64, 128, None), (1, 2), {}),
    "e4m3 K-major 128x128": (((512, 512), (512, 1)), "e4m3", ("k", 128, 128, None), (3, 1), {}),
    "tf32 K-major 64x32": (((256, 256), (256, 1)), "tf32", ("k", 64, 32, None), (1, 5), {}),
    "f32 64x256 no swizzle": (((512, 512), (512, 1)), "f32", Layout((64, 256), (256, 1)), (2, 1), {}),
    "bf16 batched 3-D": (((256, 192, 3), (192, 1, 256 * 192)), "bf16", ("k", 128, 64, None), (1, 2, 2), {}),
    "f16 K-major multicast 1x2": (K_F16, "f16", ("k", 128, 64, None), (1, 0), MC_A),
    "f16 MN-major multicast 2x1": (MN_F16, "f16", ("mn", 128, 64, None), (0, 1), MC_B),
    "f16 MN-major 64x32 SW64": (MN_F16, "f16", ("mn", 64, 32, LT.B64), (1, 1), {}),
    "f16 K-major 64x16 SW32": (K_F16, "f16", ("k", 64, 16, None), (2, 4), {}),
    "s8 K-major 64x64 SW64": (((300, 256), (256, 1)), "s8", ("k", 64, 64, None), (2, 3), {}),
}


@testing.requires_sm90
@pytest.mark.parametrize("name", list(TMA_CASES))
def test_tma_plan_loads_the_predicted_bytes(gpu: _Gpu, name: str) -> None:
    (shape, stride), dtype, buffer, tile_coord, kw = TMA_CASES[name]
    torch, np = gpu.torch, gpu.np
    t = nv.numeric_type(dtype)
    nbytes = t.bytes
    if not isinstance(buffer, Layout):
        major, mn, k, lt = buffer
        buffer = nv.make_gmma_smem_layout(t, major, mn, k, layout_type=lt)
    plan = nv.make_tma_plan(shape, stride, t, buffer, **kw)
    n_el = 1 + sum((s - 1) * d for s, d in zip(shape, stride, strict=True)) + 64
    if t.name in ("Float16", "BFloat16", "Float32"):
        kind = {"Float16": torch.float16, "BFloat16": torch.bfloat16}.get(t.name, torch.float32)
        g = torch.randn(n_el, dtype=kind, device="cuda").view(torch.uint8)
    elif t.name == "TFloat32":  # valid tf32 values: a TFLOAT32 tensor map may round the low mantissa bits
        g = (torch.randn(n_el, device="cuda").view(torch.int32) & -8192).view(torch.uint8)
    else:
        g = torch.randint(0, 256, (n_el * nbytes,), dtype=torch.uint8, device="cuda")
    tmap = gpu.encode(plan, g.data_ptr())
    coords, offsets = [], []
    for r in range(
        plan.num_multicast
    ):  # one CTA issues every multicast rank's boxes: together the whole tile
        for box, c in zip(plan.boxes_for(r), plan.box_coordinates(tile_coord, r), strict=True):
            coords += list(c) + [0] * (5 - len(c))
            offsets.append(box.smem_offset)
    out = torch.zeros(plan.tile_bytes, dtype=torch.uint8, device="cuda")
    args = [
        tmap,
        torch.tensor(coords, dtype=torch.int32, device="cuda"),
        torch.tensor(offsets, dtype=torch.int32, device="cuda"),
        len(offsets),
        plan.rank,
        plan.tile_bytes,
        out,
    ]
    gpu.launch("tma_tile", plan.tile_bytes + 1024, args)
    got, host = out.cpu().numpy(), g.cpu().numpy()
    expected = np.zeros(plan.tile_bytes, dtype=np.uint8)  # out-of-bounds elements are filled with zeros
    layout = plan.swizzled_smem_layout
    tile_rank = len(layout.shape)
    for c in itertools.product(*(range(e) for e in plan.tile_shape[:tile_rank])):
        gc = [tile_coord[i] * plan.tile_shape[i] + (c[i] if i < tile_rank else 0) for i in range(len(shape))]
        s_off = layout(c) * nbytes
        if all(0 <= x < n for x, n in zip(gc, shape, strict=True)):
            g_off = sum(x * d for x, d in zip(gc, stride, strict=True)) * nbytes
            expected[s_off : s_off + nbytes] = host[g_off : g_off + nbytes]
    assert int((got != expected).sum()) == 0


WGMMA_VARIANTS = [(m, lt) for m in ("k", "mn") for lt in (LT.B128, LT.B64, LT.B32, LT.INTERLEAVE)]
WGMMA_CASES = [(a, ("k", LT.B128)) for a in WGMMA_VARIANTS] + [
    (("k", LT.B128), b) for b in WGMMA_VARIANTS[1:]
]


@testing.requires_sm90
@pytest.mark.parametrize(
    "case", WGMMA_CASES, ids=[f"A{a[0]}-{a[1].name}_B{b[0]}-{b[1].name}" for a, b in WGMMA_CASES]
)
def test_wgmma_with_gmma_descriptors(gpu: _Gpu, case: tuple) -> None:
    (a_major, a_lt), (b_major, b_lt) = case
    np, torch = gpu.np, gpu.torch
    atom = nv.make_wgmma_atom("f16", "f16", "f32", 64, a_major, b_major)
    tm = nv.make_tiled_mma(atom)
    sa = nv.make_gmma_smem_layout("f16", a_major, 64, 64, layout_type=a_lt)
    sb = nv.make_gmma_smem_layout("f16", b_major, 64, 64, layout_type=b_lt)
    da, db = tm.smem_desc_A(sa), tm.smem_desc_B(sb)  # start address 0: the kernel adds the buffer's
    descs = [d for k in range(da.k_blocks) for d in (da.desc_at(0, k).value, db.desc_at(0, k).value)]
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, (64, 64)).astype(np.float16)
    b = rng.integers(-3, 4, (64, 64)).astype(np.float16)  # (N, K)
    img_a, img_b = np.zeros(64 * 64, dtype=np.float16), np.zeros(64 * 64, dtype=np.float16)
    for m, k in itertools.product(range(64), range(64)):
        img_a[sa((m, k))] = a[m, k]
        img_b[sb((m, k))] = b[m, k]
    ta = torch.from_numpy(img_a.view(np.uint8).copy()).cuda()
    tb = torch.from_numpy(img_b.view(np.uint8).copy()).cuda()
    td = torch.tensor(np.array(descs, dtype=np.uint64).view(np.int64), device="cuda")
    out = torch.full((128 * 32,), float("nan"), dtype=torch.float32, device="cuda")
    name = f"wgmma_{int(atom.a_major)}{int(atom.b_major)}"
    gpu.launch(name, 2 * 8192 + 1024, [ta, 8192, tb, 8192, td, da.k_blocks, out])
    got = out.cpu().numpy().reshape(128, 32)
    d = np.full((64, 64), np.nan, dtype=np.float32)
    for t, v in itertools.product(range(128), range(32)):
        idx = atom.layout_c_tv((t, v))
        d[idx % 64, idx // 64] = got[t, v]
    assert np.array_equal(d, a.astype(np.float32) @ b.astype(np.float32).T)

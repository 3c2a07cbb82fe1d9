"""On a Hopper GPU: TMA plans load the bytes the shared-memory layouts predict, and wgmma with cute-nvarch's
GMMA layouts and descriptors computes A @ B^T, read back through the wgmma C thread-value layout: f16 x f16
(m64n64k16, every K-/MN-major swizzle) and the 8-bit float pairs e4m3 x e4m3 and e5m2 x e4m3 (m64nNk32 for
N = 8, 64, 128, 256, K-major SW128/SW64/SW32/INTERLEAVE), against an exact float64 oracle on the CPU.

The kernels (nvarch_hardware_kernels.cu, and one wgmma kernel per atom rendered here from the atom's PTX)
are compiled with nvcc on the GPU machine; the launches go through cuda-bindings, the memory through torch.
Without an sm_90 device the GPU tests skip (and fail with CUTE_REQUIRE_GPU=1); the rendered kernels, their
descriptors and (with nvcc and a SASS disassembler here) their SASS are checked on the CPU.
A cross-package test: cute-nvarch's facts, checked with cute-runtime's GPU checks.
"""

from __future__ import annotations

import itertools
import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import cute_nvarch as nv
import pytest
from cute_layout import Layout, size
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
        names = ("tma_tile", *WGMMA_KERNELS)
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
            a = np.array([v.data_ptr()], dtype=np.uint64) if hasattr(v, "data_ptr") else np.array([v], dtype=np.int32)
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
def cubin(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The test kernels (the .cu file and the rendered wgmma kernels) compiled for sm_90a with nvcc."""
    nvcc = shutil.which("nvcc") or next((str(p) for p in (Path("/usr/local/cuda/bin/nvcc"),) if p.exists()), None)
    if nvcc is None:
        msg = "nvcc is not on PATH: the hardware check compiles its kernels on the GPU machine"
        if testing.config.require_gpu():
            pytest.fail(msg)
        pytest.skip(f"requires_nvcc: {msg}")
    tmp = tmp_path_factory.mktemp("nvarch")
    source, out = tmp / "kernels.cu", tmp / "kernels.cubin"
    source.write_text(render_kernels_source())
    cmd = [nvcc, "-arch=sm_90a", "-cubin", "-O2", "-I", str(KERNELS.parent), "-o", str(out), str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        pytest.fail(f"nvcc failed on {KERNELS.name} and the rendered wgmma kernels:\n{proc.stderr}")
    return out.read_bytes()


@pytest.fixture(scope="module")
def gpu(cubin: bytes) -> _Gpu:
    pytest.importorskip("torch")
    pytest.importorskip("cuda.bindings")
    return _Gpu(cubin)


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
    for r in range(plan.num_multicast):  # one CTA issues every multicast rank's boxes: together the whole tile
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


# -- wgmma: the kernels, one per SS atom, rendered from the atom ------------------------------------------


def wgmma_kernel_name(atom: nv.MmaAtom) -> str:
    """The test kernel's name: the atom's CuTe name and its A/B majors (e.g. `wgmma_SM90_64x64x16_F32F16F16_SS_KMN`)."""
    return f"wgmma_{atom.name}_{atom.a_major.name}{atom.b_major.name}"


def render_wgmma_kernel(atom: nv.MmaAtom) -> str:
    """CUDA C for one SS wgmma atom: its PTX instruction on N/2 float accumulators per thread (wgmma_ss body)."""
    if not atom.is_wgmma or atom.a_source is not nv.OperandSource.SMEM or atom.c_dtype != nv.Float32:
        raise ValueError(f"render_wgmma_kernel: {atom.name} is not an SS wgmma with f32 accumulators")
    nacc = size(atom.layout_c_tv) // 128
    # wgmma's operands after the descriptors: scale-d, imm-scale-a, imm-scale-b[, imm-trans-a, imm-trans-b];
    # PTX transposes 16-bit operands only (the others are K-major)
    trans = f", {int(atom.a_major)}, {int(atom.b_major)}" if atom.a_dtype.width == 16 else ""
    regs = ",".join(f"%{i}" for i in range(nacc))
    asm = (
        r"{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n "
        f"{atom.ptx} {{{regs}}}, %{nacc}, %{nacc + 1}, p, 1, 1{trans};\\n}}"
    )
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(nacc))
    name = wgmma_kernel_name(atom)
    return (
        f"struct Mma_{name} {{\n"
        f"  __device__ __forceinline__ void operator()(float (&d)[{nacc}], uint64_t da, uint64_t db) const {{\n"
        f'    asm volatile("{asm}"\n'
        f'                 : {outs}\n                 : "l"(da), "l"(db));\n'
        "  }\n};\n"
        f'extern "C" __global__ void {name}(const uint8_t* a, int ab, const uint8_t* b, int bb,\n'
        "    const unsigned long long* descs, int kblocks, float* out) {\n"
        f"  wgmma_ss<{nacc}>(a, ab, b, bb, descs, kblocks, out, Mma_{name}{{}});\n"
        "}\n"
    )


# f16 x f16 m64n64k16: A or B in every major and layout type (the other SW128 K-major)
F16_VARIANTS = [(m, lt) for m in ("k", "mn") for lt in (LT.B128, LT.B64, LT.B32, LT.INTERLEAVE)]
F16_CASES = [(a, ("k", LT.B128)) for a in F16_VARIANTS] + [(("k", LT.B128), b) for b in F16_VARIANTS[1:]]
# 8-bit floats, K-major (the only major 8-bit wgmma reads), f32 accumulators: every N, and every layout type for
# A with the next one for B, so each operand meets each swizzle with each N
FP8_PAIRS = (("e4m3", "e4m3"), ("e5m2", "e4m3"))
FP8_NS = (8, 64, 128, 256)
FP8_LAYOUTS = (LT.B128, LT.B64, LT.B32, LT.INTERLEAVE)
FP8_K = 128  # four k-blocks; one 128-byte swizzle row
FP8_CASES = [
    (ta, tb, n, lt, FP8_LAYOUTS[(i + 1) % len(FP8_LAYOUTS)])
    for ta, tb in FP8_PAIRS
    for n in FP8_NS
    for i, lt in enumerate(FP8_LAYOUTS)
]
FP8_IDS = [f"{a}x{b}-n{n}-A{la.name}-B{lb.name}" for a, b, n, la, lb in FP8_CASES]


def f16_atom(case: tuple) -> nv.MmaAtom:
    """The wgmma atom of an F16_CASES entry."""
    (a_major, _), (b_major, _) = case
    return nv.make_wgmma_atom("f16", "f16", "f32", 64, a_major, b_major)


def fp8_atom(case: tuple) -> nv.MmaAtom:
    """The wgmma atom of an FP8_CASES entry."""
    ta, tb, n, _, _ = case
    return nv.make_wgmma_atom(ta, tb, "f32", n)


WGMMA_KERNELS = {wgmma_kernel_name(a): a for a in [f16_atom(c) for c in F16_CASES] + [fp8_atom(c) for c in FP8_CASES]}


def render_kernels_source() -> str:
    """The translation unit nvcc compiles: nvarch_hardware_kernels.cu and every rendered wgmma kernel."""
    kernels = "\n".join(render_wgmma_kernel(a) for a in WGMMA_KERNELS.values())
    return f'#include "{KERNELS.name}"\n\n{kernels}'


def wgmma_operands(atom: nv.MmaAtom, sa: Any, sb: Any) -> tuple[nv.GmmaOperandDesc, nv.GmmaOperandDesc, list[int]]:
    """A's and B's descriptors for one (MN, K) buffer each (start address 0: the kernel adds the buffer's), and
    the kernel's descriptor list: A's and B's descriptor of each k-block in turn."""
    tm = nv.make_tiled_mma(atom)
    da, db = tm.smem_desc_A(sa), tm.smem_desc_B(sb)
    return da, db, [d for k in range(da.k_blocks) for d in (da.desc_at(0, k).value, db.desc_at(0, k).value)]


def fp8_buffers(case: tuple) -> tuple[Any, Any]:
    """The (64, K) A and (N, K) B shared-memory layouts of an FP8_CASES entry (cute-nvarch's 8-bit GMMA atoms)."""
    ta, tb, n, a_lt, b_lt = case
    return (
        nv.make_gmma_smem_layout(ta, "k", 64, FP8_K, layout_type=a_lt),
        nv.make_gmma_smem_layout(tb, "k", n, FP8_K, layout_type=b_lt),
    )


# -- the fp8 oracle: exact values of the bit patterns ----------------------------------------------------

# exponent bits, mantissa bits; E4M3FN has no infinities and one NaN mantissa (S.1111.111), E5M2 is IEEE-like
_FP8_BITS = {"Float8E4M3FN": (4, 3), "Float8E5M2": (5, 2)}


def fp8_value(code: int, dtype: nv.NumericType) -> float:
    """The exact value of an 8-bit float bit pattern (nan/inf where the format has them)."""
    e_bits, m_bits = _FP8_BITS[dtype.name]
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    bias, e_max = (1 << (e_bits - 1)) - 1, (1 << e_bits) - 1
    if dtype.name == "Float8E5M2" and e == e_max:
        return sign * math.inf if m == 0 else math.nan
    if dtype.name == "Float8E4M3FN" and e == e_max and m == (1 << m_bits) - 1:
        return math.nan
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - m_bits)
    return sign * math.ldexp((1 << m_bits) + m, e - bias - m_bits)


def fp8_exact_codes(dtype: nv.NumericType) -> list[int]:
    """The codes whose values are integers of magnitude <= 15: every mantissa pattern, both signs, +-0."""
    out = []
    for c in range(256):
        v = fp8_value(c, dtype)
        if math.isfinite(v) and v == int(v) and abs(v) <= 15:
            out.append(c)
    return out


# The fp8 tensor core aligns its products and partial sums to the largest and keeps about 14 bits. With integer
# values whose absolute products sum to less than 2^13 in every dot product, every partial sum, in any order,
# is an integer below 2^13: the f32 result is exact.
FP8_EXACT_BOUND = 2**13


@pytest.mark.parametrize("dtype", ["e4m3", "e5m2"])
def test_fp8_oracle_decodes_every_code_like_torch(dtype: str) -> None:
    torch = pytest.importorskip("torch")
    t = nv.numeric_type(dtype)
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    want = codes.view(getattr(torch, t.canonical)).to(torch.float64).tolist()
    got = [fp8_value(c, t) for c in range(256)]
    assert list(map(repr, got)) == list(map(repr, want))  # repr tells -0.0 from 0.0, all nans are 'nan'
    mantissas = {c & (0x07 if dtype == "e4m3" else 0x03) for c in fp8_exact_codes(t)}
    assert mantissas == set(range(8 if dtype == "e4m3" else 4)) and 0x80 in fp8_exact_codes(t)


# -- CPU: the kernels and their parameters ---------------------------------------------------------------


@pytest.mark.parametrize("case", FP8_CASES, ids=FP8_IDS)
def test_fp8_wgmma_case_descriptors(case: tuple) -> None:
    """Each case's descriptor bits hold the canonical K-major 8-bit GMMA layout of its (MN, 128) buffers."""
    _, _, n, a_lt, b_lt = case
    atom = fp8_atom(case)
    sa, sb = fp8_buffers(case)
    da, db, descs = wgmma_operands(atom, sa, sb)
    assert da.k_blocks == db.k_blocks == FP8_K // 32 and len(descs) == 2 * da.k_blocks
    assert da.mn_atoms == db.mn_atoms == 1  # one wgmma covers the whole (64, N) tile
    for which, mn, lt, values in (("A", 64, a_lt, descs[0::2]), ("B", n, b_lt, descs[1::2])):
        # K-major (MN, 128) bytes, atoms MN-first: SWx holds 8 rows of x bytes, INTERLEAVE 8 rows of 16 bytes
        # with the K core matrices MN*16 bytes apart (LBO); SBO is 8 rows of a swizzle span (128 B for INTERLEAVE)
        k_starts = {
            LT.B128: [0, 32, 64, 96],
            LT.B64: [0, 32, mn * 64, mn * 64 + 32],
            LT.B32: [0, mn * 32, 2 * mn * 32, 3 * mn * 32],
            LT.INTERLEAVE: [0, 2 * mn * 16, 4 * mn * 16, 6 * mn * 16],
        }[lt]
        decoded = [nv.GmmaDescriptor.from_value(v) for v in values]
        assert [d.start_address for d in decoded] == k_starts, which
        for d in decoded:
            assert (d.value >> 62, d.base_offset) == (int(lt), 0), which
            if mn > 8:  # one 8-row group has no stride
                assert d.stride_byte_offset == (128 if lt is LT.INTERLEAVE else 8 * lt.swizzle_bytes), which
            if lt is LT.INTERLEAVE:
                assert d.leading_byte_offset == mn * 16, which
    # the image fills the buffer the kernel copies, and wgmma's reads of each k-block (the PTX canonical layout
    # of its descriptor) land on the bytes where the image put (row, k)
    for layout, mn, values in ((sa, 64, descs[0::2]), (sb, n, descs[1::2])):
        offs = smem_offsets(layout, mn, FP8_K)
        assert sorted(offs.ravel().tolist()) == list(range(mn * FP8_K))
        for kb, v in enumerate(values):
            assert (ptx_k_major_bytes(v, mn, 32) == offs[:, 32 * kb : 32 * kb + 32]).all(), kb


def ptx_k_major_bytes(desc: int, mn: int, k_bytes: int) -> Any:
    """(row, k byte) -> the shared-memory byte wgmma reads for a K-major operand with descriptor `desc` at a
    1024-byte aligned buffer (PTX's canonical layouts: ((8,m),(T,2k)):((xT,SBO),(1,T)) swizzled, or
    ((8,m),(T,2k)):((1T,SBO),(1,LBO)) for INTERLEAVE, then the swizzle on the address bits)."""
    import numpy as np

    d = nv.GmmaDescriptor.from_value(desc)
    lt = d.layout_type
    row, kb = np.meshgrid(np.arange(mn), np.arange(k_bytes), indexing="ij")
    addr = d.start_address + row // 8 * d.stride_byte_offset
    if lt is LT.INTERLEAVE:
        return addr + row % 8 * 16 + kb // 16 * d.leading_byte_offset + kb % 16
    addr = addr + row % 8 * lt.swizzle_bytes + kb
    return addr ^ ((addr >> 3) & (((1 << lt.swizzle_bits) - 1) << 4))  # Swizzle<B,4,3> on the byte address


def test_rendered_wgmma_kernels_use_the_atoms_instructions() -> None:
    for name, atom in WGMMA_KERNELS.items():
        src = render_wgmma_kernel(atom)
        n = atom.shape_mnk[1]
        assert f'extern "C" __global__ void {name}(' in src
        assert f"{atom.ptx} {{%0," in src and f"%{n // 2 - 1}}}, %{n // 2}, %{n // 2 + 1}, p, 1, 1" in src
        assert src.count('"+f"(d[') == n // 2 and f"wgmma_ss<{n // 2}>" in src
        # 8-bit: scale-d, imm-scale-a/b; 16-bit: also imm-trans-a/b, 1 for an MN-major operand
        tail = "p, 1, 1;" if atom.a_dtype.width == 8 else f"p, 1, 1, {int(atom.a_major)}, {int(atom.b_major)};"
        assert tail in src, name
    with pytest.raises(ValueError, match="not an SS wgmma"):
        render_wgmma_kernel(nv.make_wgmma_atom("e4m3", "e4m3", "f16", 64))


def test_kernels_compile_to_the_predicted_sass(cubin: bytes) -> None:
    """nvcc (where installed) builds every kernel; each wgmma kernel's SASS is its GMMA of the atom's shape."""
    sass_mod = pytest.importorskip("cute_ir.hopper.sass")
    if sass_mod.find_disassembler() is None:
        pytest.skip("no SASS disassembler (install nvidia-cuda-nvdisasm)")
    sass = sass_mod.disassemble(cubin)
    functions = dict(re.findall(r"Function : (\w+)\n(.*?)(?=\n\s*Function : |\Z)", sass, re.S))
    assert set(functions) == {"tma_tile", *WGMMA_KERNELS}
    for name, atom in WGMMA_KERNELS.items():
        m, n, k = atom.shape_mnk
        if atom.a_dtype.width == 8:
            want = f"QGMMA.{m}x{n}x{k}.F32.{atom.a_dtype.ptx_type.upper()}.{atom.b_dtype.ptx_type.upper()}"
        else:
            want = f"HGMMA.{m}x{n}x{k}.F32"
        # the GMMAs that accumulate into registers (ptxas adds an RZ one for the commit_group)
        gmmas = re.findall(r"\b([QH]GMMA\.[\w.]+) R\d+,", functions[name])
        assert gmmas and all(g == want for g in gmmas), (name, gmmas)


@pytest.mark.parametrize("a", ["e4m3", "e5m2"])
@pytest.mark.parametrize("operand", ["a_major", "b_major"])
@pytest.mark.parametrize("major", ["mn", "m", "n"])
def test_fp8_wgmma_rejects_an_mn_major_operand(a: str, operand: str, major: str) -> None:
    which = operand[0].upper()
    with pytest.raises(ValueError, match=f"{which} is MN-major but Float8E.* operands of wgmma are K-major only"):
        nv.make_wgmma_atom(a, "e4m3", "f32", 64, **{operand: major})


# -- GPU: wgmma against the CPU oracle -------------------------------------------------------------------


def smem_offsets(layout: Any, mn: int, k: int) -> Any:
    """(mn, k) -> the element offset of each coordinate in a shared-memory layout."""
    import numpy as np

    return np.array([[layout((i, j)) for j in range(k)] for i in range(mn)], dtype=np.int64)


def run_wgmma(gpu: _Gpu, atom: nv.MmaAtom, sa: Any, sb: Any, a: Any, b: Any) -> Any:
    """D = A @ B^T on the GPU: A (64, K) and B (N, K) numpy arrays stored in their buffers, read back as (64, N)."""
    np, torch = gpu.np, gpu.torch
    n = atom.shape_mnk[1]
    da, db, descs = wgmma_operands(atom, sa, sb)
    images = []
    for layout, x in ((sa, a), (sb, b)):
        img = np.zeros(x.size, dtype=x.dtype)
        img[smem_offsets(layout, *x.shape)] = x
        images.append(torch.from_numpy(img.view(np.uint8).copy()).cuda())
    ta, tb = images
    td = torch.tensor(np.array(descs, dtype=np.uint64).view(np.int64), device="cuda")
    nacc = n // 2
    out = torch.full((128 * nacc,), float("nan"), dtype=torch.float32, device="cuda")
    smem = ta.numel() + 1024 + tb.numel() + 1024
    gpu.launch(wgmma_kernel_name(atom), smem, [ta, ta.numel(), tb, tb.numel(), td, da.k_blocks, out])
    got = out.cpu().numpy().reshape(128, nacc)
    d = np.full((64, n), np.nan, dtype=np.float32)
    for t, v in itertools.product(range(128), range(nacc)):
        idx = atom.layout_c_tv((t, v))
        d[idx % 64, idx // 64] = got[t, v]
    return d


@testing.requires_sm90
@pytest.mark.parametrize("case", F16_CASES, ids=[f"A{a[0]}-{a[1].name}_B{b[0]}-{b[1].name}" for a, b in F16_CASES])
def test_wgmma_with_gmma_descriptors(gpu: _Gpu, case: tuple) -> None:
    (a_major, a_lt), (b_major, b_lt) = case
    np = gpu.np
    atom = f16_atom(case)
    sa = nv.make_gmma_smem_layout("f16", a_major, 64, 64, layout_type=a_lt)
    sb = nv.make_gmma_smem_layout("f16", b_major, 64, 64, layout_type=b_lt)
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, (64, 64)).astype(np.float16)
    b = rng.integers(-3, 4, (64, 64)).astype(np.float16)  # (N, K)
    d = run_wgmma(gpu, atom, sa, sb, a, b)
    assert np.array_equal(d, a.astype(np.float32) @ b.astype(np.float32).T)


@testing.requires_sm90
@pytest.mark.parametrize("case", FP8_CASES, ids=FP8_IDS)
def test_fp8_wgmma_with_gmma_descriptors(gpu: _Gpu, case: tuple) -> None:
    ta, tb, n, _, _ = case
    np = gpu.np
    atom = fp8_atom(case)
    sa, sb = fp8_buffers(case)
    rng = np.random.default_rng(n)
    a = rng.choice(np.array(fp8_exact_codes(atom.a_dtype), dtype=np.uint8), (64, FP8_K))
    a[rng.random(a.shape) < 0.5] = 0  # half of A zero: keeps the dot products below FP8_EXACT_BOUND
    b = rng.choice(np.array(fp8_exact_codes(atom.b_dtype), dtype=np.uint8), (n, FP8_K))  # (N, K)
    va = np.array([fp8_value(c, atom.a_dtype) for c in range(256)])[a]
    vb = np.array([fp8_value(c, atom.b_dtype) for c in range(256)])[b]
    assert (np.abs(va) @ np.abs(vb).T).max() < FP8_EXACT_BOUND
    d = run_wgmma(gpu, atom, sa, sb, a, b)
    ref = va @ vb.T  # float64: exact
    assert np.array_equal(d, ref.astype(np.float32)), float(np.nanmax(np.abs(d - ref)))

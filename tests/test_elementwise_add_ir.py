"""The elementwise-add kernel of cute-examples through cute-ir: builds for every dtype and variant, lowers to
PTX, assembles with ptxas for sm_80 and sm_90a without spills; and its very IR, emitted into a CPU loop nest
over (block, thread) and run by MLIR's ExecutionEngine, computes C = A + B exactly for random shapes and
strides while writing nothing outside C. (A cross-package test: cute-ir's stages on a cute-examples kernel.)
"""

from __future__ import annotations

import ctypes
import random
import re
import struct

import pytest

pytest.importorskip("mlir")

from cute_examples.elementwise_add import kernel  # noqa: E402
from cute_ir.values import Int  # noqa: E402
from cute_nvarch.jit_spec import kernel_params  # noqa: E402
from cute_runtime import Placeholder  # noqa: E402
from mlir import ir, passmanager  # noqa: E402
from mlir.dialects import func, llvm  # noqa: E402
from mlir.execution_engine import ExecutionEngine  # noqa: E402

DTYPES = ["float32", "float16", "bfloat16", "int32"]


# (threads_m, values_m): the default (1 x 128 threads, one 128-bit vector each), and CuTeDSL's walkthrough
# layouts thr (4,32):(32,1) x val (4,V):(V,1)
LAYOUTS = [(1, 1), (4, 4)]


def _vec(dtype: str, index: int = 32) -> list:
    """Stand-ins of three (2, 1024) tensors with 16-byte aligned rows (a row stride of 2**31 needs i64)."""
    return [Placeholder((2, 1024), dtype, strides=(2**31 if index == 64 else 3 * 1024, 1))] * 3


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_builds_lowers_and_assembles_without_spills(dtype: str, target: str, layout: tuple) -> None:
    """Each dtype x target x layout: 128-bit nc loads all issued before the adds, ptxas reports no spills."""
    threads_m, values_m = layout
    art = kernel.add_kernel.artifact(*_vec(dtype), threads_m, values_m, target=target)
    r = art.resources
    assert r["spill_stores"] == 0 and r["spill_loads"] == 0 and r["local_memory"] == 0
    assert 0 < r["registers"] <= 64
    ptx = art.ptx
    assert f".target {target}" in ptx and ".version 8.0" in ptx
    assert ".local" not in ptx
    bits = 32 if dtype in ("float32", "int32") else 16
    v = 128 // bits
    # the full-tile path comes first: 2 * values_m vector loads, then the adds, then values_m vector stores
    fast = ptx[ptx.index("ld.global.nc.v4") : ptx.index("st.global.v4")]
    loads = re.findall(r"ld\.global\.nc\.v4\.\w+", fast)
    assert len(loads) == 2 * values_m
    ops = r"^\s*(add\.rn\.f32|add\.rn\.f16x2|add\.rn\.bf16x2|fma\.rn\.bf16x2|add\.s32)\b"
    data_ops = re.findall(ops, fast, re.M)
    assert len(data_ops) == values_m * v // (2 if bits == 16 else 1)  # 16-bit types add in pairs
    first = re.search(r"^\s*" + re.escape(data_ops[0]), fast, re.M)
    assert first.start() > fast.rindex("ld.global.nc.v4")
    # the partial-tile path keeps whole in-bounds vectors vectorized too
    assert len(re.findall(r"ld\.global\.nc\.v4", ptx)) >= 2 * values_m + 2
    assert len(re.findall(r"st\.global\.v4\.\w+", ptx)) >= values_m + 1
    entry = art.entry.to_dict()
    assert entry["arch"] == target
    spec = kernel.add_kernel.specialize(*_vec(dtype), threads_m, values_m)[0]
    assert [p["kind"] for p in entry["params"]] == [p.kind for p in kernel_params(spec)]
    assert entry["launch"] == {"block": [128, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 0}
    tile = kernel.tile_shape(dtype, 2, threads_m, values_m)
    assert tile == (threads_m * values_m, 128 // threads_m * v)


def test_strided_variant_and_32_bit_offsets_assemble() -> None:
    """No unit stride: scalar accesses; 1-D contiguous: 128-bit; 32-bit offsets for small tensors."""
    strided = [Placeholder((64, 100), "float32", strides=(300, 3))] * 3
    art = kernel.add_kernel.artifact(*strided, target="sm_90a")
    assert "ld.global.nc.v4" not in art.ptx and "ld.global.nc.b32" in art.ptx
    assert art.resources["spill_stores"] == 0
    flat = [Placeholder((10000 * 10007,), "float16")] * 3
    assert kernel.add_kernel.specialize(*flat)[0]["args"][0]["index"] == 32
    art32 = kernel.add_kernel.artifact(*flat, target="sm_90a")
    assert art32.resources["spill_stores"] == 0 and "ld.global.nc.v4" in art32.ptx


def test_unrestricted_loads_are_coherent() -> None:
    """nc_loads=False drops the __restrict__ promise: plain ld.global, no .nc."""
    art = kernel.add_kernel.artifact(*_vec("float32"), 1, 1, False, target="sm_90a")
    assert "ld.global.nc" not in art.ptx and "ld.global.v4" in art.ptx


def test_tile_and_grid_rule() -> None:
    """tile_shape is the TV layouts' tiler; grid_for covers the shape with tiles; bad input is refused."""
    from cute_layout.tv import make_layout_tv

    for dtype in DTYPES:
        for rank, (tm, vm) in ((1, (1, 1)), (2, (1, 1)), (2, (4, 4)), (2, (2, 8))):
            tiler, _ = make_layout_tv(*kernel.tv_layouts(dtype, rank, tm, vm))
            assert tuple(tiler) == kernel.tile_shape(dtype, rank, tm, vm)
    assert kernel.tile_shape("bf16", 2, 4, 4) == (16, 256)
    assert kernel.grid_for((16, 256), (17, 257)) == 2 * 2
    assert kernel.grid_for((1, 512), (3, 1000)) == 3 * 2
    assert kernel.grid_for((512,), (1025,)) == 3
    assert kernel.grid_for((16, 256), (0, 5)) == 0
    with pytest.raises(ValueError):
        kernel.grid_for((1, 512), (-1, 3))
    with pytest.raises(ValueError, match="2\\*\\*31"):
        kernel.grid_for((512,), (2**31 - 100,))


# --- the kernel body on the CPU --------------------------------------------------------------------------

_FMT = {"float32": "f", "int32": "i"}


class _Buffer:
    """A 64-byte-aligned host buffer of `n` elements with a poisoned guard region on both sides."""

    GUARD = 64

    def __init__(self, dtype: str, n: int) -> None:
        self.dtype = dtype
        self.esize = 4 if dtype in ("float32", "int32") else 2
        total = (n + 2 * self.GUARD) * self.esize + 64
        self.raw = ctypes.create_string_buffer(total)
        base = ctypes.addressof(self.raw)
        self.pad = (-base) % 64
        self.n = n
        self.fill_poison()

    def fill_poison(self) -> None:
        ctypes.memset(ctypes.addressof(self.raw), 0x7B, len(self.raw))

    def address(self, element_offset: int = 0) -> int:
        """Byte address of element `element_offset` of the data region."""
        return ctypes.addressof(self.raw) + self.pad + (self.GUARD + element_offset) * self.esize

    def raw_bytes(self) -> bytes:
        return bytes(self.raw)

    def set(self, i: int, value: float | int) -> None:
        ctypes.memmove(self.address(i), _pack(self.dtype, value), self.esize)

    def get(self, i: int) -> float | int:
        return _unpack(self.dtype, ctypes.string_at(self.address(i), self.esize))


def _pack(dtype: str, v: float | int) -> bytes:
    if dtype == "float16":
        return struct.pack("<e", v)
    if dtype == "bfloat16":  # round to nearest even from float32
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
        return struct.pack("<H", ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF)
    return struct.pack("<" + _FMT[dtype], v)


def _unpack(dtype: str, b: bytes) -> float | int:
    if dtype == "float16":
        return struct.unpack("<e", b)[0]
    if dtype == "bfloat16":
        return struct.unpack("<f", b"\0\0" + b)[0]
    return struct.unpack("<" + _FMT[dtype], b)[0]


def _round(dtype: str, x: float) -> float | int:
    return x if dtype == "int32" else _unpack(dtype, _pack(dtype, x))


_ENGINES: dict[tuple, ExecutionEngine] = {}


def _cpu_engine(case: tuple) -> ExecutionEngine:
    """A CPU function ew(a, b, c, M, N, 6 strides, grid) looping bid over grid and tid over 128 threads, around
    emit_elementwise_add on tensors made as the JIT specialization makes them (`case`: dtype, variant, offset
    bits, rank, threads_m, values_m; 1-D: extent N, strides a_n, b_n, c_n)."""
    if case in _ENGINES:
        return _ENGINES[case]
    dtype, variant, offset_bits, rank, threads_m, values_m = case
    from cute_ir.control import for_
    from cute_ir.tensor import make_tensor
    from cute_ir.values import to_i32
    from cute_layout import Layout

    bits = 32 if dtype in ("float32", "int32") else 16
    v = 128 // bits
    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        ptr, i32, i64 = (
            llvm.PointerType.get(),
            ir.IntegerType.get_signless(32),
            ir.IntegerType.get_signless(64),
        )
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("ew", ir.FunctionType.get([ptr] * 3 + [i32] * 2 + [i64] * 6 + [i32], []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        block = f.add_entry_block()
        args = list(block.arguments)

        with ir.InsertionPoint(block):
            strides = [Int(x) for x in args[5:11]]
            if offset_bits == 32:
                strides = [to_i32(x) for x in strides]
            m, n = Int(args[3]), Int(args[4])

            def tensor(p: object, sm: object, sn: object) -> object:
                if variant == "vec":  # unit N-stride, 16-byte aligned address and rows
                    layout = Layout(n, 1) if rank == 1 else Layout((m, n), (sm.assume_divisible(v), 1))
                    return make_tensor(p, layout, dtype, align=16)
                layout = Layout(n, sn) if rank == 1 else Layout((m, n), (sm, sn))
                return make_tensor(p, layout, dtype, align=bits // 8)

            def per_block(bid: Int) -> None:
                def per_thread(tid: Int) -> None:
                    ts = [tensor(args[i], strides[2 * i], strides[2 * i + 1]) for i in range(3)]
                    kernel.emit_elementwise_add(*ts, bid, tid, threads_m=threads_m, values_m=values_m)

                for_(0, 128, 1, per_thread, bits=32)

            for_(0, Int(args[11]), 1, per_block)
            func.ReturnOp([])
        module.operation.verify()
        passmanager.PassManager.parse(
            "builtin.module(convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)"
        ).run(module.operation)
        engine = ExecutionEngine(module, opt_level=2)
        engine.raw_register_runtime("__truncsfbf2", ctypes.cast(_TRUNCSFBF2, ctypes.c_void_p))
    _ENGINES[case] = engine
    return engine


def _truncsfbf2(x: float) -> float:
    """compiler-rt's float -> bfloat16 (round to nearest even), which LLVM calls on CPUs without AVX512-BF16 and GCC
    12's libgcc lacks: the bfloat16 in the low 16 bits of the returned float's register (x86-64 returns both in
    xmm0)."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        half = 0x7FC0 | (bits >> 16 & 0x8000)  # a quiet NaN of x's sign
    else:
        half = (bits + 0x7FFF + (bits >> 16 & 1)) >> 16 & 0xFFFF
    return struct.unpack("<f", struct.pack("<I", half))[0]


_TRUNCSFBF2 = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)(_truncsfbf2)  # alive as long as the engines


def _run_cpu(case: tuple, bufs: list[tuple[_Buffer, int]], m: int, n: int, strides: list[int]) -> None:
    engine = _cpu_engine(case)
    dtype, _, _, rank, threads_m, values_m = case
    shape = (n,) if rank == 1 else (m, n)
    grid = kernel.grid_for(kernel.tile_shape(dtype, rank, threads_m, values_m), shape)
    cargs = [ctypes.c_void_p(b.address(off)) for b, off in bufs]
    cargs += (
        [ctypes.c_int32(m), ctypes.c_int32(n)] + [ctypes.c_int64(s) for s in strides] + [ctypes.c_int32(grid)]
    )
    engine.invoke("ew", *[ctypes.pointer(a) for a in cargs])


def _case(
    rng: random.Random, dtype: str, variant: str, offset_bits: int = 64, rank: int = 2, threads_m: int = 1,
    values_m: int = 1,
) -> None:
    case = (dtype, variant, offset_bits, rank, threads_m, values_m)
    v = 128 // (32 if dtype in ("float32", "int32") else 16)
    tm, tn = kernel.tile_shape(dtype, 2, threads_m, values_m) if rank == 2 else (1, 128 * v)
    m = rng.choice([1, 3, max(1, tm - 1), tm, tm + 5, 2 * tm + 1, 40]) if rank == 2 else 1
    n = rng.choice([1, 7, v, tn - 3, tn, tn + v, 2 * tn + 9])
    layouts = []
    for t in range(3):
        if variant == "vec":
            sn = 1
            sm = n + rng.choice([0, v, 2 * v]) if t == 2 or rng.random() < 0.7 else rng.choice([0, v])
            sm = sm + (-sm) % v  # M-stride divisible by V, as 16-byte aligned rows are
        else:
            sn = rng.choice([1, 2, 3, -1, 0 if t < 2 else 1])
            sm = rng.choice([n * abs(sn) + 1, -(n * max(1, abs(sn)) + 2), 0 if t < 2 else n * 3 + 1])
            if t == 2 and (sn == 0 or sm == 0):
                sm, sn = n + 1, 1
        layouts.append((sm, sn))
    bufs = []
    for sm, sn in layouts:
        offs = [i * sm + j * sn for i in (0, m - 1) for j in (0, n - 1)]
        lo, hi = min(offs), max(offs)
        b = _Buffer(dtype, hi - lo + 1)
        bufs.append((b, -lo))
    (ba, oa), (bb, ob), (bc, oc) = bufs
    ref = {}
    for i in range(m):
        for j in range(n):
            if dtype == "int32":
                x, y = rng.randint(-1000, 1000), rng.randint(-1000, 1000)
            else:
                x, y = _round(dtype, rng.uniform(-8, 8)), _round(dtype, rng.uniform(-8, 8))
            ia = oa + i * layouts[0][0] + j * layouts[0][1]
            ib = ob + i * layouts[1][0] + j * layouts[1][1]
            ba.set(ia, x)
            bb.set(ib, y)
    for i in range(m):
        for j in range(n):
            x = ba.get(oa + i * layouts[0][0] + j * layouts[0][1])
            y = bb.get(ob + i * layouts[1][0] + j * layouts[1][1])
            ref[oc + i * layouts[2][0] + j * layouts[2][1]] = _round(dtype, x + y)
    before_a, before_b = ba.raw_bytes(), bb.raw_bytes()
    poison = _unpack(dtype, b"\x7b" * bc.esize)
    _run_cpu(case, bufs, m, n, [s for lay in layouts for s in lay])
    assert ba.raw_bytes() == before_a and bb.raw_bytes() == before_b, "inputs were modified"
    raw = ctypes.string_at(ctypes.addressof(bc.raw), len(bc.raw))
    start = bc.pad + bc.GUARD * bc.esize
    guard = raw[:start] + raw[start + bc.n * bc.esize :]
    assert set(guard) == {0x7B}, "a write landed outside C"
    for k in range(bc.n):
        got = bc.get(k)
        if k in ref:
            assert got == ref[k], f"{dtype} {variant} {m}x{n} {layouts}: C[{k}] = {got}, want {ref[k]}"
        else:
            assert got == poison, f"C gap element {k} was written"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("variant", ["vec", "strided"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_kernel_body_computes_on_cpu(dtype: str, variant: str, layout: tuple) -> None:
    """Random shapes (full and partial tiles), padded/negative/broadcast strides: C = A + B, nothing else."""
    rng = random.Random(DTYPES.index(dtype) * 10 + len(variant) + layout[0])
    for _ in range(8):
        _case(rng, dtype, variant, threads_m=layout[0], values_m=layout[1])


@pytest.mark.parametrize("variant", ["vec", "strided"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_one_dimensional_body_on_cpu(dtype: str, variant: str) -> None:
    """The 1-D kernel (a coalesced contiguous range of any length): full tiles and a predicated tail."""
    rng = random.Random(7 + DTYPES.index(dtype) + len(variant))
    for _ in range(6):
        _case(rng, dtype, variant, offset_bits=32, rank=1)


@pytest.mark.parametrize("variant", ["vec", "strided"])
def test_kernel_body_with_32_bit_offsets_on_cpu(variant: str) -> None:
    """32-bit offsets compute the same sums (offsets in i32 for tensors below 2**31 elements)."""
    rng = random.Random(99 + len(variant))
    for _ in range(6):
        _case(rng, "float32", variant, offset_bits=32)
        _case(rng, "float16", variant, offset_bits=32, threads_m=4, values_m=4)

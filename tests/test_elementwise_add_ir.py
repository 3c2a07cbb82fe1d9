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
from cute_ir import stages  # noqa: E402
from cute_ir.values import Int  # noqa: E402
from mlir import ir, passmanager  # noqa: E402
from mlir.dialects import func, llvm  # noqa: E402
from mlir.execution_engine import ExecutionEngine  # noqa: E402

DTYPES = ["float32", "float16", "bfloat16", "int32"]


# (threads_m, values_m): the default (1 x 128 threads, one 128-bit vector each), and CuTeDSL's walkthrough
# layouts thr (4,32):(32,1) x val (4,V):(V,1)
LAYOUTS = [(1, 1), (4, 4)]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_builds_lowers_and_assembles_without_spills(dtype: str, target: str, layout: tuple) -> None:
    """Each dtype x target x layout: 128-bit nc loads all issued before the adds, ptxas reports no spills."""
    threads_m, values_m = layout
    spec = kernel.elementwise_add_spec(dtype, threads_m=threads_m, values_m=values_m)
    kd = kernel.build_elementwise_add(spec, target)
    art = stages.compile(kd)
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
    assert entry["name"] == kd.name and entry["arch"] == target
    assert [p["kind"] for p in entry["params"]] == ["ptr"] * 3 + ["i32"] * 2 + ["i64"] * 6
    assert entry["launch"] == {"block": [128, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 0}
    assert entry["spec"]["tile"] == [threads_m * values_m, 128 // threads_m * v]


def test_strided_variant_and_32_bit_offsets_assemble() -> None:
    """The strided variant uses scalar accesses; offset_bits=32 keeps address math in 32 bits."""
    art = stages.compile(kernel.build_elementwise_add(kernel.elementwise_add_spec("float32", "strided"), "sm_90a"))
    assert "ld.global.nc.v4" not in art.ptx and "ld.global.nc.b32" in art.ptx
    assert art.resources["spill_stores"] == 0
    spec32 = kernel.elementwise_add_spec("float16", offset_bits=32)
    art32 = stages.compile(kernel.build_elementwise_add(spec32, "sm_90a"))
    assert art32.resources["spill_stores"] == 0 and "ld.global.nc.v4" in art32.ptx


def test_spec_and_grid_rule() -> None:
    """The spec records dtype, variant, tile; grid_for covers (M, N) with tiles; bad input is refused."""
    spec = kernel.elementwise_add_spec("bf16", "vec", threads_m=4, values_m=4)
    assert spec["dtype"] == "bfloat16" and spec["tile"] == [16, 256] and spec["variant"] == "vec"
    assert (spec["threads_m"], spec["values_m"]) == (4, 4)
    assert kernel.grid_for(spec, 17, 257) == (2 * 2, 1, 1)
    assert kernel.grid_for(kernel.elementwise_add_spec("f32"), 3, 1000) == (3 * 2, 1, 1)
    g2 = kernel.elementwise_add_spec("f32", raster="grid2d")
    assert kernel.grid_for(g2, 3, 1000) == (2, 3, 1)
    with pytest.raises(ValueError, match="grid2d"):
        kernel.grid_for(g2, 70000, 5)
    assert kernel.grid_for(spec, 0, 5) == (0, 1, 1)
    with pytest.raises(ValueError):
        kernel.elementwise_add_spec("float64")
    with pytest.raises(ValueError):
        kernel.elementwise_add_spec("float32", "weird")
    with pytest.raises(ValueError):
        kernel.grid_for(spec, -1, 3)
    assert kernel.choose_variant("float32", [0, 16, 32], [(8, 1)] * 3) == "vec"
    assert kernel.choose_variant("float32", [0, 16, 36], [(8, 1)] * 3) == "strided"
    assert kernel.choose_variant("float32", [0, 16, 32], [(6, 1)] * 3) == "strided"
    assert kernel.choose_variant("float32", [0, 16, 32], [(1, 8)] * 3) == "strided"


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


def _cpu_engine(spec: dict) -> ExecutionEngine:
    """A CPU function ew(a, b, c, M, N, 6 strides, grid) looping bid over grid and tid over 128 threads."""
    key = tuple(sorted((k, str(v)) for k, v in spec.items()))
    if key in _ENGINES:
        return _ENGINES[key]
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
        from cute_ir.control import for_

        with ir.InsertionPoint(block):
            strides = [Int(v) for v in args[5:11]]

            def per_block(bid: Int) -> None:
                def per_thread(tid: Int) -> None:
                    kernel.emit_elementwise_add(
                        spec, args[0], args[1], args[2], Int(args[3]), Int(args[4]), strides, bid, tid
                    )

                for_(0, 128, 1, per_thread, bits=32)

            for_(0, Int(args[11]), 1, per_block)
            func.ReturnOp([])
        module.operation.verify()
        passmanager.PassManager.parse(
            "builtin.module(convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)"
        ).run(module.operation)
        engine = ExecutionEngine(module, opt_level=2)
    _ENGINES[key] = engine
    return engine


def _run_cpu(spec: dict, bufs: list[tuple[_Buffer, int]], m: int, n: int, strides: list[int]) -> None:
    engine = _cpu_engine(spec)
    grid = kernel.grid_for(spec, m, n)[0]  # (1-D rasters only here)
    cargs = [ctypes.c_void_p(b.address(off)) for b, off in bufs]
    cargs += (
        [ctypes.c_int32(m), ctypes.c_int32(n)] + [ctypes.c_int64(s) for s in strides] + [ctypes.c_int32(grid)]
    )
    engine.invoke("ew", *[ctypes.pointer(a) for a in cargs])


def _case(rng: random.Random, dtype: str, variant: str, **options: object) -> None:
    spec = kernel.elementwise_add_spec(dtype, variant, **options)
    v = spec["vector_bits"] // (32 if dtype in ("float32", "int32") else 16)
    tm, tn = spec["tile"]
    m = rng.choice([1, 3, max(1, tm - 1), tm, tm + 5, 2 * tm + 1, 40])
    n = rng.choice([1, 7, v, tn - 3, tn, tn + v, 2 * tn + 9])
    layouts = []
    for t in range(3):
        if variant == "vec":
            sn = 1
            sm = n + rng.choice([0, v, 2 * v]) if t == 2 or rng.random() < 0.7 else rng.choice([0, v])
            sm = sm + (-sm) % v  # M-stride divisible by V, as the vec variant requires
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
    _run_cpu(spec, bufs, m, n, [s for lay in layouts for s in lay])
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


@pytest.mark.parametrize("raster", ["col", "row"])
def test_kernel_body_rasters_on_cpu(raster: str) -> None:
    """Both 1-D tile orders cover every tile exactly once."""
    rng = random.Random(len(raster))
    for _ in range(6):
        _case(rng, "float32", "vec", raster=raster, threads_m=2, values_m=2)


@pytest.mark.parametrize("variant", ["vec", "strided"])
def test_kernel_body_with_32_bit_offsets_on_cpu(variant: str) -> None:
    """offset_bits=32 computes the same sums (offsets in i32 for tensors below 2**31 elements)."""
    rng = random.Random(99 + len(variant))
    for _ in range(6):
        _case(rng, "float32", variant, offset_bits=32)
        _case(rng, "float16", variant, offset_bits=32, threads_m=4, values_m=4)

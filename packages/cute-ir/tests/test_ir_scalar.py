"""cute_ir.scalar: float arithmetic run on the CPU (MLIR's ExecutionEngine) against Python, and the predicated
global loads' PTX (one `@p ld.global.bN` per load, no `.nc`, 0 where the predicate is false) through ptxas."""

from __future__ import annotations

import ctypes
import math
import re
import struct

import pytest

pytest.importorskip("mlir")

from cute_ir import scalar as S  # noqa: E402
from cute_ir import stages  # noqa: E402
from cute_ir.kernel import KernelDef, Param  # noqa: E402
from cute_ir.tensor import make_tensor  # noqa: E402
from cute_ir.values import Int, to_i64  # noqa: E402
from cute_layout import Layout  # noqa: E402
from mlir import ir, passmanager  # noqa: E402
from mlir.dialects import arith, func  # noqa: E402
from mlir.execution_engine import ExecutionEngine  # noqa: E402


def _run(build, *args: float) -> float:
    """f(a, b, c) -> f32 built by `build` on three f32 arguments, run once on the CPU."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.F32Type.get()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ir.FunctionType.get([f32] * 3, [f32]))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            func.ReturnOp([build(*block.arguments)])
        passmanager.PassManager.parse("builtin.module(convert-to-llvm,reconcile-unrealized-casts)").run(
            module.operation
        )
        engine = ExecutionEngine(module, opt_level=0)
        cargs = [ctypes.c_float(v) for v in args]
        res = ctypes.c_float()
        engine.invoke("f", *[ctypes.pointer(c) for c in cargs], ctypes.pointer(res))
        return res.value


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def test_arithmetic_on_the_cpu():
    a, b, c = 1.5, -2.25, 0.375
    assert _run(lambda x, y, z: S.add(x, y), a, b, c) == a + b
    assert _run(lambda x, y, z: S.sub(x, y), a, b, c) == a - b
    assert _run(lambda x, y, z: S.mul(x, y), a, b, c) == a * b
    assert _run(lambda x, y, z: S.fma(x, y, z), a, b, c) == a * b + c
    assert _run(lambda x, y, z: S.abs_(y), a, b, c) == 2.25
    assert _run(lambda x, y, z: S.maximum(x, y), a, b, c) == 1.5
    assert math.isnan(_run(lambda x, y, z: S.maximum(x, y), a, float("nan"), c))
    assert _run(lambda x, y, z: S.select(S.lt(y, S.f32(0.0)), x, z), a, b, c) == a
    assert _run(lambda x, y, z: S.select(S.lt(x, S.f32(0.0)), x, z), a, b, c) == c
    # fma rounds once: (1 + 2^-12)^2 - 1 keeps its 2^-24 term
    e = 1 + 2.0**-12
    assert _run(lambda x, y, z: S.fma(x, y, z), e, e, -1.0) == _f32(2.0**-11 + 2.0**-24)


def _load_kernel(bits: int) -> KernelDef:
    """y[t] = the `bits` at x + t * bits/8 for t < n, else 0 (one predicated load per thread)."""
    dt = {16: "int16", 32: "int32", 64: "int64"}[bits]
    kd = KernelDef(f"ld_global_{bits}", [Param("x", "ptr", dtype=dt, align=bits // 8),
                   Param("y", "ptr", dtype=dt, align=bits // 8), Param("n", "i32")], block=128, target="sm_90a")
    with kd.body() as k:
        t = k.thread_idx(0)
        x = k.arg("x")
        addr = Int(ir.Operation.create("llvm.ptrtoint", results=[ir.IntegerType.get_signless(64)],
                                       operands=[x]).result)
        v = S.ld_global(addr + to_i64(t) * (bits // 8), t < k.arg("n"), bits)
        make_tensor(k.arg("y"), Layout(128, 1), dt).store(t, v)
    return kd


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_ld_global_is_one_predicated_coherent_load(bits):
    art = stages.compile(_load_kernel(bits))
    assert len(re.findall(rf"@%p\d+ ld\.global\.b{bits}", art.ptx)) == 1
    assert "ld.global.nc" not in art.ptx
    assert art.resources["spill_stores"] == 0


def test_ld_global_refuses_other_widths():
    with ir.Context(), ir.Location.unknown(), pytest.raises(ValueError, match="bits must be 16, 32 or 64"):
        S.ld_global(0, True, 8)


def _e4m3_kernel() -> KernelDef:
    """y[t] = the two e4m3 bytes of (x[2t], x[2t+1]) (one cvt per thread); the warp's max of |x[2t]| goes to
    amax[0] with one atomic per warp."""
    params = [Param("x", "ptr", dtype="float32", align=8), Param("y", "ptr", dtype="int16", align=2),
              Param("amax", "ptr", dtype="int32", align=4)]
    kd = KernelDef("cvt_e4m3x2", params, block=128, target="sm_90a")
    with kd.body() as k:
        t = k.thread_idx(0)
        xs = make_tensor(k.arg("x"), Layout(256, 1), "float32")
        lo, hi = xs.load(t * 2), xs.load(t * 2 + 1)
        make_tensor(k.arg("y"), Layout(128, 1), "int16").store(t, S.cvt_e4m3x2(lo, hi))
        m = S.warp_max(S.abs_(lo))
        amax = Int(ir.Operation.create("llvm.ptrtoint", results=[ir.IntegerType.get_signless(64)],
                                       operands=[k.arg("amax")]).result)
        S.red_max_nonneg_f32(amax, m, t % 32 == 0)
    return kd


def test_e4m3_conversion_warp_max_and_red_max():
    art = stages.compile(_e4m3_kernel())
    ptx = re.sub(r"[ \t]+", " ", art.ptx)
    # the upper byte comes from the first source: hi (x[2t + 1]), then lo (x[2t])
    (lo, hi), = re.findall(r"ld\.global\.v2\.b32 \{(%\w+), (%\w+)\}", ptx)
    assert re.findall(r"cvt\.rn\.satfinite\.e4m3x2\.f32 %rs\d+, (%\w+), (%\w+);", ptx) == [(hi, lo)]
    assert len(re.findall(r"shfl\.sync\.bfly\.b32", ptx)) == 5
    assert len(re.findall(r"@%p\d+ red\.global\.max\.u32", ptx)) == 1
    assert art.resources["spill_stores"] == 0
    from cute_ir.hopper import sass

    if sass.find_disassembler() is None:
        pytest.skip("no SASS disassembler: install nvidia-cuda-nvdisasm (cuobjdump -sass needs it)")
    text = sass.disassemble(art.cubin)
    assert re.search(r"F2FP\.SATFINITE\.E4M3\.F32\.PACK_AB", text), text
    assert "RED.E.MAX" in text or "REDG.E.MAX" in text, text


def _store_kernel(dtype: str, pairs: bool) -> KernelDef:
    """y[t] = x[t] rounded to dtype for t < n (one predicated store per thread; pairs: y[2t], y[2t+1] = x[2t],
    x[2t+1] as one store of twice the width)."""
    elem = {"float16": ir.F16Type, "bfloat16": ir.BF16Type, "float32": ir.F32Type}[dtype]
    size = 2 if dtype != "float32" else 4
    kd = KernelDef(f"st_global_{dtype}_{int(pairs)}", [Param("x", "ptr", dtype="float32", align=8),
                   Param("y", "ptr", dtype=dtype, align=2 * size), Param("n", "i32")], block=128, target="sm_90a")
    with kd.body() as k:
        t = k.thread_idx(0)
        xs = make_tensor(k.arg("x"), Layout(256, 1), "float32")
        y = Int(ir.Operation.create("llvm.ptrtoint", results=[ir.IntegerType.get_signless(64)],
                                    operands=[k.arg("y")]).result)
        if pairs:
            raw = S.pack2(xs.load(2 * t), xs.load(2 * t + 1), elem.get())
            S.st_global(y + to_i64(t) * (2 * size), raw, 2 * t + 1 < k.arg("n"))
        else:
            S.st_global(y + to_i64(t) * size, S.to_bits(xs.load(t), elem.get()), t < k.arg("n"))
    return kd


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("pairs", [False, True])
def test_st_global_is_one_predicated_store(dtype, pairs):
    art = stages.compile(_store_kernel(dtype, pairs))
    bits = (16 if dtype != "float32" else 32) * (2 if pairs else 1)
    assert len(re.findall(rf"@%p\d+ st\.global\.b{bits} ", art.ptx)) == 1
    assert len(re.findall(r"st\.global", art.ptx)) == 1
    # rounded to nearest even (a pair may be one packed f16x2 / bf16x2 conversion)
    t = {"float16": "f16", "bfloat16": "bf16", "float32": None}[dtype]
    assert t is None or re.search(rf"cvt\.rn\.{t}(x2)?\.f32", art.ptx)
    assert not re.search(r"cvt\.r[zmp]\.", art.ptx)
    assert art.resources["spill_stores"] == 0


def test_st_global_refuses_other_widths():
    with ir.Context(), ir.Location.unknown(), pytest.raises(ValueError, match="raw must be an i16, i32 or i64"):
        S.st_global(0, arith.constant(ir.IntegerType.get_signless(8), 1), True)

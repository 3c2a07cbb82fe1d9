"""The device tile scheduler: cute-nvarch's TileScheduler arithmetic emitted on Ints, run on the CPU, equals
the Python ints; a kernel walking its work units assembles for sm_90a."""

from __future__ import annotations

import ctypes

from cute_ir.hopper.scheduler import IR_OPS, PersistentScheduler
from cute_ir.values import Int
from cute_nvarch.tile_scheduler import TileScheduler
from mlir import ir, passmanager
from mlir.dialects import func, llvm
from mlir.execution_engine import ExecutionEngine


def test_schedule_arithmetic_on_cpu_equals_python():
    """unit_coords and units_of_cluster with IR_OPS on run-time Ints, lowered and run, equal PY_OPS on ints."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        ptr = llvm.PointerType.get()
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("main", ir.FunctionType.get([ptr, ptr], []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        blk = f.add_entry_block()
        with ir.InsertionPoint(blk):
            args = [
                Int(llvm.load(i32, llvm.getelementptr(ptr, blk.arguments[0], [], [i], i32, None)))
                for i in range(7)
            ]
            unit, cm, cn, along, swz, cid, ncl = args
            outs = [
                *TileScheduler.unit_coords(unit, cm, cn, along != 0, swz, IR_OPS),
                TileScheduler.units_of_cluster(cm * cn, cid, ncl, IR_OPS),
            ]
            for j, o in enumerate(outs):
                llvm.store(o.value, llvm.getelementptr(ptr, blk.arguments[1], [], [j], i32, None))
            func.ReturnOp([])
        passmanager.PassManager.parse(
            "builtin.module(convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)"
        ).run(module.operation)
        engine = ExecutionEngine(module, opt_level=1)

    def run(*vals):
        ins = (ctypes.c_int32 * 7)(*vals)
        outs = (ctypes.c_int32 * 4)()
        engine.invoke(
            "main",
            ctypes.pointer(ctypes.cast(ins, ctypes.c_void_p)),
            ctypes.pointer(ctypes.cast(outs, ctypes.c_void_p)),
        )
        return tuple(outs)

    for cm, cn in ((1, 1), (3, 5), (8, 8), (7, 2), (33, 17)):
        for along in (0, 1):
            for swz in (0, 1, 3):
                for unit in range(0, cm * cn * 2, max(1, cm * cn // 7)):
                    want = (
                        *TileScheduler.unit_coords(unit, cm, cn, bool(along), swz),
                        TileScheduler.units_of_cluster(cm * cn, 5, 132),
                    )
                    assert run(unit, cm, cn, along, swz, 5, 132) == want


def test_work_unit_loop_kernel_assembles(compile_kernel):
    """A persistent kernel that stores each work unit's tile coordinates: builds, assembles, no spills."""
    desc = TileScheduler(128, 128, 64, cluster_m=2)

    def body(k):
        sched = PersistentScheduler(
            desc, k.arg("m"), k.arg("n"), k.arg("k"), k.arg("l"), k.arg("raster_along_n"), k.arg("swizzle_log")
        )
        out = k.arg("out")

        def unit(i, wu):
            i32 = ir.IntegerType.get_signless(32)
            for j, v in enumerate((wu.m, wu.n, wu.l, wu.k_end)):
                addr = llvm.getelementptr(out.type, out, [(i * 4 + j).value], [-(1 << 31)], i32, None)
                llvm.store(v.value, addr)

        sched.for_each_unit(unit)

    params = [("out", "ptr"), *((p, "i32") for p in ("m", "n", "k", "l", "raster_along_n", "swizzle_log"))]
    art = compile_kernel("sched_walk", params, body, block=(32, 1, 1), cluster=(2, 1, 1), target="sm_90a")
    r = art.resources
    assert r["spill_stores"] == 0 and r["spill_loads"] == 0
    assert "%clusterid.x" in art.ptx and "%nclusterid.x" in art.ptx and "%cluster_ctaid.x" in art.ptx


def _engine(n_in, body):
    """An ExecutionEngine for main(ins, outs) with n_in i32 inputs and body(Ints) -> output values."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        ptr = llvm.PointerType.get()
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("main", ir.FunctionType.get([ptr, ptr], []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        blk = f.add_entry_block()
        with ir.InsertionPoint(blk):
            args = [
                Int(llvm.load(i32, llvm.getelementptr(ptr, blk.arguments[0], [], [i], i32, None)))
                for i in range(n_in)
            ]
            for j, o in enumerate(body(*args)):
                llvm.store(o.value, llvm.getelementptr(ptr, blk.arguments[1], [], [j], i32, None))
            func.ReturnOp([])
        passmanager.PassManager.parse(
            "builtin.module(convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)"
        ).run(module.operation)
        return ExecutionEngine(module, opt_level=1)


def test_k_decompositions_on_cpu_equal_python():
    """KWork's counts and units (split-K, stream-K) on run-time Ints, lowered and run, equal the Python ints."""
    from cute_nvarch.tile_scheduler import KWork

    for kind in ("split_k", "stream_k"):
        def body(tiles, kt, p, splits, c, i, kind=kind):
            work = KWork(kind, tiles, kt, p, splits, IR_OPS)
            return [work.units_of_cluster(c), *work.unit(c, i)]

        engine = _engine(6, body)
        for tiles, kt, p, splits in ((480, 64, 132, 1), (64, 128, 132, 1), (10, 3, 4, 3), (7, 2, 66, 4), (1, 1, 2, 2)):
            for c in sorted({0, 1, p // 2, p - 1}):
                want_n = KWork(kind, tiles, kt, p, splits).units_of_cluster(c)
                for i in range(want_n):
                    ins = (ctypes.c_int32 * 6)(tiles, kt, p, splits, c, i)
                    outs = (ctypes.c_int32 * 7)()
                    engine.invoke(
                        "main",
                        ctypes.pointer(ctypes.cast(ins, ctypes.c_void_p)),
                        ctypes.pointer(ctypes.cast(outs, ctypes.c_void_p)),
                    )
                    want = (want_n, *KWork(kind, tiles, kt, p, splits).unit(c, i))
                    assert tuple(outs)[:6] == want[:6] and (want[4] == 1 or outs[6] == want[6]), (kind, c, i)

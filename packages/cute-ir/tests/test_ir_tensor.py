"""Tensors in IR: divides and TV partitions agree with cute_layout; predicated vector copies run right."""

from __future__ import annotations

import ctypes
import random

import pytest
from cute_ir.control import for_
from cute_ir.tensor import (
    Fragment,
    Values,
    all_in_bounds,
    copy,
    elem_less,
    local_tile,
    make_fragment_like,
    make_identity_tensor,
    make_tensor,
    make_tiled_copy,
    make_tiled_copy_tv,
    zipped_divide,
)
from cute_ir.values import Int
from cute_layout import Layout, composition, make_layout_tv
from cute_layout import zipped_divide as layout_zipped_divide
from mlir import ir, passmanager
from mlir.dialects import func, llvm
from mlir.execution_engine import ExecutionEngine


def _module_with(arg_types: list, body) -> tuple[ir.Context, ir.Module]:  # noqa: ANN001
    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("main", ir.FunctionType.get(arg_types(), []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            body(list(block.arguments))
            func.ReturnOp([])
    return ctx, module


def test_static_tensors_follow_cute_layout() -> None:
    """zipped_divide, slicing and TV partitions of static tensors give cute_layout's layouts and offsets."""
    tiler, tv = make_layout_tv(Layout((4, 32), (32, 1)), Layout((4, 4), (4, 1)))

    def body(args: list) -> None:
        t = make_tensor(args[0], Layout((64, 512), (512, 1)), "float32")
        z = zipped_divide(t, tiler)
        assert z.layout == layout_zipped_divide(Layout((64, 512), (512, 1)), tiler)
        blk = z[(None, None), 5]
        assert blk.layout == Layout((16, 128), (512, 1)) and blk.base == z.layout((0, 5))
        assert local_tile(t, tiler, 5).base == blk.base
        thr = make_tiled_copy(tv, tiler, "float32").get_slice(37)
        part = thr.partition_S(blk)
        comp = composition(Layout((16, 128), (512, 1)), tv)
        assert part.layout == comp[1] and part.base == blk.base + comp(37, 0)
        for v in range(16):
            assert part.offset_of(v) == blk.base + comp(37, v)
        ident = make_identity_tensor((64, 512))
        crd = zipped_divide(ident, tiler)[(None, None), 5]
        pc = make_tiled_copy(tv, tiler, "float32").get_slice(37).partition_S(crd)
        for v in range(16):
            m, n = pc[v]  # global coordinates of the thread's values
            assert m * 512 + n == blk.base + comp(37, v)
        assert all_in_bounds(crd, (64, 512)) is True
        last = zipped_divide(ident, tiler)[(None, None), 3]  # rows 48..63
        assert all_in_bounds(last, (64, 512)) is True and all_in_bounds(last, (63, 512)) is False

    _module_with(lambda: [llvm.PointerType.get()], body)


def test_alignment_decides_vector_width() -> None:
    """128-bit accesses only where the pointer alignment and the offsets' divisibility prove them."""

    def build(align: int, stride_div: int) -> str:
        def body(args: list) -> None:
            s = Int(args[1]).assume_divisible(stride_div)
            t = make_tensor(args[0], Layout((8, 8), (s, 1)), "float32", align=align)
            tc = make_tiled_copy_tv(Layout((8, 2), (2, 1)), Layout((1, 4), (4, 1)))
            part = tc.get_slice(Int(args[2])).partition_S(t)
            frg = make_fragment_like(part)
            copy(part, frg)
            copy(frg, part)

        ctx, module = _module_with(
            lambda: [
                llvm.PointerType.get(),
                ir.IntegerType.get_signless(64),
                ir.IntegerType.get_signless(32),
            ],
            body,
        )
        with ctx:
            return str(module)

    assert "vector<4xf32>" in build(16, 4)
    text = build(16, 2)
    assert "vector<4xf32>" not in text and "vector<2xf32>" in text
    assert "vector<" not in build(4, 4)


_SCALE_ENGINE: list = []


def _copy_engine() -> ExecutionEngine:
    """copy(src, dst) over tiles of (8, 16) by 32 threads x (1, 4) values, predicated for partial tiles."""
    if _SCALE_ENGINE:
        return _SCALE_ENGINE[0]

    def types() -> list:
        i32, i64, ptr = (
            ir.IntegerType.get_signless(32),
            ir.IntegerType.get_signless(64),
            llvm.PointerType.get(),
        )
        return [ptr, ptr, i32, i32, i64, i64, i64, i64, i32]

    def body(args: list) -> None:
        src_p, dst_p = args[0], args[1]
        m, n = Int(args[2]), Int(args[3])
        ss, sd = (Int(args[4]), Int(args[5])), (Int(args[6]), Int(args[7]))
        tc = make_tiled_copy_tv(Layout((8, 4), (4, 1)), Layout((1, 4), (4, 1)))
        src = make_tensor(src_p, Layout((m, n), ss), "int32")
        dst = make_tensor(dst_p, Layout((m, n), sd), "int32")
        ident = make_identity_tensor((m, n))

        def per_block(bid: Int) -> None:
            def per_thread(tid: Int) -> None:
                blk = ((None, None), bid)
                thr = tc.get_slice(tid)
                s = thr.partition_S(zipped_divide(src, tc.tiler)[blk])
                d = thr.partition_D(zipped_divide(dst, tc.tiler)[blk])
                c = thr.partition_S(zipped_divide(ident, tc.tiler)[blk])
                pred = [elem_less(c[i], (m, n)) for i in range(c.size())]
                frg = make_fragment_like(s)
                copy(s, frg, pred=pred)
                twice = frg.load() + frg.load()
                frg.store(twice)
                copy(frg, d, pred=pred)

            for_(0, 32, 1, per_thread, bits=32)

        for_(0, Int(args[8]), 1, per_block)

    ctx, module = _module_with(types, body)
    with ctx:
        passmanager.PassManager.parse(
            "builtin.module(convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)"
        ).run(module.operation)
        engine = ExecutionEngine(module, opt_level=2)
    _SCALE_ENGINE.append(engine)
    return engine


def test_predicated_copies_touch_only_the_tensor() -> None:
    """Random shapes and strides: dst = 2 * src inside (M, N); every other word of dst stays poisoned."""
    engine = _copy_engine()
    rng = random.Random(7)
    for _ in range(25):
        m, n = rng.randint(1, 20), rng.randint(1, 40)
        ss = (n + rng.randint(0, 3), 1) if rng.random() < 0.6 else (1, m + rng.randint(0, 2))
        sd = (n + rng.randint(0, 5), 1)
        src_size = (m - 1) * ss[0] + (n - 1) * ss[1] + 1
        dst_size = (m - 1) * sd[0] + (n - 1) * sd[1] + 1
        guard = 16
        src = (ctypes.c_int32 * (src_size + 2 * guard))(
            *[rng.randint(-999, 999) for _ in range(src_size + 32)]
        )
        dst = (ctypes.c_int32 * (dst_size + 2 * guard))(*([-7] * (dst_size + 2 * guard)))
        grid = -(-m // 8) * -(-n // 16)
        args = [
            ctypes.c_void_p(ctypes.addressof(src) + 4 * guard),
            ctypes.c_void_p(ctypes.addressof(dst) + 4 * guard),
            ctypes.c_int32(m),
            ctypes.c_int32(n),
            *[ctypes.c_int64(x) for x in (*ss, *sd)],
            ctypes.c_int32(grid),
        ]
        engine.invoke("main", *[ctypes.pointer(a) for a in args])
        want = [-7] * (dst_size + 2 * guard)
        for i in range(m):
            for j in range(n):
                want[guard + i * sd[0] + j * sd[1]] = 2 * src[guard + i * ss[0] + j * ss[1]]
        assert list(dst) == want, (m, n, ss, sd)


def test_fragment_and_copy_reject_misuse() -> None:
    """Reads before writes, mismatched sizes, bad predicates and identity tensors as memory are refused."""

    def body(args: list) -> None:
        t = make_tensor(args[0], Layout((4,), (1,)), "float32")
        frg = Fragment("float32", 4)
        with pytest.raises(ValueError, match="before being written"):
            frg.load()
        with pytest.raises(ValueError, match="elements"):
            copy(t, Fragment("float32", 3))
        with pytest.raises(ValueError, match="pred"):
            copy(t, frg, pred=[True])
        with pytest.raises(TypeError, match="Bool"):
            copy(t, frg, pred=[1, 1, 1, 1])
        with pytest.raises(TypeError):
            copy(make_identity_tensor((4,)), frg)
        with pytest.raises(TypeError):
            copy(frg, frg)
        with pytest.raises(ValueError):
            copy(t, frg, vector_bits=96)
        copy(t, frg, pred=[True, False, True, False])
        with pytest.raises(ValueError, match="differ"):
            frg.load() + Values(frg.load().values[:2], "float32")
        with pytest.raises(TypeError):
            make_tensor(args[0], Layout(4), None)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            zipped_divide(t, (2, 2))

    _module_with(lambda: [llvm.PointerType.get()], body)

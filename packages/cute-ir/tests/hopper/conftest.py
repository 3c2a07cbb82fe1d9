"""Fixtures for the Hopper builder tests: compile a small kernel to PTX/cubin, run integer code on the CPU."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable, Sequence

import pytest

pytest.importorskip("mlir")

from mlir import ir, passmanager  # noqa: E402
from mlir.dialects import func, llvm  # noqa: E402
from mlir.execution_engine import ExecutionEngine  # noqa: E402


@pytest.fixture
def compile_kernel() -> Callable[..., object]:
    """compile_kernel(name, params, body, **kd_kwargs) -> cute_ir Artifact (PTX, cubin, ptxas report)."""
    from cute_ir import hopper
    from cute_ir.kernel import KernelDef, Param
    from cute_ir.stages import compile as compile_stages

    def run(name: str, params: Sequence[tuple[str, str]], body: Callable[..., None], **kw: object) -> object:
        kw.setdefault("min_blocks_per_sm", 1)
        kd = KernelDef(name, [Param(n, k) for n, k in params], **kw)
        with kd.body() as k:
            body(k)
        hopper.finalize_tma_params(kd)
        return compile_stages(kd)

    return run


def ptx_body(ptx: str) -> list[str]:
    """The PTX instruction lines (comments and blank lines dropped, whitespace normalised)."""
    out = []
    for line in ptx.splitlines():
        line = line.split("//")[0].strip()
        if line:
            out.append(re.sub(r"\s+", " ", line))
    return out


@pytest.fixture
def ptx_lines() -> Callable[[str], list[str]]:
    """ptx_lines(ptx) -> normalised instruction lines."""
    return ptx_body


class HostInt:
    """Run integer builders on the CPU: f(*i32 args) -> i32/i64 results, through the ExecutionEngine."""

    def __init__(self, nargs: int, results: Sequence[int], build: Callable[..., Sequence[object]]) -> None:
        self.ctx = ir.Context()
        self.results = list(results)
        with self.ctx, ir.Location.unknown():
            module = ir.Module.create()
            ptr = llvm.PointerType.get()
            i32 = ir.IntegerType.get_signless(32)
            with ir.InsertionPoint(module.body):
                f = func.FuncOp("main", ir.FunctionType.get([ptr, ptr], []))
                f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            block = f.add_entry_block()
            with ir.InsertionPoint(block):
                args = []
                for i in range(nargs):
                    p = llvm.getelementptr(ptr, block.arguments[0], [], [i], i32, None)
                    args.append(llvm.load(i32, p))
                outs = build(*args)
                i64 = ir.IntegerType.get_signless(64)
                for j, (v, bits) in enumerate(zip(outs, self.results, strict=True)):
                    v = v.value if hasattr(v, "value") and isinstance(v.value, ir.Value) else v
                    if bits == 32:
                        v = llvm.zext(i64, v) if ir.IntegerType(v.type).width < 64 else v
                    p = llvm.getelementptr(ptr, block.arguments[1], [], [j], i64, None)
                    llvm.store(v, p)
                func.ReturnOp([])
            pm = passmanager.PassManager.parse(
                "builtin.module(convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)"
            )
            pm.run(module.operation)
            self.engine = ExecutionEngine(module, opt_level=1)
        self.nargs = nargs

    def __call__(self, *args: int) -> tuple[int, ...]:
        ins = (ctypes.c_int32 * self.nargs)(*[a - (1 << 32) if a >= (1 << 31) else a for a in args])
        outs = (ctypes.c_uint64 * len(self.results))()
        pin = ctypes.pointer(ctypes.cast(ins, ctypes.c_void_p))
        pout = ctypes.pointer(ctypes.cast(outs, ctypes.c_void_p))
        self.engine.invoke("main", pin, pout)
        return tuple(
            int(v) & ((1 << 32) - 1) if bits == 32 else int(v)
            for v, bits in zip(outs, self.results, strict=True)
        )


@pytest.fixture
def host_int() -> type[HostInt]:
    """HostInt(nargs, result_bits, build) runs `build(*i32 values) -> values` on the CPU."""
    return HostInt

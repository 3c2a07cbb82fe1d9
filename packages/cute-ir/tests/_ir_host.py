"""A host-side (CPU) test program: SSA integers fed to cute_layout, lowered, run by the ExecutionEngine."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence

from cute_ir.values import Bool, Int
from mlir import ir, passmanager
from mlir.dialects import arith, func, llvm
from mlir.execution_engine import ExecutionEngine

_PIPELINE = "builtin.module(convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)"


class HostProgram:
    """func.func @main_<k>(in: !llvm.ptr, out: !llvm.ptr): load inputs, run the builders, store outputs."""

    def __init__(self, outputs_per_function: int = 64) -> None:
        self.ctx = ir.Context()
        self.loc = ir.Location.unknown(self.ctx)
        self.inputs: list[int] = []
        self.expected: list[int] = []
        self.labels: list[str] = []
        self.per_function = outputs_per_function
        self.functions: list[str] = []
        with self.ctx, self.loc:
            self.module = ir.Module.create()
        self._ip: ir.InsertionPoint | None = None
        self._first_output = 0
        self.i64 = None

    def _new_function(self) -> None:
        """Start a new @main_<k>(in, out) so that no function grows huge (LLVM compiles small ones faster)."""
        ptr = llvm.PointerType.get()
        if self._ip is not None:
            func.ReturnOp([])
            self._ip.__exit__(None, None, None)
        name = f"main_{len(self.functions)}"
        self.functions.append(name)
        with ir.InsertionPoint(self.module.body):
            f = func.FuncOp(name, ir.FunctionType.get([ptr, ptr], []))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        self.block = f.add_entry_block()
        self._ip = ir.InsertionPoint(self.block)
        self._ip.__enter__()

    def __enter__(self) -> HostProgram:
        self.ctx.__enter__()
        self.loc.__enter__()
        self.i64 = ir.IntegerType.get_signless(64)
        self._new_function()
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            func.ReturnOp([])
        self._ip.__exit__(*exc)
        self.loc.__exit__(*exc)
        self.ctx.__exit__(*exc)

    def case(self) -> None:
        """Mark the start of an independent case: may begin a new function (values never cross cases)."""
        if len(self.expected) - self._first_output >= self.per_function:
            self._first_output = len(self.expected)
            self._new_function()

    def input(self, value: int, bits: int = 64) -> Int:
        """A run-time integer holding `value`, loaded from the input buffer (i64, truncated for bits=32)."""
        k = len(self.inputs)
        self.inputs.append(value)
        p = llvm.getelementptr(llvm.PointerType.get(), self.block.arguments[0], [], [k], self.i64, None)
        v = llvm.load(self.i64, p)
        if bits == 32:
            v = arith.trunci(ir.IntegerType.get_signless(32), v)
        elif bits == 0:
            v = arith.index_cast(ir.IndexType.get(), v)
        return Int(v)

    def output(self, x: object, expected: int, label: str = "") -> None:
        """Store x (Int, Bool, Python int or bool) to the output buffer, to be compared with `expected`."""
        k = len(self.expected)
        self.expected.append(int(expected))
        self.labels.append(label)
        if isinstance(x, Int):
            v = x.value
            if v.type != self.i64:
                v = (
                    arith.index_cast(self.i64, v)
                    if isinstance(v.type, ir.IndexType)
                    else arith.extsi(self.i64, v)
                )
        elif isinstance(x, Bool):
            v = arith.extui(self.i64, x.value)
        elif isinstance(x, (bool, int)):
            v = arith.constant(self.i64, int(x))
        else:
            raise TypeError(f"output: cannot store {type(x).__name__}")
        p = llvm.getelementptr(llvm.PointerType.get(), self.block.arguments[1], [], [k], self.i64, None)
        llvm.store(v, p)

    def run(self) -> list[int]:
        """Lower, JIT, run; return the outputs."""
        with self.ctx:
            self.module.operation.verify()
            passmanager.PassManager.parse(_PIPELINE).run(self.module.operation)
            engine = ExecutionEngine(self.module, opt_level=0)
        n_in, n_out = max(1, len(self.inputs)), max(1, len(self.expected))
        inp = (ctypes.c_int64 * n_in)(*self.inputs)
        out = (ctypes.c_int64 * n_out)()
        pin, pout = ctypes.c_void_p(ctypes.addressof(inp)), ctypes.c_void_p(ctypes.addressof(out))
        for name in self.functions:
            engine.invoke(name, ctypes.pointer(pin), ctypes.pointer(pout))
        return list(out)[: len(self.expected)]

    def check(self) -> int:
        """Run and assert every output equals its expectation; return the number of checks."""
        got = self.run()
        bad = [(lab, g, e) for lab, g, e in zip(self.labels, got, self.expected, strict=True) if g != e]
        assert not bad, f"{len(bad)} of {len(got)} mismatches, first: {bad[:5]}"
        return len(got)


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

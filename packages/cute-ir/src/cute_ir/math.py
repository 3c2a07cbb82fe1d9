"""Math functions on float SSA values in kernels (exp, exp2, log, erf, tanh, sigmoid, sqrt, rsqrt, ...).

    from cute_ir import math as cm
    y = cm.tanh(x)                  # accurate: libdevice's __nv_tanhf, inlined
    y = cm.tanh(x, fast=True)       # fast: one tanh.approx.f32 (relative error 2**-10.987)
    v = cm.exp(frg.load())          # a fragment's Values, element by element

Each function takes an `ir.Value` of type f32, f16 or bf16 (f16/bf16 are computed in f32 and rounded back) or
a register fragment's `Values` of those dtypes, and emits at the current insertion point. Two families:

- accurate (default): libdevice's single-precision functions (`__nv_expf`, `__nv_erff`, ...). The call
  declares the function in the enclosing gpu.module; `cute_ir.stages.to_ptx` links `libdevice.10.bc` (the
  nvidia-nvvm wheel's, or CUTE_LIBDEVICE) through the module's `#nvvm.target<link = [...]>`; the backend
  resolves `__nvvm_reflect` (no flush to zero), inlines the bodies and leaves no call. The content hash of
  libdevice keys the compile cache (`cute_ir.versions`). `sqrt` is the IEEE `sqrt.rn.f32` instruction
  (libdevice's `__nv_sqrtf` would give `sqrt.approx` under the default reflect flags).
- fast (`fast=True`): PTX's approximate instructions (`ex2.approx.ftz.f32`, `lg2.approx.ftz.f32`,
  `tanh.approx.f32`, `rcp.approx.ftz.f32`, `rsqrt.approx.ftz.f32`, `sqrt.approx.ftz.f32`, `sin/cos.approx`)
  through NVVM intrinsics, or inline PTX where LLVM has none (tanh.approx). They flush subnormal inputs and
  results to zero. `erf`, `expm1` and `log1p` have no fast form (PTX has no instruction for them): asking for
  one is a ValueError.

`ACCURATE` and `FAST` map names to emitters; what each computes with, its error bound per family (asserted on
a GPU against float64 by cute-examples' math GPU test), its PTX cost and the instruction its fast form shows
are cute-nvarch's table `cute_nvarch.math_functions.MATH_FUNCTIONS` (a CPU test checks both against it).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, llvm

__all__ = [
    "ACCURATE",
    "FAST",
    "apply",
    "cos",
    "erf",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "rcp",
    "rsqrt",
    "sigmoid",
    "sin",
    "sqrt",
    "tanh",
]

_LOG2E = 1.4426950408889634  # log2(e)
_LN2 = 0.6931471805599453  # ln(2)


# --- emitters (f32 in, f32 out, at the current insertion point) ------------------------------------------


def _f32() -> ir.Type:
    return ir.F32Type.get()


def _c(v: float) -> ir.Value:
    return arith.constant(_f32(), v)


def _symbol_table() -> ir.Operation:
    """The gpu.module around the insertion point (else the outermost op), where libdevice is declared."""
    op = ir.InsertionPoint.current.block.owner.operation
    top = op
    while op is not None:
        if op.name == "gpu.module":
            return op
        top = op
        op = op.parent.operation if op.parent is not None else None
    return top


def _libdevice(fn: str) -> Callable[[ir.Value], ir.Value]:
    """An emitter calling libdevice's `fn` (f32 -> f32), declared once in the enclosing gpu.module."""

    def emit(x: ir.Value) -> ir.Value:
        table = _symbol_table()
        block = table.regions[0].blocks[0]
        if not any(
            op.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value == fn
            for op in block.operations
        ):
            with ir.InsertionPoint.at_block_begin(block), ir.Location.unknown():
                llvm.LLVMFuncOp(fn, ir.TypeAttr.get(ir.Type.parse("!llvm.func<f32 (f32)>")))
        return llvm.call(_f32(), [x], [], [], callee=fn)

    return emit


def _intrinsic(name: str) -> Callable[[ir.Value], ir.Value]:
    def emit(x: ir.Value) -> ir.Value:
        return llvm.call_intrinsic(_f32(), name, [x], [], [])

    return emit


def _tanh_approx(x: ir.Value) -> ir.Value:
    # LLVM 22 has no intrinsic for tanh.approx.f32 (sm_75+): inline PTX, without side effects (CSE-able)
    return llvm.inline_asm(_f32(), [x], "tanh.approx.f32 $0, $1;", "=f,f")


_ex2 = _intrinsic("llvm.nvvm.ex2.approx.ftz.f")
_lg2 = _intrinsic("llvm.nvvm.lg2.approx.ftz.f")
_rcp = _intrinsic("llvm.nvvm.rcp.approx.ftz.f")


def _exp_fast(x: ir.Value) -> ir.Value:
    return _ex2(arith.mulf(x, _c(_LOG2E)))


def _log_fast(x: ir.Value) -> ir.Value:
    return arith.mulf(_lg2(x), _c(_LN2))


def _sigmoid_accurate(x: ir.Value) -> ir.Value:
    e = _libdevice("__nv_expf")(arith.negf(x))
    return arith.divf(_c(1.0), arith.addf(_c(1.0), e))


def _sigmoid_fast(x: ir.Value) -> ir.Value:
    return _rcp(arith.addf(_c(1.0), _ex2(arith.mulf(x, _c(-_LOG2E)))))


# --- the implementations (the table of what they are and how accurate: cute_nvarch.math_functions) -----------

ACCURATE: dict[str, Callable[[ir.Value], ir.Value]] = {
    "exp": _libdevice("__nv_expf"),
    "exp2": _libdevice("__nv_exp2f"),
    "expm1": _libdevice("__nv_expm1f"),
    "log": _libdevice("__nv_logf"),
    "log2": _libdevice("__nv_log2f"),
    "log1p": _libdevice("__nv_log1pf"),
    "erf": _libdevice("__nv_erff"),
    "tanh": _libdevice("__nv_tanhf"),
    "sigmoid": _sigmoid_accurate,
    "sqrt": _intrinsic("llvm.nvvm.sqrt.rn.f"),  # libdevice's __nv_sqrtf is sqrt.approx under default reflect
    "rsqrt": _libdevice("__nv_rsqrtf"),
    "rcp": _libdevice("__nv_frcp_rn"),
    "sin": _libdevice("__nv_sinf"),
    "cos": _libdevice("__nv_cosf"),
}
FAST: dict[str, Callable[[ir.Value], ir.Value]] = {
    "exp": _exp_fast,
    "exp2": _ex2,
    "log": _log_fast,
    "log2": _lg2,
    "tanh": _tanh_approx,
    "sigmoid": _sigmoid_fast,
    "sqrt": _intrinsic("llvm.nvvm.sqrt.approx.ftz.f"),
    "rsqrt": _intrinsic("llvm.nvvm.rsqrt.approx.ftz.f"),
    "rcp": _rcp,
    "sin": _intrinsic("llvm.nvvm.sin.approx.ftz.f"),
    "cos": _intrinsic("llvm.nvvm.cos.approx.ftz.f"),
}


# --- application -------------------------------------------------------------------------------------------


def _scalar(f: Callable[[ir.Value], ir.Value], x: ir.Value, name: str) -> ir.Value:
    t = x.type
    if isinstance(t, ir.F32Type):
        return f(x)
    if isinstance(t, (ir.F16Type, ir.BF16Type)):
        return arith.truncf(t, f(arith.extf(_f32(), x)))
    raise TypeError(f"cute_ir.math.{name}: x must be an f32, f16 or bf16 scalar value, got {t}")


def apply(name: str, x: object, *, fast: bool = False) -> object:
    """The function `name` of x (an f32/f16/bf16 `ir.Value`, or a fragment's `Values`), accurate or fast."""
    from .tensor import Values

    if name not in ACCURATE:
        raise ValueError(f"cute_ir.math: unknown function {name!r}; one of {sorted(ACCURATE)}")
    if not isinstance(fast, bool):
        raise TypeError(f"cute_ir.math.{name}: fast must be a bool, got {fast!r}")
    emit = (FAST if fast else ACCURATE).get(name)
    if emit is None:
        raise ValueError(f"cute_ir.math.{name}: there is no fast form (PTX has no instruction for it); "
                         "use fast=False (libdevice)")
    if isinstance(x, Values):  # each element's type is checked like a scalar's
        return Values([_scalar(emit, v, name) for v in x.scalars()], x.dtype)
    if not isinstance(x, ir.Value):
        raise TypeError(
            f"cute_ir.math.{name}: x must be an ir.Value or Values, got {type(x).__name__} "
            "(use Python's math module for build-time constants)"
        )
    return _scalar(emit, x, name)


def exp(x: object, *, fast: bool = False) -> object:
    """e**x."""
    return apply("exp", x, fast=fast)


def exp2(x: object, *, fast: bool = False) -> object:
    """2**x."""
    return apply("exp2", x, fast=fast)


def expm1(x: object) -> object:
    """e**x - 1 (accurate near 0)."""
    return apply("expm1", x)


def log(x: object, *, fast: bool = False) -> object:
    """The natural logarithm."""
    return apply("log", x, fast=fast)


def log2(x: object, *, fast: bool = False) -> object:
    """The base-2 logarithm."""
    return apply("log2", x, fast=fast)


def log1p(x: object) -> object:
    """log(1 + x) (accurate near 0)."""
    return apply("log1p", x)


def erf(x: object) -> object:
    """The error function (libdevice only)."""
    return apply("erf", x)


def tanh(x: object, *, fast: bool = False) -> object:
    """The hyperbolic tangent."""
    return apply("tanh", x, fast=fast)


def sigmoid(x: object, *, fast: bool = False) -> object:
    """1 / (1 + e**-x)."""
    return apply("sigmoid", x, fast=fast)


def sqrt(x: object, *, fast: bool = False) -> object:
    """The square root."""
    return apply("sqrt", x, fast=fast)


def rsqrt(x: object, *, fast: bool = False) -> object:
    """1 / sqrt(x)."""
    return apply("rsqrt", x, fast=fast)


def rcp(x: object, *, fast: bool = False) -> object:
    """1 / x."""
    return apply("rcp", x, fast=fast)


def sin(x: object, *, fast: bool = False) -> object:
    """The sine (fast: bounded on [-pi, pi])."""
    return apply("sin", x, fast=fast)


def cos(x: object, *, fast: bool = False) -> object:
    """The cosine (fast: bounded on [-pi, pi])."""
    return apply("cos", x, fast=fast)

"""Math functions on float SSA values in kernels (exp, exp2, log, erf, tanh, sigmoid, sqrt, rsqrt, ...).

    from cute_ir import math as cm
    y = cm.tanh(x)                  # accurate: libdevice's __nv_tanhf, inlined (2 ulp)
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

`FUNCTIONS` is the one table of what each function computes with, its error bound per family (`Bound`: the
documented figure, asserted on a GPU against float64 by cute-examples' math GPU test over `domain`) and the
instruction its fast form shows in PTX (a CPU test checks it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, llvm

__all__ = [
    "FUNCTIONS",
    "Bound",
    "MathFunction",
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
_FLOATS = ("f32", "f16", "bf16")


@dataclass(frozen=True)
class Bound:
    """An error bound: |y - f(x)| <= max(abs, rel * |f(x)|, (ulp + ulp_per_x * |x|) * ulp_f32(f(x)))."""

    ulp: float = 0.0
    ulp_per_x: float = 0.0
    rel: float = 0.0
    abs: float = 0.0
    source: str = ""

    def allowed(self, x: float, exact: float) -> float:
        """The largest error the bound allows at input x with exact value `exact` (float64 arithmetic)."""
        import math as _m

        a = abs(exact)
        ulp = 2.0 ** (max(_m.frexp(a)[1] - 1, -126) - 23) if a > 0 else 2.0**-149
        return max(self.abs, self.rel * a, (self.ulp + self.ulp_per_x * abs(x)) * ulp)


@dataclass(frozen=True)
class MathFunction:
    """One function: its accurate and fast implementations, their bounds over `domain`, its fast PTX."""

    name: str
    accurate: str  # how the accurate form computes (a libdevice function, or a composition)
    accurate_error: Bound
    fast: str | None  # how the fast form computes (None: there is no fast form)
    fast_error: Bound | None
    fast_ptx: str | None  # an instruction the fast form's PTX shows
    domain: tuple[float, float]  # inputs over which the bounds are stated and tested
    log_spaced: bool = False  # test inputs spread log-uniformly over a positive domain
    emit_accurate: Callable[[ir.Value], ir.Value] | None = None
    emit_fast: Callable[[ir.Value], ir.Value] | None = None


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


# --- the table ---------------------------------------------------------------------------------------------

_GUIDE = "CUDA C++ Programming Guide, mathematical functions"
_DERIVED = "derived: the parts' bounds plus the roundings of the add and the division"


def _fn(name: str, accurate: str, acc: Bound, fast: str | None, fast_err: Bound | None, ptx: str | None,
        domain: tuple[float, float], emit_accurate: Callable, emit_fast: Callable | None,
        log_spaced: bool = False) -> MathFunction:
    return MathFunction(name, accurate, acc, fast, fast_err, ptx, domain, log_spaced, emit_accurate, emit_fast)


FUNCTIONS: dict[str, MathFunction] = {f.name: f for f in (
    _fn("exp", "libdevice __nv_expf", Bound(ulp=2, source=_GUIDE),
        "ex2.approx.ftz(x * log2 e)", Bound(ulp=2, ulp_per_x=1.173, source=_GUIDE + " (__expf)"),
        "ex2.approx.ftz.f32", (-87.0, 88.0), _libdevice("__nv_expf"), _exp_fast),
    _fn("exp2", "libdevice __nv_exp2f", Bound(ulp=2, source=_GUIDE),
        "ex2.approx.ftz(x)", Bound(ulp=2, source=_GUIDE + " (exp2f)"),
        "ex2.approx.ftz.f32", (-125.0, 127.0), _libdevice("__nv_exp2f"), _ex2),
    _fn("expm1", "libdevice __nv_expm1f", Bound(ulp=1, source=_GUIDE), None, None, None,
        (-20.0, 20.0), _libdevice("__nv_expm1f"), None),
    _fn("log", "libdevice __nv_logf", Bound(ulp=1, source=_GUIDE),
        "lg2.approx.ftz(x) * ln 2", Bound(ulp=3, abs=2**-21.41, source=_GUIDE + " (__logf)"),
        "lg2.approx.ftz.f32", (1e-30, 1e30), _libdevice("__nv_logf"), _log_fast, True),
    _fn("log2", "libdevice __nv_log2f", Bound(ulp=1, source=_GUIDE),
        "lg2.approx.ftz(x)", Bound(ulp=2, abs=2**-22, source=_GUIDE + " (__log2f)"),
        "lg2.approx.ftz.f32", (1e-30, 1e30), _libdevice("__nv_log2f"), _lg2, True),
    _fn("log1p", "libdevice __nv_log1pf", Bound(ulp=1, source=_GUIDE), None, None, None,
        (-0.99, 100.0), _libdevice("__nv_log1pf"), None),
    _fn("erf", "libdevice __nv_erff", Bound(ulp=2, source=_GUIDE), None, None, None,
        (-5.0, 5.0), _libdevice("__nv_erff"), None),
    _fn("tanh", "libdevice __nv_tanhf", Bound(ulp=2, source=_GUIDE),
        "tanh.approx.f32 (inline PTX, sm_75+)", Bound(rel=2**-10.987, source="PTX ISA, tanh.approx.f32"),
        "tanh.approx.f32", (-10.0, 10.0), _libdevice("__nv_tanhf"), _tanh_approx),
    _fn("sigmoid", "1 / (1 + __nv_expf(-x)), IEEE division", Bound(ulp=3, source=_DERIVED),
        "rcp.approx.ftz(1 + ex2.approx.ftz(-x * log2 e))", Bound(ulp=4, ulp_per_x=1.173, source=_DERIVED),
        "rcp.approx.ftz.f32", (-20.0, 20.0), _sigmoid_accurate, _sigmoid_fast),
    _fn("sqrt", "sqrt.rn.f32 (IEEE)", Bound(ulp=0.5, source="IEEE 754: correctly rounded"),
        "sqrt.approx.ftz(x)", Bound(ulp=1, source=_GUIDE + " (sqrtf, -prec-sqrt=false)"),
        "sqrt.approx.ftz.f32", (1e-30, 1e30), _intrinsic("llvm.nvvm.sqrt.rn.f"),
        _intrinsic("llvm.nvvm.sqrt.approx.ftz.f"), True),
    _fn("rsqrt", "libdevice __nv_rsqrtf", Bound(ulp=2, source=_GUIDE),
        "rsqrt.approx.ftz(x)", Bound(ulp=2, source=_GUIDE + " (rsqrtf)"),
        "rsqrt.approx.ftz.f32", (1e-30, 1e30), _libdevice("__nv_rsqrtf"),
        _intrinsic("llvm.nvvm.rsqrt.approx.ftz.f"), True),
    _fn("rcp", "libdevice __nv_frcp_rn (rcp.rn.f32)", Bound(ulp=0.5, source="IEEE 754: correctly rounded"),
        "rcp.approx.ftz(x)", Bound(ulp=1, source=_GUIDE + " (1/x, -prec-div=false)"),
        "rcp.approx.ftz.f32", (1e-30, 1e30), _libdevice("__nv_frcp_rn"), _rcp, True),
    _fn("sin", "libdevice __nv_sinf", Bound(ulp=2, source=_GUIDE),
        "sin.approx.ftz(x)", Bound(abs=2**-21.41, source=_GUIDE + " (__sinf, x in [-pi, pi])"),
        "sin.approx.ftz.f32", (-3.14159, 3.14159), _libdevice("__nv_sinf"),
        _intrinsic("llvm.nvvm.sin.approx.ftz.f")),
    _fn("cos", "libdevice __nv_cosf", Bound(ulp=2, source=_GUIDE),
        "cos.approx.ftz(x)", Bound(abs=2**-21.19, source=_GUIDE + " (__cosf, x in [-pi, pi])"),
        "cos.approx.ftz.f32", (-3.14159, 3.14159), _libdevice("__nv_cosf"),
        _intrinsic("llvm.nvvm.cos.approx.ftz.f")),
)}


# --- application -------------------------------------------------------------------------------------------


def _scalar(f: Callable[[ir.Value], ir.Value], x: ir.Value, name: str) -> ir.Value:
    t = x.type
    if isinstance(t, ir.F32Type):
        return f(x)
    if isinstance(t, (ir.F16Type, ir.BF16Type)):
        return arith.truncf(t, f(arith.extf(_f32(), x)))
    raise TypeError(f"cute_ir.math.{name}: x must be an f32, f16 or bf16 scalar value, got {t}")


def apply(name: str, x: object, *, fast: bool = False) -> object:
    """FUNCTIONS[name] of x (an f32/f16/bf16 `ir.Value`, or a fragment's `Values`), accurate or fast."""
    from .tensor import Values

    fn = FUNCTIONS.get(name)
    if fn is None:
        raise ValueError(f"cute_ir.math: unknown function {name!r}; one of {sorted(FUNCTIONS)}")
    if not isinstance(fast, bool):
        raise TypeError(f"cute_ir.math.{name}: fast must be a bool, got {fast!r}")
    emit = fn.emit_fast if fast else fn.emit_accurate
    if emit is None:
        raise ValueError(f"cute_ir.math.{name}: there is no fast form (PTX has no instruction for it); "
                         "use fast=False (libdevice)")
    if isinstance(x, Values):
        from .dtypes import numeric

        if numeric(x.dtype).mlir_memory_type not in _FLOATS:
            raise TypeError(f"cute_ir.math.{name}: Values must hold float32, float16 or bfloat16, got {x.dtype}")
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

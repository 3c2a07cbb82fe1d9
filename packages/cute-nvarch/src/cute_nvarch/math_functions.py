"""The math functions kernels call (cute_ir.math), as data: what each computes with, its error, its cost.

Two families per function: `accurate` (libdevice's single-precision functions, or an IEEE instruction) and
`fast` (PTX's approximate instructions; None where PTX has none, as for erf). Each `Bound` is the documented
figure (its `source` says whose) over the function's `domain`; cute-examples' math GPU test measures every
function against float64 on a GPU and asserts it. `ptx` is the static PTX instruction count of one call on
sm_90a, f32 (cute-ir's CPU test compiles each one and compares), `fast_ptx` an instruction the fast form shows.

Plain data (no MLIR, no CUDA), so a GPU host that runs kernels from an AOT bundle reads the same table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["FAMILIES", "MATH_FUNCTIONS", "Bound", "MathFunction", "family_functions", "math_table", "ulp_f32"]

FAMILIES = ("accurate", "fast")


def ulp_f32(y: float) -> float:
    """The spacing of float32 numbers at |y| (2**-149 at zero and among subnormals)."""
    a = abs(y)
    if a == 0 or not math.isfinite(a):
        return 2.0**-149
    return 2.0 ** (max(math.frexp(a)[1] - 1, -126) - 23)


@dataclass(frozen=True)
class Bound:
    """|y - f(x)| <= max(abs, rel * |f(x)|, (ulp + ulp_per_x * |x|) * ulp_f32(f(x))), f(x) the exact value.

    The CUDA Guide counts ulps from the correctly rounded result: its N ulp is N + 0.5 here."""

    ulp: float = 0.0
    ulp_per_x: float = 0.0
    rel: float = 0.0
    abs: float = 0.0
    source: str = ""

    def allowed(self, x: float, exact: float) -> float:
        """The largest error the bound allows at input x whose exact value is `exact`."""
        return max(self.abs, self.rel * abs(exact), (self.ulp + self.ulp_per_x * abs(x)) * ulp_f32(exact))

    def text(self) -> str:
        """The bound in words ("2 ulp", "rel 2^-10.99", "2 + 1.173 abs(x) ulp", "3 ulp; abs 2^-21.41")."""
        parts = []
        if self.ulp or self.ulp_per_x:
            u = f"{self.ulp:g}" + (f" + {self.ulp_per_x:g} abs(x)" if self.ulp_per_x else "")
            parts.append(f"{u} ulp")
        if self.rel:
            parts.append(f"rel 2^{math.log2(self.rel):.4g}")
        if self.abs:
            parts.append(f"abs 2^{math.log2(self.abs):.4g}")
        return "; ".join(parts) or "exact"


@dataclass(frozen=True)
class MathFunction:
    """One function: how each family computes it, its bounds over `domain`, its PTX cost per family."""

    name: str
    accurate: str
    accurate_error: Bound
    accurate_ptx: int
    fast: str | None
    fast_error: Bound | None
    fast_ptx: int | None
    fast_instruction: str | None
    domain: tuple[float, float]
    log_spaced: bool = False  # test inputs spread log-uniformly over a positive domain

    def error(self, family: str) -> Bound:
        """The bound of `family` ("accurate" or "fast"); ValueError where the function has no such form."""
        if family == "accurate":
            return self.accurate_error
        if family == "fast" and self.fast_error is not None:
            return self.fast_error
        raise ValueError(f"{self.name}: no {family!r} form (families: {self.families()})")

    def families(self) -> tuple[str, ...]:
        """The families this function has."""
        return FAMILIES if self.fast is not None else ("accurate",)


_GUIDE = "CUDA C++ Programming Guide"
_IEEE = "IEEE 754, correctly rounded"
_DERIVED = (
    "derived: 2**-24 |y| <= ulp_f32(y); accurate: __nv_expf 2.5 ulp, the add and rcp.rn 0.5 each (relative); "
    "fast: ex2.approx 2 ulp, rcp.approx 1, the add 0.5, and x * log2(e) rounded twice, 2 |x| ulp"
)


def _guide(ulp: float, what: str, **kw: float) -> Bound:
    """The Guide's figure for `what`: `ulp` from the correctly rounded result, so ulp + 0.5 from the exact one."""
    return Bound(ulp=ulp + 0.5, source=f"{_GUIDE}, {what}: {ulp:g} ulp (from the rounded result)", **kw)


_F = MathFunction

MATH_FUNCTIONS: dict[str, MathFunction] = {f.name: f for f in (
    _F("exp", "libdevice __nv_expf", _guide(2, "expf"), 12,
       "ex2.approx.ftz(x * log2 e)", _guide(2, "__expf: 2 + 1.173 |x|", ulp_per_x=1.173), 2,
       "ex2.approx.ftz.f32", (-87.0, 88.0)),
    _F("exp2", "libdevice __nv_exp2f", _guide(2, "exp2f"), 1,
       "ex2.approx.ftz(x)", _guide(2, "exp2f"), 1,
       "ex2.approx.ftz.f32", (-125.0, 127.0)),
    _F("expm1", "libdevice __nv_expm1f", _guide(1, "expm1f"), 27,
       None, None, None, None, (-20.0, 20.0)),
    _F("log", "libdevice __nv_logf", _guide(1, "logf"), 26,
       "lg2.approx.ftz(x) * ln 2", _guide(3, "__logf", abs=2**-21.41), 2,
       "lg2.approx.ftz.f32", (1e-30, 1e30), True),
    _F("log2", "libdevice __nv_log2f", _guide(1, "log2f"), 28,
       "lg2.approx.ftz(x)", _guide(2, "__log2f", abs=2**-22), 1,
       "lg2.approx.ftz.f32", (1e-30, 1e30), True),
    _F("log1p", "libdevice __nv_log1pf", _guide(1, "log1pf"), 28,
       None, None, None, None, (-0.99, 100.0)),
    _F("erf", "libdevice __nv_erff", _guide(2, "erff"), 28,
       None, None, None, None, (-5.0, 5.0)),
    _F("tanh", "libdevice __nv_tanhf", _guide(2, "tanhf"), 17,
       "tanh.approx.f32 (inline PTX; sm_75+)", Bound(rel=2**-10.987, source="PTX ISA tanh.approx.f32"), 1,
       "tanh.approx.f32", (-10.0, 10.0)),
    _F("sigmoid", "1 / (1 + __nv_expf(-x)), IEEE division", Bound(ulp=6, source=_DERIVED), 14,
       "rcp.approx.ftz(1 + ex2.approx.ftz(-x * log2 e))", Bound(ulp=7, ulp_per_x=2, source=_DERIVED), 4,
       "rcp.approx.ftz.f32", (-20.0, 20.0)),
    _F("sqrt", "sqrt.rn.f32", Bound(ulp=0.5, source=_IEEE), 1,
       "sqrt.approx.ftz(x)", _guide(1, "sqrtf without -prec-sqrt"), 1,
       "sqrt.approx.ftz.f32", (1e-30, 1e30), True),
    _F("rsqrt", "libdevice __nv_rsqrtf", _guide(2, "rsqrtf"), 1,
       "rsqrt.approx.ftz(x)", _guide(2, "rsqrtf"), 1,
       "rsqrt.approx.ftz.f32", (1e-30, 1e30), True),
    _F("rcp", "libdevice __nv_frcp_rn (rcp.rn.f32)", Bound(ulp=0.5, source=_IEEE), 1,
       "rcp.approx.ftz(x)", _guide(1, "1/x without -prec-div"), 1,
       "rcp.approx.ftz.f32", (1e-30, 1e30), True),
    _F("sin", "libdevice __nv_sinf", _guide(2, "sinf"), 101,
       "sin.approx.ftz(x)", Bound(abs=2**-21.41, source=_GUIDE + ", __sinf on [-pi, pi]"), 1,
       "sin.approx.ftz.f32", (-3.14159, 3.14159)),
    _F("cos", "libdevice __nv_cosf", _guide(2, "cosf"), 102,
       "cos.approx.ftz(x)", Bound(abs=2**-21.19, source=_GUIDE + ", __cosf on [-pi, pi]"), 1,
       "cos.approx.ftz.f32", (-3.14159, 3.14159)),
)}


def family_functions(family: str) -> tuple[str, ...]:
    """The names of the functions that have a `family` ("accurate" or "fast") form, in table order."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    return tuple(n for n, f in MATH_FUNCTIONS.items() if family in f.families())


def math_table() -> str:
    """The Markdown table of every function (cute-ir's README shows it; a test keeps it current)."""
    rows = [
        "| function | accurate (default) | error | PTX | fast (`fast=True`) | error | PTX | tested on |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in MATH_FUNCTIONS.values():
        fast = (f"`{f.fast}`", f.fast_error.text(), str(f.fast_ptx)) if f.fast_error is not None else ("-",) * 3
        dom = f"[{f.domain[0]:g}, {f.domain[1]:g}]" + (" (log-spaced)" if f.log_spaced else "")
        rows.append(f"| `{f.name}` | {f.accurate} | {f.accurate_error.text()} | {f.accurate_ptx} | "
                    f"{' | '.join(fast)} | {dom} |")
    return "\n".join(rows)

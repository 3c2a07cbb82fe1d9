"""The fused epilogue's arithmetic on float32 SSA values: `act(alpha * acc + beta * input + bias)` and SwiGLU.

Emitted at the current insertion point; the formulas, the math each activation uses and their error bounds
are `activation`'s table. `KERNEL_MATH` is what kernels use (cute_ir.math's fast exp2 and tanh); the CPU
test passes MLIR's `math` dialect instead and runs the same formulas with the ExecutionEngine against torch.

GELU's erf: erfc(|x| / sqrt 2) = 2^P(|x|), P a degree-5 polynomial fitted to log2 erfc on [0, 5.5]
(`scripts/fit_gelu_erfc.py`: a minimax fit of |2^P - erfc|, which is GELU's abs error over |x| / 2; past 5.5 it
keeps falling, so erfc goes to 0 with no clamp), one ex2.approx and five fmas, 9 instructions per value. The
negative side uses the complement directly (gelu(x) = x erfc(z) / 2), so the tail keeps its relative accuracy;
the positive side is x - x erfc(z) / 2; both as max(x, 0) - |x|/2 erfc(z), without a select. Before,
Abramowitz & Stegun 7.1.26 (erfc = poly(t) exp(-z^2), t = 1 / (1 + p z)) took an rcp.approx beside the ex2, two
of the special-function unit's 16 per SM per clock, and 15 instructions; libdevice's erff took 28.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cute_ir import math as cm
from cute_ir import scalar as S
from mlir import ir

from .activation import GELU_ERFC, GELU_TANH_A, GELU_TANH_C, check_activation

__all__ = ["KERNEL_MATH", "Math", "activate", "pre_activation", "swiglu"]

Unary = Callable[[ir.Value], ir.Value]


@dataclass(frozen=True)
class Math:
    """The functions the activations need (f32 -> f32 emitters)."""

    exp2: Unary
    tanh: Unary


KERNEL_MATH = Math(
    exp2=lambda x: cm.exp2(x, fast=True),
    tanh=lambda x: cm.tanh(x, fast=True),
)

# GELU's erfc polynomial evaluated at w = -|x| / 2 (the final fma's factor): activation.GELU_ERFC's c_k times (-2)^k
_GELU_ERFC_W = tuple(c * (-2.0) ** k for k, c in enumerate(GELU_ERFC))


def pre_activation(
    acc: ir.Value,
    *,
    alpha: ir.Value | None = None,
    addend: ir.Value | None = None,
    beta: ir.Value | None = None,
    bias: ir.Value | None = None,
) -> ir.Value:
    """alpha * acc + beta * addend + bias on f32 values (each term only when given; beta needs an addend)."""
    if beta is not None and addend is None:
        raise ValueError("pre_activation: beta needs an addend")
    x = acc if alpha is None else S.mul(alpha, acc)
    if addend is not None:
        x = S.add(x, addend) if beta is None else S.fma(beta, addend, x)
    if bias is not None:
        x = S.add(x, bias)
    return x


def activate(activation: str, x: ir.Value, math: Math = KERNEL_MATH) -> ir.Value:
    """`activation` (not swiglu: see `swiglu`) of the f32 value x."""
    activation = check_activation(activation)
    if activation == "identity":
        return x
    if activation == "relu":
        return S.maximum(x, S.f32(0.0))  # NaN-propagating, as torch.relu
    if activation == "gelu":
        return _gelu_erf(x, math)
    half_x = S.mul(x, S.f32(0.5))
    if activation == "silu":
        # x sigmoid(x) = x/2 (1 + tanh(x/2)): one tanh.approx (the epilogue's MUFU throughput binds: 16 per SM
        # per clock, where sigmoid's ex2 and rcp took two)
        return S.fma(half_x, math.tanh(half_x), half_x)
    if activation == "gelu_tanh":
        # sqrt(2/pi) (x + 0.044715 x^3) = x (c + (a c) x^2): mul, fma, mul; then x/2 (1 + t) = fma(x/2, t, x/2)
        inner = S.mul(x, S.fma(S.mul(x, x), S.f32(GELU_TANH_A * GELU_TANH_C), S.f32(GELU_TANH_C)))
        return S.fma(half_x, math.tanh(inner), half_x)
    raise ValueError(f"activate: {activation!r} pairs two values; use swiglu(gate, up)")


def _gelu_erf(x: ir.Value, math: Math) -> ir.Value:
    """0.5 x (1 + erf(x / sqrt 2)) through erfc(|x| / sqrt 2) (see the module doc)."""
    w = S.mul(S.abs_(x), S.f32(-0.5))
    p = S.f32(_GELU_ERFC_W[-1])
    for c in reversed(_GELU_ERFC_W[:-1]):
        p = S.fma(p, w, S.f32(c))
    # max(x, 0) - |x|/2 erfc(z): x erfc(z) / 2 for x < 0, x - x erfc(z) / 2 for x >= 0 (max keeps NaN); only x and w
    # live across the chain
    return S.fma(w, math.exp2(p), S.maximum(x, S.f32(0.0)))


def swiglu(gate: ir.Value, up: ir.Value, math: Math = KERNEL_MATH) -> ir.Value:
    """silu(gate) * up on f32 values."""
    return S.mul(activate("silu", gate, math), up)

"""The fused epilogue's arithmetic on float32 SSA values: `act(alpha * acc + beta * input + bias)` and SwiGLU.

Emitted at the current insertion point; the formulas, the math each activation uses and their error bounds
are `activation`'s table. `KERNEL_MATH` is what kernels use (cute_ir.math's fast exp2, rcp and tanh); the CPU
test passes MLIR's `math` dialect instead and runs the same formulas with the ExecutionEngine against torch.

GELU's erf is Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7 on the complement erfc(z) = poly(t) exp(-z^2),
t = 1 / (1 + p z), z = |x| / sqrt 2): one ex2.approx, one rcp.approx and a degree-5 polynomial, about 15
instructions per value where libdevice's erff takes 28 (it is the epilogue's most expensive activation). The
negative side uses the complement directly (gelu(x) = x erfc(z) / 2), so the tail keeps its relative
accuracy; the positive side is x - x erfc(z) / 2; both as x/2 + |x|/2 - |x|/2 erfc(z), without a select.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cute_ir import math as cm
from cute_ir import scalar as S
from mlir import ir

from .activation import GELU_TANH_A, GELU_TANH_C, SQRT1_2, check_activation

__all__ = ["KERNEL_MATH", "Math", "activate", "pre_activation", "swiglu"]

Unary = Callable[[ir.Value], ir.Value]


@dataclass(frozen=True)
class Math:
    """The functions the activations need (f32 -> f32 emitters)."""

    exp2: Unary
    rcp: Unary
    tanh: Unary


KERNEL_MATH = Math(
    exp2=lambda x: cm.exp2(x, fast=True),
    rcp=lambda x: cm.rcp(x, fast=True),
    tanh=lambda x: cm.tanh(x, fast=True),
)

# Abramowitz & Stegun 7.1.26: erfc(z) ~ (a1 t + ... + a5 t^5) exp(-z^2), t = 1 / (1 + p z), z >= 0
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_LOG2E = 1.4426950408889634


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
    half_x = S.mul(x, S.f32(0.5))
    if activation == "silu":
        # x sigmoid(x) = x/2 (1 + tanh(x/2)): one tanh.approx (the epilogue's MUFU throughput binds: 16 per SM
        # per clock, where sigmoid's ex2 and rcp took two)
        return S.fma(half_x, math.tanh(half_x), half_x)
    if activation == "gelu":
        return _gelu_erf(x, half_x, math)
    if activation == "gelu_tanh":
        # sqrt(2/pi) (x + 0.044715 x^3) = x (c + (a c) x^2): mul, fma, mul; then x/2 (1 + t) = fma(x/2, t, x/2)
        inner = S.mul(x, S.fma(S.mul(x, x), S.f32(GELU_TANH_A * GELU_TANH_C), S.f32(GELU_TANH_C)))
        return S.fma(half_x, math.tanh(inner), half_x)
    raise ValueError(f"activate: {activation!r} pairs two values; use swiglu(gate, up)")


def _gelu_erf(x: ir.Value, half_x: ir.Value, math: Math) -> ir.Value:
    """0.5 x (1 + erf(x / sqrt 2)) through erfc(|x| / sqrt 2) (see the module doc)."""
    t = math.rcp(S.fma(S.abs_(x), S.f32(SQRT1_2 * _AS_P), S.f32(1.0)))  # 1 / (1 + p z)
    poly = S.f32(-_AS_A[-1])  # the polynomial negated: its product below is -erfc(z) with no extra negation
    for a in reversed(_AS_A[:-1]):
        poly = S.fma(poly, t, S.f32(-a))
    # exp(-z^2) = 2^(-x^2 log2(e) / 2)
    e = math.exp2(S.mul(x, S.mul(x, S.f32(-0.5 * _LOG2E))))
    minus_erfc = S.mul(S.mul(poly, t), e)
    # x/2 + |x|/2 - |x|/2 erfc(z): x erfc(z) / 2 for x < 0 (x/2 + |x|/2 is exactly 0), x - x erfc(z) / 2 for x >= 0
    # (exactly x), one fma and one add where a compare and a select took two more instructions
    half_ax = S.abs_(half_x)
    return S.fma(half_ax, minus_erfc, S.add(half_x, half_ax))


def swiglu(gate: ir.Value, up: ir.Value, math: Math = KERNEL_MATH) -> ir.Value:
    """silu(gate) * up on f32 values."""
    return S.mul(activate("silu", gate, math), up)

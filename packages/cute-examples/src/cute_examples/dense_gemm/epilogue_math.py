"""The fused epilogue's arithmetic on float32 SSA values: `act(alpha * acc + beta * input + bias)` and SwiGLU.

Emitted at the current insertion point; the formulas, the math each activation uses and their error bounds
are `activation`'s table. `KERNEL_MATH` is what kernels use (cute_ir.math: libdevice's erf, the fast tanh and
sigmoid); the CPU test passes MLIR's `math` dialect instead and runs the same formulas with the
ExecutionEngine against torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cute_ir import math as cm
from mlir import ir
from mlir.dialects import arith

from .activation import GELU_TANH_A, GELU_TANH_C, SQRT1_2, check_activation

__all__ = ["KERNEL_MATH", "Math", "activate", "pre_activation", "swiglu"]

Unary = Callable[[ir.Value], ir.Value]


@dataclass(frozen=True)
class Math:
    """The three functions the activations need (f32 -> f32 emitters)."""

    erf: Unary
    tanh: Unary
    sigmoid: Unary


KERNEL_MATH = Math(
    erf=cm.erf,
    tanh=lambda x: cm.tanh(x, fast=True),
    sigmoid=lambda x: cm.sigmoid(x, fast=True),
)


def _c(v: float) -> ir.Value:
    return arith.constant(ir.F32Type.get(), v)


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
    x = acc if alpha is None else arith.mulf(alpha, acc)
    if addend is not None:
        x = arith.addf(x, addend if beta is None else arith.mulf(beta, addend))
    if bias is not None:
        x = arith.addf(x, bias)
    return x


def activate(activation: str, x: ir.Value, math: Math = KERNEL_MATH) -> ir.Value:
    """`activation` (not swiglu: see `swiglu`) of the f32 value x."""
    activation = check_activation(activation)
    if activation == "identity":
        return x
    if activation == "relu":
        return arith.maximumf(x, _c(0.0))  # NaN-propagating, as torch.relu
    if activation == "silu":
        return arith.mulf(x, math.sigmoid(x))
    half_x = arith.mulf(x, _c(0.5))
    if activation == "gelu":
        t = math.erf(arith.mulf(x, _c(SQRT1_2)))
    elif activation == "gelu_tanh":
        inner = arith.mulf(arith.mulf(x, x), _c(GELU_TANH_A))  # 0.044715 x^2
        inner = arith.mulf(arith.mulf(x, arith.addf(inner, _c(1.0))), _c(GELU_TANH_C))
        t = math.tanh(inner)
    else:
        raise ValueError(f"activate: {activation!r} pairs two values; use swiglu(gate, up)")
    return arith.mulf(half_x, arith.addf(t, _c(1.0)))


def swiglu(gate: ir.Value, up: ir.Value, math: Math = KERNEL_MATH) -> ir.Value:
    """silu(gate) * up on f32 values."""
    return arith.mulf(activate("silu", gate, math), up)

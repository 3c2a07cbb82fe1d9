"""The fused epilogue's activations as data: names, how each is computed, its error bound, torch references,
and the SwiGLU weight layout.

The epilogue computes `D = act(alpha * acc + beta * input + bias)` in float32 registers, then rounds once to
C's type (`epilogue_math` emits it). `act` is one of `ACTIVATIONS`:

| activation | formula (float32) | math (cute_ir.math) | abs error bound vs the exact function at x |
| --- | --- | --- | --- |
| identity | x | - | 0 |
| relu | max(x, 0) (NaN stays NaN) | - | 0 |
| gelu | 0.5 x (1 + erf(x / sqrt 2)) (torch's) | erfc = 2^P(abs(x)), P quintic: `ex2.approx` | 2^-20 abs(x) |
| gelu_tanh | 0.5 x (1 + tanh(0.79788 (x + 0.044715 x^3))) | `tanh.approx.f32` | 2^-11 abs(x) + 2^-20 abs(x) (1 + x^2) |
| silu | x sigmoid(x) = x/2 (1 + tanh(x/2)) | `tanh.approx.f32` | 2^-11.98 abs(x) + 2^-21 abs(x) |
| swiglu | silu(g) u on interleaved gate/up columns | as silu | abs(u) silu(g)'s bound + 2^-23 abs(silu(g) u) |

The bounds follow from cute-nvarch's `MATH_FUNCTIONS` table (tanh.approx relative 2^-10.987, ex2.approx 2.5 ulp)
and, for GELU, the fitted erfc (`epilogue_math`; `scripts/fit_gelu_erfc.py` measures the float32 formula at
2^-21.26 abs(x), ex2.approx's 2.5 ulp adds 2^-23.7 abs(x)), plus the float32 roundings of the formula;
`error_bound` evaluates them
and the GPU tests assert them (with the pre-activation's own GEMM error carried through the slope, at most
1.13 for gelu, 1.1 for silu, 1 for relu). The fast forms flush subnormals to zero, far below these bounds.

SwiGLU (`gemm(x, w, activation="swiglu")`, w the fused gate/up weight): B's N columns hold gate and up in
blocks of `SWIGLU_BLOCK` = 8: g0..g7, u0..u7, g8..g15, u8..u15, ... Every wgmma accumulator 8-column group
is one block, so group 2j is gate and group 2j+1 up for the same 8 output columns, and the output keeps the
accumulator's per-thread layout at half the width: C is (M, N/2). `interleave_gate_up` builds that weight
(and bias) from torch's two; N/2 must be a multiple of 8.

No MLIR here: a GPU host that runs kernels from a bundle checks results with the same references.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "ACTIVATIONS",
    "BIAS_MODES",
    "GELU_ERFC",
    "SLOPE",
    "SWIGLU_BLOCK",
    "check_activation",
    "error_bound",
    "interleave_gate_up",
    "reference",
    "split_gate_up",
]

ACTIVATIONS = ("identity", "relu", "gelu", "gelu_tanh", "silu", "swiglu")
# where a bias vector runs: None (no bias), "n" (one value per output column), "m" (one per output row)
BIAS_MODES = (None, "n", "m")
SWIGLU_BLOCK = 8  # columns per gate/up block of the fused weight: one wgmma accumulator group
# the largest |act'(x)|: how much of the pre-activation's error reaches the output
SLOPE = {"identity": 1.0, "relu": 1.0, "gelu": 1.13, "gelu_tanh": 1.13, "silu": 1.1}

GELU_TANH_C = math.sqrt(2.0 / math.pi)
GELU_TANH_A = 0.044715
# GELU's erfc: erfc(u / sqrt 2) ~ 2^(c0 + c1 u + ... + c5 u^5) for u = |x|, fitted on [0, 5.5] by
# scripts/fit_gelu_erfc.py (which checks that past 5.5 the polynomial keeps falling below -24, so the kernel needs no
# clamp); tests/test_gelu_erfc_fit.py refits and compares
GELU_ERFC = (-8.350105487529023e-07, -1.1510831631242482, -0.45927661030608374, -0.052538123784606934,
             0.007387263283033788, -0.000518870996992521)


def check_activation(activation: object, what: str = "activation") -> str:
    """The canonical activation name (None means "identity"); ValueError naming `what` for any other value."""
    if activation is None:
        return "identity"
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"{what} must be None or one of {ACTIVATIONS}, got {activation!r}")
    return activation


def error_bound(activation: str, x: Any, u: Any = None) -> Any:
    """The documented abs error bound of our float32 `activation` at x (numbers or tensors; swiglu: gate x, up u)."""
    a = abs(x)
    if activation in ("identity", "relu"):
        return 0.0 * a
    if activation == "gelu":
        return 2.0**-20 * a
    if activation == "gelu_tanh":
        return 2.0**-11 * a + 2.0**-20 * a * (1 + a * a)
    # x/2 tanh(x/2) + x/2: tanh's relative 2^-10.987 times |x/2|, then the mul and fma roundings
    silu = 2.0**-11.98 * a + 2.0**-21 * a
    if activation == "silu":
        return silu
    if activation == "swiglu":
        return abs(u) * silu + 2.0**-23 * abs(_silu(x) * u)
    raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")


def _silu(x: Any) -> Any:
    if isinstance(x, (int, float)):
        return x / (1 + math.exp(-x)) if x > -80 else 0.0
    import torch

    return torch.nn.functional.silu(x)


def reference(x: Any, activation: str) -> Any:
    """torch's `activation` of the pre-activation tensor x (swiglu: x holds the interleaved gate/up columns)."""
    import torch.nn.functional as F

    activation = check_activation(activation)
    if activation == "identity":
        return x
    if activation == "relu":
        return F.relu(x)
    if activation == "gelu":
        return F.gelu(x)
    if activation == "gelu_tanh":
        return F.gelu(x, approximate="tanh")
    if activation == "silu":
        return F.silu(x)
    g, u = split_gate_up(x, dim=-1)
    return F.silu(g) * u


def _blocks(n: int, what: str) -> int:
    if n % SWIGLU_BLOCK:
        raise ValueError(f"{what} has {n} rows; SwiGLU's gate/up width must be a multiple of {SWIGLU_BLOCK}")
    return n // SWIGLU_BLOCK


def interleave_gate_up(gate: Any, up: Any) -> Any:
    """The fused SwiGLU weight (or bias) from torch's gate and up ones: rows in blocks of 8, g0..g7, u0..u7, ...

    gate and up are (N, K) `nn.Linear` weights (or (N,) biases) of one dtype and device; the result is (2N, K)
    (or (2N,)), so that `gemm(x, w.t(), activation="swiglu")` is `silu(x @ gate.t()) * (x @ up.t())`.
    """
    import torch

    for t, what in ((gate, "gate"), (up, "up")):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{what} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() not in (1, 2):
            raise ValueError(f"{what} must be an (N, K) weight or an (N,) bias, got {t.dim()}-D")
    if gate.shape != up.shape:
        raise ValueError(f"gate and up must have one shape, got {tuple(gate.shape)} and {tuple(up.shape)}")
    if gate.dtype != up.dtype or gate.device != up.device:
        raise ValueError(f"gate and up must share dtype and device, got {gate.dtype}/{gate.device} and "
                         f"{up.dtype}/{up.device}")
    nb = _blocks(gate.shape[0], "gate")
    rest = tuple(gate.shape[1:])
    pair = torch.stack([gate.reshape(nb, SWIGLU_BLOCK, *rest), up.reshape(nb, SWIGLU_BLOCK, *rest)], dim=1)
    return pair.reshape(2 * gate.shape[0], *rest).contiguous()


def split_gate_up(fused: Any, dim: int = 0) -> tuple[Any, Any]:
    """(gate, up) of an interleaved tensor along `dim` (the inverse of `interleave_gate_up`); views."""
    n = fused.shape[dim]
    if n % (2 * SWIGLU_BLOCK):
        raise ValueError(f"the fused gate/up dimension must be a multiple of {2 * SWIGLU_BLOCK}, got {n}")
    d = dim % fused.dim()
    shape = (*fused.shape[:d], n // (2 * SWIGLU_BLOCK), 2, SWIGLU_BLOCK, *fused.shape[d + 1:])
    blocks = fused.reshape(shape)
    g = blocks.select(d + 1, 0).reshape(*fused.shape[:d], n // 2, *fused.shape[d + 1:])
    u = blocks.select(d + 1, 1).reshape(*fused.shape[:d], n // 2, *fused.shape[d + 1:])
    return g, u

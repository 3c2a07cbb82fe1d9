"""gemm()'s epilogue arguments checked before any GPU work: bias, input, alpha, beta, activation, pre_activation_out.

`check_epilogue(a, b, out, c_dtype, bias=..., input=..., alpha=..., beta=..., activation=...)` raises
ValueError/TypeError naming the argument and the rule, and returns the `EpilogueArgs` the plan uses:

- `activation`: None or one of `activation.ACTIVATIONS`. "swiglu" needs b's N to be a multiple of 16 (gate/up
  blocks of 8, `activation.interleave_gate_up`), makes C (.., M, N/2) and takes no `input`.
- `alpha`, `beta`: real numbers (`bool` and complex are TypeErrors). `beta` defaults to 1 when `input` is given
  (torch.addmm's default) and may only be given with `input`; `beta == 0` does not read `input` (BLAS and
  torch: a NaN there stays out of the result). alpha == 1 multiplies nothing.
- `bias`: a CUDA tensor of C's dtype on a's device, varying along one output mode: (N,), (1, N) or (1, 1, N)
  is one value per output column ("n"), (M, 1) or (1, M, 1) one per output row ("m"); N counts the
  accumulator's columns (b's N; SwiGLU: the interleaved gate/up bias). Any stride (it is a run-time
  parameter; 0 broadcasts one value). A per-batch bias is an `input`.
- `input`: a CUDA tensor of C's dtype on a's device that broadcasts to C's shape as in torch.addmm / baddbmm
  (`broadcast_strides`: no copy, broadcast modes get stride 0). It may be `out` itself (same address, shape and
  strides: each element is read before it is written, by the thread that writes it); any other overlap
  with `out` is checked per call by the plan.
- `pre_activation_out` (cuBLASLt's EPILOGUE_AUX output, Transformer Engine's `pre_gelu_out`, CUTLASS's aux store;
  named after torch's `out=`): a CUDA tensor of C's dtype on a's device and of C's exact shape (.., M, N) that
  receives `alpha * a @ b + beta * input + bias`, the value the activation is applied to, while `out` receives
  the activated value. Any strides whose elements do not overlap each other (the kernel's TMA stores write it as it
  is when a descriptor of C's major takes it, as C's own rules say; else a padded copy of that major, copied into
  it after the launch: `launch_plan.aux_layout`); its overlap with out, a, b, bias or input is checked per call by
  the plan (never allowed). Not with
  activation "swiglu" (its pre-activation is the (M, N) interleaved gate/up product, twice C's width: compute it
  with a plain gemm into that shape) nor an 8-bit C.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any

from .activation import SWIGLU_BLOCK, check_activation
from .spec import canonical_dtype

__all__ = ["EpilogueArgs", "broadcast_strides", "check_epilogue", "check_pre_activation_out"]


@dataclass(frozen=True)
class EpilogueArgs:
    """A checked epilogue: the config's fields (activation, bias mode, input and alpha flags) and the values."""

    activation: str
    bias_mode: str | None
    has_input: bool
    has_alpha: bool
    alpha: float
    beta: float
    bias: Any
    input: Any
    input_strides: tuple[int, ...] | None
    n_out: int
    aux: Any = None  # pre_activation_out

    @property
    def config_fields(self) -> dict:
        """The GemmConfig fields of this epilogue."""
        return {"activation": self.activation, "bias": self.bias_mode, "has_input": self.has_input,
                "has_alpha": self.has_alpha, "has_aux": self.aux is not None}

    @property
    def fused(self) -> bool:
        """Whether the epilogue does anything beyond storing the accumulators."""
        return (self.activation != "identity" or self.bias_mode is not None or self.has_input or self.has_alpha
                or self.aux is not None)


def _number(v: object, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, Real):
        raise TypeError(f"{what} must be a real number (int or float), got {type(v).__name__} {v!r}")
    f = float(v)
    if math.isnan(f):
        raise ValueError(f"{what} must not be NaN")
    return f


def _tensor_rules(t: Any, what: str, a: Any, c_dtype: str) -> None:
    if not all(hasattr(t, f) for f in ("shape", "stride", "dtype", "data_ptr", "device")):
        raise TypeError(f"{what} must be a torch.Tensor or None, got {type(t).__name__}")
    if not getattr(t, "is_cuda", False):
        raise ValueError(f"{what} must be a CUDA tensor")
    if t.device != a.device:
        raise ValueError(f"{what} must be on a's device {a.device}, got {t.device}")
    try:
        dt = canonical_dtype(str(t.dtype), f"{what}.dtype")
    except ValueError:
        dt = str(t.dtype)
    if dt != c_dtype:
        raise ValueError(f"{what}.dtype must be {c_dtype} (C's dtype; bfloat16 for an 8-bit C), got {t.dtype}")


def _bias_mode(bias: Any, m: int, n: int, batched: bool) -> str:
    shape = tuple(bias.shape)
    if batched and len(shape) == 3:
        if shape[0] != 1:
            raise ValueError(f"bias must not vary along the batch (got shape {shape}); pass a per-batch addend "
                             "as input=")
        shape = shape[1:]
    if len(shape) == 1 and shape[0] in (n, 1):
        return "n"
    if len(shape) == 2 and shape[0] == 1 and shape[1] in (n, 1):
        return "n"
    if len(shape) == 2 and shape[1] == 1 and shape[0] == m:
        return "m"
    rows = "(N,), (1, N), (1, 1, N) along N or (M, 1), (1, M, 1) along M" if batched else \
        "(N,) or (1, N) along N, (M, 1) along M"
    raise ValueError(f"bias must be a vector of shape {rows} with M = {m}, N = {n}; got {tuple(bias.shape)}")


def broadcast_strides(shape: tuple[int, ...], strides: tuple[int, ...], to: tuple[int, ...], what: str) -> tuple:
    """The element strides of a tensor of `shape`/`strides` broadcast to `to` (torch's rules; 0 where it repeats)."""
    if len(shape) > len(to):
        raise ValueError(f"{what} must broadcast to C's shape {to}, got {shape}")
    pad = len(to) - len(shape)
    out = []
    for i, ext in enumerate(to):
        if i < pad:
            out.append(0)
            continue
        e, s = shape[i - pad], strides[i - pad]
        if e == ext:
            out.append(s if ext > 1 else 0)
        elif e == 1:
            out.append(0)
        else:
            raise ValueError(f"{what} must broadcast to C's shape {to}, got {shape}")
    return tuple(out)


def _distinct_elements(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether no two indices of a tensor of this shape and strides address one element (a sufficient rule: each
    mode's stride, in increasing order, reaches past everything the smaller modes span)."""
    span = 0
    for ext, st in sorted(((e, abs(s)) for e, s in zip(shape, strides, strict=True) if e > 1), key=lambda x: x[1]):
        if st <= span:
            return False
        span += (ext - 1) * st
    return True


def check_pre_activation_out(t: Any, a: Any, c_dtype: str, activation: str, shape: tuple[int, ...]) -> None:
    """Check `pre_activation_out` against C's `shape` (ValueError/TypeError naming the rule); the plan takes its layout
    from the tensor itself (`launch_plan.aux_layout`)."""
    if activation == "swiglu":
        raise ValueError("pre_activation_out is not supported with activation='swiglu': its pre-activation is the "
                         "(M, N) interleaved gate/up product, twice out's width (compute it with a plain gemm)")
    _tensor_rules(t, "pre_activation_out", a, c_dtype)
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"pre_activation_out must have out's shape {tuple(shape)}, got {tuple(t.shape)}")
    strides = tuple(t.stride())
    if not _distinct_elements(tuple(t.shape), strides):
        raise ValueError(f"pre_activation_out's elements overlap (shape {tuple(t.shape)}, strides {strides}); it needs "
                         "one memory location per element")


def check_epilogue(
    a: Any,
    b: Any,
    out: Any,
    c_dtype: str,
    *,
    bias: Any = None,
    input: Any = None,  # noqa: A002 - torch.addmm's name
    alpha: object = 1.0,
    beta: object = None,
    activation: object = None,
    pre_activation_out: Any = None,
) -> EpilogueArgs:
    """The checked epilogue of gemm(a, b, out, ...) (a, b already checked; c_dtype canonical)."""
    act = check_activation(activation)
    alpha_f = _number(alpha, "alpha")
    if beta is not None and input is None:
        raise ValueError("beta scales input; pass input= with it (or leave beta None)")
    beta_f = 1.0 if beta is None else _number(beta, "beta")
    m, n = a.shape[-2], b.shape[-1]
    n_out = n
    if act == "swiglu":
        if n % (2 * SWIGLU_BLOCK):
            raise ValueError(
                f"activation='swiglu' needs b's N ({n}) to be a multiple of {2 * SWIGLU_BLOCK}: gate and up "
                f"columns interleaved in blocks of {SWIGLU_BLOCK} (activation.interleave_gate_up)"
            )
        if input is not None:
            raise ValueError("input= is not supported with activation='swiglu'")
        n_out = n // 2
    batched = a.dim() == 3
    bias_mode = None
    if bias is not None:
        _tensor_rules(bias, "bias", a, c_dtype)
        bias_mode = _bias_mode(bias, m, n, batched)
    strides = None
    if input is not None:
        _tensor_rules(input, "input", a, c_dtype)
        strides = broadcast_strides(tuple(input.shape), tuple(input.stride()), (*a.shape[:-1], n_out), "input")
        if out is not None and input.data_ptr() == out.data_ptr() and (
            tuple(input.shape) != tuple(out.shape) or tuple(input.stride()) != tuple(out.stride())
        ):
            raise ValueError("input may be out itself (same shape and strides) or not overlap it; "
                             "it shares out's address with another geometry")
    has_input = strides is not None and beta_f != 0.0
    if pre_activation_out is not None:
        check_pre_activation_out(pre_activation_out, a, c_dtype, act, (*a.shape[:-1], n_out))
    return EpilogueArgs(
        activation=act,
        bias_mode=bias_mode,
        has_input=has_input,
        has_alpha=alpha_f != 1.0,
        alpha=alpha_f,
        beta=beta_f,
        bias=bias,
        input=input if has_input else None,
        input_strides=strides if has_input else None,
        n_out=n_out,
        aux=pre_activation_out,
    )

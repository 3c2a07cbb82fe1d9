"""gemm() and elementwise_add() as PyTorch operators: `torch.ops.cute.*` for torch.compile, export and CUDA graphs.

    torch.ops.cute.gemm(a, b, *, bias=None, ...) -> Tensor       (allocates: gemm()'s padded leading dimension)
    torch.ops.cute.gemm_out(a, b, out, *, ...) -> ()             (writes out)
    torch.ops.cute.elementwise_add(a, b) -> Tensor
    torch.ops.cute.elementwise_add_out(a, b, out) -> ()

Registered with `torch.library.Library("cute", "DEF")` define/impl (a `@torch.library.custom_op` adds tens of
microseconds of host time per call). The kernel side of each op is the public function on torch's current
stream (no stream in the schemas); the fake side (`register_fake`, also the Meta kernel) checks the arguments
with the public functions' own rules, touches no driver, takes symbolic sizes and allocates what the real op
does (`launch_plan.padded` for gemm's output). The public gemm()/elementwise_add() keep their eager host path
and route to these operators only while torch.compile or torch.export traces them (`tracing`).
Importing `cute_examples.dense_gemm` or `cute_examples.elementwise_add.elementwise_add` imports this module.

gemm's keyword arguments are one table, `tracing.GEMM_KWARGS` (name, schema type, default): a new keyword of
gemm() is a row there.
"""

from __future__ import annotations

from typing import Any

import torch

from .dense_gemm.epilogue_args import check_epilogue
from .dense_gemm.launch_plan import _check as _check_gemm
from .dense_gemm.launch_plan import gemm, padded
from .elementwise_add import host as _add_host
from .torch_types import torch_dtype
from .tracing import GEMM_KWARGS, compiling

__all__ = ["SCHEMAS", "gemm_schema"]

def gemm_schema(name: str, out: bool) -> str:
    """The schema of cute::gemm (out=False: returns a new tensor) or cute::gemm_out (mutates out)."""
    kwargs = ", ".join(f"{t} {n}={d}" for n, t, d in GEMM_KWARGS if t is not None)
    if out:
        return f"{name}(Tensor a, Tensor b, Tensor(a!) out, *, {kwargs}) -> ()"
    return f"{name}(Tensor a, Tensor b, *, {kwargs}) -> Tensor"


# op name -> schema (without the namespace)
SCHEMAS = {
    "gemm": gemm_schema("gemm", out=False),
    "gemm_out": gemm_schema("gemm_out", out=True),
    "elementwise_add": "elementwise_add(Tensor a, Tensor b) -> Tensor",
    "elementwise_add_out": "elementwise_add_out(Tensor a, Tensor b, Tensor(a!) out) -> ()",
}


def _gemm_real(a: Any, b: Any, **kwargs: Any) -> Any:
    return gemm(a, b, None, **kwargs)


def _gemm_out_real(a: Any, b: Any, out: Any, **kwargs: Any) -> None:
    gemm(a, b, out, **kwargs)


def _gemm_fake(a: Any, b: Any, *, bias: Any = None, input: Any = None, alpha: float = 1.0,  # noqa: A002
               beta: float | None = None, activation: str | None = None, c_dtype: Any = None, **_: Any) -> Any:
    """gemm()'s checks (shapes, dtypes, devices, epilogue) and its output: padded rows, narrowed to N."""
    _, cd = _check_gemm(a, b, None, c_dtype, activation == "swiglu")
    n = b.shape[-1]
    if (bias, input, beta, activation) != (None, None, None, None) or alpha != 1.0:
        n = check_epilogue(a, b, None, cd, bias=bias, input=input, alpha=alpha, beta=beta,
                           activation=activation).n_out
    shape = (*a.shape[:-1], n)
    dtype = torch_dtype(cd)
    return torch.empty(padded(shape, dtype)[0], dtype=dtype, device=a.device).narrow(-1, 0, n)


def _gemm_out_fake(a: Any, b: Any, out: Any, *, activation: str | None = None, c_dtype: Any = None,
                   **_: Any) -> None:
    _check_gemm(a, b, out, c_dtype, activation == "swiglu")


def _add_real(a: Any, b: Any) -> Any:
    return _add_host.elementwise_add(a, b)


def _add_out_real(a: Any, b: Any, out: Any) -> None:
    _add_host.elementwise_add(a, b, out)


def _add_fake(a: Any, b: Any) -> Any:
    """elementwise_add()'s checks and its output (`host._check` allocates it)."""
    return _add_host._check(a, b, None)


def _add_out_fake(a: Any, b: Any, out: Any) -> None:
    want = _add_fake(a, b)
    _add_host._check_tensor("out", out)
    if out.dtype != want.dtype or out.device != want.device or tuple(out.shape) != tuple(want.shape):
        raise ValueError(f"out is {out.dtype} {tuple(out.shape)} on {out.device} but a + b is {want.dtype} "
                         f"{tuple(want.shape)} on {want.device}")


_lib = torch.library.Library("cute", "DEF")
for _name, _schema in SCHEMAS.items():
    _lib.define(_schema)
_IMPLS = {
    "gemm": (_gemm_real, _gemm_fake),
    "gemm_out": (_gemm_out_real, _gemm_out_fake),
    "elementwise_add": (_add_real, _add_fake),
    "elementwise_add_out": (_add_out_real, _add_out_fake),
}
for _name, (_real, _fake) in _IMPLS.items():
    # any device reaches the public function, whose error names the argument (CPU tensors included)
    _lib.impl(_name, _real, "CompositeExplicitAutograd")
    torch.library.register_fake(f"cute::{_name}", _fake, lib=_lib)
compiling()  # binds torch.compiler.is_compiling now, outside any trace

"""Routing of the public gemm() and elementwise_add() while torch.compile / torch.export traces them: the calls
become the `cute::` operators (registered by `torch_ops`) instead of the eager host path.

No torch import at import time (the GEMM's CLI and compile paths run without torch): the first `compiling()`
call imports it (the caller holds tensors, so torch is loaded) and binds `torch.compiler.is_compiling`.
`GEMM_KWARGS` is gemm()'s keyword table in the operators' schemas: a new keyword of gemm() is a row here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["GEMM_KWARGS", "compiling", "traced_add", "traced_gemm"]

# gemm()'s keyword arguments in the cute::gemm / cute::gemm_out schemas: (name, schema type, default), in order;
# type None: an eager-only output that gemm() refuses while traced, kept out of the schemas (a mutable optional
# argument makes inductor's functionalization wrap the op's result, which its lowering then cannot index)
GEMM_KWARGS: tuple[tuple[str, str | None, str], ...] = (
    ("bias", "Tensor?", "None"),
    ("input", "Tensor?", "None"),
    ("alpha", "float", "1."),
    ("beta", "float?", "None"),
    ("activation", "str?", "None"),
    ("pre_activation_out", None, "None"),
    ("c_dtype", "ScalarType?", "None"),
    ("acc_dtype", "str", '"float32"'),
    ("tile_shape_mnk", "int[]?", "None"),
    ("cluster_shape_mn", "int[]?", "None"),
    ("variant", "str?", "None"),
    ("scale_a", "float?", "None"),
    ("scale_b", "float?", "None"),
    ("out_scale", "float?", "None"),
    ("amax", None, "None"),
    ("mma_promotion_interval", "int", "0"),
    ("allow_copy", "bool", "False"),
)
_GEMM_NAMES = tuple(name for name, t, _ in GEMM_KWARGS if t is not None)  # the schemas' keywords

_is_compiling: Callable[[], bool] | None = None


def compiling() -> bool:
    """True while torch.compile or torch.export traces the caller."""
    if _is_compiling is None:
        _bind()
    return _is_compiling()


def _bind() -> None:
    global _is_compiling
    import torch

    _is_compiling = torch.compiler.is_compiling


def _schema_value(name: str, v: Any) -> Any:
    """gemm()'s keyword value as its schema type takes it (dtype names to torch dtypes, tuples to lists)."""
    if v is None:
        return None
    if name == "c_dtype":
        import torch

        from .torch_types import torch_dtype

        return v if isinstance(v, torch.dtype) else torch_dtype(v)
    if name == "acc_dtype":
        return v if isinstance(v, str) else str(v).removeprefix("torch.")
    if name in ("tile_shape_mnk", "cluster_shape_mn"):
        return list(v)
    return v


def traced_gemm(a: Any, b: Any, out: Any, stream: Any, kwargs: dict[str, Any]) -> Any:
    """gemm(a, b, out, **kwargs) as cute::gemm / cute::gemm_out: what gemm() calls while being traced."""
    import torch

    if stream is not None:
        raise ValueError("stream= is not supported under torch.compile/torch.export: gemm runs on torch's "
                         "current stream there (use torch.cuda.stream(...))")
    values = {n: _schema_value(n, kwargs[n]) for n in _GEMM_NAMES}
    if out is None:
        return torch.ops.cute.gemm(a, b, **values)
    torch.ops.cute.gemm_out(a, b, out, **values)
    return out


def traced_add(a: Any, b: Any, out: Any) -> Any:
    """elementwise_add(a, b, out) as cute::elementwise_add / cute::elementwise_add_out (while being traced)."""
    import torch

    if out is None:
        return torch.ops.cute.elementwise_add(a, b)
    torch.ops.cute.elementwise_add_out(a, b, out)
    return out

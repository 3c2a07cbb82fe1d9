"""The gemm() calls of the GPU tests that draw them from case lists (torch.ops, FP8), and the kernels they load."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .gemm_call import GemmCall

__all__ = ["gpu_call_configs", "gpu_calls"]


def gpu_calls() -> list[GemmCall]:
    """Every gemm() call the torch.ops, FP8 and ping-pong GPU tests make (`torch_ops_cases`, `fp8_cases.fp8_gpu_calls`,
    `pingpong_cases.gpu_calls`)."""
    from ..torch_ops_cases import gemm_calls
    from .fp8_cases import fp8_gpu_calls
    from .pingpong_cases import gpu_calls as pingpong_gpu_calls

    return list(gemm_calls()) + fp8_gpu_calls() + pingpong_gpu_calls()


def gpu_call_configs(num_sms: Sequence[int]) -> list[Any]:
    """The configs gemm() loads for `gpu_calls()` on GPUs of these SM counts (no duplicates)."""
    seen: dict[str, Any] = {}
    for call in gpu_calls():
        for cfg in call.configs(num_sms):
            seen.setdefault(cfg.name, cfg)
    return list(seen.values())

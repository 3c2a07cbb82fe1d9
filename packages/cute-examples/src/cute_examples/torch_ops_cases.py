"""The calls the torch.ops GPU tests make (`tests/test_torch_ops_gpu.py`), as data: the GPU tests build their tensors
from these, and the AOT catalogue lists the kernels they load (gemm(): `dense_gemm.gpu_calls`; the add: its
`elementwise_add.cases`)."""

from __future__ import annotations

from .dense_gemm.gemm_call import GemmCall

__all__ = ["ADD_SHAPE", "GRAPH_CALL", "MODEL_CALLS", "OPCHECK_CALLS", "PADDED_CALLS", "SHAPE", "gemm_calls"]

# (M, N, K) of the compiled model, the CUDA graph and reduce-overhead tests: float16 a (M, K) and b (K, N)
SHAPE = (300, 272, 1024)
# the compiled model: gemm with a bias and ReLU into a new tensor, then a plain gemm into out
MODEL_CALLS = (GemmCall(SHAPE, bias=True, activation="relu"), GemmCall(SHAPE, out=True))
GRAPH_CALL = GemmCall(SHAPE, bias=True)  # the CUDA graph's gemm
# an odd N keeps gemm()'s padded leading dimension through a compiled graph with dynamic M
PADDED_CALLS = tuple(GemmCall((m, 1001, 64)) for m in (64, 100, 129))
# torch.library.opcheck's samples of cute::gemm (out=False) and cute::gemm_out (out=True)
OPCHECK_CALLS = (
    GemmCall((128, 256, 64)),
    GemmCall((64, 1001, 72), batch=2, c_dtype="float32"),
    GemmCall((128, 256, 64), bias=True, activation="relu"),
    GemmCall((128, 256, 64), input=True, alpha=0.5, beta=2.0),
    GemmCall((128, 256, 64), out=True),
    GemmCall((64, 1001, 72), batch=2, out=True),
)
# opcheck's float32 elementwise_add samples: a (M, N) plus a row (N,) broadcast along M
ADD_SHAPE = (33, 65)


def gemm_calls() -> tuple[GemmCall, ...]:
    """Every gemm() call of the torch.ops GPU tests."""
    return MODEL_CALLS + (GRAPH_CALL,) + PADDED_CALLS + OPCHECK_CALLS

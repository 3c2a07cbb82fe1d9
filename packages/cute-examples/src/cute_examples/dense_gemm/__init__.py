"""Hopper (sm_90a) dense GEMM: a warp-specialized persistent TMA + WGMMA kernel built from the layout algebra.

- `gemm(a, b, out=None, ...)`: `out = a @ b` on CUDA torch tensors (see `launch_plan`); importing it imports torch
  and registers `torch.ops.cute.gemm` (`cute_examples.torch_ops`) for torch.compile.
- `dense_gemm`: the kernel, a public-API JIT kernel (`@cute_runtime.kernel`) whose compile-time argument is a
  `GemmConfig` (one kernel's static parameters: dtypes, majors, tile, cluster, stages, speed options).
- `compile_gemm(cfg)`: the compiler's artifact (cached); `kernel_of(cfg, cc)`: the Kernel (bundle or compiler);
  `make_plan(cfg)`: the architecture numbers the kernel uses.
- `GemmShape`, `choose_config(shape)`: the cost model's tile/cluster (`choice`); `VARIANTS`: speed options.
- `python -m cute_examples.dense_gemm --help`: the CLI of CuTeDSL's dense_gemm.py (`--tune`, `--variant`).
- `python -m cute_examples.dense_gemm.bench`: ours vs torch.matmul (`bench.gemm_rows`).
"""

from __future__ import annotations

from .choice import GemmShape
from .host import choose_config, launch_gemm, problem_of, tensor_maps
from .kernel import compile_gemm, dense_gemm, kernel_of
from .spec import VARIANTS, GemmConfig

__all__ = [
    "VARIANTS",
    "GemmConfig",
    "GemmShape",
    "choose_config",
    "compile_gemm",
    "dense_gemm",
    "gemm",
    "kernel_of",
    "launch_gemm",
    "problem_of",
    "tensor_maps",
]


def __getattr__(name: str) -> object:
    # gemm is for torch tensors: importing it registers torch.ops.cute.* (`torch_ops`) for torch.compile/export
    if name == "gemm":
        from .. import torch_ops  # noqa: F401
        from .launch_plan import gemm

        return gemm
    raise AttributeError(f"module 'cute_examples.dense_gemm' has no attribute {name!r}")

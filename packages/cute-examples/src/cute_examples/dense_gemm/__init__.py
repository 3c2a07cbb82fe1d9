"""Hopper (sm_90a) dense GEMM: a warp-specialized persistent TMA + WGMMA kernel built from the layout algebra.

- `gemm(a, b, out=None, ...)`: `out = a @ b` on CUDA torch tensors (see `host`).
- `GemmConfig`: one kernel's static parameters (dtypes, majors, tile, cluster, stages) and its spec.
- `compile_gemm(cfg)`: the cute-ir Artifact (cached); `make_plan(cfg)`: the architecture numbers it uses;
  `build_kernel(plan)`: the KernelDef (needs MLIR).
- `GemmShape`, `choose_config(shape)`: the cost model's tile/cluster (`choice`); `VARIANTS`: speed options.
- `python -m cute_examples.dense_gemm --help`: the CLI of CuTeDSL's dense_gemm.py (`--tune`, `--variant`).
- `python -m cute_examples.dense_gemm.bench`: ours vs torch.matmul (`bench.gemm_rows`).
"""

from __future__ import annotations

from .choice import GemmShape
from .host import choose_config, compile_gemm, launch_gemm, problem_of, tensor_maps
from .launch_plan import gemm
from .spec import VARIANTS, GemmConfig

__all__ = [
    "VARIANTS",
    "GemmConfig",
    "GemmShape",
    "choose_config",
    "compile_gemm",
    "gemm",
    "launch_gemm",
    "problem_of",
    "tensor_maps",
]

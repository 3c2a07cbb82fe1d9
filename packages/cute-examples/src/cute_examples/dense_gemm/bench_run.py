"""What the GEMM benchmarks share: the benchmarked problem and config, its operands, and a checked launch of ours.

`bench_shape`/`bench_config`: K-major A and B (A (M,K) row-major, B = (N,K)^T: F.linear's operands), C n-major
in the input dtype, and `choose_config`'s pick; `operands` makes them on the GPU (C filled with NaN);
`prepare_ours` checks a data-parallel launch of a config against a reference and returns the launch;
`no_gpu_ends` is the benchmark CLIs' opening (the --bundle flag, and the no-GPU ending where torch sees no GPU).
"""

from __future__ import annotations

import math
from typing import Any

from cute_nvarch.target import SM90A

from .choice import GemmShape
from .spec import GemmConfig

__all__ = ["bench_config", "bench_shape", "checked_launch", "geomean", "no_gpu_ends", "operands", "prepare_ours"]


def bench_shape(mnkl: tuple[int, int, int, int], dtype: str) -> GemmShape:
    """The benchmarked problem: K-major A and B, n-major C in the input dtype."""
    m, n, k, l = mnkl
    return GemmShape(m, n, k, l, ab_dtype=dtype, c_dtype=dtype, a_major="k", b_major="k", c_major="n")


def bench_config(
    mnkl: tuple[int, int, int, int], dtype: str, variant: str = "fast", num_sms: int = 132
) -> GemmConfig:
    """The config `choose_config` picks for a benchmark row (with `variant`'s speed options)."""
    from .host import choose_config

    return choose_config(bench_shape(mnkl, dtype), "float32", num_sms=num_sms, variant=variant)


def operands(mnkl: tuple[int, int, int, int], dtype: str) -> tuple[Any, Any, Any]:
    """Random A (L,M,K), B = W^T of a random contiguous W (L,N,K), NaN C (L,M,N) (without L when L = 1)."""
    import torch

    m, n, k, l = mnkl
    td = getattr(torch, dtype)
    a = torch.randn(l, m, k, device="cuda", dtype=td)
    b = torch.randn(l, n, k, device="cuda", dtype=td).transpose(1, 2)  # (L, K, N), K contiguous
    c = torch.full((l, m, n), float("nan"), device="cuda", dtype=td)
    if l == 1:
        return a[0], b[0], c[0]
    return a, b, c


def no_gpu_ends(args: Any, done: str, skipped: str) -> bool:
    """Apply the CLI's --bundle flag; where torch sees no CUDA GPU, print the no-GPU ending (`done`, `skipped`, how
    to run the benchmarks on a GPU host) and return True (the CLI then exits 0)."""
    import torch

    from ..cli import apply_bundle_flag
    from ..report import GPU_HOST_BENCH, no_gpu_ending

    apply_bundle_flag(args)
    if torch.cuda.is_available():
        return False
    for line in no_gpu_ending(done, skipped, GPU_HOST_BENCH):
        print(line)
    return True


def geomean(xs: list[float]) -> float:
    """The geometric mean of positive numbers (nan for none)."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def checked_launch(kernel: Any, grid: Any, args: tuple, c: Any, ref: Any, keep: Any = None,
                   programmatic: bool | None = None) -> tuple[Any, float]:
    """(a no-argument launch of `kernel` on grid with args on torch's current stream, the normwise relative error
    against `ref` of what its first launch wrote into c (NaN-filled before; inf when not finite)); `keep` stays
    alive with the launcher. Launched as gemm()'s plans launch (packed once; `programmatic`: PDL, by default as
    gemm(): `config.gemm_pdl`)."""
    import torch

    from ..config import gemm_pdl

    c.fill_(float("nan"))
    programmatic = gemm_pdl() if programmatic is None else programmatic
    params = kernel.prepare(*args)
    on = kernel.bound_launch(grid, params, programmatic=programmatic)
    on(torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    err = float((c.float() - ref.float()).norm() / ref.float().norm())

    def launch(keep: Any = keep, params: Any = params) -> None:
        on(torch.cuda.current_stream().cuda_stream)

    return launch, err if math.isfinite(err) else float("inf")


def prepare_ours(
    cfg: GemmConfig, a: Any, b: Any, c: Any, ref: Any, num_sms: int, extra: tuple = (), order: tuple = (None, None)
) -> tuple[Any, float]:
    """(a no-argument launch of our kernel for `cfg`, its normwise relative error against `ref`); `extra`: the
    run-time values after the plain kernel's (the fused or scaled kernels' parameters); `order`: (raster_along_n,
    swizzle_log) to launch with, each None for the host's pick."""
    from .host import problem_of, resident_sms, schedule, tensor_maps, with_aux_desc
    from .kernel import kernel_of

    kernel = kernel_of(cfg, SM90A.compute_capability)
    problem = problem_of(a, b, c)
    grid, raster_n, swz = schedule(problem, cfg, resident_sms(kernel, cfg, num_sms), *order)
    maps = tensor_maps(problem, cfg)
    args = (*maps, problem.m, problem.n, problem.k, problem.l, raster_n, swz, *with_aux_desc(extra, maps[2]))
    return checked_launch(kernel, grid, args, c, ref)

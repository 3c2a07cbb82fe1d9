"""The ping-pong schedule's configs (`GemmConfig.schedule` "pingpong"): the compile sweep's, the GPU tests' and the
benchmarks' (all in the AOT bundle through `aot.aot_configs`).

- `sweep_configs()`: `PINGPONG_TILES` x `PINGPONG_CLUSTERS` x (plain, GELU with a bias along N, SwiGLU or, where
  tile N is too narrow for it, SiLU with a bias along M and alpha): what `nox -s configs` compiles for ping-pong.
- `PLAIN_GPU_CONFIGS`: the plain configs the GPU test runs through `test_dense_gemm_gpu.run_case` (every major,
  three C dtypes, every tile, the clusters).
- `gpu_calls()`: the fused gemm() calls of the GPU test (`GemmCall`s with variant "pingpong"; in
  `gpu_calls.gpu_calls()`, so that the CPU test of those calls checks the catalogue holds their kernels).
- `bench_configs(num_sms)`: the epilogue benchmark's rows with `--schedule pingpong` (the GEMM benchmark's
  "pingpong" variant is in `aot.bench_configs`, which takes every variant).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .gemm_call import GemmCall
from .spec import GemmConfig

__all__ = ["PINGPONG_CLUSTERS", "PINGPONG_TILES", "PLAIN_GPU_CONFIGS", "bench_configs", "gpu_calls", "pingpong_configs",
           "sweep_configs"]

# every tile whose whole accumulator fits one warpgroup (tile_m * tile_n / 128 <= 128 floats per thread)
PINGPONG_TILES = ((64, 64), (64, 128), (64, 256), (128, 64), (128, 128))
PINGPONG_CLUSTERS = ((1, 1), (2, 1), (1, 2))

PLAIN_GPU_CONFIGS = (
    GemmConfig(tile_m=64, tile_n=256, schedule="pingpong"),
    GemmConfig(tile_m=128, tile_n=128, cluster_m=2, schedule="pingpong"),
    GemmConfig(tile_m=128, tile_n=64, cluster_n=2, schedule="pingpong"),
    GemmConfig(tile_m=64, tile_n=128, cluster_m=2, cluster_n=2, schedule="pingpong"),
    GemmConfig(a_dtype="bfloat16", b_dtype="bfloat16", c_dtype="float32", a_major="m", b_major="n", c_major="m",
               tile_m=128, tile_n=128, schedule="pingpong"),
    GemmConfig(a_dtype="bfloat16", b_dtype="bfloat16", c_dtype="bfloat16", a_major="m", b_major="k", c_major="n",
               tile_m=64, tile_n=64, cluster_m=2, schedule="pingpong"),
)


def _sweep_epilogues(tile_n: int) -> tuple[dict, dict]:
    second = {"activation": "swiglu"} if tile_n >= 128 else {"activation": "silu", "bias": "m", "has_alpha": True}
    return {"activation": "gelu", "bias": "n"}, second


def sweep_configs() -> list[GemmConfig]:
    """Every ping-pong tile x cluster, plain and with two fused epilogues (float16 in and out)."""
    out = []
    for (tm, tn), (cm, cn) in ((t, c) for t in PINGPONG_TILES for c in PINGPONG_CLUSTERS):
        base = GemmConfig(tile_m=tm, tile_n=tn, cluster_m=cm, cluster_n=cn, schedule="pingpong")
        out.append(base)
        out += [dataclasses.replace(base, **e) for e in _sweep_epilogues(tn)]
    return out


def gpu_calls() -> list[GemmCall]:
    """The fused ping-pong gemm() calls of the GPU test: odd M, N, K; batched; GELU with a bias, SwiGLU, an input
    addend (the test passes out itself as the input with beta = 1: a tile written twice adds A @ B twice) and a
    pre-activation output."""
    pp = "pingpong"
    return [
        GemmCall((1000, 1000, 1000), a_dtype="bfloat16", b_major="k", out=True, bias=True, activation="gelu",
                 tile=(128, 128, 64), cluster=(2, 1), variant=pp),
        GemmCall((257, 392, 136), batch=3, b_major="k", out=True, bias=True, activation="gelu_tanh",
                 tile=(64, 256, 64), cluster=(1, 1), variant=pp),
        GemmCall((777, 2 * 312, 520), a_dtype="bfloat16", b_major="k", activation="swiglu",
                 tile=(128, 128, 64), cluster=(1, 2), variant=pp),
        GemmCall((333, 1000, 264), b_major="k", out=True, input=True, beta=1.0, tile=(64, 128, 64),
                 cluster=(1, 1), variant=pp),
        GemmCall((1000, 1000, 1000), b_major="k", out=True, input=True, beta=1.0, tile=(128, 64, 64),
                 cluster=(1, 1), variant=pp),
        # the pre-activation output's staging buffers after C's on the ping-pong schedule
        GemmCall((700, 1000, 520), a_dtype="bfloat16", b_major="k", out=True, bias=True, activation="gelu", aux=True,
                 tile=(128, 128, 64), cluster=(1, 1), variant=pp),
    ]


def bench_configs(num_sms: Sequence[int]) -> list[GemmConfig]:
    """The configs of the epilogue benchmark's rows with `--schedule pingpong` (fused and plain)."""
    from .epilogue_cases import bench_epilogue_configs

    return bench_epilogue_configs(num_sms, variant="pingpong")


def pingpong_configs(num_sms: Sequence[int]) -> list[GemmConfig]:
    """Every ping-pong config the GPU tests and the epilogue benchmark load (the AOT bundle's share)."""
    return list(PLAIN_GPU_CONFIGS) + bench_configs(num_sms)

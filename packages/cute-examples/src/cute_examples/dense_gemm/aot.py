"""The GEMM configurations that GPU tests, the CLI defaults and benchmarks use, and an AOT bundle of them.

A GPU host without MLIR serves these from a bundle (CUTE_BUNDLE_DIR): build it here with

    python -m cute_examples.dense_gemm.aot build/aot        # compiles every config, writes the bundle

`dtype_major_configs()` is every A/B x accumulator x C dtype combination times every (A, B, C) major at the
128x128x64 tile without a cluster; `tile_cluster_configs()` is every tile (`spec.TILES`: M 64/128 x N
64/96/128/144/160/176/192/224/256, 256 x 64/96/128) times every cluster shape (1x1, 2x1, 1x2, 2x2) for float16 inputs,
float32 accumulation and float16 C (all with the default "fast" speed options); `variant_configs()` is the "base"
variant of a few of those (the GPU tests compare the two); `bench_configs()` is every config the benchmark rows and
`--tune` candidates of the benchmark shapes use, in every variant, for 132- and 114-SM GPUs (H100/H200 SXM, H100
PCIe), and the model suite's (`bench_models.model_configs`); the fused epilogue's GPU test calls and benchmark rows
add theirs (`epilogue_cases`), split-K / stream-K theirs (`split_k_cases.split_sweep_configs`: every tile the choice
may decompose on, so a recalibrated choice stays inside the bundle), FP8 theirs (`fp8_cases.fp8_configs`), ping-pong
theirs (`pingpong_cases.pingpong_configs`; the benchmark's "pingpong" variant is one of every variant), and the
torch.ops and FP8 GPU tests' gemm() calls what gemm() loads for them (`gpu_calls.gpu_call_configs`).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys

from .spec import AB_DTYPES, ACC_DTYPES, C_DTYPES, CLUSTER_SHAPES, TILES, VARIANTS, GemmConfig

__all__ = [
    "VARIANT_TEST_CONFIGS",
    "aot_configs",
    "bench_configs",
    "dtype_major_configs",
    "dtype_combinations",
    "tile_cluster_configs",
    "variant_configs",
    "write_aot_bundle",
]

# configs whose "base" variant (the first, unpipelined kernel) the GPU tests also run
VARIANT_TEST_CONFIGS = (
    GemmConfig(),
    GemmConfig(tile_n=256, cluster_m=2),
    GemmConfig(tile_m=64, tile_n=64, cluster_m=2, cluster_n=2),
    GemmConfig(
        a_dtype="bfloat16", b_dtype="bfloat16", c_dtype="float32", a_major="m", b_major="n", c_major="m"
    ),
)
BENCH_NUM_SMS = (132, 114)


def dtype_combinations() -> list[tuple[str, str, str]]:
    """Every supported (A/B dtype, accumulator dtype, C dtype)."""
    out = []
    for ab in AB_DTYPES:
        for acc in ACC_DTYPES:
            if acc == "float16" and ab != "float16":
                continue
            for c in C_DTYPES:
                out.append((ab, acc, c))
    return out


def dtype_major_configs(tile: tuple[int, int] = (128, 128)) -> list[GemmConfig]:
    """Every dtype combination x every (a_major, b_major, c_major) at one tile, cluster 1x1."""
    out = []
    for (ab, acc, c), am, bm, cm in itertools.product(dtype_combinations(), "km", "kn", "nm"):
        out.append(
            GemmConfig(
                a_dtype=ab,
                b_dtype=ab,
                acc_dtype=acc,
                c_dtype=c,
                a_major=am,
                b_major=bm,
                c_major=cm,
                tile_m=tile[0],
                tile_n=tile[1],
            )
        )
    return out


def tile_cluster_configs() -> list[GemmConfig]:
    """Every tile (`spec.TILES`, K 64) x every cluster shape; f16 in and out, f32 accumulation."""
    return [
        GemmConfig(tile_m=tm, tile_n=tn, cluster_m=cm, cluster_n=cn)
        for tm, tn in TILES
        for cm, cn in CLUSTER_SHAPES
    ]


def variant_configs() -> list[GemmConfig]:
    """The "base" variant of `VARIANT_TEST_CONFIGS` (the "fast" one is in the other lists)."""
    return [cfg.with_variant("base") for cfg in VARIANT_TEST_CONFIGS]


def bench_configs() -> list[GemmConfig]:
    """Every config of the benchmark rows and of the `--tune` candidates for them, in every variant, and gemm()'s
    pick for bench_host's rows."""
    from .bench import BENCH_DTYPES, BENCH_SHAPES, bench_shape
    from .bench_host import SPEED_SHAPES
    from .launch_plan import gemm_picks
    from .tune import tune_candidates

    # gemm()'s own pick for the host-cost and small-GEMM rows (bench_host)
    out = [
        cfg
        for dtype in BENCH_DTYPES
        for mnkl in SPEED_SHAPES
        for sms in BENCH_NUM_SMS
        for cfg in gemm_picks(bench_shape(mnkl, dtype), sms)
    ]
    for dtype in BENCH_DTYPES:
        for mnkl in BENCH_SHAPES:
            for sms in BENCH_NUM_SMS:
                for cfg in tune_candidates(bench_shape(mnkl, dtype), "float32", sms):
                    # a ping-pong candidate runs as it is (the cooperative ones in every variant, "pingpong" too)
                    out.extend([cfg] if cfg.pingpong else [cfg.with_variant(v) for v in VARIANTS])
    from .bench_models import model_configs

    return out + model_configs()  # the model suite's rows (bench --suite models)


def aot_configs() -> list[GemmConfig]:
    """Every configuration the GPU tests, the CLI's defaults and the benchmark need (no duplicates)."""
    seen: dict[str, GemmConfig] = {}
    from .epilogue_cases import bench_epilogue_configs, gpu_case_configs
    from .split_k_cases import split_sweep_configs

    fused = gpu_case_configs(BENCH_NUM_SMS) + bench_epilogue_configs(BENCH_NUM_SMS)  # epilogue GPU tests, bench
    from .fp8_cases import fp8_configs, fp8_gpu_configs

    split = split_sweep_configs()  # the split-K / stream-K GPU tests' and the choice's tiles
    from .bench_fp8 import fp8_bench_configs

    fp8 = fp8_configs() + fp8_gpu_configs() + fp8_bench_configs(BENCH_NUM_SMS)  # FP8 tests and bench rows
    from .gpu_calls import gpu_call_configs

    calls = gpu_call_configs(BENCH_NUM_SMS)  # what gemm() loads for the torch.ops, FP8 and ping-pong GPU tests' calls
    from .pingpong_cases import pingpong_configs

    calls += pingpong_configs(BENCH_NUM_SMS)  # the ping-pong GPU tests' plain configs, its epilogue bench rows
    for cfg in (dtype_major_configs() + tile_cluster_configs() + variant_configs() + bench_configs() + fused + split
                + fp8 + calls):
        seen.setdefault(cfg.name, cfg)
        # gemm() stages an M-major C whose M ends inside a 16-byte chunk through an N-major scratch buffer
        staged = dataclasses.replace(cfg, c_major="n")
        seen.setdefault(staged.name, staged)
    return list(seen.values())


def write_aot_bundle(directory: str, configs: list[GemmConfig] | None = None, target: str = "sm_90a") -> str:
    """Compile `configs` (default: aot_configs()) through cute-ir's cache and write them as one AOT bundle."""
    from cute_ir import write_bundle

    from .kernel import compile_gemm

    arts = [compile_gemm(cfg, target) for cfg in (aot_configs() if configs is None else configs)]
    return write_bundle(directory, arts)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m cute_examples.dense_gemm.aot DIRECTORY", file=sys.stderr)
        sys.exit(2)
    print(write_aot_bundle(sys.argv[1]))

"""FP8 (E4M3/E5M2) GEMM configurations: a representative set the CPU CI compiles, the GPU tests' calls, the AOT
bundle's entries."""

from __future__ import annotations

import dataclasses

from .gemm_call import GemmCall
from .spec import FP8_DTYPES, GemmConfig

__all__ = ["ACCURACY_CONFIGS", "ACCURACY_SHAPE", "FP8_GPU_SHAPES", "REFERENCE_SCALES", "SCALE_MODES", "accuracy_calls",
           "allow_copy_call", "decomposed_calls", "device_scale_calls", "fp8_call", "fp8_configs", "fp8_gpu_calls",
           "fp8_gpu_configs", "fp8_out_configs", "pingpong_calls", "reference_calls", "scaled_configs"]

E4M3, E5M2 = FP8_DTYPES
# (M, N, K, L) of the GPU tests: one that divides the tiles, partial tiles (K a multiple of 16), batched, and a
# decode-like M below every tile (A's and C's boxes cut to its rows; amax over the zeroed rows)
FP8_GPU_SHAPES = ((1024, 1024, 1024, 1), (300, 200, 272, 1), (257, 130, 144, 2), (7, 272, 160, 1))
# the accuracy test of two-level accumulation: same-sign inputs at K = 16384, float32 C, without and with promotion
ACCURACY_SHAPE = (256, 256, 16384, 1)
ACCURACY_CONFIGS = tuple(
    GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="float32", mma_promotion_interval=p) for p in (0, 4)
)


def fp8_configs() -> list[GemmConfig]:
    """Every (A, B) 8-bit pair, every C dtype, tile N widths 64 to 256, tile M 256, clusters, both C majors, the "base"
    variant, two-level accumulation (promotion every one and every two K-tiles, with one and two consumer
    warpgroups)."""
    return [
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="bfloat16"),
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="bfloat16", tile_n=256, cluster_m=2),
        GemmConfig(a_dtype=E4M3, b_dtype=E5M2, c_dtype="float32", tile_n=256),
        GemmConfig(a_dtype=E5M2, b_dtype=E4M3, c_dtype="float16", cluster_n=2),
        GemmConfig(a_dtype=E5M2, b_dtype=E5M2, c_dtype="bfloat16", tile_m=64, tile_n=64, c_major="m"),
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="float16", cluster_m=2, cluster_n=2).with_variant("base"),
        # two-level accumulation: every K-tile (4 k-blocks), every second K-tile, from zeroed accumulators
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="bfloat16", mma_promotion_interval=4),
        GemmConfig(a_dtype=E4M3, b_dtype=E5M2, c_dtype="float32", cluster_m=2, mma_promotion_interval=8),
        GemmConfig(a_dtype=E5M2, b_dtype=E4M3, c_dtype="float16", tile_m=64, tile_n=64, mma_promotion_interval=4,
                   acc_init="zero"),
        # one consumer warpgroup promoting every K-tile: two chains in flight (kernel._promoting_pairs)
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="bfloat16", tile_m=64, tile_n=128, mma_promotion_interval=4),
        # the widest promoting tiles (two 64 x 192 / 64 x 160 float32 accumulators per consumer warpgroup, 0 spills)
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="bfloat16", tile_n=192, mma_promotion_interval=4),
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="float16", tile_n=160, mma_promotion_interval=4),
        # the 256x128 tile (two 64-row atoms per consumer warpgroup) sharing A across a 1x2 cluster
        GemmConfig(a_dtype=E4M3, b_dtype=E5M2, c_dtype="bfloat16", tile_m=256, tile_n=128, cluster_n=2),
    ]


# (scale_a, scale_b) device-scale modes the tests run: per tensor, rowwise, and one of each
SCALE_MODES = (("tensor", "tensor"), ("m", "n"), ("m", "tensor"))


def scaled_configs() -> list[GemmConfig]:
    """Device-scale kernels: every SCALE_MODES entry on the first `fp8_configs` entries and a promoting one (the
    wide tile N 256 with rowwise scales among them)."""
    bases = fp8_configs()
    picked = [bases[0], bases[1], bases[2], bases[6]]
    return [dataclasses.replace(c, scale_a=sa, scale_b=sb) for c in picked for sa, sb in SCALE_MODES]


def fp8_out_configs() -> list[GemmConfig]:
    """8-bit (E4M3) C: both 8-bit pairs, tile N 64, 128, 192 and 256 (cluster), tile M 64 and 256, the "base" variant
    (one C buffer), two-level accumulation, device scales (per tensor, rowwise), a bias with an activation, SwiGLU."""
    e4m3 = dict(a_dtype=E4M3, b_dtype=E4M3, c_dtype=E4M3)
    return [
        GemmConfig(**e4m3),
        GemmConfig(a_dtype=E4M3, b_dtype=E5M2, c_dtype=E4M3, tile_n=256, cluster_m=2),
        GemmConfig(**e4m3, tile_m=64, cluster_n=2),
        GemmConfig(**e4m3).with_variant("base"),
        GemmConfig(**e4m3, mma_promotion_interval=4),
        GemmConfig(**e4m3, scale_a="tensor", scale_b="tensor", mma_promotion_interval=4),
        GemmConfig(**e4m3, scale_a="m", scale_b="n"),
        GemmConfig(**e4m3, activation="relu", bias="n"),
        GemmConfig(**e4m3, tile_n=256, activation="swiglu"),
        # 64-byte staging rows (a 64-byte swizzle): tile N 192 with promotion, tile N 64
        GemmConfig(**e4m3, tile_n=192, mma_promotion_interval=4),
        GemmConfig(**e4m3, tile_m=64, tile_n=64, scale_a="tensor", scale_b="tensor"),
        # the 256x128 tile: two slabs per warpgroup through the 8-bit C path, rowwise scales
        GemmConfig(**e4m3, tile_m=256, tile_n=128, scale_a="m", scale_b="n"),
    ]


def fp8_gpu_configs() -> list[GemmConfig]:
    """What the 8-bit C GPU tests launch: every `fp8_out_configs` entry (N-major C, as gemm() writes a fresh out),
    without and with the run-time alpha that Python-float scales become (the 8-bit input tests' calls are
    `fp8_gpu_calls`, whose kernels `gpu_calls.gpu_call_configs` lists)."""
    out: dict[str, GemmConfig] = {}
    for cfg in fp8_out_configs():
        for c in (cfg, dataclasses.replace(cfg, c_major="n")):
            # device scales of A/B or a fused activation: the tests pass no alpha (Python-float scales)
            plain = cfg.scale_a is None and cfg.scale_b is None and cfg.activation == "identity"
            for alpha in (False, True) if plain else (False,):
                x = dataclasses.replace(c, has_alpha=alpha)
                out.setdefault(x.name, x)
    return list(out.values())


# the reference test's scales: none, and Python floats (folded into alpha: the fused kernel)
REFERENCE_SCALES = ((None, None), (0.5, 3.0))


def fp8_call(cfg: GemmConfig, shape: tuple[int, int, int, int], scales: tuple = (None, None)) -> GemmCall:
    """The gemm() call of the FP8 GPU tests for cfg on (M, N, K, L): K-major a and b, C of cfg's dtype, cfg's tile,
    cluster, variant and promotion interval; `scales` floats or device-scale modes (`GemmCall`)."""
    m, n, k, l = shape
    return GemmCall((m, n, k), batch=l if l > 1 else 0, a_dtype=cfg.a_dtype, b_dtype=cfg.b_dtype, b_major="k",
                    c_dtype=cfg.c_dtype, scale_a=scales[0], scale_b=scales[1],
                    tile=(cfg.tile_m, cfg.tile_n, cfg.tile_k), cluster=(cfg.cluster_m, cfg.cluster_n),
                    variant=cfg.variant, promotion=cfg.mma_promotion_interval)


def reference_calls() -> list[GemmCall]:
    """The reference test's calls: every `fp8_configs` entry on every `FP8_GPU_SHAPES` shape, unscaled and scaled."""
    return [fp8_call(c, s, sc) for c in fp8_configs() for s in FP8_GPU_SHAPES for sc in REFERENCE_SCALES]


def accuracy_calls() -> list[GemmCall]:
    """The two-level accumulation test's calls: `ACCURACY_CONFIGS` (without, with promotion) on `ACCURACY_SHAPE`."""
    return [fp8_call(c, ACCURACY_SHAPE) for c in ACCURACY_CONFIGS]


def device_scale_calls() -> list[GemmCall]:
    """The device-scale test's calls: every `scaled_configs` entry (its scale modes) on the first two shapes."""
    return [fp8_call(c, s, (c.scale_a, c.scale_b)) for c in scaled_configs() for s in FP8_GPU_SHAPES[:2]]


def allow_copy_call() -> GemmCall:
    """allow_copy's test: an M-major a and N-major b of `fp8_configs()[0]`, copied K-major (the call gemm() runs)."""
    cfg = fp8_configs()[0]
    return dataclasses.replace(fp8_call(cfg, (300, 200, 256, 1)), c_dtype=None)


def decomposed_calls() -> list[GemmCall]:
    """gemm() calls whose free choice splits K on an H100/H200 (k_choice: the scaled kernel's split form; 8-bit
    inputs without promotion stay data-parallel): decode rows with promotion (bfloat16 C, per-tensor and rowwise
    scales) and an E4M3 C with promotion at M = 128."""
    e4m3 = E4M3
    return [
        GemmCall((16, 4096, 14336), a_dtype=e4m3, b_dtype=e4m3, b_major="k", c_dtype="bfloat16", scale_a="tensor",
                 scale_b="tensor", promotion=4),
        GemmCall((32, 4096, 14336), a_dtype=e4m3, b_dtype=e4m3, b_major="k", c_dtype="bfloat16", scale_a="m",
                 scale_b="n", promotion=4),
        GemmCall((128, 4096, 14336), a_dtype=e4m3, b_dtype=e4m3, b_major="k", c_dtype=e4m3, scale_a="tensor",
                 scale_b="tensor", promotion=4),
    ]


def pingpong_calls() -> list[GemmCall]:
    """gemm() calls whose free choice runs the ping-pong schedule on an H100/H200 (`launch_plan.pingpong_form`):
    partial tiles, a batch, M = 1, per-tensor and rowwise device scales, bfloat16 and float16 C."""
    e4m3 = E4M3
    return [
        GemmCall(mnk, batch=batch, a_dtype=e4m3, b_dtype=e4m3, b_major="k", c_dtype=c, scale_a=sa, scale_b=sb)
        for mnk, batch, c, sa, sb in (
            ((200, 1000, 528), 0, "bfloat16", "tensor", "tensor"),
            ((129, 640, 384), 3, "float16", "tensor", "tensor"),
            ((96, 2050, 1024), 0, "bfloat16", "m", "n"),
            ((300, 3000, 1008), 0, "float16", "m", "tensor"),
            ((1, 4000, 4096), 0, "bfloat16", "tensor", "tensor"),
        )
    ]


def aux_calls() -> list[GemmCall]:
    """gemm() calls with GELU and a pre-activation output on 8-bit operands with per-tensor device scales: the scaled
    kernel on the ping-pong schedule (gemm()'s free choice) with a bias and, with promotion, the cooperative one."""
    e4m3 = E4M3
    return [
        GemmCall((300, 1000, 512), a_dtype=e4m3, b_dtype=e4m3, b_major="k", c_dtype="bfloat16", scale_a="tensor",
                 scale_b="tensor", bias=not promotion, activation="gelu", aux=True, promotion=promotion)
        for promotion in (0, 4)
    ]


def fp8_gpu_calls() -> list[GemmCall]:
    """Every gemm() call of the FP8 GPU tests (reference, accuracy, device scales, allow_copy, decomposed,
    ping-pong, pre-activation output)."""
    return (reference_calls() + accuracy_calls() + device_scale_calls() + [allow_copy_call()] + decomposed_calls()
            + pingpong_calls() + aux_calls())

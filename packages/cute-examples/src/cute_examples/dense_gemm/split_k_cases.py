"""The split-K / stream-K cases: GPU tests (each with the fewest units it must show sharing one tile), and the
representative configs that the config sweep compiles and the AOT bundle holds."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import AB_DTYPES, FP8_DTYPES, GemmConfig

__all__ = ["FP8_SPLIT_GPU_CASES", "FUSED_SPLIT_GPU_CASES", "SPLIT_GPU_CASES", "SplitCase", "split_sweep_configs"]


@dataclass(frozen=True)
class SplitCase:
    """A GPU test case: config, (M, N, K), split-K parts, the most units sharing a tile it must reach."""

    config: GemmConfig
    mnk: tuple[int, int, int]
    splits: int
    min_parts: int

    @property
    def label(self) -> str:
        """A pytest id."""
        m, n, k = self.mnk
        c = self.config
        extra = f"_{c.c_dtype}_sc{c.scale_a}{c.scale_b}_pi{c.mma_promotion_interval}" if c.is_fp8 else ""
        extra += c.epilogue_label if c.fused and not c.is_fp8 else ""
        return f"{c.decomposition}_{c.tile_m}x{c.tile_n}_c{c.cluster_m}x{c.cluster_n}_{c.a_dtype}{extra}_{m}x{n}x{k}_" \
               f"s{self.splits}"


def _cfg(kind: str, tile: tuple[int, int], cluster: tuple[int, int] = (1, 1), dtype: str = "float16",
         c_dtype: str | None = None, **fields: object) -> GemmConfig:
    return GemmConfig(a_dtype=dtype, b_dtype=dtype, c_dtype=c_dtype or dtype, tile_m=tile[0], tile_n=tile[1],
                      cluster_m=cluster[0], cluster_n=cluster[1], decomposition=kind, **fields)


SPLIT_GPU_CASES = (
    # stream-K only: 8 tiles < the SMs, 64 K tiles each over all workers: many units per tile
    SplitCase(_cfg("stream_k", (128, 128)), (256, 512, 4096), 1, 3),
    # a full data-parallel wave, then the remaining tiles' K iterations (odd sizes: partial tiles and K tile)
    SplitCase(_cfg("stream_k", (128, 256), dtype="bfloat16"), (2000, 3000, 1000), 1, 2),
    SplitCase(_cfg("stream_k", (64, 128), c_dtype="float32"), (333, 1000, 2100), 1, 2),
    # split-K: every tile in S parts
    SplitCase(_cfg("split_k", (128, 128)), (300, 700, 3000), 4, 4),
    SplitCase(_cfg("split_k", (128, 256), (2, 1), dtype="bfloat16"), (512, 1024, 4096), 3, 3),
    # the clustered split-K that k_choice picks on one-round long-K rows (`SPLIT_K_CLUSTERS`): 64-row tiles whose 2x1
    # cluster spans M's edge, and 128x128
    SplitCase(_cfg("split_k", (64, 128), (2, 1)), (200, 1000, 8192), 4, 4),
    SplitCase(_cfg("split_k", (128, 128), (2, 1), dtype="bfloat16"), (700, 900, 6000), 3, 3),
    # a decode row as k_choice sends it (M <= SMALL_M: split-K on the narrowest split tile)
    SplitCase(_cfg("split_k", (64, 128)), (1, 4096, 14336), 4, 4),
    # the 256x128 tile (two 64-row atoms per warpgroup, both in its partial tiles): split-K on a 1x2 cluster, stream-K
    # with partial tiles
    SplitCase(_cfg("split_k", (256, 128), (1, 2), dtype="bfloat16"), (512, 1024, 4096), 3, 3),
    SplitCase(_cfg("stream_k", (256, 128)), (300, 700, 3000), 1, 3),
    # a narrow problem on the shared-K tile that fits its 440 columns (`k_choice.SIXTEEN_BIT_SHARED_K_TILES`): 128x224,
    # seven epilogue chunks through one staging buffer
    SplitCase(_cfg("stream_k", (128, 224), dtype="bfloat16", epi_buffers=1), (1000, 440, 6000), 1, 3),
    # past two waves with M's last tile partial: the raster along N leaves the last two tile rows data-parallel, so
    # the edge tile starts inside M (`TileScheduler.edges_whole`) and writes its neighbour's rows with the same bits
    SplitCase(_cfg("stream_k", (128, 256), dtype="bfloat16"), (2000, 8192, 1024), 1, 2),
    # split-K past a wave: two data-parallel waves, then the last partial wave's 120 tiles in three parts each
    SplitCase(_cfg("split_k", (128, 256), dtype="bfloat16"), (3000, 4096, 2048), 3, 3),
    # five / seven epilogue chunks through two staging buffers, their order restarted each unit (`kernel._epilogue`):
    # stream-K past a wave on 128x160 (units without an epilogue between those with one), split-K on 128x224
    SplitCase(_cfg("stream_k", (128, 160), dtype="bfloat16"), (2000, 2000, 3000), 1, 2),
    SplitCase(_cfg("split_k", (128, 224)), (700, 1000, 4000), 3, 3),
)


def _fp8(kind: str, tile: tuple[int, int], promotion: int = 0, c_dtype: str = "bfloat16",
         scales: tuple[str, str] = ("tensor", "tensor"), epi_buffers: int = 2) -> GemmConfig:
    return _cfg(kind, tile, dtype=FP8_DTYPES[0], c_dtype=c_dtype, mma_promotion_interval=promotion,
                scale_a=scales[0], scale_b=scales[1], epi_buffers=epi_buffers)


# the scaled kernel's split form (dense_gemm_split_scaled): E4M3 operands, device scales applied after the fix-up
FP8_SPLIT_GPU_CASES = (
    # stream-K with two-level accumulation (a unit's K range starts its own promotion period), per-tensor scales
    SplitCase(_fp8("stream_k", (128, 128), promotion=4), (256, 512, 4096), 1, 3),
    # split-K, rowwise scales (per row of A, per column of B), odd M and N; one consumer warpgroup promoting every
    # K-tile with two chains in flight (units of 10 and 11 K-tiles: both ends of kernel._promoting_pairs)
    SplitCase(_fp8("split_k", (64, 128), promotion=4, scales=("m", "n")), (200, 1000, 4096), 3, 3),
    # split-K into an E4M3 C (satfinite(D * out_scale), amax) on the wide tile
    SplitCase(_fp8("split_k", (128, 256), c_dtype=FP8_DTYPES[0]), (300, 512, 2048), 4, 4),
    # an E4M3 C's one 128-column chunk per 128 x 128 tile: one staging buffer (k_choice.shared_k_config), promotion
    SplitCase(_fp8("split_k", (128, 128), 4, FP8_DTYPES[0], epi_buffers=1), (128, 1024, 4096), 4, 4),
)


# the fused kernel's split form (dense_gemm_split_fused): the final part's epilogue after the fix-up
FUSED_SPLIT_GPU_CASES = (
    # split-K on the wide tile: bias along N, an input addend, erf GELU
    SplitCase(_cfg("split_k", (128, 256), dtype="bfloat16", activation="gelu", bias="n", has_input=True),
              (512, 1024, 4096), 3, 3),
    # stream-K, many units per tile: a bias along M, alpha, SiLU, odd N
    SplitCase(_cfg("stream_k", (128, 128), activation="silu", bias="m", has_alpha=True), (256, 500, 4096), 1, 3),
    # split-K on 256x128: the final part's epilogue stores both slabs of each warpgroup (bias along M, tanh GELU)
    SplitCase(_cfg("split_k", (256, 128), activation="gelu_tanh", bias="m"), (600, 1000, 4096), 3, 3),
    # the decode bias row's pick (128 x 4096 -> 16384): split-K on 64x128 with a 2x1 cluster
    SplitCase(_cfg("split_k", (64, 128), (2, 1), dtype="bfloat16", bias="n"), (128, 2048, 4096), 2, 2),
    # split-K on 128x256 with a 2x1 cluster, gemm()'s pick where A's and B's rows are off sectors (K = 4104: rows of
    # 8208 bytes, 16 mod 32): bias along N, SiLU
    SplitCase(_cfg("split_k", (128, 256), (2, 1), dtype="bfloat16", activation="silu", bias="n"), (700, 1000, 4104),
              3, 3),
    # split-K on 128x160 with a 2x1 cluster spanning M's edge, rows off sectors (K = 8200), a partial second tile of N
    # = 296 (`k_choice.SIXTEEN_BIT_SHARED_K_TILES`): bias along N, tanh GELU
    SplitCase(_cfg("split_k", (128, 160), (2, 1), activation="gelu_tanh", bias="n", epi_buffers=1),
              (600, 296, 8200), 3, 3),
)


def split_sweep_configs() -> list[GemmConfig]:
    """Representative split-K / stream-K configs for the compile sweep (0 spills): the tiles and clusters the
    choice uses for them (k_choice's `shared_k_tiles`, split-K also on each cluster of SPLIT_K_CLUSTERS, and
    SMALL_M_TILES for split-K) in both dtypes, and the GPU cases' (the FP8 ones: the scaled kernel's split form;
    the fused ones: the fused kernel's)."""
    from .k_choice import SMALL_M_TILES, SPLIT_K_CLUSTERS, shared_k_config, shared_k_tiles

    out = []
    for dtype in AB_DTYPES:
        base = _cfg("data_parallel", (128, 128), dtype=dtype)
        for kind in ("split_k", "stream_k"):
            out += [shared_k_config(base, tile, kind) for tile in shared_k_tiles(base.ab_bytes)]
        for cluster in SPLIT_K_CLUSTERS[1:]:
            out += [shared_k_config(base, tile, "split_k", cluster) for tile in shared_k_tiles(base.ab_bytes)]
        out += [shared_k_config(base, tile, "split_k") for tile in SMALL_M_TILES]
    out += [c.config for c in SPLIT_GPU_CASES + FP8_SPLIT_GPU_CASES + FUSED_SPLIT_GPU_CASES]
    return list(dict.fromkeys(out))

"""FP8 (E4M3/E5M2) GEMM configurations: a representative set the CPU CI compiles and the AOT bundle carries."""

from __future__ import annotations

from .spec import FP8_DTYPES, GemmConfig

__all__ = ["fp8_configs"]

E4M3, E5M2 = FP8_DTYPES


def fp8_configs() -> list[GemmConfig]:
    """Every (A, B) 8-bit pair, every C dtype, the three tile N widths, clusters, both C majors, the "base" variant."""
    return [
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="bfloat16"),
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="bfloat16", tile_n=256, cluster_m=2),
        GemmConfig(a_dtype=E4M3, b_dtype=E5M2, c_dtype="float32", tile_n=256),
        GemmConfig(a_dtype=E5M2, b_dtype=E4M3, c_dtype="float16", cluster_n=2),
        GemmConfig(a_dtype=E5M2, b_dtype=E5M2, c_dtype="bfloat16", tile_m=64, tile_n=64, c_major="m"),
        GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype="float16", cluster_m=2, cluster_n=2).with_variant("base"),
    ]

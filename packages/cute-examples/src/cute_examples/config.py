"""Environment settings of cute_examples (the only module of the package that reads the environment).

CUTE_TUNE_CACHE  path of the JSON file where `python -m cute_examples.dense_gemm --tune` keeps the fastest
                 GEMM configuration per (shape, dtypes, majors, device name)
                 (default: $XDG_CACHE_HOME/cute-examples/gemm_tune.json, else ~/.cache/...)
CUTE_GEMM_DECOMPOSE  "0" keeps gemm() data-parallel (no split-K / stream-K pick; default: the cost model decides)
CUTE_GEMM_PDL    "0" launches gemm()'s kernels without programmatic dependent launch (default: with it, so that a
                 GEMM's launch and prologue overlap the end of the stream's previous kernel)
"""

from __future__ import annotations

import os

__all__ = ["gemm_decompose", "gemm_pdl", "tune_cache_path"]


def gemm_decompose() -> bool:
    """Whether gemm() may run split-K / stream-K when the cost model prefers it (CUTE_GEMM_DECOMPOSE != "0")."""
    return os.environ.get("CUTE_GEMM_DECOMPOSE", "1").strip().lower() not in ("0", "false", "no", "off")


def gemm_pdl() -> bool:
    """Whether gemm()'s plans launch with programmatic dependent launch (CUTE_GEMM_PDL != "0")."""
    return os.environ.get("CUTE_GEMM_PDL", "1").strip().lower() not in ("0", "false", "no", "off")


def tune_cache_path() -> str:
    """The JSON file of tuned GEMM configurations."""
    p = os.environ.get("CUTE_TUNE_CACHE", "").strip()
    if p:
        return os.path.abspath(os.path.expanduser(p))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cute-examples", "gemm_tune.json")

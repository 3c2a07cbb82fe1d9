"""Which K decomposition a GEMM shape runs with: data-parallel, split-K or stream-K, from the cost model.

`choice.estimate_us` prices each kind (the one model; its constants in `k_calibration.json`).
`choose_decomposition(shape, cfg, num_sms)` returns the kind and split count whose modelled time is least,
keeping data-parallel unless another kind is `min_gain` faster and its partial tiles fit in
`split_k.MAX_WORKSPACE_BYTES`. `decomposed_config` tries the shared-K kinds (cooperative, cluster 1x1) on the
tiles `SHARED_K_TILES` (what the AOT bundle holds) against the data-parallel pick, whatever its schedule; for
M <= `SMALL_M` (decode-like rows) only split-K on the narrowest tiles `SMALL_M_TILES` (measured on an H200,
stream-K on those rows lost to data-parallel on 64x64 tiles by up to 1.7x, its final parts reading many
partial tiles), compared without the DRAM floor: every such launch models at that floor, and how near it gets
depends on how many SMs stream the weight (a 64-tile data-parallel launch reached 3.4 TB/s, split-K 4 TB/s).
`limiter` names the bound of a modelled launch (DRAM, SM loads or tensor cores).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from . import choice
from .calibration import Calibration, calibration
from .choice import io_bytes
from .spec import GemmConfig

__all__ = [
    "MAX_SPLITS",
    "SHARED_K_TILES",
    "SMALL_M",
    "SMALL_M_TILES",
    "KChoice",
    "choose_decomposition",
    "decomposed_config",
    "estimate_us",
    "limiter",
    "partial_bytes",
]

SHARED_K_TILES = ((128, 256), (128, 128), (64, 256), (64, 128))
SMALL_M = 64  # rows up to this M: split-K only, on SMALL_M_TILES
SMALL_M_TILES = ((64, 128),)  # the narrowest split tile (64x64's one epilogue chunk breaks the buffer parity)
MAX_SPLITS = 16


@dataclass(frozen=True)
class KChoice:
    """A modelled decomposition: kind, split-K parts (1 otherwise) and the model's microseconds."""

    kind: str
    splits: int
    us: float


def partial_bytes(shape: Any, cfg: GemmConfig, num_sms: int, kind: str, splits: int = 1) -> int:
    """Bytes of float32 partial tiles a launch of cfg's tile decomposed as `kind` needs (0: data-parallel)."""
    from cute_nvarch.tile_scheduler import Decomposition

    if kind == "data_parallel":
        return 0
    sched = cfg.tile_scheduler
    kt = sched.problem_tiles(shape.m, shape.n, shape.k)[2]
    decomp = Decomposition(kind, min(splits, kt) if kind == "split_k" else 1)
    if decomp.kind == "split_k" and decomp.splits < 2:
        return 0
    clusters = sched.decomposed_clusters(decomp, shape.m, shape.n, shape.k, shape.l, num_sms)
    return sched.partial_tiles(decomp, shape.m, shape.n, shape.k, shape.l, clusters) * cfg.tile_m * cfg.tile_n * 4


def estimate_us(shape: Any, cfg: GemmConfig, num_sms: int, kind: str, splits: int = 1,
                cal: Calibration | None = None, dram_floor: bool = True) -> float:
    """Modelled microseconds of `shape` (m, n, k, l) with cfg's dtypes, tile, cluster and schedule decomposed as
    `kind`."""
    problem = choice.GemmShape(shape.m, shape.n, shape.k, shape.l, ab_dtype=cfg.a_dtype, c_dtype=cfg.c_dtype)
    return choice.estimate_us(problem, (cfg.tile_m, cfg.tile_n), (cfg.cluster_m, cfg.cluster_n), num_sms,
                              cfg.schedule, kind, splits, cal, dram_floor)


def limiter(shape: Any, cfg: GemmConfig, num_sms: int, kind: str, splits: int = 1,
            cal: Calibration | None = None) -> str:
    """Which bound the model's time for the launch is: "DRAM", "SM loads" (operand streaming per SM) or
    "tensor cores"."""
    cal = cal or calibration()
    moved = io_bytes(shape.m, shape.n, shape.k, shape.l, cfg.ab_bytes, cfg.c_bytes)
    moved += 2 * partial_bytes(shape, cfg, num_sms, kind, splits)
    if moved / cal.hbm_bytes_per_us >= estimate_us(shape, cfg, num_sms, kind, splits, cal) * 0.999:
        return "DRAM"
    problem = choice.GemmShape(shape.m, shape.n, shape.k, shape.l, ab_dtype=cfg.a_dtype, c_dtype=cfg.c_dtype)
    wgmma, loads = choice.k_tile_us(problem, (cfg.tile_m, cfg.tile_n), (cfg.cluster_m, cfg.cluster_n), cfg.schedule,
                                    cal)
    return "SM loads" if loads >= wgmma else "tensor cores"


def choose_decomposition(shape: Any, cfg: GemmConfig, num_sms: int, cal: Calibration | None = None,
                         kinds: tuple[str, ...] = ("stream_k", "split_k")) -> KChoice:
    """The fastest modelled (kind, splits) for `shape` with cfg's tile among data-parallel and `kinds`
    (data-parallel unless `min_gain` faster; only decompositions whose partial tiles fit MAX_WORKSPACE_BYTES)."""
    from .split_k import MAX_WORKSPACE_BYTES

    cal = cal or calibration()
    floor = shape.m > SMALL_M
    dp = KChoice("data_parallel", 1, estimate_us(shape, cfg, num_sms, "data_parallel", cal=cal, dram_floor=floor))
    if cfg.fused or cfg.acc_dtype != "float32":
        return dp
    kt = cfg.tile_scheduler.problem_tiles(shape.m, shape.n, shape.k)[2]
    best = dp
    cands = [("stream_k", 1)] * ("stream_k" in kinds)
    cands += [("split_k", s) for s in range(2, min(MAX_SPLITS, kt) + 1)] * ("split_k" in kinds)
    for kind, s in cands:
        if partial_bytes(shape, cfg, num_sms, kind, s) > MAX_WORKSPACE_BYTES:
            continue
        t = estimate_us(shape, cfg, num_sms, kind, s, cal, floor)
        if t < best.us:
            best = KChoice(kind, s, t)
    return best if best.us < dp.us * (1 - cal.min_gain) else dp


def decomposed_config(shape: Any, dp_cfg: GemmConfig, num_sms: int,
                      cal: Calibration | None = None) -> tuple[GemmConfig, KChoice]:
    """(config, choice) for `shape`: dp_cfg (the data-parallel pick) unless a shared-K kind with cluster 1x1 on
    one of `SHARED_K_TILES` (M <= SMALL_M: split-K on `SMALL_M_TILES`) is modelled `min_gain` faster."""
    cal = cal or calibration()
    floor = shape.m > SMALL_M
    dp = KChoice("data_parallel", 1, estimate_us(shape, dp_cfg, num_sms, "data_parallel", cal=cal, dram_floor=floor))
    if dp_cfg.fused or dp_cfg.acc_dtype != "float32" or dp_cfg.ab_bytes < 2:
        return dp_cfg, dp  # (8-bit operands: no split-K / stream-K GPU case yet)
    small = shape.m <= SMALL_M
    tiles, kinds = (SMALL_M_TILES, ("split_k",)) if small else (SHARED_K_TILES, ("stream_k", "split_k"))
    best_cfg, best = dp_cfg, dp
    for tile in tiles:
        if dp_cfg.c_dtype == "float32" and tile[1] == 256:
            continue
        try:
            cfg = dataclasses.replace(dp_cfg, tile_m=tile[0], tile_n=tile[1], cluster_m=1, cluster_n=1, stages=None,
                                      schedule="cooperative", decomposition=kinds[0])
        except ValueError:
            continue  # e.g. a C whose epilogue chunks break the rule for this tile
        c = choose_decomposition(shape, dataclasses.replace(cfg, decomposition="data_parallel"), num_sms, cal, kinds)
        if c.kind != "data_parallel" and c.us < best.us:
            best_cfg, best = dataclasses.replace(cfg, decomposition=c.kind), c
    if best.us < dp.us * (1 - cal.min_gain):
        return best_cfg, best
    return dp_cfg, dp

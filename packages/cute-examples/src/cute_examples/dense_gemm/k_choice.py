"""Which K decomposition a GEMM shape runs with: data-parallel, split-K or stream-K, from a calibrated model.

The model prices one persistent launch of a config on `num_sms` SMs from wave quantisation and K length:

- one K tile of a CTA tile (tile_m x tile_n x 64) costs `t_k = max(FLOP / (sm_flop * efficiency(tile)),
  operand bytes / sm_load)`: compute-bound on big tiles, load-bound when an SM streams its operands alone;
- data-parallel: `ceil(T / P)` rounds of `k_tiles * t_k + epilogue + fixed` (T cluster tiles, P clusters);
- split-K with S parts: `ceil(T * S / P)` rounds of `ceil(k_tiles / S) * t_k + fixed`, plus the ordered
  fix-up of a tile (each of S - 1 parts stores and the next reads a float32 tile: `2 (S - 1)` transfers at
  `sm_fixup` bytes/us) and one epilogue;
- stream-K: `T // P` data-parallel rounds, then each of the W workers' `ceil(iterations / W)` K tiles, two
  unit overheads, the fix-ups of the tiles it shares and an epilogue;
- every launch takes at least the DRAM time of its operands and output (`hbm` bytes/us, A and B read once).
`choose_decomposition(shape, cfg, num_sms)` returns the kind and split count whose modelled time is least,
keeping data-parallel unless another kind is `min_gain` faster; the shared-K kinds run with cluster 1x1 on the
tiles `SHARED_K_TILES` (what the AOT bundle holds). The constants are in `k_calibration.json`, written by
`python -m cute_examples.dense_gemm.calibrate --write` on a GPU (the file names the device and date).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from dataclasses import dataclass
from typing import Any

from .choice import TILE_EFFICIENCY
from .spec import DTYPE_BYTES, GemmConfig

__all__ = [
    "CALIBRATION_FILE",
    "MAX_SPLITS",
    "SHARED_K_TILES",
    "Calibration",
    "KChoice",
    "calibration",
    "choose_decomposition",
    "decomposed_config",
    "estimate_us",
    "limiter",
]

CALIBRATION_FILE = os.path.join(os.path.dirname(__file__), "k_calibration.json")
SHARED_K_TILES = ((128, 256), (128, 128), (64, 256), (64, 128))
MAX_SPLITS = 16


@dataclass(frozen=True)
class Calibration:
    """The model's constants (see `k_calibration.json`)."""

    sm_flop_per_us: float
    sm_load_bytes_per_us: float
    hbm_bytes_per_us: float
    sm_store_bytes_per_us: float
    sm_fixup_bytes_per_us: float
    unit_fixed_us: float
    min_gain: float
    num_sms: int = 132
    device: str = ""
    date: str = ""


@functools.lru_cache(maxsize=4)
def calibration(path: str = CALIBRATION_FILE) -> Calibration:
    """The constants stored at `path` (ValueError naming a missing or non-positive field)."""
    with open(path) as f:
        data = json.load(f)
    fields = {f.name for f in dataclasses.fields(Calibration)}
    kw = {k: v for k, v in data.items() if k in fields}
    for f in dataclasses.fields(Calibration):
        if f.default is dataclasses.MISSING and f.name not in kw:
            raise ValueError(f"{path}: calibration field {f.name!r} is missing")
        if f.name in kw and f.type in ("float", "int") and not kw[f.name] > 0 and f.name != "min_gain":
            raise ValueError(f"{path}: calibration field {f.name!r} must be > 0, got {kw[f.name]!r}")
    return Calibration(**kw)


@dataclass(frozen=True)
class KChoice:
    """A modelled decomposition: kind, split-K parts (1 otherwise) and the model's microseconds."""

    kind: str
    splits: int
    us: float


def _k_tile_us(cal: Calibration, tm: int, tn: int, ab_bytes: int) -> float:
    eff = TILE_EFFICIENCY.get((tm, tn), 0.5)
    compute = 2.0 * tm * tn * 64 / (cal.sm_flop_per_us * eff)
    load = (tm + tn) * 64 * ab_bytes / cal.sm_load_bytes_per_us
    return max(compute, load)


def estimate_us(shape: Any, cfg: GemmConfig, num_sms: int, kind: str, splits: int = 1,
                cal: Calibration | None = None) -> float:
    """Modelled microseconds of `shape` (m, n, k, l) with cfg's tile and cluster decomposed as `kind`."""
    from cute_nvarch.tile_scheduler import KWork

    cal = cal or calibration()
    sched = cfg.tile_scheduler
    tiles_m, tiles_n, kt = sched.problem_tiles(shape.m, shape.n, shape.k)
    tiles = sched.units_of_tiles(tiles_m, tiles_n, shape.l)
    p = sched.max_clusters(num_sms)
    tm, tn = cfg.tile_m, cfg.tile_n
    t_k = _k_tile_us(cal, tm, tn, cfg.ab_bytes)
    epi = tm * tn * cfg.c_bytes / cal.sm_store_bytes_per_us
    fix = tm * tn * 4 / cal.sm_fixup_bytes_per_us
    fixed = cal.unit_fixed_us
    if kind == "split_k":
        s = min(splits, kt)
        rounds = -(-tiles * s // p)
        t = rounds * (-(-kt // s) * t_k + fixed) + 2 * (s - 1) * fix + epi
    elif kind == "stream_k":
        work = KWork("stream_k", tiles, kt, p)
        t = (tiles // p) * (kt * t_k + epi + fixed)
        if work.workers:
            per = -(-work.iters // work.workers)
            shared = min(-(-kt // per) + 1, 3)  # units on one tile's fix-up chain (the backward walk overlaps more)
            t += per * t_k + 2 * fixed + 2 * shared * fix + epi
    else:
        t = -(-tiles // p) * (kt * t_k + epi + fixed)
    dram = ((shape.m + shape.n) * shape.k * cfg.ab_bytes + shape.m * shape.n * DTYPE_BYTES[cfg.c_dtype]) * shape.l
    return max(t, dram / cal.hbm_bytes_per_us)


def limiter(shape: Any, cfg: GemmConfig, num_sms: int, kind: str, splits: int = 1,
            cal: Calibration | None = None) -> str:
    """Which bound the model's time for the launch is: "DRAM", "SM loads" (operand streaming per SM) or
    "tensor cores"."""
    cal = cal or calibration()
    dram = ((shape.m + shape.n) * shape.k * cfg.ab_bytes + shape.m * shape.n * DTYPE_BYTES[cfg.c_dtype]) * shape.l
    if dram / cal.hbm_bytes_per_us >= estimate_us(shape, cfg, num_sms, kind, splits, cal) * 0.999:
        return "DRAM"
    eff = TILE_EFFICIENCY.get((cfg.tile_m, cfg.tile_n), 0.5)
    compute = 2.0 * cfg.tile_m * cfg.tile_n * 64 / (cal.sm_flop_per_us * eff)
    return "tensor cores" if compute >= _k_tile_us(cal, cfg.tile_m, cfg.tile_n, cfg.ab_bytes) else "SM loads"


def choose_decomposition(shape: Any, cfg: GemmConfig, num_sms: int, cal: Calibration | None = None) -> KChoice:
    """The fastest modelled (kind, splits) for `shape` with cfg's tile (data-parallel unless `min_gain` faster)."""
    cal = cal or calibration()
    dp = KChoice("data_parallel", 1, estimate_us(shape, cfg, num_sms, "data_parallel", cal=cal))
    if cfg.fused or cfg.acc_dtype != "float32":
        return dp
    kt = cfg.tile_scheduler.problem_tiles(shape.m, shape.n, shape.k)[2]
    best = dp
    cands = [("stream_k", 1)] + [("split_k", s) for s in range(2, min(MAX_SPLITS, kt) + 1)]
    for kind, s in cands:
        t = estimate_us(shape, cfg, num_sms, kind, s, cal)
        if t < best.us:
            best = KChoice(kind, s, t)
    return best if best.us < dp.us * (1 - cal.min_gain) else dp


def decomposed_config(shape: Any, dp_cfg: GemmConfig, num_sms: int,
                      cal: Calibration | None = None) -> tuple[GemmConfig, KChoice]:
    """(config, choice) for `shape`: dp_cfg (the data-parallel pick) unless a shared-K kind on one of the
    `SHARED_K_TILES` tiles with cluster 1x1 is modelled `min_gain` faster than dp_cfg."""
    cal = cal or calibration()
    dp = KChoice("data_parallel", 1, estimate_us(shape, dp_cfg, num_sms, "data_parallel", cal=cal))
    if dp_cfg.fused or dp_cfg.acc_dtype != "float32":
        return dp_cfg, dp
    best_cfg, best = dp_cfg, dp
    for tile in SHARED_K_TILES:
        if dp_cfg.c_dtype == "float32" and tile[1] == 256:
            continue
        try:
            cfg = dataclasses.replace(dp_cfg, tile_m=tile[0], tile_n=tile[1], cluster_m=1, cluster_n=1, stages=None,
                                      decomposition="stream_k")
        except ValueError:
            continue  # e.g. a C whose epilogue chunks break the rule for this tile
        c = choose_decomposition(shape, dataclasses.replace(cfg, decomposition="data_parallel"), num_sms, cal)
        if c.kind != "data_parallel" and c.us < best.us:
            best_cfg, best = dataclasses.replace(cfg, decomposition=c.kind), c
    if best.us < dp.us * (1 - cal.min_gain):
        return best_cfg, best
    return dp_cfg, dp

"""How long a GEMM launch takes, and which tile, cluster and schedule to run a shape with: the one cost model.

The persistent kernel runs `units` cluster-shaped work units on `P = num_sms // cluster_size` clusters. A K tile
(one 128-byte row of A and B per row: 64 16-bit or 128 8-bit elements) of a CTA tile costs the longer of its
wgmma time (`2 * tile_m * tile_n * 64` FLOP at the per-SM rate times the tile's efficiency in its schedule, less
`cluster_cost` in a cluster) and its operand loads (`min(tile_m, M)` rows of A and `tile_n` of B, 128 bytes each,
through L2, or streamed from DRAM at a lower per-SM rate when no other CTA reads them, as B in a decode-like launch;
a cluster's multicast divides B's rows by cluster_m and A's by cluster_n). Then, per launch kind:

- data-parallel, cooperative: `ceil(units / P)` rounds of (K loop + epilogue + `unit_fixed_us`);
- data-parallel, ping-pong (two consumer warpgroups own alternate tiles): the rounds' K loops and
  `pingpong_unit_fixed_us` each, the epilogues hidden behind the other warpgroup's K loop but for the last one
  and an exposed fraction `pingpong_epilogue_exposed` of the others;
- split-K with S parts: `ceil(units * S / P)` rounds of `ceil(k_tiles / S)` K tiles plus the fixed cost, S
  float32 partial-tile transfers on the final part's path (`split_k`'s parallel fix-up) and one epilogue;
- stream-K: `units // P` data-parallel rounds, then each worker's `ceil(iterations / W)` K tiles, two unit
  overheads, the transfers of the tile with the most parts and an epilogue;
- no launch beats the DRAM time of reading A and B once, writing C once and moving its partial tiles.

The constants (`calibration`, `k_calibration.json`) were fitted by `calibrate` to `scripts/gemm_sweep.py` tables
on an H200 (2026-11-25: 33 shapes with every tile x cluster x schedule and the split-K / stream-K kinds, plus 50
shape x dtype rows of the cooperative data-parallel configs; the rows are the tests' `data/config_sweep_h200.json`):
the model's first-ranked measured config runs at 0.969 of the fastest (geometric mean), and the whole choice of a
gemm() call (`rank_configs` here, then `k_choice`'s decomposition) at 0.958 on the 33 shapes, where the choice
before this model ran at 0.900 (CPU tests hold both).

`rank_configs(shape)` orders every (tile, cluster, schedule) by that estimate (float32 C only with N <= 128; the
ping-pong schedule for 16-bit A, B and C on the tiles whose accumulators fit one warpgroup). Ties (a DRAM-bound
launch) go to the config that pulls 10% fewer operand bytes from L2 (multicast), then the larger tile, then
cooperative, then no cluster, then 2x1 over 1x2. `shape` is anything with `m, n, k, l,
ab_dtype, c_dtype` (a `GemmProblem` or a `GemmShape`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

from cute_nvarch.numeric import numeric_type
from cute_nvarch.tile_scheduler import KWork, TileScheduler

from .calibration import Calibration, calibration
from .spec import DTYPE_BYTES

__all__ = [
    "CLUSTER_CHOICES",
    "TILES",
    "GemmShape",
    "Pick",
    "estimate_us",
    "io_bytes",
    "k_tile_us",
    "rank_configs",
]

TILES = ((128, 256), (128, 128), (64, 256), (64, 128), (128, 64), (64, 64))  # the CTA tiles the model ranks
CLUSTER_CHOICES = ((1, 1), (2, 1), (1, 2))
_ROW_BYTES = 128  # one K tile's row of an operand (tile_k elements: 64 16-bit or 128 8-bit)
_PINGPONG_BYTES = 2  # the ping-pong schedule is ranked for 16-bit A, B and C (what its constants were fitted on)


class Pick(NamedTuple):
    """A ranked launch shape: CTA tile (tile_m, tile_n), cluster (cluster_m, cluster_n), consumer schedule."""

    tile: tuple[int, int]
    cluster: tuple[int, int]
    schedule: str


@dataclass(frozen=True)
class GemmShape:
    """A GEMM's sizes, majors and dtypes without tensors (for config choice, AOT lists and tuning keys)."""

    m: int
    n: int
    k: int
    l: int = 1
    ab_dtype: str = "float16"
    c_dtype: str = "float16"
    a_major: str = "k"
    b_major: str = "k"
    c_major: str = "n"

    def __post_init__(self) -> None:
        for f in ("m", "n", "k", "l"):
            v = getattr(self, f)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{f} must be an int >= 1, got {v!r}")


def k_tile_us(shape: Any, tile: tuple[int, int], cluster: tuple[int, int], schedule: str = "cooperative",
              cal: Calibration | None = None) -> tuple[float, float]:
    """(wgmma, operand load) microseconds of one K tile of a CTA tile of `shape` (a K tile costs the longer).

    An operand that no other CTA reads (B when the tile spans all of M, A when it spans all of N) streams from
    DRAM at `sm_stream_bytes_per_us`; a shared one comes through L2 at `sm_load_bytes_per_us`."""
    cal = cal or calibration()
    eff = cal.efficiency(schedule, tile)
    if eff is None:
        raise ValueError(f"tile {tile} has no calibrated efficiency in the {schedule!r} schedule")
    tm, tn = tile
    cm, cn = cluster
    eff *= 1 - cal.cluster_cost if cm * cn > 1 else 1
    wgmma = 2.0 * tm * tn * 64 / (cal.sm_flop_per_us * eff)
    a_rate = cal.sm_stream_bytes_per_us if shape.n <= tn else cal.sm_load_bytes_per_us
    b_rate = cal.sm_stream_bytes_per_us if shape.m <= tm else cal.sm_load_bytes_per_us
    loads = (min(tm, shape.m) / cn / a_rate + tn / cm / b_rate) * _ROW_BYTES
    return wgmma, loads


def estimate_us(shape: Any, tile: tuple[int, int], cluster: tuple[int, int], num_sms: int = 132,
                schedule: str = "cooperative", kind: str = "data_parallel", splits: int = 1,
                cal: Calibration | None = None, dram_floor: bool = True) -> float:
    """Modelled microseconds of `shape` with CTA tile (tile_m, tile_n), cluster (cm, cn), consumer `schedule` and
    K decomposition `kind` (split-K: `splits` parts) on `num_sms` SMs (`dram_floor` False: the SMs' time alone)."""
    if tile not in TILES:
        raise ValueError(f"tile must be one of {TILES}, got {tile}")
    if num_sms < 1:
        raise ValueError(f"num_sms must be >= 1, got {num_sms}")
    cal = cal or calibration()
    tm, tn = tile
    sched = _scheduler(tm, tn, *cluster)
    tiles_m, tiles_n, _ = sched.problem_tiles(shape.m, shape.n, shape.k)
    ab_bytes = numeric_type(shape.ab_dtype).bytes
    kt = -(-shape.k * ab_bytes // _ROW_BYTES)
    units = sched.units_of_tiles(tiles_m, tiles_n, shape.l)
    p = sched.max_clusters(num_sms)
    t_k = max(k_tile_us(shape, tile, cluster, schedule, cal))
    epi = tm * tn * DTYPE_BYTES[shape.c_dtype] / cal.sm_store_bytes_per_us
    fix = tm * tn * 4 / cal.sm_fixup_bytes_per_us  # one float32 partial tile between a CTA and L2
    fixed = cal.unit_fixed_us
    partial_bytes = 0
    if kind == "split_k":
        s = min(splits, kt)
        t = -(-units * s // p) * (-(-kt // s) * t_k + fixed) + (s * fix if s > 1 else 0.0) + epi
        partial_bytes = units * (s - 1) * tm * tn * 4
    elif kind == "stream_k":
        work = KWork("stream_k", units, kt, p)
        t = (units // p) * (kt * t_k + epi + fixed)
        if work.workers:
            per = work.iters // work.workers  # the fewest iterations a worker has: the most parts on a tile
            parts = min(-(-(kt - 1) // per) + 1, work.workers)
            t += -(-work.iters // work.workers) * t_k + 2 * fixed + (parts * fix if parts > 1 else 0.0) + epi
        partial_bytes = work.workers * tm * tn * 4
    elif kind != "data_parallel":
        raise ValueError(f"kind must be data_parallel, split_k or stream_k, got {kind!r}")
    else:
        rounds = -(-units // p)
        if schedule == "pingpong":
            exposed = 1 + (rounds - 1) * cal.pingpong_epilogue_exposed  # the last epilogue, parts of the others
            t = rounds * (kt * t_k + cal.pingpong_unit_fixed_us) + epi * exposed
        else:
            t = rounds * (kt * t_k + epi + fixed)
    if not dram_floor:
        return t
    moved = io_bytes(shape.m, shape.n, shape.k, shape.l, ab_bytes, DTYPE_BYTES[shape.c_dtype]) + 2 * partial_bytes
    return max(t, moved / cal.hbm_bytes_per_us)


def io_bytes(m: int, n: int, k: int, l: int, ab_bytes: int, c_bytes: int) -> int:  # noqa: E741 - CuTe's name
    """The bytes a GEMM moves to or from DRAM at least: A and B read once, C written once."""
    return ((m + n) * k * ab_bytes + m * n * c_bytes) * l


@functools.lru_cache(maxsize=64)
def _scheduler(tile_m: int, tile_n: int, cluster_m: int, cluster_n: int) -> TileScheduler:
    return TileScheduler(tile_m, tile_n, 64, cluster_m, cluster_n)


def rank_configs(shape: Any, num_sms: int = 132, schedules: tuple[str, ...] | None = None) -> list[Pick]:
    """Every (tile, cluster, schedule) that can run `shape`, fastest modelled first (ties: see the module doc);
    `schedules` defaults to both for 16-bit A, B and C, else cooperative."""
    if schedules is None:
        sixteen = numeric_type(shape.ab_dtype).bytes == DTYPE_BYTES[shape.c_dtype] == _PINGPONG_BYTES
        schedules = ("cooperative", "pingpong") if sixteen else ("cooperative",)
    return list(_ranked(shape.m, shape.n, shape.k, shape.l, shape.c_dtype, num_sms, shape.ab_dtype,
                        tuple(schedules)))


@functools.lru_cache(maxsize=1024)
def _ranked(m: int, n: int, k: int, l: int, c_dtype: str, num_sms: int, ab_dtype: str,  # noqa: E741
            schedules: tuple[str, ...]) -> tuple:
    """rank_configs of one problem (cached: the launch path asks once per call)."""
    shape = GemmShape(m, n, k, l, ab_dtype=ab_dtype, c_dtype=c_dtype)
    cal = calibration()
    out = []
    for tile in TILES:
        if tile[1] == 256 and c_dtype == "float32":
            continue  # float32 C stays at N <= 128 (the configurations the GPU tests cover)
        for cluster in CLUSTER_CHOICES:
            tiles_m, tiles_n, _ = _scheduler(*tile, *cluster).problem_tiles(m, n, k)
            # a cluster dimension beyond the tile grid only adds idle CTAs
            if cluster[0] > 1 and tiles_m < cluster[0]:
                continue
            if cluster[1] > 1 and tiles_n < cluster[1]:
                continue
            # operand rows the CTAs pull from L2 per K tile (multicast shares them): between configs of one modelled
            # time (a DRAM-bound launch) the one that moves 10% fewer bytes goes first
            rows = tiles_m * tiles_n * (min(tile[0], m) / cluster[1] + tile[1] / cluster[0])
            for schedule in schedules:
                if cal.efficiency(schedule, tile) is None:
                    continue  # e.g. a ping-pong tile whose accumulators do not fit one warpgroup
                t = estimate_us(shape, tile, cluster, num_sms, schedule, cal=cal)
                out.append((round(t, 6), round(math.log(rows, 1.1)), -tile[0] * tile[1], schedule != "cooperative",
                            cluster != (1, 1), -cluster[0], Pick(tile, cluster, schedule)))
    out.sort()
    return tuple(x[-1] for x in out)

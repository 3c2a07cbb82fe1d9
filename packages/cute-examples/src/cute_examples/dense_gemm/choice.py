"""Which tile and cluster to run a GEMM shape with: a wave-quantisation cost model over the supported configs.

The persistent kernel runs `units` cluster-shaped work units on `num_sms // cluster_size` clusters, so a
problem takes `ceil(units / clusters)` rounds of one unit each. One round costs the mainloop of one CTA tile
(`2 * tile_m * tile_n * 64 * k_tiles` FLOP at the per-SM peak times the tile's efficiency) plus its
epilogue and a fixed pipeline fill. Partial tiles cost as much as full ones. Efficiencies are estimates from
CUTLASS's SM90 warp-specialized kernels relative to 128x256 (two consumer warpgroups with 64x256 each
reach the highest rate; narrower tiles re-load more operand bytes per FLOP and issue smaller wgmmas);
a cluster multicasts operands (B over cluster_m CTAs, A over cluster_n) and gains a few percent in
proportion to the operand bytes it saves (so 2x1 beats 1x2 for a 128x256 tile, whose B is larger) when
at least half of the SMs have a tile.

`rank_configs(shape)` orders every (tile, cluster) by that estimate (float32 C only with N <= 128);
`choose_tile_cluster(shape)` is the first. Ties go to the larger tile, then no cluster, then 2x1 over
1x2. `shape` is anything with `m, n, k, l, c_dtype` (a `GemmProblem` or a `GemmShape`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from cute_nvarch.tile_scheduler import TileScheduler

from .spec import DTYPE_BYTES

__all__ = [
    "CLUSTER_CHOICES",
    "GemmShape",
    "TILE_EFFICIENCY",
    "choose_tile_cluster",
    "estimate_us",
    "rank_configs",
]

# relative wgmma throughput of a CTA tile (tile_m, tile_n) in this kernel, 128x256 = 1
TILE_EFFICIENCY = {
    (128, 256): 1.00,
    (128, 128): 0.86,
    (64, 256): 0.78,
    (128, 64): 0.70,
    (64, 128): 0.68,
    (64, 64): 0.50,
}
CLUSTER_CHOICES = ((1, 1), (2, 1), (1, 2))
_SM_PEAK_FLOP_PER_US = 989e12 / 132 / 1e6  # dense f16/bf16 wgmma, H100 SXM per SM
_SM_STORE_BYTES_PER_US = 50e3  # C bytes an SM retires per microsecond (epilogue partly overlapped)
_FIXED_US = 0.5  # pipeline fill and scheduling per work unit
_MULTICAST_GAIN = 0.1  # rate gained per unit fraction of operand bytes a cluster's multicast saves


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


def estimate_us(shape: Any, tile: tuple[int, int], cluster: tuple[int, int], num_sms: int = 132) -> float:
    """Modelled run time in microseconds of `shape` with CTA tile (tile_m, tile_n) and cluster (cm, cn)."""
    if tile not in TILE_EFFICIENCY:
        raise ValueError(f"tile must be one of {tuple(TILE_EFFICIENCY)}, got {tile}")
    if num_sms < 1:
        raise ValueError(f"num_sms must be >= 1, got {num_sms}")
    tm, tn = tile
    cm, cn = cluster
    sched = _scheduler(tm, tn, cm, cn)  # the kernel's schedule: its tiles, units and clusters
    tiles_m, tiles_n, k_tiles = sched.problem_tiles(shape.m, shape.n, shape.k)
    units = sched.units_of_tiles(tiles_m, tiles_n, shape.l)
    rounds = -(-units // sched.max_clusters(num_sms))
    # a cluster of cm x cn CTAs loads each B tile once per cm CTAs and each A tile once per cn CTAs; that
    # matters once at least half of the SMs run tiles (L2 bandwidth is then shared by many)
    saved = (tn * (1 - 1 / cm) + tm * (1 - 1 / cn)) / (tm + tn)
    if 2 * tiles_m * tiles_n * shape.l < num_sms:
        saved = 0.0
    eff = TILE_EFFICIENCY[tile] * (1 + _MULTICAST_GAIN * saved)
    mainloop = 2.0 * tm * tn * 64 * k_tiles / (_SM_PEAK_FLOP_PER_US * eff)
    epilogue = tm * tn * DTYPE_BYTES[shape.c_dtype] / _SM_STORE_BYTES_PER_US
    return rounds * (mainloop + epilogue + _FIXED_US)


@functools.lru_cache(maxsize=64)
def _scheduler(tile_m: int, tile_n: int, cluster_m: int, cluster_n: int) -> TileScheduler:
    return TileScheduler(tile_m, tile_n, 64, cluster_m, cluster_n)


def rank_configs(shape: Any, num_sms: int = 132) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every (tile, cluster) that can run `shape`, fastest modelled first (ties: see the module doc)."""
    return list(_ranked(shape.m, shape.n, shape.k, shape.l, shape.c_dtype, num_sms))


@functools.lru_cache(maxsize=1024)
def _ranked(m: int, n: int, k: int, l: int, c_dtype: str, num_sms: int) -> tuple:
    """rank_configs of one problem (cached: the launch path asks once per call)."""
    shape = GemmShape(m, n, k, l, c_dtype=c_dtype)
    out = []
    for tile in TILE_EFFICIENCY:
        if tile[1] == 256 and c_dtype == "float32":
            continue  # float32 C stays at N <= 128 (the configurations the GPU tests cover)
        for cluster in CLUSTER_CHOICES:
            tiles_m, tiles_n, _ = _scheduler(*tile, *cluster).problem_tiles(m, n, k)
            # a cluster dimension beyond the tile grid only adds idle CTAs
            if cluster[0] > 1 and tiles_m < cluster[0]:
                continue
            if cluster[1] > 1 and tiles_n < cluster[1]:
                continue
            t = estimate_us(shape, tile, cluster, num_sms)
            out.append((round(t, 6), -tile[0] * tile[1], cluster != (1, 1), -cluster[0], tile, cluster))
    out.sort()
    return tuple((tile, cluster) for *_, tile, cluster in out)


def choose_tile_cluster(shape: Any, num_sms: int = 132) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (tile_m, tile_n) and (cluster_m, cluster_n) with the smallest modelled time for `shape`."""
    return rank_configs(shape, num_sms)[0]

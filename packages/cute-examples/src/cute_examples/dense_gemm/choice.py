"""Which tile and cluster to run a GEMM shape with: a wave-quantisation cost model over the supported configs.

The persistent kernel runs `units` cluster-shaped work units on `num_sms // cluster_size` clusters, so a
problem takes `ceil(units / clusters)` rounds of one unit each. One round costs a CTA tile's K loop plus its
epilogue and a fixed overhead. A K tile costs the longer of its wgmma time (`2 * tile_m * tile_n * 64` FLOP
at the per-SM peak times the tile's efficiency) and its operand loads (the rows of A it holds, `min(tile_m, M)`,
and of B, 128 bytes each, at a per-SM load rate; a cluster's multicast divides B's rows by cluster_m and A's
by cluster_n). Partial tiles cost as much as full ones; no launch beats the DRAM time of its operands and
output. Loads bind the 64-row tiles (one consumer warpgroup, few FLOP per loaded byte): there a cluster's
multicast pays, except on 64x64 (`MULTICAST_SAVES`); the 128-row tiles are compute-bound, where a cluster costs its
synchronisation (`CLUSTER_COST`, on some tiles `TILE_CLUSTER_COST`). A launch without a cluster whose A and B rows
both start off 32-byte sectors (`rows_off_sectors`: K = 7096 in bfloat16, a leading dimension of 16 mod 32 bytes)
pays `OFF_SECTOR_K_TILE_US` per K tile of 128-byte rows.
With 8-bit operands a cluster also costs each K tile `CLUSTER_8BIT_K_TILE_US` (measured on the H200 FP8 sweep,
`data/fp8_sweep_h200.json`: without a cluster every tile ran a median 2-14% faster than with one, where 16-bit
operands gain on L2-bound rows).

The constants were fitted to `scripts/gemm_sweep.py` on an H200 (2026-11-25: 50 shapes x dtypes, every
tile x cluster, timed in CUDA graphs; the rows are in the tests' `data/tile_sweep_h200.json`): the pick runs
within 4.3% of the fastest measured config on geometric mean (the model before them: 8.0%). The tile N 160 rates
were refitted on 2026-11-28 to random shapes (`data/random_sweep_h200.json`: there the pick runs within 6.4%).

`rank_configs(shape)` orders every (tile, cluster) by that estimate (float32 C only with N <= 128; for M <= 64 no
128-row tile, whose DRAM-bound estimates tie with the 64-row tiles' while they run about 10% slower, and no
cluster, which ran a median 9% slower there: the tests' `data/decode_sweep_h200.json`; the 256x128 tile only for
16-bit operands and C without promotion), except that `WIDE_M_SWAP` puts 256x128 with a 1x2 cluster first on the
single-round launches it covers, and `ONE_ROUND_TILES` (128x144, 128x176) rank only on launches of 16-bit operands
that fill the SMs and are single-round or fit N (`ONE_ROUND_FIT_N`); `choose_tile_cluster(shape)` is the first.
Configs at the DRAM floor go by their rounds' headroom under it; ties go to the larger tile, then no cluster, then
2x1 over 1x2. `shape` is anything with `m, n, k, l, c_dtype` (a `GemmProblem` or a `GemmShape`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from cute_nvarch.numeric import numeric_type
from cute_nvarch.tile_scheduler import TileScheduler

from .calibration import calibration
from .spec import DTYPE_BYTES, padded_ld

__all__ = [
    "CLUSTER_CHOICES",
    "CLUSTER_8BIT_K_TILE_US",
    "CLUSTER_COST",
    "TILE_CLUSTER_COST",
    "EIGHT_BIT_EFFICIENCY",
    "GemmShape",
    "OFF_SECTOR_K_TILE_US",
    "ONE_ROUND_FIT_N",
    "ONE_ROUND_MIN_FILL",
    "ONE_ROUND_TILES",
    "MULTICAST_SAVES",
    "TILE_EFFICIENCY",
    "WIDE_M_MIN_K_TILES",
    "WIDE_M_SWAP",
    "choose_tile_cluster",
    "cluster_k_tile_us",
    "estimate_us",
    "io_bytes",
    "multicast_rows",
    "off_sector_k_tile_us",
    "rank_configs",
    "rows_off_sectors",
    "tile_efficiency",
]

# relative wgmma throughput of a CTA tile (tile_m, tile_n) in this kernel, 128x256 = 1 (fitted: module doc)
TILE_EFFICIENCY = {
    (128, 256): 1.00,
    # H200, 30 bfloat16 shapes (the tests' `data/tile_224_sweep_h200.json`): 0.97..0.99 give the same picks; 8192^3
    # ran 2% slower on it than on 128x256 (18 rounds of 2368 tiles against 16 of 2048), where the model's 1.00 chose it
    (128, 224): 0.98,
    (128, 192): 1.00,
    (128, 160): 0.99,
    (128, 128): 0.87,
    (128, 96): 0.87,
    (64, 160): 0.75,
    (64, 96): 0.60,
    (64, 256): 0.76,
    (128, 64): 0.64,
    (64, 128): 0.80,
    (64, 64): 0.52,
    # two consumer warpgroups of two 64-row atoms each (16-bit operands, 16-bit C, no promotion): on multi-round
    # launches 0.99-1.06 of 128x256's time (tests' `data/wide_m_sweep_h200.json`); where its rounds quantise better it
    # is the pick (10 random shapes measured after the fit: 0.92 of the previous pick's time, 0.82-0.99); single-round
    # launches: `WIDE_M_SWAP`
    (256, 128): 0.97,
}
# the same with two-level accumulation (FP8 `mma_promotion_interval`): two float32 accumulators per thread cost the
# wide tiles (H200, promotion every K-tile: 128x192 5% and 128x160 2% faster per FLOP than 128x128 on 8192^3 and
# 4096^3, where without promotion 128x192 is 15%)
PROMOTING_EFFICIENCY = {(128, 192): 0.91, (128, 160): 0.89}
# 8-bit operands (tile K 128) where they differ: the tile N 160 rates were refitted on 16-bit shapes only (128x160
# 0.94 -> 0.99 and 64x160 0.60 -> 0.75 with the tests' `data/random_sweep_h200.json`: the pick on its random shapes
# 0.919 -> 0.936 of the fastest measured config, 0.916 -> 0.921 on the 40 measured after the refit); the FP8 sweep's
# picks keep 64x160 at 0.60 (0.983 of the fastest measured config there, 0.969 at 0.75)
EIGHT_BIT_EFFICIENCY = {(64, 160): 0.60}
# tiles measured with 16-bit operands only: the choice does not offer them to 8-bit ones (nor with promotion)
SIXTEEN_BIT_TILES = ((128, 224), (128, 144), (128, 176))
# tiles offered only to a single-round launch over at least `WIDE_M_MIN_K_TILES` K tiles, where their width fits the
# tile count to the SMs (cuBLAS runs such widths there: 128x144 on 849 x 2648 x 9344, 128x168 on 1292 x 2000 x 9280);
# across multi-round launches 128x176 lost (the tests' `data/tile_176_sweep_h200.json`: 20 fresh random shapes whose
# pick moved to it ran 1.032 of the previous pick's time). H200, single-round long-K shapes (the tests'
# `data/one_round_tile_sweep_h200.json`): 128x176 against 128x192's pick 0.860 / 0.879 / 0.980 of the time, 128x144
# against 128x160 0.932
ONE_ROUND_TILES = {(128, 144): 0.96, (128, 176): 0.98}
# and only where the launch's CTAs fill this share of the SMs: a round of fewer is stream-K's case (3 x 139 x 3072 x
# 4096 as the transposed problem: 72 tiles of 128x144, where stream-K on 128x160 spreads 72 tiles over 132 SMs)
ONE_ROUND_MIN_FILL = 0.9
# and, on any number of rounds, where N spans at most this many of their widths and they pad it less than both
# neighbouring widths (`_fits_n`: N 129..144 or 257..288 on 128x144, 161..176 or 321..352 on 128x176), as a few-row
# problem's transposed N' = M does. H200 (`scripts/pick_ab.py --baseline no-fit-n-tiles --full --layers`, gemm()'s
# whole picks on Llama-3 layers at random token counts): 0.931 of the previous pick's time on 16 fresh rows, all
# faster; before the fill rule applied to it, two rows whose stream-K pick gave way to fewer CTAs ran 1.10-1.15x
ONE_ROUND_FIT_N = 2
CLUSTER_CHOICES = ((1, 1), (2, 1), (1, 2))
CLUSTER_COST = 0.02  # wgmma rate a cluster's synchronisation costs a compute-bound tile
# tiles whose cluster costs more: with a cluster 128x160 ran 5-6% longer against 128x192 than the model said (the
# recorded sweeps' rows measured on both, geometric mean of measured / modelled time ratio: 0.936 with a 2x1 cluster,
# 0.941 with 1x2, 0.98 without); 0.05 lifts every recorded sweep's pick (fastest measured config / pick: tile 0.980 ->
# 0.985, random 0.944 -> 0.945, edge 0.960 -> 0.961, wide-M 0.982 -> 0.989, partial-K 0.990 -> 0.992; 0.06 lowers
# random to 0.941, 0.04 lifts only two)
TILE_CLUSTER_COST = {(128, 160): 0.05}
# what a cluster adds to each K tile of 8-bit operands (fitted to the FP8 sweep: 0.04-0.07 give the same picks;
# the FP8 choice's measured geomean 0.945 / 0.946 without / with promotion, decode 0.928 / 0.955, rose to 0.956 /
# 0.966 and 0.939 / 0.967 with it)
CLUSTER_8BIT_K_TILE_US = 0.05
# the share of a multicast operand's loads a cluster saves, by tile, where not all of it: on 64x64 a 2x1 cluster ran
# 1.16 / 1.07 / 1.09 / 0.97 of the unclustered time at M <= 128 / 256 / 512 / above (the recorded sweeps' rows; the
# model with the whole share said 0.69-0.79). With it the previous partial-row term (`PARTIAL_M_ROUND_COST`: a
# single-round launch without a cluster whose last row of tiles is partial paid 0.1 of a K tile per K tile, from a
# sweep before the edge tiles inside the problem) is gone: the recorded sweeps' picks (fastest measured config / pick)
# edge 0.961 -> 0.974, random 0.945 -> 0.943, tile, wide-M and partial-K unchanged; 24 fresh random shapes whose
# gemm() config moved (with `k_choice`'s rules of the same change), measured after it: 0.966 of the previous time
# (0.823-1.038). `k_choice` prices a cluster's multicast alike (`multicast_rows`)
MULTICAST_SAVES = {(64, 64): 0.0}
# what a launch without a cluster adds to each K tile of 128-byte rows (64 16-bit or 128 8-bit elements) where A's and
# B's rows both start off 32-byte sectors (ncu, 3775 x 9776 x 7096 / 7104 on 128x256: the L2 serves 1.9x the sectors
# and 4.6x the requests, at 92% of its peak against 48%; a cluster's multicast halves B's share).
# H200, 3775 x 9776 x K in CUDA graphs (the tests' `data/row_alignment_h200.json`, the third of three runs alike),
# bfloat16 on 128x256 / 128x192 without a cluster: K = 7040 768 / 775 us; K = 7096 (both rows 16 mod 32 bytes) 990 /
# 1070 and K = 7040 with both leading dimensions 7048 995 / 1095 (0.2-0.25 us a K tile more), with a 2x1 cluster
# 795-835; K = 7088 (a partial K tile, rows on sectors) 810 / 803 and K = 7096 with leading dimensions 7104 767 / 801:
# the partial K tile costs nothing; one operand's rows off sectors 780-890 (at most 1.12 of the 2x1 cluster); E4M3 at
# K = 7056 502 / 555 against 415 / 422 with a 2x1 cluster (K = 7040: 396 / 395). 8 random E4M3 shapes of K 16 mod 32
# measured after the fit: the clustered pick 0.846 of the unclustered one's time. The recorded sweeps' picks (fastest
# measured config / pick, the previous rule on K % 64 in brackets): random 0.944 (0.947), edge 0.960 (0.958), wide-M
# 0.982 (0.982), partial-K 0.990 (0.985); any value 0.1..0.3 the same
OFF_SECTOR_K_TILE_US = 0.2
SECTOR_BYTES = 32  # an L2 sector
# a single-round launch of 16-bit operands that the model gives to 128x256 without a cluster, over at least
# WIDE_M_MIN_K_TILES K tiles, runs 256x128 with a 1x2 cluster instead where that is also one round and pads M with
# no more rows (M mod 256 is 0 or over 128): each CTA pair shares its 256 rows of A, as cuBLAS's
# `nvjet_sm90_tst_256x128_64x4_1x2` does on these rows. H200, in CUDA graphs (the tests' `data/wide_m_sweep_h200.json`):
# on the 38 rows it swaps (19 shapes x 2 dtypes) 0.969 of 128x256's time on geometric mean, 0.88-1.04; the pick over
# the file's 88 rows 0.982 of the fastest measured config, 0.969 without the swap. Not on multi-round launches, where
# 256x128 ran 0.99-1.06 of 128x256's time (its `TILE_EFFICIENCY`), nor on the one K = 1024 row (1.02 in both dtypes)
WIDE_M_SWAP = (((128, 256), (1, 1)), ((256, 128), (1, 2)))
WIDE_M_MIN_K_TILES = 32
_SM_PEAK_FLOP_PER_US = 989e12 / 132 / 1e6  # dense f16/bf16 wgmma, H100 SXM per SM
_SM_LOAD_BYTES_PER_US = 100e3  # operand bytes an SM's TMA loads bring per microsecond
_SM_STORE_BYTES_PER_US = 100e3  # C bytes an SM retires per microsecond (epilogue partly overlapped)
_FIXED_US = 1.0  # pipeline fill and scheduling per work unit
SMALL_M = 64  # decode-like rows: 64-row tiles only (k_choice: split-K only)
_ROW_BYTES = 128  # one K tile's row of an operand (tile_k elements: 64 16-bit or 128 8-bit)


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
    # elements from one of A's / B's rows to the next along its contiguous mode (None: a dense operand's, padded to
    # TMA's stride rule as gemm() stages it and the GPU tests allocate it)
    a_ld: int | None = None
    b_ld: int | None = None

    def __post_init__(self) -> None:
        for f in ("m", "n", "k", "l"):
            v = getattr(self, f)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{f} must be an int >= 1, got {v!r}")

    def row_strides(self) -> tuple[int, int]:
        """Elements from one of A's rows to the next along its contiguous mode, and B's (0 where there is one row)."""
        e = numeric_type(self.ab_dtype).bytes
        a_rows, a_dense = (self.m, self.k) if self.a_major == "k" else (self.k, self.m)
        b_rows, b_dense = (self.n, self.k) if self.b_major == "k" else (self.k, self.n)
        a = padded_ld(a_dense, e) if self.a_ld is None else self.a_ld
        b = padded_ld(b_dense, e) if self.b_ld is None else self.b_ld
        return (a if a_rows > 1 else 0), (b if b_rows > 1 else 0)


def rows_off_sectors(shape: Any) -> bool:
    """Whether A's and B's rows both start off `SECTOR_BYTES` (`shape.row_strides()` times the element bytes)."""
    e = numeric_type(shape.ab_dtype).bytes
    return all(ld * e % SECTOR_BYTES for ld in shape.row_strides())


def off_sector_k_tile_us(shape: Any, cluster: tuple[int, int]) -> float:
    """What a 64-element K tile of `shape` costs more on `cluster`: without a cluster where its rows are
    `rows_off_sectors`, `OFF_SECTOR_K_TILE_US` per 128 bytes of each operand's row (half that for 8-bit operands)."""
    if cluster[0] * cluster[1] > 1 or not rows_off_sectors(shape):
        return 0.0
    return OFF_SECTOR_K_TILE_US * 64 * numeric_type(shape.ab_dtype).bytes / _ROW_BYTES


def tile_efficiency(tile: tuple[int, int], promoting: bool = False, eight_bit: bool = False) -> float:
    """Relative wgmma throughput of CTA tile (tile_m, tile_n), with two-level accumulation where `promoting`, of
    8-bit operands where `eight_bit` (0.5 for a tile the model does not rank, such as a ping-pong 64x192 that a
    caller asked for)."""
    plain = TILE_EFFICIENCY.get(tile, ONE_ROUND_TILES.get(tile, 0.5))
    if eight_bit:
        plain = EIGHT_BIT_EFFICIENCY.get(tile, plain)
    return PROMOTING_EFFICIENCY.get(tile, plain) if promoting else plain


def estimate_us(shape: Any, tile: tuple[int, int], cluster: tuple[int, int], num_sms: int = 132,
                promoting: bool = False) -> float:
    """Modelled run time in microseconds of `shape` with CTA tile (tile_m, tile_n) and cluster (cm, cn) (`promoting`:
    with two-level accumulation)."""
    return max(_rounds_us(shape, tile, cluster, num_sms, promoting), _dram_us(shape))


def _rounds_us(shape: Any, tile: tuple[int, int], cluster: tuple[int, int], num_sms: int,
               promoting: bool = False) -> float:
    """The modelled time of the launch's rounds, before the DRAM floor."""
    if tile not in TILE_EFFICIENCY and tile not in ONE_ROUND_TILES:
        raise ValueError(f"tile must be one of {(*TILE_EFFICIENCY, *ONE_ROUND_TILES)}, got {tile}")
    if num_sms < 1:
        raise ValueError(f"num_sms must be >= 1, got {num_sms}")
    tm, tn = tile
    cm, cn = cluster
    sched = _scheduler(tm, tn, cm, cn)  # the kernel's schedule: its tiles, units and clusters
    # K tiles of 64 elements for every dtype: an 8-bit operand's rounds count twice its 128-byte rows against the
    # DRAM floor and the fixed costs, as the constants were fitted (counting 128-element tiles picked worse on the
    # H200 FP8 sweeps: decode 0.916 against 0.939 of the fastest measured config)
    k_tiles = sched.problem_tiles(shape.m, shape.n, shape.k)[2]
    rounds = _rounds_of(sched, shape, num_sms)
    eight_bit = numeric_type(shape.ab_dtype).bytes == 1
    cluster_cost = TILE_CLUSTER_COST.get(tile, CLUSTER_COST) if cm * cn > 1 else 0.0
    eff = tile_efficiency(tile, promoting, eight_bit) * (1 - cluster_cost)
    wgmma = 2.0 * tm * tn * 64 / (_SM_PEAK_FLOP_PER_US * eff)
    loads = multicast_rows(tile, cluster, min(tm, shape.m)) * _ROW_BYTES / _SM_LOAD_BYTES_PER_US
    c_bytes = DTYPE_BYTES[shape.c_dtype]
    epilogue = tm * tn * c_bytes / _SM_STORE_BYTES_PER_US
    k_tile = max(wgmma, loads)
    # what the launch adds to each K tile: an 8-bit cluster's synchronisation, rows off sectors without a cluster
    added = cluster_k_tile_us(shape.ab_dtype, cluster, 64) + off_sector_k_tile_us(shape, cluster)
    return rounds * (k_tiles * (k_tile + added) + epilogue + _FIXED_US)


def multicast_rows(tile: tuple[int, int], cluster: tuple[int, int], a_rows: int) -> float:
    """Operand rows an SM loads per K tile of `tile` on `cluster`: `a_rows` of A (the rows its box holds) and tile N of
    B, each less the share of its multicast partners' copy that `MULTICAST_SAVES` gives the tile (all but 64x64)."""
    cm, cn = cluster
    saves = MULTICAST_SAVES.get(tile, 1.0)
    return a_rows * (1 - saves * (1 - 1 / cn)) + tile[1] * (1 - saves * (1 - 1 / cm))


def cluster_k_tile_us(ab_dtype: str, cluster: tuple[int, int], tile_k: int) -> float:
    """What a cluster adds to a K tile of `tile_k` elements: `CLUSTER_8BIT_K_TILE_US` per 64 elements of 8-bit
    operands (the model's K tile), 0 for 16-bit operands or without a cluster."""
    if cluster[0] * cluster[1] == 1 or numeric_type(ab_dtype).bytes != 1:
        return 0.0
    return CLUSTER_8BIT_K_TILE_US * tile_k / 64


def io_bytes(m: int, n: int, k: int, l: int, ab_bytes: int, c_bytes: int) -> int:  # noqa: E741 - CuTe's name
    """The bytes a GEMM moves to or from DRAM at least: A and B read once, C written once."""
    return ((m + n) * k * ab_bytes + m * n * c_bytes) * l


def _dram_us(shape: Any) -> float:
    """The DRAM time of reading A and B and writing C once (at the calibrated DRAM bandwidth)."""
    ab_bytes = numeric_type(shape.ab_dtype).bytes
    moved = io_bytes(shape.m, shape.n, shape.k, shape.l, ab_bytes, DTYPE_BYTES[shape.c_dtype])
    return moved / calibration().hbm_bytes_per_us


@functools.lru_cache(maxsize=64)
def _scheduler(tile_m: int, tile_n: int, cluster_m: int, cluster_n: int) -> TileScheduler:
    return TileScheduler(tile_m, tile_n, 64, cluster_m, cluster_n)


def rank_configs(
    shape: Any, num_sms: int = 132, promoting: bool = False
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every (tile, cluster) that can run `shape`, fastest modelled first (ties: see the module doc; `promoting`:
    with two-level accumulation, `PROMOTING_EFFICIENCY`)."""
    return list(_ranked(shape.m, shape.n, shape.k, shape.l, shape.c_dtype, num_sms, shape.ab_dtype, promoting,
                        shape.row_strides()))


@functools.lru_cache(maxsize=1024)
def _ranked(m: int, n: int, k: int, l: int, c_dtype: str, num_sms: int, ab_dtype: str,  # noqa: E741
            promoting: bool, row_strides: tuple[int, int]) -> tuple:
    """rank_configs of one problem (cached: the launch path asks once per call)."""
    shape = GemmShape(m, n, k, l, ab_dtype=ab_dtype, c_dtype=c_dtype, a_ld=row_strides[0], b_ld=row_strides[1])
    eight_bit = numeric_type(ab_dtype).bytes == 1
    out = []
    for tile in (*TILE_EFFICIENCY, *ONE_ROUND_TILES):
        if tile[1] > 128 and c_dtype == "float32":
            continue  # float32 C stays at N <= 128 (the configurations the GPU tests cover)
        if tile[0] > 128 and (promoting or eight_bit or c_dtype == "float32"):
            continue  # 256 rows: two accumulators per atom do not fit; not measured with 8-bit operands or a float32 C
        if tile in SIXTEEN_BIT_TILES and (promoting or eight_bit):
            continue
        if m <= SMALL_M < tile[0]:
            continue  # a 128-row tile would compute 64 rows that do not exist (decode sweep: 10% slower)
        for cluster in CLUSTER_CHOICES:
            tiles_m, tiles_n, _ = _scheduler(*tile, *cluster).problem_tiles(m, n, k)
            # a cluster dimension beyond the tile grid only adds idle CTAs
            if cluster[0] > 1 and tiles_m < cluster[0]:
                continue
            if cluster[1] > 1 and tiles_n < cluster[1]:
                continue
            if tile in ONE_ROUND_TILES and not _fitted_tile_ranks(shape, tile, cluster, num_sms):
                continue
            if m <= SMALL_M and cluster != (1, 1):
                continue  # one row of tiles whose A box holds <= 64 rows: multicasting A saves next to nothing (decode
                # sweep: clusters ran a median 9% slower there, faster in 1% of the cases)
            t = _rounds_us(shape, tile, cluster, num_sms, promoting)
            # DRAM-bound configs tie at the floor: the one whose rounds leave it the most headroom goes first (also at
            # decode-like M, since k_choice streams only A's rows that exist: the larger tile then went first, for
            # k_choice to split; the decode sweep's bfloat16 picks ran 0.950 of the fastest that way, 0.969 this way)
            floored = max(t, _dram_us(shape))
            headroom = round(t, 6)
            out.append((round(floored, 6), headroom, -tile[0] * tile[1], cluster != (1, 1), -cluster[0], tile, cluster))
    out.sort()
    ranked = tuple((tile, cluster) for *_, tile, cluster in out)
    if ranked[0] == WIDE_M_SWAP[0] and WIDE_M_SWAP[1] in ranked and _wide_m_swaps(shape, num_sms):
        ranked = (WIDE_M_SWAP[1],) + tuple(tc for tc in ranked if tc != WIDE_M_SWAP[1])
    return ranked


def _wide_m_swaps(shape: Any, num_sms: int) -> bool:
    """Whether `WIDE_M_SWAP` applies to `shape` (whose pick is 128x256 without a cluster): both configs run one
    round, K has `WIDE_M_MIN_K_TILES` tiles or more and 256-row tiles pad M with no more rows than 128-row ones."""
    (narrow, _), (wide, _) = WIDE_M_SWAP
    rows_m, _, k_tiles = _scheduler(*narrow, 1, 1).problem_tiles(shape.m, shape.n, shape.k)
    wide_m = _scheduler(*wide, 1, 1).problem_tiles(shape.m, shape.n, shape.k)[0]
    return (k_tiles >= WIDE_M_MIN_K_TILES and wide_m * wide[0] == rows_m * narrow[0]
            and all(_rounds_of(_scheduler(*tile, *cluster), shape, num_sms) == 1 for tile, cluster in WIDE_M_SWAP))


def _fitted_tile_ranks(shape: Any, tile: tuple[int, int], cluster: tuple[int, int], num_sms: int) -> bool:
    """Whether `ONE_ROUND_TILES`' `tile` is ranked for `shape` on `cluster`: the launch's CTAs fill `ONE_ROUND_MIN_FILL`
    of the SMs, and it is one round over at least `WIDE_M_MIN_K_TILES` K tiles or the tile fits N (`_fits_n`)."""
    sched = _scheduler(*tile, *cluster)
    tiles_m, tiles_n, k_tiles = sched.problem_tiles(shape.m, shape.n, shape.k)
    ctas = sched.units_of_tiles(tiles_m, tiles_n, shape.l) * cluster[0] * cluster[1]
    if ctas < ONE_ROUND_MIN_FILL * num_sms:
        return False
    return _fits_n(shape.n, tile) or (k_tiles >= WIDE_M_MIN_K_TILES and _rounds_of(sched, shape, num_sms) == 1)


def _fits_n(n: int, tile: tuple[int, int]) -> bool:
    """Whether N = `n` spans at most `ONE_ROUND_FIT_N` widths of `tile` (one of `ONE_ROUND_TILES`) and pads fewer
    columns on it than on the next narrower and the next wider tile of `TILE_EFFICIENCY` (where `ONE_ROUND_TILES` are
    offered on any number of rounds)."""
    widths = [tn for tm, tn in TILE_EFFICIENCY if tm == tile[0]]
    neighbours = (max(w for w in widths if w < tile[1]), min(w for w in widths if w > tile[1]))
    return n <= ONE_ROUND_FIT_N * tile[1] and all(-(-n // tile[1]) * tile[1] < -(-n // w) * w for w in neighbours)


def _rounds_of(sched: TileScheduler, shape: Any, num_sms: int) -> int:
    """Rounds of the persistent launch of `shape` on `sched`'s (tile, cluster): units over the clusters that fit."""
    units = sched.units_of_tiles(*sched.problem_tiles(shape.m, shape.n, shape.k)[:2], shape.l)
    return -(-units // sched.max_clusters(num_sms))


def choose_tile_cluster(shape: Any, num_sms: int = 132) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (tile_m, tile_n) and (cluster_m, cluster_n) with the smallest modelled time for `shape`."""
    return rank_configs(shape, num_sms)[0]

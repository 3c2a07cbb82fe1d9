"""Which K decomposition a GEMM shape runs with: data-parallel, split-K or stream-K, from a calibrated model.

The model prices one persistent launch of a config on `num_sms` SMs from wave quantisation and K length:

- one K tile of a CTA tile (tile_m x tile_n x tile_k) costs `t_k = max(FLOP / (sm_flop * efficiency(tile)),
  operand bytes / sm_load)`: compute-bound on big tiles, load-bound when an SM streams its operands alone
  (A's rows that exist, `min(tile_m, M)`, as the kernel's A box holds; a cluster's multicast divides A's bytes
  by cluster_n and B's by cluster_m); with 8-bit operands a cluster adds `choice.cluster_k_tile_us`, and without one
  rows of A and B off 32-byte sectors add `choice.off_sector_k_tile_us` (the data-parallel choice's own terms, so a
  pick is priced alike in both models);
- data-parallel: `ceil(T / P)` rounds of `k_tiles * t_k + epilogue + fixed` (T cluster tiles, P clusters);
- the parallel fix-up (`split_k`) moves float32 partial tiles between a CTA and L2 at `sm_fixup` bytes/us:
  a tile's final part waits for its slowest other part (which then stores one partial: one transfer) and
  reads the parts - 1 partials one after the other (parts - 1 transfers): `parts` transfers on its path;
- split-K with S parts: where T > P the `T - T % P` tiles of the whole waves as data-parallel rounds; then the other
  tiles' `ceil(T' * S / P)` rounds of `ceil(k_tiles / S) * t_k + fixed`, plus S transfers (after whole waves S per
  round: a round's final parts wait for it; 2895 x 4096 x 14336 on 128x256 in 5 parts measured 1.09x the data-parallel
  launch where one path modelled 0.96x) and one epilogue;
- stream-K: the data-parallel rounds of the tiles outside `KWork`'s `sk_tiles`, then each of the W workers'
  `ceil(iterations / W)` K tiles, two unit overheads, the transfers of the tile with the most parts and the
  epilogues of the most tiles a worker finishes;
- every launch takes at least the DRAM time of its operands, output and fix-up traffic (`hbm` bytes/us; A and
  B read once; each partial tile written and read once).
`choose_decomposition(shape, cfg, num_sms)` returns the kind and split count whose modelled time is least,
keeping data-parallel unless another kind is `min_gain` (M <= SMALL_M: `small_m_min_gain`) faster and its partial
tiles fit in `split_k.MAX_WORKSPACE_BYTES`. `decomposed_config` tries the shared-K kinds with cluster 1x1 on the tiles
`shared_k_tiles` (what the AOT bundle holds; below `STREAM_K_MIN_M` split-K only), and split-K with a 2x1 cluster
where one round of it covers a long K (`SPLIT_K_CLUSTERS`; on 128x256 only where A's and B's rows are off sectors, at
`OFF_SECTOR_SPLIT_MIN_GAIN` instead of `min_gain`), and where all that keeps the data-parallel pick of a 16-bit launch
past one round, stream-K on `ROUNDS_STREAM_K_TILE` at `ROUNDS_STREAM_K_GAIN`, priced against that tile's own
data-parallel launch (`_rounds_stream_k`); for M <= `SMALL_M` (decode-like rows) only split-K on
the narrowest tiles `SMALL_M_TILES`: measured on an H200 (k_calibration.json), stream-K on those rows lost to
data-parallel on 64x64 tiles by up to 1.7x, its final parts reading many partial tiles. The constants are in
`k_calibration.json` (which rows they came from), refreshed by `python -m cute_examples.dense_gemm.calibrate --write`
on a GPU.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any

from .calibration import Calibration, calibration
from .choice import (
    SMALL_M,
    cluster_k_tile_us,
    io_bytes,
    multicast_rows,
    off_sector_k_tile_us,
    rows_off_sectors,
    tile_efficiency,
)
from .choice import estimate_us as tile_estimate_us
from .spec import GemmConfig

__all__ = [
    "DEEP_MIN_K_TILES",
    "DEEP_STAGES",
    "deepened",
    "MAX_SPLITS",
    "STREAM_K_MIN_M",
    "ROUNDS_STREAM_K_GAIN",
    "ODD_CHUNK_BUFFERS",
    "ROUNDS_STREAM_K_TILE",
    "SHARED_K_TILES",
    "SIXTEEN_BIT_SHARED_K_TILES",
    "SPLIT_K_CLUSTERS",
    "CLUSTERED_SPLIT_MIN_K",
    "OFF_SECTOR_SPLIT_MIN_GAIN",
    "clustered_split_tile",
    "shared_k_config",
    "shared_k_tiles",
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
# 16-bit operands also split K on these: their N fits a narrow problem's columns closer than 128 and 256 do (N = 440:
# two 224-column tiles, 1.8% padding, against two of 256, 16%), and the model ranks them with the others. H200,
# `scripts/pick_ab.py --baseline no-fitted-shared-k-tiles` (fresh random rows whose pick moved, CUDA graphs, outputs
# checked): 0.868 / 0.880 / 0.947 of the previous pick's time (seeds 31, 37, 43: 24 rows each, 61 of 72 faster, 0.898
# in all, worst 1.227 at 445 x 1488 x 3960; e.g. 4562 x 296 x 16032 142.7 -> 84.7 us, 151 x 6096 x 15704 132.7 ->
# 93.0); 1.7% of random shapes move, none of the model suite's. Their clustered split where rows are off sectors takes
# `OFF_SECTOR_SPLIT_MIN_GAIN` as 128x256's does (the calibration's min_gain there instead: 0.925 on the same 72 rows).
# Not for 8-bit operands (never measured there)
SIXTEEN_BIT_SHARED_K_TILES = ((128, 224), (128, 192), (128, 160))
# the clusters split-K may take with 16-bit operands (stream-K, decode-like M and 8-bit operands take none), on a launch
# of one round whose K is CLUSTERED_SPLIT_MIN_K or more, on tiles of N <= 128 or M 64, and on 128x256 where A's and B's
# rows are off sectors (`_clustered_split_gain`, at `OFF_SECTOR_SPLIT_MIN_GAIN`; a cluster takes off most of that cost,
# `choice.off_sector_k_tile_us`: `scripts/pick_ab.py --baseline square-split-clusters`, 32 fresh random rows whose pick
# moved to 128x256 split-K on a 2x1 cluster ran 0.756 / 0.714 of the previous pick's time (two seeds of 16, at the
# calibration's min gain), all faster, worst 0.864; 0.61% of random shapes move at the final threshold). On the
# H200 long-K sweep (the tests' `data/long_k_sweep_h200.json`: 22 shapes of M 169..1953, K 3544..16064 whose
# data-parallel pick ran one round) split-K with a 2x1 cluster was the fastest config of 11, and gemm()'s choice runs
# at 0.902 of the fastest measured config with it, 0.844 without (13 measured picks). Measured with
# `scripts/pick_ab.py` (the pick against the pick without clusters, both in CUDA graphs on identical tensors): with
# every tile and K, 48 random and suite rows whose pick moved ran 0.946 of the old time but 128x256's moves lost up to
# 1.29x (512 x 4096 x 4096) and K <= 1968 up to 1.55x; with the tile and K rule, 44 fresh random rows (seed 2291) ran
# 0.874 of the old time, 41 of them faster (worst 1.040), and 34 more (seed 3301) 0.896. A clustered stream-K was
# priced well under what it measured (1.10-1.20x the model's time), so it stays off.
SPLIT_K_CLUSTERS = ((1, 1), (2, 1))
CLUSTERED_SPLIT_MIN_K = 2048
# the modelled gain over the data-parallel pick that the clustered 128x256 split (rows off sectors) needs, instead of
# the calibration's `min_gain` (0.2): the model prices the data-parallel picks it replaces (64- to 128-row tiles on a
# cluster) 1.03-1.39x under what they measured, the split 1.01-1.25x (the first 32 moved rows below). H200,
# `scripts/pick_ab.py --baseline uniform-min-gain` on fresh random rows whose pick moved: 0.1 against 0.2 0.791 / 0.815
# of the old time (two seeds of 16, all faster, worst 0.940); 0.0 against 0.1 (16 more) 0.903, 15 faster, worst 1.009
OFF_SECTOR_SPLIT_MIN_GAIN = 0.0
SMALL_M_TILES = ((64, 128),)  # the narrowest split tile the decode sweep measured
# a data-parallel 64x64 launch without a cluster whose units leave half the SMs idle streams a long K through the
# deepest pipeline that fits, up to DEEP_STAGES (`deepened`): on the H200 sweeps (decode, FP8, config) its 12 / 13
# stages ran 0-19% faster than 8 at 112..224 K tiles (every such row; 64 units: M <= 64, N 4096), 5-6% slower at 64
DEEP_STAGES = 13
DEEP_MIN_K_TILES = 96
MAX_SPLITS = 16
# below this M only split-K competes with data-parallel: on the H200 config sweep (the tests'
# `data/config_sweep_h200.json`) the fastest stream-K config of every bfloat16 shape of 64 < M < 256 ran 1.08-1.52x
# the fastest data-parallel one (10 shapes; where shared K won, at 128 x 4096 x 14336, split-K did), and the two
# stream-K picks of 24 random shapes of M 180 and 213 ran 1.09x / 1.23x the data-parallel pick's time; on the FP8
# sweep's M = 128 rows stream-K was never the fastest kind either
STREAM_K_MIN_M = 256
# staging buffers of a shared-K tile whose epilogue has an odd number of chunks, more than one (128x160's five,
# 128x224's seven): two, whose order the kernel restarts each unit (`kernel._epilogue`: units without an epilogue
# would break a running order); one buffer waits for each chunk's store before writing the next. H200,
# `scripts/pick_ab.py --baseline one-odd-chunk-buffer` (gemm()'s split-K / stream-K picks on such tiles, fresh random
# shapes, seed 2511): 0.982 of the one-buffer configs' time (24 rows, 18 faster, 0.906..1.012)
ODD_CHUNK_BUFFERS = 2
# a launch of more than one round of 16-bit tiles runs stream-K on ROUNDS_STREAM_K_TILE where that is modelled
# ROUNDS_STREAM_K_GAIN faster than the data-parallel pick (`_rounds_stream_k`). Stream-K's workers walk their whole
# tiles first, so the shared phase stays in K step (cute-nvarch `KWork`): on 2895 x 4096 x 14336 its DRAM reads fell
# from 1.52 GB to 640 MB (data-parallel 405 MB) and its time from 611 to 509 us (data-parallel 535). H200, bfloat16 /
# float16, `scripts/gemm_sweep.py --decompositions stream_k --around-pick` (CUDA graphs, identical tensors): on 32
# random shapes the rule takes (about 5% of random shapes past one round) stream-K on 128x256 ran 0.967 of the pick's
# time (26 faster, 0.905..1.068); on 30 shapes of the earlier sweeps the modelled ratio orders the measured one (under
# 0.95: 10 rows 0.923..1.002; 0.95..1.04: 1.055, 1.075, 1.085, 1.104 among them). `scripts/pick_ab.py --baseline
# no-rounds-stream-k` on fresh random shapes whose pick moved: 0.970 / 0.972 (seeds 2501 / 2503, 24 rows each, 42 of 48
# faster, worst 1.047: 414 x 13368 x 8272), with a bias and SiLU 0.969 (seed 2507, 16 rows, worst 1.015)
ROUNDS_STREAM_K_TILE = (128, 256)
ROUNDS_STREAM_K_GAIN = 0.06
# with an input addend, shared-K tiles of at most this N: a tile's final part reads the input of its whole tile after
# the fix-up, on the launch's critical path (H200, 512 x 16384 -> 4096 bias + residual in CUDA graphs: split-K 2 on
# 128x256 120.4 us, the data-parallel 128x128 pick 112.4; at 128 tokens split-K 4 on 128x128 48.0 against 52.7)
MAX_SPLIT_INPUT_TILE_N = 128


@dataclass(frozen=True)
class KChoice:
    """A modelled decomposition: kind, split-K parts (1 otherwise) and the model's microseconds."""

    kind: str
    splits: int
    us: float


def _k_tile_us(cal: Calibration, cfg: GemmConfig, shape: Any) -> float:
    eff = tile_efficiency((cfg.tile_m, cfg.tile_n), cfg.mma_promotion_interval > 0, cfg.ab_bytes == 1)
    # sm_flop is the 16-bit rate; 8-bit operands run twice the FLOPs per cycle: count a K tile's 128-byte rows
    compute = 2.0 * cfg.tile_m * cfg.tile_n * (cfg.tile_k * cfg.ab_bytes / 2) / (cal.sm_flop_per_us * eff)
    cluster = (cfg.cluster_m, cfg.cluster_n)
    added = cluster_k_tile_us(cfg.a_dtype, cluster, cfg.tile_k)  # as choice prices them
    added += off_sector_k_tile_us(shape, cluster) * cfg.tile_k / 64
    return max(compute, _load_us(cal, cfg, shape.m)) + added


def _load_us(cal: Calibration, cfg: GemmConfig, m: int) -> float:
    """One K tile's operand bytes per SM at sm_load: A's rows that exist (A's box holds `min(tile_m, M)`),
    B's tile_n; multicast shares A along cluster_n, B along cluster_m (`choice.multicast_rows`)."""
    rows = multicast_rows((cfg.tile_m, cfg.tile_n), (cfg.cluster_m, cfg.cluster_n), min(cfg.tile_m, m))
    return rows * cfg.tile_k * cfg.ab_bytes / cal.sm_load_bytes_per_us


def _io_bytes(shape: Any, cfg: GemmConfig) -> float:
    return io_bytes(shape.m, shape.n, shape.k, shape.l, cfg.ab_bytes, cfg.c_bytes)


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


def _launch_counts(shape: Any, cfg: GemmConfig, num_sms: int) -> tuple[int, int, int]:
    """(cluster tiles of the problem, K tiles, clusters resident at once) of cfg's launch on `num_sms` SMs."""
    sched = cfg.tile_scheduler
    tiles_m, tiles_n, kt = sched.problem_tiles(shape.m, shape.n, shape.k)
    return sched.units_of_tiles(tiles_m, tiles_n, shape.l), kt, sched.max_clusters(num_sms)


def _split_rounds(tiles: int, kt: int, p: int, splits: int) -> int:
    """Rounds of a split-K launch of `tiles` cluster tiles of `kt` K tiles in `splits` parts each (at most one part per
    K tile) on `p` resident clusters (`_launch_counts`)."""
    return -(-tiles * min(splits, kt) // p)


def estimate_us(shape: Any, cfg: GemmConfig, num_sms: int, kind: str, splits: int = 1,
                cal: Calibration | None = None) -> float:
    """Modelled microseconds of `shape` (m, n, k, l) with cfg's tile and cluster decomposed as `kind`."""
    from cute_nvarch.tile_scheduler import KWork

    cal = cal or calibration()
    tiles, kt, p = _launch_counts(shape, cfg, num_sms)
    tm, tn = cfg.tile_m, cfg.tile_n
    t_k = _k_tile_us(cal, cfg, shape)
    epi = tm * tn * cfg.c_bytes / cal.sm_store_bytes_per_us
    fix = tm * tn * 4 / cal.sm_fixup_bytes_per_us  # one partial tile between a CTA and L2
    fixed = cal.unit_fixed_us
    if kind == "split_k":
        # data-parallel waves, then the last, partial wave's tiles in s parts (`KWork`)
        s = min(splits, kt)
        waves = tiles // p if tiles > p else 0
        t = waves * (kt * t_k + epi + fixed)
        if tiles > waves * p:
            # the fix-up path once (as calibrated on launches of one wave); after whole waves once per round of parts
            rounds = _split_rounds(tiles - waves * p, kt, p, s)
            path = (s * fix if s > 1 else 0.0) * (rounds if waves else 1)
            t += rounds * (-(-kt // s) * t_k + fixed) + path + epi
    elif kind == "stream_k":
        work = KWork("stream_k", tiles, kt, p)
        t = ((tiles - work.sk_tiles) // p) * (kt * t_k + epi + fixed)
        if work.workers:
            per = work.iters // work.workers  # the fewest iterations a worker has: the most parts on a tile
            parts = min(-(-(kt - 1) // per) + 1, work.workers)
            epilogues = -(-work.sk_tiles // work.workers)  # tiles a worker finishes, at most
            t += -(-work.iters // work.workers) * t_k + 2 * fixed + (parts * fix if parts > 1 else 0.0) \
                + epilogues * epi
    else:
        t = -(-tiles // p) * (kt * t_k + epi + fixed)
    dram = _io_bytes(shape, cfg) + 2 * partial_bytes(shape, cfg, num_sms, kind, splits)
    return max(t, dram / cal.hbm_bytes_per_us)


def limiter(shape: Any, cfg: GemmConfig, num_sms: int, kind: str, splits: int = 1,
            cal: Calibration | None = None) -> str:
    """Which bound the model's time for the launch is: "DRAM", "SM loads" (operand streaming per SM) or
    "tensor cores"."""
    cal = cal or calibration()
    dram = _io_bytes(shape, cfg) + 2 * partial_bytes(shape, cfg, num_sms, kind, splits)
    if dram / cal.hbm_bytes_per_us >= estimate_us(shape, cfg, num_sms, kind, splits, cal) * 0.999:
        return "DRAM"
    return "SM loads" if _load_us(cal, cfg, shape.m) >= _k_tile_us(cal, cfg, shape) else "tensor cores"


def _min_gain(shape: Any, cal: Calibration) -> float:
    """The modelled gain a decomposition needs over data-parallel: `small_m_min_gain` for decode-like M."""
    return cal.small_m_min_gain if shape.m <= SMALL_M else cal.min_gain


def choose_decomposition(shape: Any, cfg: GemmConfig, num_sms: int, cal: Calibration | None = None,
                         kinds: tuple[str, ...] = ("stream_k", "split_k"), min_gain: float | None = None) -> KChoice:
    """The fastest modelled (kind, splits) for `shape` with cfg's tile among data-parallel and `kinds`
    (data-parallel unless `min_gain` faster, by default the calibration's; only decompositions whose partial tiles
    fit MAX_WORKSPACE_BYTES)."""
    from .split_k import MAX_WORKSPACE_BYTES

    cal = cal or calibration()
    dp = KChoice("data_parallel", 1, estimate_us(shape, cfg, num_sms, "data_parallel", cal=cal))
    if cfg.acc_dtype != "float32":
        return dp
    kt = cfg.tile_scheduler.problem_tiles(shape.m, shape.n, shape.k)[2]
    best = dp
    cands = [("stream_k", 1)] * ("stream_k" in kinds)
    cands += [("split_k", s) for s in range(2, min(MAX_SPLITS, kt) + 1)] * ("split_k" in kinds)
    for kind, s in cands:
        if partial_bytes(shape, cfg, num_sms, kind, s) > MAX_WORKSPACE_BYTES:
            continue
        t = estimate_us(shape, cfg, num_sms, kind, s, cal)
        if t < best.us:
            best = KChoice(kind, s, t)
    gain = _min_gain(shape, cal) if min_gain is None else min_gain
    return best if best.us < dp.us * (1 - gain) else dp


def shared_k_tiles(ab_bytes: int) -> tuple[tuple[int, int], ...]:
    """The tiles split-K and stream-K run on above `SMALL_M` for operands of `ab_bytes` bytes: `SHARED_K_TILES`, and
    `SIXTEEN_BIT_SHARED_K_TILES` for 16-bit ones."""
    return SHARED_K_TILES + (SIXTEEN_BIT_SHARED_K_TILES if ab_bytes == 2 else ())


def shared_k_config(cfg: GemmConfig, tile: tuple[int, int], kind: str,
                    cluster: tuple[int, int] = (1, 1)) -> GemmConfig:
    """cfg on `tile` and `cluster` with the shared-K `kind`; a tile of one epilogue chunk (an 8-bit C's 128 columns)
    gets one staging buffer, one of an odd number more `ODD_CHUNK_BUFFERS`; ValueError where the combination is
    invalid."""
    dp = dataclasses.replace(cfg, tile_m=tile[0], tile_n=tile[1], cluster_m=cluster[0], cluster_n=cluster[1],
                             stages=None)
    chunks = dp.c_tile_n // dp.epi_n
    buffers = 1 if chunks == 1 else ODD_CHUNK_BUFFERS if chunks % 2 else dp.epi_buffers
    return dataclasses.replace(dp, decomposition=kind, epi_buffers=buffers)


def decomposed_config(shape: Any, dp_cfg: GemmConfig, num_sms: int, cal: Calibration | None = None,
                      min_tile: int = 0, rounds: bool = True) -> tuple[GemmConfig, KChoice]:
    """(config, choice) for `shape`: dp_cfg (the data-parallel pick) unless a shared-K kind with cluster 1x1 on
    one of `shared_k_tiles` (M <= SMALL_M: split-K on `SMALL_M_TILES`), or split-K on a cluster of `SPLIT_K_CLUSTERS`
    where `_clustered_split_gain` allows one and it runs in one round, is modelled `min_gain` faster (the clustered
    128x256 split where rows are off sectors: `OFF_SECTOR_SPLIT_MIN_GAIN`); only tiles of sides `min_tile` or more;
    where that keeps the data-parallel pick, with `rounds`, stream-K past one round (`_rounds_stream_k`)."""
    cal = cal or calibration()
    dp = KChoice("data_parallel", 1, estimate_us(shape, dp_cfg, num_sms, "data_parallel", cal=cal))
    deep = deepened(shape, dp_cfg, num_sms)  # the data-parallel pick as it runs
    if dp_cfg.acc_dtype != "float32":
        return deep, dp
    if not dp_cfg.mma_promotion_interval and (dp_cfg.ab_bytes == 1 or (deep is not dp_cfg and shape.m <= SMALL_M)):
        # without promotion, 8-bit operands stay data-parallel (on the H200 decode and FP8 sweeps the fastest shared-K
        # config of every shape of M 1..512 ran 0-44% slower than the fastest data-parallel one, a median 13%), and
        # so does a deep-pipeline launch of decode-like M (it beat the fastest shared-K config on every such row of the
        # sweeps: bfloat16 1..64 x 4096 x 14336 and 48 x 4096 x 11008, 3-5%; at M = 165 x 672 x 7616 it ran 18.5 us
        # where 64x128 split-K 7 ran 11.9); with promotion split-K stays 4-5% ahead there
        return deep, dp
    small = shape.m <= SMALL_M
    if small:
        tiles, kinds = SMALL_M_TILES, ("split_k",)
    else:
        tiles, kinds = shared_k_tiles(dp_cfg.ab_bytes), ("stream_k", "split_k")
    if shape.m < STREAM_K_MIN_M:
        kinds = ("split_k",)
    best_cfg, best, best_gain = dp_cfg, dp, _min_gain(shape, cal)
    # split-K also on SPLIT_K_CLUSTERS with 16-bit operands (stream-K and the decode-like rows without a cluster)
    clusters = SPLIT_K_CLUSTERS if not small and dp_cfg.ab_bytes == 2 else ((1, 1),)
    for tile, cluster in itertools.product(tiles, clusters):
        if min(tile) < min_tile or (dp_cfg.c_dtype == "float32" and tile[1] == 256):
            continue
        if dp_cfg.has_input and tile[1] > MAX_SPLIT_INPUT_TILE_N:
            continue
        # the modelled gain the candidate needs; None: the tile takes no cluster for this shape
        gain = _min_gain(shape, cal) if cluster == (1, 1) else _clustered_split_gain(shape, tile, cal)
        on = kinds if cluster == (1, 1) else tuple(k for k in kinds if k == "split_k")
        if not on or gain is None:
            continue
        try:
            cfg = shared_k_config(dp_cfg, tile, on[0], cluster)
        except ValueError:
            continue  # e.g. a float32 C on a tile past its staging buffers
        c = choose_decomposition(shape, dataclasses.replace(cfg, decomposition="data_parallel"), num_sms, cal, on, gain)
        if cluster != (1, 1) and _split_rounds(*_launch_counts(shape, cfg, num_sms), c.splits) > 1:
            continue
        if c.kind != "data_parallel" and c.us < dp.us * (1 - gain) and (best is dp or c.us < best.us):
            best_cfg, best, best_gain = dataclasses.replace(cfg, decomposition=c.kind), c, gain
    if best.us < dp.us * (1 - best_gain):
        return best_cfg, best
    taken = _rounds_stream_k(shape, dp_cfg, num_sms, cal) if rounds and not small and deep is dp_cfg else None
    return taken if taken is not None else (deep, dp)


def _rounds_stream_k(shape: Any, dp_cfg: GemmConfig, num_sms: int, cal: Calibration) -> tuple | None:
    """(stream-K config on ROUNDS_STREAM_K_TILE, its choice) for a 16-bit launch of more than one round on that tile
    whose modelled time is ROUNDS_STREAM_K_GAIN under the data-parallel pick's, else None. The ratio to the pick
    is stream-K's to the same tile's data-parallel launch (this model's) times that launch's to the pick's (the tile
    model's, which ranked the pick), so that each model compares launches of one kind; picks on a cluster keep it."""
    from .split_k import MAX_WORKSPACE_BYTES

    if dp_cfg.ab_bytes != 2 or dp_cfg.has_input or dp_cfg.c_dtype == "float32" or shape.m < STREAM_K_MIN_M:
        return None
    if dp_cfg.cluster_m * dp_cfg.cluster_n > 1:  # the tile model's cluster cost is no part of stream-K's
        return None
    try:
        cfg = shared_k_config(dp_cfg, ROUNDS_STREAM_K_TILE, "stream_k")
    except ValueError:
        return None
    tiles, _, p = _launch_counts(shape, cfg, num_sms)
    if tiles <= p or partial_bytes(shape, cfg, num_sms, "stream_k") > MAX_WORKSPACE_BYTES:
        return None
    on_tile = dataclasses.replace(cfg, decomposition="data_parallel")
    sk = estimate_us(shape, on_tile, num_sms, "stream_k", cal=cal)
    ratio = sk / estimate_us(shape, on_tile, num_sms, "data_parallel", cal=cal)
    try:
        ratio *= tile_estimate_us(shape, ROUNDS_STREAM_K_TILE, (1, 1), num_sms) / tile_estimate_us(
            shape, (dp_cfg.tile_m, dp_cfg.tile_n), (1, 1), num_sms)
    except ValueError:  # a pick the tile model does not rank (none of choose_config's)
        return None
    return (cfg, KChoice("stream_k", 1, sk)) if ratio < 1 - ROUNDS_STREAM_K_GAIN else None


def clustered_split_tile(tile: tuple[int, int]) -> bool:
    """Whether split-K on `tile` may take a cluster of `SPLIT_K_CLUSTERS` whatever the rows' alignment: N <= 128 or M 64
    (not 128x256)."""
    return tile[1] <= 128 or tile[0] == 64


def _clustered_split_gain(shape: Any, tile: tuple[int, int], cal: Calibration) -> float | None:
    """The modelled gain split-K on `tile` with a cluster of `SPLIT_K_CLUSTERS` needs for `shape`, None where it may
    take none: K of `CLUSTERED_SPLIT_MIN_K` or more, then the calibration's `min_gain` on a `clustered_split_tile` and
    `OFF_SECTOR_SPLIT_MIN_GAIN` on any other tile where A's and B's rows are off sectors (`choice.rows_off_sectors`)."""
    if shape.k < CLUSTERED_SPLIT_MIN_K:
        return None
    if clustered_split_tile(tile):
        return _min_gain(shape, cal)
    return OFF_SECTOR_SPLIT_MIN_GAIN if rows_off_sectors(shape) else None


def deepened(shape: Any, cfg: GemmConfig, num_sms: int) -> GemmConfig:
    """cfg with the deepest pipeline that fits, up to `DEEP_STAGES`, where it is a data-parallel 64x64 launch without
    a cluster and derived stages whose units fill at most half of `num_sms` and whose K has `DEEP_MIN_K_TILES` tiles
    or more; else cfg."""
    if cfg.stages is not None or cfg.shares_k or (cfg.tile_m, cfg.tile_n) != (64, 64) or cfg.cluster_size != 1:
        return cfg
    sched = cfg.tile_scheduler
    tiles_m, tiles_n, k_tiles = sched.problem_tiles(shape.m, shape.n, shape.k)
    if sched.units_of_tiles(tiles_m, tiles_n, shape.l) > num_sms // 2 or k_tiles < DEEP_MIN_K_TILES:
        return cfg
    for stages in range(DEEP_STAGES, cfg.num_stages, -1):
        try:
            return dataclasses.replace(cfg, stages=stages)
        except ValueError:
            continue  # does not fit shared memory
    return cfg

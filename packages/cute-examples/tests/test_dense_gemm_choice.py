"""The GEMM cost model (`dense_gemm.choice`, `k_choice`) against the H200 config sweeps it was fitted to."""

import math
import os

from cute_examples.dense_gemm.calibrate import read_rows, regret
from cute_examples.dense_gemm.calibration import calibration
from cute_examples.dense_gemm.choice import GemmShape, Pick, estimate_us, rank_configs

SWEEP = os.path.join(os.path.dirname(__file__), "data", "config_sweep_h200.json")


def test_model_ranks_the_measured_configs_near_the_fastest():
    rows = read_rows([SWEEP])
    geo, worst, where = regret(rows, calibration())
    # fitted (calibrate): 0.958, worst 0.619 (400x4096x4096); a model change that loses this shows here
    assert geo >= 0.95, (geo, worst, where)
    assert worst >= 0.6, (worst, where)


def test_the_launch_choice_runs_near_the_fastest_measured_config():
    """The whole choice a gemm() call makes (rank_configs, then k_choice's decomposition) on the shapes of the sweeps
    that measured every config (1, 2 and 3): its measured time against the fastest."""
    from cute_examples.dense_gemm.bench_models import SuiteShape, row_config

    rows = [r for r in read_rows([SWEEP]) if r.sweep in (1, 2, 3) and r.stages <= 8]
    measured: dict = {}
    for r in rows:
        key = (r.tile_m, r.tile_n, r.cluster_m, r.cluster_n, r.schedule, r.kind, r.splits)
        measured.setdefault((r.m, r.n, r.k), {})[key] = r.us
    logs, missing = [], []
    for (m, n, k), times in measured.items():
        cfg, choice = row_config(SuiteShape("sweep", m, n, k), "bfloat16", 132, "auto")
        key = (cfg.tile_m, cfg.tile_n, cfg.cluster_m, cfg.cluster_n, cfg.schedule, choice.kind, choice.splits)
        if key not in times:
            missing.append((m, n, k, key))
            continue
        logs.append(math.log(min(times.values()) / times[key]))
    assert len(missing) <= 2, missing  # split counts the sweep did not try
    geo = math.exp(sum(logs) / len(logs))
    # 0.949 with the fitted constants over the 54 shapes (sweep 2's 12 shapes measured 0.948, sweep 3's 9 0.861,
    # each before it joined the fit); the choice before this model (two models, cooperative only) ran 0.932 on them
    assert geo >= 0.94, geo


def test_picks_follow_the_launch_shape():
    big = GemmShape(8192, 8192, 8192, ab_dtype="bfloat16", c_dtype="bfloat16")
    assert rank_configs(big)[0] == Pick((128, 256), (1, 1), "cooperative")
    assert estimate_us(big, (128, 256), (2, 1)) > estimate_us(big, (128, 256), (1, 1))  # a cluster costs there
    # a DRAM-bound launch: the multicast that halves B's L2 traffic wins the tie
    thin = GemmShape(128, 8192, 8192, ab_dtype="bfloat16", c_dtype="bfloat16")
    assert rank_configs(thin)[0].cluster == (2, 1)
    # small tiles hide their epilogue behind the other warpgroup's mainloop: ping-pong
    assert rank_configs(GemmShape(1024, 1024, 1024, ab_dtype="bfloat16", c_dtype="bfloat16"))[0].schedule == "pingpong"
    # ping-pong only for 16-bit A, B and C; no cluster wider than the tile grid; float32 C never with N = 256
    assert {p.schedule for p in rank_configs(GemmShape(1024, 1024, 1024, c_dtype="float32"))} == {"cooperative"}
    assert all(p.cluster[0] == 1 for p in rank_configs(GemmShape(60, 1000, 64)))
    assert all(p.tile[1] < 256 for p in rank_configs(GemmShape(4096, 4096, 4096, c_dtype="float32")))
    # the DRAM floor: no config beats reading A and B once
    decode = GemmShape(1, 8192, 8192, ab_dtype="bfloat16", c_dtype="bfloat16")
    floor = (8193 * 8192 * 2 + 8192 * 2) / calibration().hbm_bytes_per_us
    assert all(estimate_us(decode, p.tile, p.cluster, 132, p.schedule) >= floor * 0.999 for p in rank_configs(decode))

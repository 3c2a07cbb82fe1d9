"""Refit the GEMM cost model's constants (`k_calibration.json`) to measured sweeps (no GPU needed here).

    python3 scripts/gemm_sweep.py --decompositions split_k,stream_k --top 1000 > sweep.txt   # on the GPU host
    python -m cute_examples.dense_gemm.calibrate sweep.txt [more.txt | rows.json ...] [--write]

Inputs are `scripts/gemm_sweep.py` tables (text) or row files in the format of the tests'
`data/config_sweep_h200.json`. Each row is one measured config of one shape. The fit is a coordinate search on
the constants (within physical bounds): first least squares on log(model / measured) with the configs within
25% of their shape's fastest weighted most, then the geometric mean of the pick's regret (fastest measured over
the measured time of the config the model ranks first among the shape's rows; a decomposition must model
`min_gain` faster than the best data-parallel row). It prints the regret before and after; with `--write` the
constants replace the file's (with today's date, and `--device` naming the GPU the sweeps ran on).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from cute_nvarch.numeric import numeric_type

from ..cli import Parser, make_parser, option, switch
from .calibration import CALIBRATION_FILE, Calibration, calibration
from .choice import GemmShape, estimate_us
from .spec import GemmConfig

__all__ = ["Row", "fit", "main", "parser", "read_rows", "regret", "schedule_ratios"]

_NAME = re.compile(r"dense_gemm_(?P<ab>[a-z0-9]+?)_f32_(?P<c>[a-z0-9]+?)_[kmn]{3}_(?P<tm>\d+)x(?P<tn>\d+)x\d+_"
                   r"c(?P<cm>\d)x(?P<cn>\d)_s(?P<st>\d+)_\w*?(?P<pp>P?)(?P<dec>_splitk|_streamk)?$")
_SHAPE = re.compile(r"^(\d+)x(\d+)x(\d+) \(graph of \d+\): torch.matmul ([\d.]+) us")
_ROW = re.compile(r"^\s+([\d.]+) us\s+cuBLAS/ours [\d.]+\s+(\S+) (\S+)(?: S=(\d+))?")
_KINDS = {"_splitk": "split_k", "_streamk": "stream_k", None: "data_parallel"}


class Row(NamedTuple):
    """One measured config of one shape (the rows file's columns)."""

    dtype: str
    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    cluster_m: int
    cluster_n: int
    schedule: str
    kind: str
    splits: int
    stages: int
    us: float
    torch_us: float
    sweep: int = 0  # which sweep (one run) the row comes from: shapes are compared within one


def _table_rows(text: str, sweep: int) -> list[Row]:
    rows, shape = [], None
    for line in text.splitlines():
        if m := _SHAPE.match(line):
            shape = (*map(int, m.groups()[:3]), float(m.group(4)))
        elif (m := _ROW.match(line)) and shape and (g := _NAME.match(m.group(2))):
            dtype = numeric_type(g["ab"]).canonical
            rows.append(Row(dtype, *shape[:3], int(g["tm"]), int(g["tn"]), int(g["cm"]), int(g["cn"]),
                            "pingpong" if g["pp"] else "cooperative", _KINDS[g["dec"]], int(m.group(4) or 1),
                            int(g["st"]), float(m.group(1)), shape[3], sweep))
    return rows


def read_rows(paths: Sequence[str]) -> list[Row]:
    """The rows of sweep tables (text) and row files (.json) at `paths`."""
    out: list[Row] = []
    for i, path in enumerate(paths):
        with open(path) as f:
            text = f.read()
        if path.endswith(".json"):
            out += [Row(*r[:-1], 1000 * i + r[-1]) for r in json.loads(text)["rows"]]
        else:
            out += _table_rows(text, 1000 * i)
    return out


@functools.lru_cache(maxsize=512)
def _default_stages(dtype: str, tile: tuple[int, int], cluster: tuple[int, int], schedule: str, kind: str) -> int:
    cfg = GemmConfig(a_dtype=dtype, b_dtype=dtype, c_dtype=dtype, b_major="k", tile_m=tile[0], tile_n=tile[1],
                     cluster_m=cluster[0], cluster_n=cluster[1], schedule=schedule, decomposition=kind)
    return cfg.max_stages()


def _default_pipeline(r: Row) -> bool:
    """Whether the row ran its config's default stage count (the sweep also tries deeper pipelines)."""
    return r.stages == _default_stages(r.dtype, (r.tile_m, r.tile_n), (r.cluster_m, r.cluster_n), r.schedule, r.kind)


def _by_shape(rows: Sequence[Row]) -> dict[tuple, list[tuple[Row, GemmShape]]]:
    """Rows of the default pipelines grouped by (dtype, M, N, K, sweep), each with its GemmShape."""
    out: dict[tuple, list] = {}
    for r in rows:
        if _default_pipeline(r):
            shape = GemmShape(r.m, r.n, r.k, ab_dtype=r.dtype, c_dtype=r.dtype)
            out.setdefault((r.dtype, r.m, r.n, r.k, r.sweep), []).append((r, shape))
    return out


def _model(r: Row, shape: GemmShape, cal: Calibration) -> float:
    return estimate_us(shape, (r.tile_m, r.tile_n), (r.cluster_m, r.cluster_n), 132, r.schedule, r.kind, r.splits,
                       cal)


def regret(rows: Sequence[Row], cal: Calibration) -> tuple[float, float, str]:
    """(geomean, worst, worst shape) of fastest measured / measured time of the model's pick per shape."""
    logs, worst = [], (2.0, "")
    for key, group in _by_shape(rows).items():
        pred = [_model(r, s, cal) for r, s in group]
        best_dp = min((i for i, (r, _) in enumerate(group) if r.kind == "data_parallel"), key=pred.__getitem__)
        pick = min(range(len(group)), key=pred.__getitem__)
        if pred[pick] > pred[best_dp] * (1 - cal.min_gain):
            pick = best_dp
        value = min(r.us for r, _ in group) / group[pick][0].us
        logs.append(math.log(value))
        worst = min(worst, (value, f"{key[0]} {key[1]}x{key[2]}x{key[3]}"))
    return math.exp(sum(logs) / len(logs)), worst[0], worst[1]


def _loss(rows: Sequence[Row], cal: Calibration) -> float:
    total = 0.0
    for group in _by_shape(rows).values():
        best = min(r.us for r, _ in group)
        for r, s in group:
            total += (1.0 if r.us <= 1.25 * best else 0.15) * math.log(_model(r, s, cal) / r.us) ** 2
    return total


# the fitted scalars and their bounds (the tile efficiencies: 0.2 .. 1.3 each)
_BOUNDS = {
    "sm_load_bytes_per_us": (20e3, 150e3),  # at most what 64x128 tiles measured (113 KB/us per SM)
    "sm_stream_bytes_per_us": (20e3, 150e3),
    "cluster_cost": (0.0, 0.2),
    "sm_store_bytes_per_us": (10e3, 1e6),
    "unit_fixed_us": (0.05, 8.0),
    "pingpong_epilogue_exposed": (0.0, 0.9),
    "sm_fixup_bytes_per_us": (10e3, 1e6),
    "hbm_bytes_per_us": (3.5e6, 4.8e6),
    "pingpong_unit_fixed_us": (0.05, 8.0),
}


def schedule_ratios(rows: Sequence[Row]) -> dict[str, float]:
    """Per tile ("MxN"): the geometric mean of cooperative over ping-pong time of the data-parallel rows measured in
    both schedules with the same shape, tile and cluster in one sweep (ping-pong's speed-up)."""
    times: dict = {}
    for r in rows:
        if r.kind == "data_parallel" and _default_pipeline(r):
            times[(r.sweep, r.m, r.n, r.k, r.tile_m, r.tile_n, r.cluster_m, r.cluster_n, r.schedule)] = r.us
    logs: dict[str, list[float]] = {}
    for key, us in times.items():
        pp = times.get((*key[:-1], "pingpong"))
        if key[-1] == "cooperative" and pp:
            logs.setdefault(f"{key[4]}x{key[5]}", []).append(math.log(us / pp))
    return {t: math.exp(sum(v) / len(v)) for t, v in logs.items() if len(v) >= 5}


def _params(cal: Calibration) -> list[tuple[Any, float, tuple[float, float]]]:
    out = [(("cooperative", t), e, (0.2, 1.3)) for t, e in cal.tile_efficiency["cooperative"].items()]
    return out + [(name, getattr(cal, name), b) for name, b in _BOUNDS.items()]


def _with(cal: Calibration, key: Any, value: float, ratios: dict[str, float]) -> Calibration:
    """cal with one constant changed; a cooperative tile efficiency carries the tile's ping-pong one along (times
    its measured speed-up)."""
    if isinstance(key, tuple):
        eff = {s: dict(v) for s, v in cal.tile_efficiency.items()}
        eff["cooperative"][key[1]] = value
        if key[1] in eff["pingpong"] and key[1] in ratios:
            eff["pingpong"][key[1]] = value * ratios[key[1]]
        return dataclasses.replace(cal, tile_efficiency=eff)
    return dataclasses.replace(cal, **{key: value})


def _search(cal: Calibration, objective: Callable[[Calibration], float], passes: int,
            ratios: dict[str, float]) -> Calibration:
    best = objective(cal)
    for _ in range(passes):
        for key, _, (lo, hi) in _params(cal):
            for step in (1.25, 0.8, 1.08, 0.925):
                value = getattr(cal, key) if not isinstance(key, tuple) else cal.tile_efficiency[key[0]][key[1]]
                trial = _with(cal, key, min(max(value * step if value else 0.01, lo), hi), ratios)
                score = objective(trial)
                if score < best:
                    cal, best = trial, score
    return cal


def fit(rows: Sequence[Row], start: Calibration, passes: tuple[int, int] = (8, 4)) -> Calibration:
    """The constants refitted to `rows` from `start`: each ping-pong tile efficiency is its cooperative one times the
    measured speed-up (`schedule_ratios`); the rest by log-time least squares, then the pick's regret."""
    ratios = schedule_ratios(rows)
    for tile, e in start.tile_efficiency["cooperative"].items():
        start = _with(start, ("cooperative", tile), e, ratios)
    cal = _search(start, lambda c: _loss(rows, c), passes[0], ratios)
    return _search(cal, lambda c: -regret(rows, c)[0], passes[1], ratios)


def _rounded(value: Any) -> Any:
    """Floats (also inside dicts) to 5 significant digits, as the file stores them."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return float(f"{value:.5g}") if isinstance(value, float) else value


def parser() -> Parser:
    """The command line of the calibration."""
    p = make_parser("python -m cute_examples.dense_gemm.calibrate", (__doc__ or "").split("\n")[0], [
        "python -m cute_examples.dense_gemm.calibrate packages/cute-examples/tests/data/config_sweep_h200.json",
        "python -m cute_examples.dense_gemm.calibrate sweep.txt --write --device 'NVIDIA H200'",
    ])
    p.add_argument("sweeps", nargs="+", help="scripts/gemm_sweep.py tables (text) or row files (.json)")
    switch(p, "--write", help="replace the constants in k_calibration.json with the fitted ones")
    option(p, "--device", default=None, example="'NVIDIA H200'", help="the GPU the sweeps ran on (with --write)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Fit the constants to the sweeps; print the figures, and with --write store the constants."""
    args = parser().parse_args(argv)
    rows = read_rows(args.sweeps)
    if not rows:
        print("calibrate: no rows in the given sweeps")
        return 1
    old = calibration()
    print(f"{len(rows)} rows, {len(_by_shape(rows))} shapes")
    print("current constants: pick regret geomean {:.3f}, worst {:.3f} ({})".format(*regret(rows, old)))
    new = fit(rows, old)
    print("fitted constants:  pick regret geomean {:.3f}, worst {:.3f} ({})".format(*regret(rows, new)))
    for key, value, _ in _params(new):
        print(f"  {key}: {value:.4g}")
    for tile, ratio in schedule_ratios(rows).items():
        print(f"  ping-pong speed-up {tile}: {ratio:.3f}")
    if args.write:
        with open(CALIBRATION_FILE) as f:
            data = json.load(f)
        data.update({k: _rounded(v) for k, v in new.to_json().items() if k not in ("device", "date", "num_sms")})
        data["date"] = datetime.date.today().isoformat()
        if args.device:
            data["device"] = args.device
        with open(CALIBRATION_FILE, "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        calibration.cache_clear()
        print(f"written: {CALIBRATION_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The measured constants of the GEMM cost model (`k_calibration.json`): tile efficiencies, per-SM rates, overheads.

`choice.estimate_us` (the one model: tile, cluster, schedule and K decomposition) prices every part of a launch
with them; `python -m cute_examples.dense_gemm.calibrate SWEEP... --write` refits the file from
`scripts/gemm_sweep.py` tables measured on a GPU.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from dataclasses import dataclass, field

__all__ = ["CALIBRATION_FILE", "Calibration", "calibration"]

CALIBRATION_FILE = os.path.join(os.path.dirname(__file__), "k_calibration.json")
SCHEDULE_KEYS = ("cooperative", "pingpong")


@dataclass(frozen=True)
class Calibration:
    """The model's constants (see `k_calibration.json`); `tile_efficiency[schedule]["MxN"]` is a CTA tile's wgmma
    rate relative to `sm_flop_per_us`."""

    sm_flop_per_us: float
    sm_load_bytes_per_us: float
    sm_stream_bytes_per_us: float
    hbm_bytes_per_us: float
    sm_store_bytes_per_us: float
    sm_fixup_bytes_per_us: float
    unit_fixed_us: float
    pingpong_unit_fixed_us: float
    pingpong_epilogue_exposed: float
    cluster_cost: float
    min_gain: float
    tile_efficiency: dict = field(default_factory=dict)
    num_sms: int = 132
    device: str = ""
    date: str = ""

    def efficiency(self, schedule: str, tile: tuple[int, int]) -> float | None:
        """The tile's relative wgmma rate in `schedule` (None: the schedule does not run that tile)."""
        return self.tile_efficiency.get(schedule, {}).get(f"{tile[0]}x{tile[1]}")

    def to_json(self) -> dict:
        """The fields as the calibration file stores them."""
        return dataclasses.asdict(self)


_RATES = ("sm_flop_per_us", "sm_load_bytes_per_us", "sm_stream_bytes_per_us", "hbm_bytes_per_us",
          "sm_store_bytes_per_us", "sm_fixup_bytes_per_us", "unit_fixed_us", "pingpong_unit_fixed_us")


@functools.lru_cache(maxsize=4)
def calibration(path: str = CALIBRATION_FILE) -> Calibration:
    """The constants stored at `path` (ValueError naming a missing or out-of-range field)."""
    with open(path) as f:
        data = json.load(f)
    fields = {f.name for f in dataclasses.fields(Calibration)}
    kw = {k: v for k, v in data.items() if k in fields}
    for f in dataclasses.fields(Calibration):
        no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if (no_default or f.name == "tile_efficiency") and f.name not in kw:
            raise ValueError(f"{path}: calibration field {f.name!r} is missing")
    for name in _RATES:
        if not kw[name] > 0:
            raise ValueError(f"{path}: calibration field {name!r} must be > 0, got {kw[name]!r}")
    for name in ("pingpong_epilogue_exposed", "cluster_cost", "min_gain"):
        if not 0 <= kw[name] < 1:
            raise ValueError(f"{path}: calibration field {name!r} must be in [0, 1), got {kw[name]!r}")
    eff = kw["tile_efficiency"]
    if not isinstance(eff, dict) or set(eff) != set(SCHEDULE_KEYS) or not all(
            isinstance(v, dict) and v and all(0 < e <= 1.5 for e in v.values()) for v in eff.values()):
        raise ValueError(f"{path}: tile_efficiency must map {SCHEDULE_KEYS} to {{'MxN': efficiency in (0, 1.5]}}")
    return Calibration(**kw)

"""The measured constants of the GEMM cost models (`k_calibration.json`): per-SM rates, DRAM bandwidth, overheads.

`choice` (the data-parallel tile/cluster model) floors a launch at the DRAM time; `k_choice` (split-K / stream-K)
prices every part of a launch with them. `python -m cute_examples.dense_gemm.calibrate --write` refreshes the
file on a GPU.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from dataclasses import dataclass

__all__ = ["CALIBRATION_FILE", "Calibration", "calibration"]

CALIBRATION_FILE = os.path.join(os.path.dirname(__file__), "k_calibration.json")


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
    small_m_min_gain: float
    num_sms: int = 132
    device: str = ""
    date: str = ""


_GAINS = ("min_gain", "small_m_min_gain")  # fractions that may be 0 (every other number must be > 0)


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
        if f.name in kw and f.type in ("float", "int") and not kw[f.name] > 0 and f.name not in _GAINS:
            raise ValueError(f"{path}: calibration field {f.name!r} must be > 0, got {kw[f.name]!r}")
    return Calibration(**kw)

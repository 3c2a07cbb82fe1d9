"""The GEMM tune cache: the fastest measured configuration per shape, dtypes, majors and device name.

`tune.tune` writes it; `gemm()` reads it once per process (`lookup_tuned_once`, on a launch-plan miss)
when no tile or cluster is given. The JSON file lives
at `cute_examples.config.tune_cache_path()` (in the user's cache directory); its format:
`{"format": "cute-gemm-tune", "version": 2, "entries": {KEY: {"config": {GemmConfig fields}, "raster_along_n": r,
"swizzle_log": s, "us": t}}}` with KEY = `tune_key(...)`. A version-1 file (configs as the retired hand-written
spec) reads as empty: tune again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any

from .spec import GemmConfig

__all__ = ["TunedChoice", "load_tune_cache", "lookup_tuned", "lookup_tuned_once", "store_tuned", "tune_key"]

_FORMAT = "cute-gemm-tune"
_VERSION = 2


@dataclass(frozen=True)
class TunedChoice:
    """A measured configuration: the kernel config and the tile order it ran with (None = the host's)."""

    config: GemmConfig
    raster_along_n: int | None
    swizzle_log: int | None
    us: float


def tune_key(shape: Any, acc_dtype: str, device_name: str) -> str:
    """The cache key of a shape (GemmShape or GemmProblem) with an accumulator dtype on a named device."""
    return (
        f"{device_name}|{shape.m}x{shape.n}x{shape.k}x{shape.l}|{shape.ab_dtype}.{acc_dtype}.{shape.c_dtype}|"
        f"{shape.a_major}{shape.b_major}{shape.c_major}"
    )


def _path(path: str | None) -> str:
    if path is not None:
        return path
    from ..config import tune_cache_path

    return tune_cache_path()


# path -> ((mtime_ns, size), entries): gemm() looks the file up on every call without re-reading it
_loaded: dict[str, tuple[tuple[int, int], dict[str, dict]]] = {}


def load_tune_cache(path: str | None = None) -> dict[str, dict]:
    """The entries of the tune cache file (empty when it does not exist; ValueError when it is not one)."""
    p = _path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return {}
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _loaded.get(p)
    if hit is not None and hit[0] == stamp:
        return dict(hit[1])
    try:
        with open(p) as f:
            data = json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"tune cache {p} is not valid JSON: {exc}") from None
    if isinstance(data, dict) and data.get("format") == _FORMAT and data.get("version") == 1:
        data = {"format": _FORMAT, "version": _VERSION, "entries": {}}
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("version") != _VERSION:
        raise ValueError(f"tune cache {p} is not a {_FORMAT} version {_VERSION} file")
    entries = dict(data.get("entries", {}))
    _loaded[p] = (stamp, entries)
    return dict(entries)


def lookup_tuned(shape: Any, acc_dtype: str, device_name: str, path: str | None = None) -> TunedChoice | None:
    """The tuned choice for this shape on this device, or None."""
    return _choice(load_tune_cache(path).get(tune_key(shape, acc_dtype, device_name)))


# path -> entries as read by the first lookup_tuned_once of this process (store_tuned drops its path)
_once: dict[str, dict[str, dict]] = {}


def lookup_tuned_once(shape: Any, acc_dtype: str, device_name: str) -> TunedChoice | None:
    """`lookup_tuned` on the default file, read once per process (gemm()'s plan misses; no file access after)."""
    p = _path(None)
    entries = _once.get(p)
    if entries is None:
        entries = _once[p] = load_tune_cache(p)
    return _choice(entries.get(tune_key(shape, acc_dtype, device_name)))


def _choice(entry: dict | None) -> TunedChoice | None:
    if entry is None:
        return None
    cfg = GemmConfig(**entry["config"])
    return TunedChoice(cfg, entry.get("raster_along_n"), entry.get("swizzle_log"), float(entry["us"]))


def store_tuned(
    shape: Any, acc_dtype: str, device_name: str, choice: TunedChoice, path: str | None = None
) -> str:
    """Record `choice` for this shape and device in the tune cache (atomic rewrite); returns the file path."""
    p = _path(path)
    entries = load_tune_cache(p)
    entries[tune_key(shape, acc_dtype, device_name)] = {
        "config": dataclasses.asdict(choice.config),
        "raster_along_n": choice.raster_along_n,
        "swizzle_log": choice.swizzle_log,
        "us": choice.us,
    }
    os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(p) or ".", prefix=".tune-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            data = {"format": _FORMAT, "version": _VERSION, "entries": entries}
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, p)
        _once.pop(p, None)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return p

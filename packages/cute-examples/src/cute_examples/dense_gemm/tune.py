"""`--tune`: time candidate configurations of one GEMM shape on the GPU and remember the fastest.

Candidates (`tune_candidates`) are the cost model's best few (tile, cluster) pairs (`choice.rank_configs`,
the first being `choose_config`'s pick), each also run with other tile orders (raster along M or N, swizzle
1..8): the order is a kernel argument, so trying it costs no compilation. Every candidate's result is
checked against torch.matmul's before it is timed; a wrong one is reported and never chosen.

The winner is kept in a JSON file (`cute_examples.config.tune_cache_path()`, in the user's cache
directory) under a key naming the shape, dtypes, majors and the device name; `gemm()` uses a tuned entry
for its shape when no tile or cluster is given. File format:
`{"format": "cute-gemm-tune", "version": 1, "entries": {KEY: {"spec": ..., "raster_along_n": r,
"swizzle_log": s, "us": t}}}`.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any

from .spec import GemmConfig

__all__ = [
    "TunedChoice",
    "load_tune_cache",
    "lookup_tuned",
    "store_tuned",
    "tune",
    "tune_candidates",
    "tune_key",
]

_FORMAT = "cute-gemm-tune"
_VERSION = 1
CANDIDATES = 4


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


def tune_candidates(
    shape: Any, acc_dtype: str = "float32", num_sms: int = 132, count: int = CANDIDATES
) -> list[GemmConfig]:
    """The first `count` configs of the cost model's ranking for `shape` ("fast" variant)."""
    from .choice import rank_configs
    from .host import choose_config

    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    out = []
    for tile, cluster in rank_configs(shape, num_sms)[:count]:
        out.append(choose_config(shape, acc_dtype, (tile[0], tile[1], 64), cluster, num_sms))
    return out


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
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("version") != _VERSION:
        raise ValueError(f"tune cache {p} is not a {_FORMAT} version {_VERSION} file")
    entries = dict(data.get("entries", {}))
    _loaded[p] = (stamp, entries)
    return dict(entries)


def lookup_tuned(shape: Any, acc_dtype: str, device_name: str, path: str | None = None) -> TunedChoice | None:
    """The tuned choice for this shape on this device, or None."""
    entry = load_tune_cache(path).get(tune_key(shape, acc_dtype, device_name))
    if entry is None:
        return None
    cfg = GemmConfig.from_spec(entry["spec"])
    return TunedChoice(cfg, entry.get("raster_along_n"), entry.get("swizzle_log"), float(entry["us"]))


def store_tuned(
    shape: Any, acc_dtype: str, device_name: str, choice: TunedChoice, path: str | None = None
) -> str:
    """Record `choice` for this shape and device in the tune cache (atomic rewrite); returns the file path."""
    p = _path(path)
    entries = load_tune_cache(p)
    entries[tune_key(shape, acc_dtype, device_name)] = {
        "spec": choice.config.spec(),
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
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return p


def _orders(problem: Any, cfg: GemmConfig, num_sms: int) -> list[tuple[int | None, int | None]]:
    """Tile orders to try: the host's, then raster along M and N with swizzle 1, 2, 4, 8 (deduplicated)."""
    from .host import schedule

    _, r0, s0 = schedule(problem, cfg, num_sms)
    out = [(None, None)]
    seen = {(r0, s0)}
    for r in (r0, 1 - r0):
        for s in range(4):
            if (r, s) not in seen:
                seen.add((r, s))
                out.append((r, s))
    return out


def tune(
    a: Any,
    b: Any,
    c: Any,
    acc_dtype: str = "float32",
    iterations: int = 20,
    path: str | None = None,
    candidates: list[GemmConfig] | None = None,
) -> tuple[TunedChoice, list[str]]:
    """Time candidates for `c = a @ b` (CUDA tensors), store the fastest correct one; (winner, rows)."""
    import torch
    from cute_runtime import device_properties

    from .._compiled import kernel_for
    from ..timing import median_ms
    from .host import compile_gemm, problem_of, schedule, tensor_maps
    from .spec import tolerance

    problem = problem_of(a, b, c)
    props = device_properties(a.device.index or 0)
    cc = tuple(props.compute_capability)
    cands = candidates if candidates is not None else tune_candidates(problem, acc_dtype, props.sm_count)
    ref = torch.matmul(a.float(), b.float())
    tol = tolerance(acc_dtype, problem.c_dtype)
    flops = 2.0 * problem.m * problem.n * problem.k * problem.l
    rows, best = [], None
    for cfg in cands:
        try:
            kernel = kernel_for(cfg.spec(), lambda target, cfg=cfg: compile_gemm(cfg, target), cc)
            maps = tensor_maps(problem, cfg)
        except Exception as exc:  # noqa: BLE001 - a candidate that cannot load is skipped, with the reason
            rows.append(f"{cfg.name}: skipped ({type(exc).__name__}: {exc})")
            continue
        for raster, swz in _orders(problem, cfg, props.sm_count):
            grid, r0, s0 = schedule(problem, cfg, props.sm_count)
            r, s = (r0, s0) if raster is None else (raster, swz)
            args = (*maps, problem.m, problem.n, problem.k, problem.l, r, s)
            c.fill_(float("nan"))
            kernel.launch(grid, *args)
            torch.cuda.synchronize()
            err = float((c.float() - ref).norm() / ref.norm().clamp_min(1e-30))
            if not err <= tol:
                rows.append(f"{cfg.name} raster_n={r} swizzle_log={s}: WRONG (error {err:.2e})")
                continue
            ms = median_ms(
                lambda k=kernel, g=grid, args=args: k.launch(g, *args), warmup=3, iterations=iterations
            )
            rows.append(
                f"{cfg.name} raster_n={r} swizzle_log={s}: {ms * 1e3:9.1f} us {flops / ms / 1e9:7.1f} TFLOP/s"
            )
            if best is None or ms * 1e3 < best.us:
                best = TunedChoice(cfg, raster, swz, ms * 1e3)
    if best is None:
        raise ValueError("tune: no candidate configuration ran correctly:\n" + "\n".join(rows))
    where = store_tuned(problem, acc_dtype, props.name, best, path)
    rows.append(
        f"best: {best.config.name} raster_n={best.raster_along_n} swizzle_log={best.swizzle_log} "
        f"({best.us:.1f} us) -> {where}"
    )
    return best, rows

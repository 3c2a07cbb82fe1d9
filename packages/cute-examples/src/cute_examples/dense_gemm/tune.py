"""`--tune`: time candidate configurations of one GEMM shape on the GPU and remember the fastest.

Candidates (`tune_candidates`) are the cost model's best few (tile, cluster) pairs (`choice.rank_configs`, the
first being `choose_config`'s pick) and the same with the ping-pong schedule, each also run with other tile orders
(raster along M or N, swizzle 1..8): the order is a kernel argument, so trying it costs no compilation. Every
candidate's result is checked against torch.matmul's before it is timed; a wrong one is reported and never chosen.
The winner is kept in the tune cache (`tune_cache`), which `gemm()` reads for its shape when no tile or cluster is
given.
"""

from __future__ import annotations

from typing import Any

from .choice import rank_configs
from .host import choose_config, problem_of, resident_sms, schedule, tensor_maps
from .spec import GemmConfig
from .tune_cache import TunedChoice, store_tuned

__all__ = ["tune", "tune_candidates"]

CANDIDATES = 4


def tune_candidates(
    shape: Any, acc_dtype: str = "float32", num_sms: int = 132, count: int = CANDIDATES
) -> list[GemmConfig]:
    """The first `count` configs of the cost model's ranking for `shape` ("fast" variant), then each of them with the
    ping-pong schedule (`GemmConfig.with_schedule`, no duplicates)."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    out = []
    for tile, cluster in rank_configs(shape, num_sms)[:count]:
        out.append(choose_config(shape, acc_dtype, (tile[0], tile[1], 64), cluster, num_sms))
    names = {c.name for c in out}
    for cfg in list(out):
        pp = cfg.with_schedule("pingpong")
        if pp.name not in names:
            names.add(pp.name)
            out.append(pp)
    return out


def _orders(problem: Any, cfg: GemmConfig, num_sms: int) -> list[tuple[int | None, int | None]]:
    """Tile orders to try: the host's, then raster along M and N with swizzle 1, 2, 4, 8 (deduplicated)."""
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

    from ..timing import median_ms
    from .kernel import kernel_of
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
            kernel = kernel_of(cfg, cc)
            maps = tensor_maps(problem, cfg)
        except Exception as exc:  # noqa: BLE001 - a candidate that cannot load is skipped, with the reason
            rows.append(f"{cfg.name}: skipped ({type(exc).__name__}: {exc})")
            continue
        sms = resident_sms(kernel, cfg, props.sm_count)
        for raster, swz in _orders(problem, cfg, sms):
            grid, r0, s0 = schedule(problem, cfg, sms)
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

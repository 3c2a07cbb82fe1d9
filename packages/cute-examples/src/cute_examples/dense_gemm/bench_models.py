"""The real-model shape suite of the GEMM benchmark: ours (with the chosen decomposition) against torch.matmul.

    python -m cute_examples.dense_gemm.bench --suite models [--quick] [--decomposition auto|data_parallel]

Shapes (`suite()`), float16 and bfloat16, operands as F.linear has them: A = activations (tokens, in)
row-major, B = weight.t() of a contiguous (out, in) weight (batched: per batch alike), C (tokens, out):
Llama-3 8B (4096->6144, 4096->4096, 4096->28672, 14336->4096) and 70B (8192->10240, 8192->8192, 8192->57344,
28672->8192) at 1, 16, 128, 512, 2048 and 8192 tokens; squares 256..16384; odd sizes; batched. `--quick` keeps
the 8B layers at 1, 128 and 2048 tokens, two squares, one odd and one batched shape (a few minutes less).

Per row: gemm()'s config (`launch_plan.plan_config`: `choose_config`'s pick, `k_choice.decomposed_config`'s
data-parallel, split-K or stream-K form (`--decomposition data_parallel` keeps the first), the ping-pong schedule
where it pays); the result is checked against
torch.matmul (normwise relative error within the dtype's bound), then ours and torch.matmul are timed on the
same tensors in alternating blocks (`timing.interleaved_median_ms`), and when either takes under 50 us both
also inside a CUDA graph (`timing.interleaved_graph_ms`). Every row prints the config and the schedule (kind, count,
units, grid) it ran. The summary gives the issue's figures: the geomean of ours/cuBLAS speed over M >= 512
(and the slowest row), over 16 <= M < 512, 8192^3 per dtype, and for M = 1 the percentage of the DRAM peak
(A, B and C bytes once) with the model's limiter. Every config these rows use is in `aot.bench_configs()`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .bench_run import geomean
from .spec import AB_DTYPES, GemmConfig

__all__ = ["DECOMPOSITION_MODES", "SuiteShape", "model_configs", "model_rows", "prepare_row", "row_config", "suite"]

LLAMA3 = {
    "llama3-8b": (("qkv", 4096, 6144), ("o", 4096, 4096), ("gate_up", 4096, 28672), ("down", 14336, 4096)),
    "llama3-70b": (("qkv", 8192, 10240), ("o", 8192, 8192), ("gate_up", 8192, 57344), ("down", 28672, 8192)),
}
TOKENS = (1, 16, 128, 512, 2048, 8192)
QUICK_TOKENS = (1, 128, 2048)
SQUARES = (256, 512, 1024, 2048, 4096, 8192, 16384)
ODD = ((1337, 2056, 1000, 1), (3000, 5000, 4096, 1), (4097, 4104, 4096, 1))
BATCHED = ((1024, 1024, 1024, 8), (256, 256, 256, 64), (2048, 512, 512, 16))
DECOMPOSITION_MODES = ("auto", "data_parallel")
SUITE_NUM_SMS = (132, 114)  # the configs the AOT bundle holds: H100/H200 SXM and H100 PCIe


@dataclass(frozen=True)
class SuiteShape:
    """One suite entry: a label (model layer, square, odd, batched) and M, N, K, L."""

    label: str
    m: int
    n: int
    k: int
    l: int = 1


def suite(quick: bool = False) -> list[SuiteShape]:
    """The suite's shapes (see the module doc)."""
    out = []
    for model, layers in LLAMA3.items():
        if quick and model != "llama3-8b":
            continue
        for tokens in QUICK_TOKENS if quick else TOKENS:
            for name, k, n in layers:
                out.append(SuiteShape(f"{model} {name}", tokens, n, k))
    for s in (1024, 8192) if quick else SQUARES:
        out.append(SuiteShape("square", s, s, s))
    for m, n, k, l in ODD[1:2] if quick else ODD:
        out.append(SuiteShape("odd", m, n, k, l))
    for m, n, k, l in BATCHED[:1] if quick else BATCHED:
        out.append(SuiteShape("batched", m, n, k, l))
    return out


def row_config(shape: SuiteShape, dtype: str, num_sms: int, mode: str = "auto",
               schedule: str = "cooperative") -> tuple[GemmConfig, int]:
    """(config, split-K parts) of a row: gemm()'s pick (`launch_plan.plan_config`), with its split-K / stream-K
    kernels loadable when `mode` is auto and without (the data-parallel config) otherwise; rows forced to ping-pong
    (`schedule`) are choose_config's data-parallel pick on that schedule."""
    from .bench_run import bench_config, bench_shape
    from .launch_plan import plan_config

    if mode not in DECOMPOSITION_MODES:
        raise ValueError(f"decomposition must be one of {DECOMPOSITION_MODES}, got {mode!r}")
    mnkl = (shape.m, shape.n, shape.k, shape.l)
    problem = bench_shape(mnkl, dtype)
    if schedule == "pingpong":
        return bench_config(mnkl, dtype, "pingpong", num_sms), 1
    return plan_config(problem, (dtype, "float32", None, None, None), None, num_sms, lambda _cfg: mode == "auto")


def model_configs() -> list[GemmConfig]:
    """Every config the suite's rows run (both dtypes, both modes, `SUITE_NUM_SMS`; ping-pong's data-parallel rows)."""
    return [
        row_config(s, dtype, sms, mode)[0]
        for dtype in AB_DTYPES
        for s in suite()
        for sms in SUITE_NUM_SMS
        for mode in DECOMPOSITION_MODES
    ] + [row_config(s, dtype, sms, "data_parallel", "pingpong")[0]
         for dtype in AB_DTYPES for s in suite() for sms in SUITE_NUM_SMS]


def prepare_row(cfg: GemmConfig, splits: int, a: Any, b: Any, c: Any, ref: Any, num_sms: int,
                extra: tuple = (), order: tuple = (None, None)) -> tuple[Any, float, str]:
    """(a no-argument launch of ours, its normwise relative error against ref, the schedule's label); `extra`: the
    run-time values after the plain kernel's (a scaled kernel's FUSED_PARAMS and SCALE_PARAMS); `order`: a
    data-parallel launch's (raster_along_n, swizzle_log), each None for the host's pick."""
    import torch
    from cute_nvarch.target import SM90A

    from .bench_run import checked_launch, prepare_ours
    from .decomposed import Workspace, schedule_of
    from .host import problem_of, resident_sms, tensor_maps, with_aux_desc
    from .kernel import kernel_of

    problem = problem_of(a, b, c)
    kernel = kernel_of(cfg, SM90A.compute_capability)
    schedule = schedule_of(problem, cfg, resident_sms(kernel, cfg, num_sms), splits, order)
    if not cfg.shares_k:
        fn, err = prepare_ours(cfg, a, b, c, ref, num_sms, extra, order)
        return fn, err, schedule.label
    stream = torch.cuda.current_stream()
    workspace = Workspace()  # kept alive by the closure; every launch of the row is on this stream or a graph
    ws, flags = workspace.pointers(cfg, schedule, torch.cuda.current_device(), stream.cuda_stream)
    s, p = schedule, problem
    maps = tensor_maps(problem, cfg)
    args = (*maps, p.m, p.n, p.k, p.l, s.raster_along_n, s.swizzle_log, *with_aux_desc(extra, maps[2]), ws, flags,
            s.splits)

    launch, err = checked_launch(kernel, s.grid, args, c, ref, keep=workspace)
    return launch, err, schedule.label



def model_rows(iterations: int = 20, quick: bool = False, mode: str = "auto",
               log: Callable[[str], None] | None = None, schedule: str = "cooperative") -> list[str]:
    """The suite's rows and summary (each row is also passed to `log` as it is measured; configs with
    `schedule`)."""
    import torch
    from cute_runtime import device_properties

    from ..timing import GRAPH_BELOW_US, interleaved_graph_ms, interleaved_median_ms
    from .bench_run import bench_shape, operands
    from .k_choice import limiter
    from .spec import TOLERANCE, runs_on

    props = device_properties(torch.cuda.current_device())
    if not runs_on(tuple(props.compute_capability)):
        return [f"dense GEMM: needs an sm_90 GPU, found compute capability {props.compute_capability}"]
    num_sms, peak = props.sm_count, props.peak_dram_bandwidth
    emit = log or (lambda _row: None)
    rows = [
        f"model suite ({'quick' if quick else 'full'}, decomposition {mode}, schedule {schedule}): A (tokens, in) "
        "row-major, B = W.t() of a "
        f"contiguous (out, in) W, C (tokens, out); {num_sms} SMs, DRAM peak {peak / 1e9:.0f} GB/s; us = median of "
        f"alternating blocks; graph = inside a CUDA graph (rows under {GRAPH_BELOW_US:.0f} us)",
        f"{'dtype':8} {'shape':18} {'M x N x K (L)':24} {'ours us':>9} {'torch us':>9} {'ours TF':>8} {'ratio':>6} "
        f"{'g.ours':>7} {'g.torch':>7} {'g.ratio':>7} {'rel.err':>8}  config | schedule",
    ]
    for r in rows:
        emit(r)
    stats: dict[str, list] = {"big": [], "mid": [], "one": [], "cube": []}
    for dtype in AB_DTYPES:
        for shape in suite(quick):
            mnkl = (shape.m, shape.n, shape.k, shape.l)
            dims = f"{shape.m}x{shape.n}x{shape.k}" + (f" ({shape.l})" if shape.l > 1 else "")
            head = f"{dtype:8} {shape.label:18} {dims:24}"
            try:
                cfg, splits = row_config(shape, dtype, num_sms, mode, schedule)
                a, b, c = operands(mnkl, dtype)
                ref = torch.matmul(a, b)
                ours, err, sched_label = prepare_row(cfg, splits, a, b, c, ref, num_sms)
                if err > TOLERANCE[dtype]:
                    row = f"{head} WRONG RESULT: relative error {err:.2e} > {TOLERANCE[dtype]:.1e}  {cfg.name} | " \
                          f"{sched_label}"
                    rows.append(row)
                    emit(row)
                    continue

                def peer(a: Any = a, b: Any = b, c: Any = c) -> None:
                    torch.matmul(a, b, out=c)

                t_ours, t_peer = interleaved_median_ms([ours, peer], warmup=3, iterations=iterations)
                graph = f"{'':>7} {'':>7} {'':>7}"
                ratio, g_ours = t_peer / t_ours, None
                if min(t_ours, t_peer) * 1e3 < GRAPH_BELOW_US:
                    g_ours, g_peer = interleaved_graph_ms([ours, peer])
                    graph = f"{g_ours * 1e3:7.2f} {g_peer * 1e3:7.2f} {g_peer / g_ours:7.3f}"
                    ratio = g_peer / g_ours  # what a model's decode step sees: launches inside a graph
                flops = 2.0 * shape.m * shape.n * shape.k * shape.l
                row = (f"{head} {t_ours * 1e3:9.2f} {t_peer * 1e3:9.2f} {flops / t_ours / 1e9:8.1f} "
                       f"{t_peer / t_ours:6.3f} {graph} {err:8.1e}  {cfg.name} | {sched_label}")
                if shape.m == 1:
                    nbytes = (shape.m * shape.k + shape.n * shape.k + shape.m * shape.n) * a.element_size() * shape.l
                    t_best = t_ours if g_ours is None else min(t_ours, g_ours)
                    pct = 100 * nbytes / (t_best * 1e-3) / peak if peak else float("nan")
                    lim = limiter(bench_shape(mnkl, dtype), cfg, num_sms, cfg.decomposition, splits)
                    stats["one"].append((dtype, dims, pct, lim))
                    row += f" | {pct:.1f}% of DRAM peak, limiter {lim}"
                elif shape.m >= 512:
                    stats["big"].append((ratio, f"{dtype} {dims}"))
                elif shape.m >= 16:
                    stats["mid"].append((ratio, f"{dtype} {dims}"))
                if shape.label == "square" and shape.m == 8192:
                    stats["cube"].append(f"{dtype} {t_peer / t_ours:.3f}x")
                rows.append(row)
                emit(row)
            except Exception as exc:  # noqa: BLE001 - one failing row must not hide the others
                row = f"{head} error: {type(exc).__name__}: {exc}"
                rows.append(row)
                emit(row)
            finally:
                a = b = c = ref = None
                torch.cuda.empty_cache()
    summary = []
    for key, what in (("big", "M >= 512"), ("mid", "16 <= M < 512")):
        xs = stats[key]
        if xs:
            worst = min(xs)
            summary.append(f"{what}: geomean ours/cuBLAS {geomean([r for r, _ in xs]):.3f} over {len(xs)} rows "
                           f"(graph ratio where under {GRAPH_BELOW_US:.0f} us), slowest {worst[0]:.3f} ({worst[1]})")
    if stats["one"]:
        pcts = sorted(p for _, _, p, _ in stats["one"])
        lims = sorted({lim for *_, lim in stats["one"]})
        summary.append(f"M = 1: {pcts[len(pcts) // 2]:.1f}% of the DRAM peak (median of {len(pcts)} rows, "
                       f"{pcts[0]:.1f}..{pcts[-1]:.1f}), model limiter: {', '.join(lims)}")
    if stats["cube"]:
        summary.append("8192^3 ours/cuBLAS: " + ", ".join(stats["cube"]))
    for r in summary:
        emit(r)
    return rows + summary

"""The FP8 GEMM benchmark: ours against torch._scaled_mm (cuBLASLt) on identical tensors and scales, one process.

    python -m cute_examples.dense_gemm.bench_fp8 [--iterations 30] [--suite quick|full] [--bundle DIR]

E4M3 A (M, K) row-major and B = W^T of a row-major E4M3 W (N, K) (both K-major, as _scaled_mm takes them),
bfloat16 C, the same per-tensor float32 device scales for both (ours: the `dense_gemm_scaled` kernel, or
`dense_gemm_split_scaled` where gemm()'s choice splits K). Three rows per shape, each alternating ours and theirs
(`timing.interleaved_median_ms`, and where either takes under `timing.GRAPH_BELOW_US` also inside CUDA graphs,
`timing.interleaved_graph_ms`): ours with two-level accumulation (`PROMOTION_INTERVAL` k-blocks) against
`use_fast_accum=False`, ours without against `use_fast_accum=True`, and an E4M3 C (`satfinite(D * out_scale)`, ours
also writing amax) against `_scaled_mm(..., out_dtype=float8_e4m3fn, scale_result=out_scale, use_fast_accum=False)`,
both with promotion and the same float32 device out_scale (`OUT_SCALE`, 1: see its comment). Each of ours is first
checked against _scaled_mm's accurate result. Shapes: 8192^3 and the quick (`--suite full`: the full) model suite's
shapes with M >= 128 (K and N multiples of 16, _scaled_mm's rule); the last rows are the geometric mean of each
pairing, over the graph ratio where a row has one (what a decode step replaying a graph sees) and over the
back-to-back ratio. The configs are the ones gemm() picks (`launch_plan.plan_config`: tile N capped at 128 with
promotion, split-K / stream-K where k_choice models them faster), all in the AOT bundle (`fp8_bench_configs`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ..cli import Parser, add_bundle_flag, make_parser, number, option
from .bench_run import geomean, no_gpu_ends
from .spec import FP8_DTYPES, GemmConfig

__all__ = ["PROMOTION_INTERVAL", "SUITES", "fp8_bench_configs", "fp8_bench_shapes", "fp8_row_configs", "fp8_rows",
           "main", "scaled_extra"]

PROMOTION_INTERVAL = 4  # every K-tile (CUTLASS's and CuTeDSL's default)
C_DTYPE = "bfloat16"
TOLERANCE = 1.6e-2  # bfloat16 C's rounding
OUT_SCALE = 1.0  # the E4M3 C rows' out_scale: torch 2.11's _scaled_mm left its E4M3 output unscaled by a tensor-wide
# scale_result on an H200 (a normwise difference of 1.0 from ours at 2.0), so both run unscaled


SUITES = ("quick", "full")


def fp8_bench_shapes(suite_name: str = "quick") -> list[tuple[int, int, int, int]]:
    """(M, N, K, 1) of the rows: 8192^3 and the quick (or full) model suite's 2-D shapes with M >= 128, K and N
    multiples of 16."""
    from .bench_models import suite

    if suite_name not in SUITES:
        raise ValueError(f"suite must be one of {SUITES}, got {suite_name!r}")
    out = [(8192, 8192, 8192, 1)]
    for s in suite(quick=suite_name == "quick"):
        if s.m >= 128 and s.l == 1 and s.k % 16 == 0 and s.n % 16 == 0 and (s.m, s.n, s.k, 1) not in out:
            out.append((s.m, s.n, s.k, 1))
    return out


def fp8_row_configs(mnkl: tuple[int, int, int, int], num_sms: int) -> list[tuple[GemmConfig, int]]:
    """(config, split-K parts) of ours without promotion, with it, and with it and an E4M3 C for a row: gemm()'s
    picks (`plan_config`) for the E4M3 problem reading per-tensor device scales."""
    import dataclasses

    from .choice import GemmShape
    from .launch_plan import plan_config

    m, n, k, l = mnkl
    e4m3 = FP8_DTYPES[0]
    shape = GemmShape(m, n, k, l, ab_dtype=e4m3, c_dtype=C_DTYPE, a_major="k", b_major="k", c_major="n")
    fields = {"scale_a": "tensor", "scale_b": "tensor"}
    out = []
    for c_dtype, promotion in ((C_DTYPE, 0), (C_DTYPE, PROMOTION_INTERVAL), (e4m3, PROMOTION_INTERVAL)):
        problem = dataclasses.replace(shape, c_dtype=c_dtype)
        out.append(plan_config(problem, (c_dtype, "float32", None, None, None, promotion), fields, num_sms))
    return out


def fp8_bench_configs(num_sms: Sequence[int] = (132, 114)) -> list[GemmConfig]:
    """Every config of the rows for GPUs of these SM counts (the AOT bundle's)."""
    shapes = dict.fromkeys(mnkl for name in SUITES for mnkl in fp8_bench_shapes(name))  # quick's are full's too
    return [cfg for sms in num_sms for mnkl in shapes for cfg, _ in fp8_row_configs(mnkl, sms)]


def scaled_extra(scale_a: Any, scale_b: Any, out: tuple = (0, 0, 1.0)) -> tuple:
    """The scaled kernel's run-time values after the plain kernel's: FUSED_PARAMS without bias, input or
    pre-activation output (alpha 1, beta 0; aux_desc None, C's descriptor at the launch: `host.with_aux_desc`), then
    SCALE_PARAMS (`out`: an E4M3 C's out_scale address, amax address and by-value out_scale)."""
    return (0, 0, 0, 0, 0, 1.0, 0.0, None, scale_a.data_ptr(), scale_b.data_ptr(), *out)


def _timed(ours: Any, theirs: Any, iterations: int) -> tuple[float, float, str, float]:
    """(ours ms, theirs ms back to back, the graph cells, the row's ratio: the graph's where timed in one)."""
    from ..timing import GRAPH_BELOW_US, interleaved_graph_ms, interleaved_median_ms

    t_ours, t_theirs = interleaved_median_ms([ours, theirs], iterations=iterations)
    if min(t_ours, t_theirs) * 1e3 >= GRAPH_BELOW_US:
        return t_ours, t_theirs, "", t_theirs / t_ours
    g_ours, g_theirs = interleaved_graph_ms([ours, theirs])
    cells = f"; in a CUDA graph {g_ours * 1e3:.2f} vs {g_theirs * 1e3:.2f} us, ratio {g_theirs / g_ours:.3f}"
    return t_ours, t_theirs, cells, g_theirs / g_ours


def fp8_rows(iterations: int, suite_name: str = "quick") -> list[str]:
    """One row per (shape, pairing) of `fp8_bench_shapes(suite_name)`: config, schedule, TFLOP/s of ours and
    _scaled_mm, their ratio (and inside CUDA graphs for short rows); then the geomeans."""
    import torch
    from cute_runtime import device_properties

    from .bench_models import prepare_row

    sms = device_properties(torch.cuda.current_device()).sm_count
    cdt = getattr(torch, C_DTYPE)
    rows = []
    ratios: dict[Any, list] = {True: [], False: [], "e4m3": []}
    eager: dict[Any, list] = {True: [], False: [], "e4m3": []}
    for mnkl in fp8_bench_shapes(suite_name):
        m, n, k, _ = mnkl
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()  # (K, N), K contiguous
        c = torch.full((m, n), float("nan"), device="cuda", dtype=cdt)
        sa = torch.full((), 0.75, device="cuda")
        sb = torch.full((), 1.25, device="cuda")
        ref = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=cdt, use_fast_accum=False)
        plain, promoted, fp8_out = fp8_row_configs(mnkl, sms)
        for (cfg, splits), fast in ((promoted, False), (plain, True)):
            ours, err, label = prepare_row(cfg, splits, a, b, c, ref, sms, scaled_extra(sa, sb))

            def theirs(a=a, b=b, sa=sa, sb=sb, fast: bool = fast) -> None:  # noqa: ANN001 - this row's tensors
                torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=cdt, use_fast_accum=fast)

            t_ours, t_theirs, graph, ratio = _timed(ours, theirs, iterations)
            flops = 2.0 * m * n * k
            ratios[fast].append(ratio)
            eager[fast].append(t_theirs / t_ours)
            ok = "ok" if err <= TOLERANCE else f"ERROR {err:.2e}"
            rows.append(f"{m}x{n}x{k} {cfg.name} | {label}: {flops / t_ours / 1e9:.1f} TFLOP/s; _scaled_mm("
                        f"use_fast_accum={fast}) {flops / t_theirs / 1e9:.1f} TFLOP/s; ratio {t_theirs / t_ours:.3f}"
                        f"{graph}; check {ok} ({err:.1e})")
        rows.append(_fp8_out_row(fp8_out, a, b, sa, sb, sms, iterations, ratios["e4m3"], eager["e4m3"]))
    for fast, rs in ratios.items():
        what = {True: "without promotion vs use_fast_accum=True", False: "with promotion vs use_fast_accum=False",
                "e4m3": "E4M3 C with amax vs _scaled_mm's E4M3 C (use_fast_accum=False)"}[fast]
        rows.append(f"geomean ratio, ours {what}: {geomean(rs):.3f} over {len(rs)} shapes (graph ratio where timed "
                    f"in one; back to back: {geomean(eager[fast]):.3f})")
    return rows


def _fp8_out_row(row_cfg: tuple, a: Any, b: Any, sa: Any, sb: Any, sms: int, iterations: int, ratios: list,
                 eager: list) -> str:
    """The E4M3 C row of a shape: ours (device out_scale, amax) against _scaled_mm's E4M3 output, alternating."""
    import torch

    from .bench_models import prepare_row
    from .spec import TOLERANCE as C_TOLERANCE

    cfg, splits = row_cfg
    m, k = a.shape
    n = b.shape[1]
    e4m3 = torch.float8_e4m3fn
    so = torch.full((), OUT_SCALE, device="cuda")
    amax = torch.zeros((), device="cuda")  # only grows across the timed launches (the same maximum)
    c = torch.empty((m, n), device="cuda", dtype=e4m3)
    ref = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, scale_result=so, out_dtype=e4m3, use_fast_accum=False)
    extra = scaled_extra(sa, sb, (so.data_ptr(), amax.data_ptr(), 1.0))
    ours, err, label = prepare_row(cfg, splits, a, b, c, ref, sms, extra)

    def theirs() -> None:
        torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, scale_result=so, out_dtype=e4m3, use_fast_accum=False)

    t_ours, t_theirs, graph, ratio = _timed(ours, theirs, iterations)
    flops = 2.0 * m * n * k
    ratios.append(ratio)
    eager.append(t_theirs / t_ours)
    ok = "ok" if err <= C_TOLERANCE[cfg.c_dtype] else f"ERROR {err:.2e}"
    return (f"{m}x{n}x{k} {cfg.name} | {label}: {flops / t_ours / 1e9:.1f} TFLOP/s; _scaled_mm(out_dtype="
            f"float8_e4m3fn) {flops / t_theirs / 1e9:.1f} TFLOP/s; ratio {t_theirs / t_ours:.3f}{graph}; check {ok} "
            f"({err:.1e})")


def parser() -> Parser:
    """The command line of the FP8 benchmark."""
    p = make_parser("python -m cute_examples.dense_gemm.bench_fp8", (__doc__ or "").split("\n")[0], [
        "python -m cute_examples.dense_gemm.bench_fp8 --iterations 30 --bundle build/aot",
    ])
    option(p, "--iterations", type=number(int, 8), default=20, example="30", metavar="N",
           help="timed calls per measurement (>= 8)")
    option(p, "--suite", choices=SUITES, default="quick", example="full",
           help="the model suite whose shapes of M >= 128 the rows take (full: 38 shapes, minutes on an H200)")
    add_bundle_flag(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the exit status."""
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if no_gpu_ends(args, "nothing (the benchmark only runs on a GPU)", "every row"):
        return 0
    for row in fp8_rows(args.iterations, args.suite):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The fused-epilogue benchmark: gemm() with bias + activation (and SwiGLU) against our plain GEMM of the same
shape, eager torch and torch.compile, on the same tensors in one process.

    python -m cute_examples.dense_gemm.bench_epilogue [--iterations 30] [--no-compile] [--schedule pingpong]
                                                      [--bundle DIR]

Rows (bfloat16, float32 accumulation, C bfloat16; A (T, K) row-major, weights (N, K) row-major as nn.Linear
holds them, so B = W^T is K-major):

- MLP up-projection with a bias, hidden 4096 -> 16384 (`epilogue_cases.MLP_SHAPES`, T = 512, 2048, 8192 tokens),
  for each of gelu, gelu_tanh, relu, silu: ours fused `gemm(a, w.t(), bias=bias, activation=act)`, ours plain
  `gemm(a, w.t())` (the target: fused <= 1.03x plain, 1.06x for erf GELU), eager `F.gelu(torch.addmm(bias, a,
  w.t()))` (the target: faster on every shape) and `torch.compile` of that function (its ratio reported);
- the same projection with GELU and its pre-activation kept (for the backward pass: cuBLASLt's GELU_AUX): ours
  `gemm(a, w.t(), bias=bias, activation="gelu", pre_activation_out=pre)` against eager `pre = torch.addmm(bias,
  a, w.t()); out = F.gelu(pre)` and its torch.compile (row "gelu+pre"; no target of its own: fused/plain shows
  what the second M x N store costs);
- the MLP's down-projection, hidden 16384 -> 4096 (`DOWN_SHAPES`), row "bias": ours `gemm(a, w.t(), bias=bias)`
  against eager `torch.addmm(bias, a, w.t())` (cuBLASLt's bias epilogue), and row "bias+residual": ours
  `gemm(a, w.t(), bias=bias, input=residual)` against eager `torch.addmm(bias, a, w.t()) + residual` (no
  fused/plain target of their own; the target is eager's);
- the same bias rows at decode-like token counts (`DECODE_SHAPES`: 16 and 128 tokens through both projections),
  where gemm() splits K (`dense_gemm_split_fused`);
- Llama-3 8B gate/up (4096 -> 2 x 14336, `SWIGLU_SHAPES`): ours `gemm(x, w.t(), activation="swiglu")` on the
  interleaved weight (`activation.interleave_gate_up`), our plain GEMM of the fused weight, eager
  `F.silu(x @ wg.t()) * (x @ wu.t())` and its torch.compile.

Each row first checks ours against eager torch (normwise relative error <= 1.6e-2, bfloat16's bound), then times
all with CUDA events (`timing.interleaved_median_ms`: median of >= 20 calls in alternating order after warm-up)
and prints ms and the ratios; a row with a call under 50 us is timed again with each call replayed
from a CUDA graph (`timing.interleaved_graph_ms`, torch.compile left out), on a line of its own. Under each row,
the config and schedule ours ran (fused, then plain). Every config these rows use is in `aot.aot_configs()`
(`epilogue_cases`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..cli import Parser, add_bundle_flag, make_parser, number, option
from .bench_run import no_gpu_ends
from .epilogue_cases import (
    BENCH_ACTIVATIONS,
    BENCH_DTYPE,
    DECODE_SHAPES,
    DOWN_EPILOGUES,
    DOWN_SHAPES,
    MLP_SHAPES,
    SWIGLU_SHAPES,
)
from .spec import SCHEDULES, TOLERANCE, runs_on

__all__ = ["eager_fn", "epilogue_rows", "main"]

MIN_ITERATIONS = 20
# the targets: fused time over our plain GEMM's
TARGET = {"gelu": 1.06, "gelu_tanh": 1.03, "relu": 1.03, "silu": 1.03, "swiglu": 1.03}
AUX_ROW = "gelu+pre"  # the row that also stores the pre-activation (no target: fused/plain is its extra store)
GRAPH_BELOW_MS = 0.05  # rows whose fused call is shorter are also timed inside CUDA graphs


def eager_fn(activation: str) -> Callable[..., Any]:
    """torch's eager form of the fused call: act(addmm(bias, a, b)) ("<act>+pre": (pre, act(pre)) of pre = addmm(bias,
    a, b)), or SwiGLU's silu(x @ wg.t()) * (x @ wu.t())."""
    import torch
    import torch.nn.functional as F

    if activation == "swiglu":
        return lambda x, wg, wu: F.silu(x @ wg.t()) * (x @ wu.t())
    pre = activation.endswith("+pre")  # (pre-activation, output), as a backward pass keeps them
    act = {"gelu": F.gelu, "gelu_tanh": lambda y: F.gelu(y, approximate="tanh"), "relu": F.relu,
           "silu": F.silu}[activation.removesuffix("+pre")]
    if pre:
        return lambda bias, a, b: (lambda x: (x, act(x)))(torch.addmm(bias, a, b))
    return lambda bias, a, b: act(torch.addmm(bias, a, b))


_COMPILE_ERRORS: set[str] = set()  # why torch.compile failed, printed once under the table


def _compiled(fn: Callable[..., Any], args: tuple) -> Callable[[], Any] | None:
    """torch.compile(fn) bound to args (compiled and run once here), or None where torch.compile fails."""
    import torch

    try:
        c = torch.compile(fn)
        c(*args)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - no Triton / no compiler: the row says n/a, the table why
        _COMPILE_ERRORS.add(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200])
        return None
    return lambda: c(*args)


def _rel(x: Any, ref: Any) -> float:
    err = float((x.float() - ref.float()).norm() / ref.float().norm().clamp_min(1e-30))
    return err if math.isfinite(err) else float("inf")


def _ran(call: Callable[[], Any]) -> str:
    """Run call (one gemm()) once; the config and schedule of the plan it ran."""
    from . import launch_plan

    seen: list[Any] = []
    get = launch_plan._get
    launch_plan._get = lambda key, *args: seen.append(get(key, *args)) or seen[-1]
    try:
        call()
    finally:
        launch_plan._get = get
    plan = seen[-1]
    return f"{plan.config.name} {plan.schedule.label if plan.schedule is not None else 'data_parallel'}"


def _row(label: str, fns: dict[str, Callable[[], Any] | None], flops: float, iterations: int, act: str,
         err: float) -> str:
    from ..timing import interleaved_graph_ms, interleaved_median_ms

    names = [k for k, f in fns.items() if f is not None]
    times = dict(zip(names, interleaved_median_ms([fns[k] for k in names], warmup=5, iterations=iterations),
                     strict=True))
    lines = [_cells(label, times, flops, act, err)]
    if min(times.values()) < GRAPH_BELOW_MS:
        mine = [k for k in names if k != "compiled"]
        graph = dict(zip(mine, interleaved_graph_ms([fns[k] for k in mine], iterations=iterations), strict=True))
        lines.append(_cells("  in CUDA graphs", graph, flops, act, err))
    lines.append(f"  ran: {_ran(fns['fused'])}; plain {_ran(fns['plain'])}")
    return "\n".join(lines)


def _cells(label: str, times: dict[str, float], flops: float, act: str, err: float) -> str:
    fused, plain, eager = times["fused"], times["plain"], times["eager"]
    comp = times.get("compiled")
    over = fused / plain
    target = TARGET.get(act)
    mark = "" if target is None or over <= target else f" (> {target:.2f})"
    comp_cells = f"{comp:9.3f} {comp / fused:8.3f}x" if comp is not None else f"{'n/a':>9} {'':>9}"
    return (f"{label:28} {fused:8.3f} {flops / fused / 1e9:7.1f} {plain:8.3f} {over:6.3f}{mark:8} "
            f"{eager:8.3f} {eager / fused:8.3f}x {comp_cells}  {err:8.1e}")


def epilogue_rows(iterations: int, compile_torch: bool = True, schedule: str = "cooperative") -> list[str]:
    """The benchmark's rows (see the module doc): ms and TFLOP/s of ours fused, ms of the others, ratios; ours
    (fused and plain) with `schedule` (ping-pong: gemm()'s variant "pingpong")."""
    import torch
    from cute_runtime import device_properties

    iterations = max(iterations, MIN_ITERATIONS)
    props = device_properties(torch.cuda.current_device())
    if not runs_on(tuple(props.compute_capability)):
        cc = props.compute_capability
        return [f"fused epilogue: needs an sm_90 GPU, found compute capability {cc[0]}.{cc[1]}"]
    td = getattr(torch, BENCH_DTYPE)
    tol = TOLERANCE[BENCH_DTYPE]
    rows = [
        f"{BENCH_DTYPE}, float32 accumulation; ms = median per call; fused/plain = ours fused over our plain GEMM "
        "(target <= 1.03, gelu 1.06); eager/fused and compiled/fused: speed-up of ours",
        f"{'row (T x K -> N)':28} {'fused ms':>8} {'TF/s':>7} {'plain ms':>8} {'fused/plain':>14} "
        f"{'eager ms':>8} {'eager/ours':>9} {'compile ms':>9} {'comp/ours':>9}  {'rel.err':>8}",
    ]
    for t, k, n in MLP_SHAPES:
        rows += _mlp_rows(t, k, n, td, tol, iterations, compile_torch, schedule)
        torch.cuda.empty_cache()
    for t, k, n in DOWN_SHAPES:
        rows += _down_rows(t, k, n, td, tol, iterations, compile_torch, schedule)
        torch.cuda.empty_cache()
    for t, k, n in DECODE_SHAPES:
        rows += _down_rows(t, k, n, td, tol, iterations, compile_torch, schedule, kinds=("bias",))
        torch.cuda.empty_cache()
    for t, k, n in SWIGLU_SHAPES:
        rows.append(_swiglu_row(t, k, n, td, tol, iterations, compile_torch, schedule))
        torch.cuda.empty_cache()
    rows += [f"torch.compile failed (its columns n/a): {e}" for e in sorted(_COMPILE_ERRORS)]
    return rows


def _gemm(schedule: str) -> Callable[..., Any]:
    """gemm() with the benchmark's schedule (the "pingpong" variant; cooperative: gemm()'s own pick)."""
    from .launch_plan import gemm

    if schedule == "cooperative":
        return gemm
    return lambda *args, **kw: gemm(*args, variant=schedule, **kw)


def _mlp_rows(t: int, k: int, n: int, td: Any, tol: float, iterations: int, compile_torch: bool,
              schedule: str = "cooperative") -> list[str]:
    """One row per BENCH_ACTIVATIONS entry of the (T, K) x (K, N) + bias MLP projection."""
    import torch

    gemm = _gemm(schedule)

    a = torch.randn(t, k, device="cuda", dtype=td)
    w = torch.randn(n, k, device="cuda", dtype=td) / math.sqrt(k)
    bias = torch.randn(n, device="cuda", dtype=td)
    b = w.t()
    out = torch.empty(t, n, device="cuda", dtype=td)
    rows = []
    pre = torch.empty(t, n, device="cuda", dtype=td)
    for act in (*BENCH_ACTIVATIONS, AUX_ROW):
        label = f"{act} {t}x{k}->{n}"
        fn = act.removesuffix("+pre")
        aux = pre if act == AUX_ROW else None
        try:
            eager = eager_fn(act)
            ref = eager(bias, a, b)
            gemm(a, b, out, bias=bias, activation=fn, pre_activation_out=aux)
            err = _rel(out, ref) if aux is None else max(_rel(aux, ref[0]), _rel(out, ref[1]))
            if err > tol:
                rows.append(f"{label:28} WRONG RESULT: relative error {err:.2e} > {tol:.1e}")
                continue
            fns = {
                "fused": lambda fn=fn, aux=aux: gemm(a, b, out, bias=bias, activation=fn, pre_activation_out=aux),
                "plain": lambda: gemm(a, b, out),
                "eager": lambda eager=eager: eager(bias, a, b),
                "compiled": _compiled(eager, (bias, a, b)) if compile_torch else None,
            }
            rows.append(_row(label, fns, 2.0 * t * n * k, iterations, act, err))
        except Exception as exc:  # noqa: BLE001 - one failing row must not hide the others
            rows.append(f"{label:28} error: {type(exc).__name__}: {exc}")
    return rows


def _down_rows(t: int, k: int, n: int, td: Any, tol: float, iterations: int, compile_torch: bool,
               schedule: str = "cooperative", kinds: Sequence[str] = tuple(DOWN_EPILOGUES)) -> list[str]:
    """One row per DOWN_EPILOGUES entry in `kinds` of the (T, K) x (K, N) projection: its bias, and the bias with
    the residual stream added (gemm()'s input, beta 1)."""
    import torch

    gemm = _gemm(schedule)

    a = torch.randn(t, k, device="cuda", dtype=td)
    w = torch.randn(n, k, device="cuda", dtype=td) / math.sqrt(k)
    bias = torch.randn(n, device="cuda", dtype=td)
    residual = torch.randn(t, n, device="cuda", dtype=td)
    b = w.t()
    out = torch.empty(t, n, device="cuda", dtype=td)
    rows = []
    for kind in kinds:
        fields = DOWN_EPILOGUES[kind]
        label = f"{kind} {t}x{k}->{n}"
        extra = {"input": residual} if fields.get("has_input") else {}
        try:
            if extra:
                def eager(bias: Any, a: Any, b: Any, residual: Any) -> Any:
                    return torch.addmm(bias, a, b) + residual
                args = (bias, a, b, residual)
            else:
                eager, args = torch.addmm, (bias, a, b)
            ref = eager(*args)
            gemm(a, b, out, bias=bias, **extra)
            err = _rel(out, ref)
            if err > tol:
                rows.append(f"{label:28} WRONG RESULT: relative error {err:.2e} > {tol:.1e}")
                continue
            fns = {
                "fused": lambda extra=extra: gemm(a, b, out, bias=bias, **extra),
                "plain": lambda: gemm(a, b, out),
                "eager": lambda eager=eager, args=args: eager(*args),
                "compiled": _compiled(eager, args) if compile_torch else None,
            }
            rows.append(_row(label, fns, 2.0 * t * n * k, iterations, kind, err))
        except Exception as exc:  # noqa: BLE001 - one failing row must not hide the others
            rows.append(f"{label:28} error: {type(exc).__name__}: {exc}")
    return rows


def _swiglu_row(t: int, k: int, n: int, td: Any, tol: float, iterations: int, compile_torch: bool,
                schedule: str = "cooperative") -> str:
    """The SwiGLU row of (T, K) tokens through the (K, N) interleaved gate/up weight (C: (T, N/2))."""
    import torch

    from .activation import interleave_gate_up

    gemm = _gemm(schedule)

    label = f"swiglu {t}x{k}->{n // 2}x2"
    try:
        x = torch.randn(t, k, device="cuda", dtype=td)
        wg = torch.randn(n // 2, k, device="cuda", dtype=td) / math.sqrt(k)
        wu = torch.randn(n // 2, k, device="cuda", dtype=td) / math.sqrt(k)
        w = interleave_gate_up(wg, wu)
        out = torch.empty(t, n // 2, device="cuda", dtype=td)
        plain_out = torch.empty(t, n, device="cuda", dtype=td)
        eager = eager_fn("swiglu")
        ref = eager(x, wg, wu)
        gemm(x, w.t(), out, activation="swiglu")
        err = _rel(out, ref)
        if err > tol:
            return f"{label:28} WRONG RESULT: relative error {err:.2e} > {tol:.1e}"
        fns = {
            "fused": lambda: gemm(x, w.t(), out, activation="swiglu"),
            "plain": lambda: gemm(x, w.t(), plain_out),
            "eager": lambda: eager(x, wg, wu),
            "compiled": _compiled(eager, (x, wg, wu)) if compile_torch else None,
        }
        return _row(label, fns, 2.0 * t * n * k, iterations, "swiglu", err)
    except Exception as exc:  # noqa: BLE001 - one failing row must not hide the others
        return f"{label:28} error: {type(exc).__name__}: {exc}"


def parser() -> Parser:
    """The command line of the fused-epilogue benchmark."""
    p = make_parser("python -m cute_examples.dense_gemm.bench_epilogue", (__doc__ or "").split("\n")[0], [
        "python -m cute_examples.dense_gemm.bench_epilogue",
        "python -m cute_examples.dense_gemm.bench_epilogue --iterations 50 --no-compile --bundle build/aot",
        "python -m cute_examples.dense_gemm.bench_epilogue --schedule pingpong",
    ])
    option(p, "--iterations", type=number(int, 1), default=30, example="50", metavar="N",
           help=f"timed calls per measurement (at least {MIN_ITERATIONS} are taken)")
    p.add_argument("--no-compile", action="store_true", help="leave out the torch.compile column")
    option(p, "--schedule", choices=SCHEDULES, default="cooperative", example="pingpong",
           help="consumer schedule of ours, fused and plain (pingpong: gemm()'s variant 'pingpong')")
    add_bundle_flag(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Print the fused-epilogue table."""
    args = parser().parse_args(argv)
    if no_gpu_ends(args, "nothing (python -m cute_examples.dense_gemm --epilogue ... compiles one)",
                   "the fused-epilogue benchmark"):
        return 0
    import torch
    print(f"device: {torch.cuda.get_device_name()}")
    for row in epilogue_rows(args.iterations, not args.no_compile, args.schedule):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())

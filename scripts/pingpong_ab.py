"""gemm()'s ping-pong picks (`launch_plan.pingpong_form`) against the same tile and cluster on the cooperative
schedule, on random shapes whose 16-bit pick runs ping-pong, in one process on identical tensors, alternating, in
CUDA graphs; outputs compared bit for bit.

    python3 scripts/pingpong_ab.py --specs FILE   # here (MLIR host): both schedules' specs
    python -m cute_examples.build_bundle build/aot --add-specs FILE
    python3 scripts/pingpong_ab.py                # there (GPU host, CUTE_BUNDLE_DIR=build/aot)

Shapes: `--count` random (M 64..8191, N and K multiples of 8 up to 16376, both 16-bit dtypes, seed `--seed`) whose
free choice on a 132-SM GPU is a ping-pong 16-bit config, plus the model suite's rows that are; then bench_epilogue's
bias rows whose fused pick is (gemm() against gemm(..., variant="fast"), which keeps the cooperative schedule).
"""

from __future__ import annotations

import dataclasses
import sys

from gemm_sweep import ab_arguments, ab_summary, direct_pick, graph_ab, random_rows, write_config_specs


def shapes(count: int, seed: int) -> list[tuple[str, tuple[int, int, int], object]]:
    """(dtype, (m, n, k), the ping-pong pick) of the suite's and `count` random shapes whose pick runs ping-pong."""
    from cute_examples.dense_gemm.bench_models import row_config, suite

    out = []
    for dtype in ("bfloat16", "float16"):
        for s in suite():
            cfg = row_config(s, dtype, 132)[0]
            if cfg.pingpong and s.l == 1:
                out.append((dtype, (s.m, s.n, s.k), cfg))

    def row(dtype: str, mnk: tuple[int, int, int]) -> tuple | None:
        cfg = direct_pick(dtype, mnk)[0]
        return (dtype, mnk, cfg) if cfg.pingpong else None

    return out + random_rows(count, seed, row)


def main() -> int:
    args = ab_arguments(__doc__, "both schedules' specs", 36, 2290)
    rows = shapes(args.count, args.seed)
    if args.specs:
        cfgs = [cfg for _, _, cfg in rows] + fused_configs()
        both = [c for cfg in cfgs for c in (cfg, dataclasses.replace(cfg, schedule="cooperative"))]
        n = write_config_specs(args.specs, both)
        print(f"{n} specs written to {args.specs}")
        return 0
    import torch

    print(f"{torch.cuda.get_device_name()}; graphs, {args.rounds} alternating rounds, identical tensors")
    print(f"{'dtype':9} {'M x N x K':20} {'pp us':>8} {'coop us':>8} {'pp/coop':>8} {'torch/pp':>8}  config")
    ratios = []
    for dtype, mnk, cfg in rows:
        coop = dataclasses.replace(cfg, schedule="cooperative")
        us, _, outs = graph_ab(mnk, dtype, [(cfg, 1), (coop, 1)], args.rounds, keep_outputs=True)
        same = torch.equal(outs[0], outs[1])
        ratios.append(us[0] / us[1])
        print(f"{dtype:9} {'x'.join(map(str, mnk)):20} {us[0]:8.2f} {us[1]:8.2f} {us[0] / us[1]:8.3f} "
              f"{us[2] / us[0]:8.3f}  {cfg.name}{'' if same else '  (outputs differ)'}", flush=True)
    print(ab_summary("pp / coop", ratios))
    fused_rows(args.rounds)
    return 0


def _bias_calls(gemm, a, b, out, bias) -> list:  # noqa: ANN001
    """gemm()'s free choice, its cooperative form (variant "fast") and eager torch.addmm on one row's tensors."""
    import torch

    return [lambda: gemm(a, b, out, bias=bias), lambda: gemm(a, b, out, bias=bias, variant="fast"),
            lambda: torch.addmm(bias, a, b)]


def _fused_picks() -> list:
    """((t, k, n), gemm()'s bias pick) of bench_epilogue's bias rows (bfloat16) whose pick runs ping-pong."""
    from cute_examples.dense_gemm.epilogue_cases import DECODE_SHAPES, DOWN_SHAPES, bench_problem
    from cute_examples.dense_gemm.launch_plan import plan_config

    out = []
    for t, k, n in DECODE_SHAPES + DOWN_SHAPES:
        p = bench_problem(t, k, n)
        cfg = plan_config(p, (p.c_dtype, "float32", None, None, None), {"bias": "n"}, 132)[0]
        if cfg.pingpong:
            out.append(((t, k, n), cfg))
    return out


def fused_configs() -> list:
    """The ping-pong bias picks of `fused_rows` (their cooperative forms are what variant="fast" runs)."""
    return [cfg for _, cfg in _fused_picks()]


def fused_rows(rounds: int) -> None:
    """bench_epilogue's bias rows (bfloat16) whose fused pick runs ping-pong: gemm() against variant="fast"."""
    import torch
    from cute_examples.dense_gemm import gemm
    from cute_examples.timing import interleaved_graph_ms

    for (t, k, n), cfg in _fused_picks():
        a = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
        b = (torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5).t()
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
        us = [x * 1e3 for x in interleaved_graph_ms(_bias_calls(gemm, a, b, out, bias), iterations=5 * rounds,
                                                    rounds=rounds)]
        print(f"bias {t}x{k}->{n}: pp {us[0]:.2f} us, coop {us[1]:.2f} us, pp/coop {us[0] / us[1]:.3f}, "
              f"eager/pp {us[2] / us[0]:.3f}  {cfg.name}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

"""gemm()'s pick against the transposed problem's pick (C^T = B^T A^T: M and N trade places and C is M-major), on the
model suite's layers at random token counts (`pick_survey.layer_rows`; `--random`: on `--count` random shapes of
SMALL_M < M <= `transposed.MAX_M` that it times, `gemm_sweep.random_rows`; `--narrow`: random shapes of N 8..64,
`transposed.narrow`; `--quantise`: random shapes, with `--layers` layer draws, that gemm() transposes by
`transposed.quantises` alone), in one process on identical tensors, alternating, in CUDA graphs, with torch.matmul;
each output checked against torch's.

    python3 scripts/swap_ab.py --specs FILE   # here (MLIR host): both picks' specs
    python -m cute_examples.build_bundle build/aot --add-specs FILE
    python3 scripts/swap_ab.py                # there (GPU host, CUTE_BUNDLE_DIR=build/aot)

Rows: the `--count` draws of `--seed` that gemm() runs as the transposed problem (`launch_plan.plan_pick`); with
`--every`, also those whose transposed pick the model prices faster (the modelled ratio is printed beside the
measured one). The transposed launch reads the same A and B and writes the same C: A' is the weight W (B = W.t()),
B' = A.t() and C' = C.t().

`--b-major n` (with or without `--epilogue`) times gemm()'s plans on a row-major b (`x @ W`, W (K, N) contiguous).

`--new` keeps the rows whose transposed pick without the tile-side rule (`transposed.MIN_TILE`) has a narrower tile:
the rows that rule's restricted pick added. `--epilogue ACT` times gemm()'s own plans instead (`launch_plan.GemmPlan`
with and without the transposed problem, on the same tensors), with a bias along N and the activation ACT, on the rows
whose fused pick gemm() transposes.
"""

from __future__ import annotations

import sys

from gemm_sweep import (
    FUSED,
    ab_arguments,
    ab_summary,
    direct_plans,
    fused_graph_ab,
    graph_ab,
    random_rows,
    write_config_specs,
)
from pick_survey import layer_rows


def draw(args, row, keep, fields: dict | None = None) -> list:  # noqa: ANN001 - the command line, row(dtype, mnk), keep(row)
    """The rows row(dtype, mnk) that keep(row) takes: of `--count` draws of the layers at random token counts, or with
    `--random` the first `--count` of random shapes (`gemm_sweep.random_rows`) of SMALL_M < M <= `transposed.MAX_M`,
    with `--narrow` of its decode-like-N shapes, with `--quantise` those `by_quantising` takes (of a call with the
    epilogue `fields`; with `--layers` of the layer draws)."""
    from cute_examples.dense_gemm.choice import SMALL_M
    from cute_examples.dense_gemm.transposed import MAX_M

    if not (args.random or args.narrow or args.quantise):
        return [r for r in layer_rows(args.count, args.seed, row) if keep(r)]

    def kept(dtype: str, mnk: tuple[int, int, int]) -> tuple | None:
        if args.quantise:
            r = row(dtype, mnk) if SMALL_M < min(mnk[:2]) and by_quantising(dtype, mnk, fields, args.b_major) else None
        else:
            r = row(dtype, mnk) if args.narrow or SMALL_M < mnk[0] <= MAX_M else None
        return r if r is not None and keep(r) else None

    if args.quantise and args.layers:  # the first `--count` layer draws that gemm() transposes by quantising
        return [r for r in layer_rows(50 * args.count, args.seed, kept) if r is not None][: args.count]
    return random_rows(args.count, args.seed, kept, narrow=args.narrow)


def _shape(dtype: str, mnk: tuple[int, int, int], b_major: str = "k"):  # noqa: ANN202 - a GemmShape
    """The benchmarked problem of a shape (`bench_run.bench_shape`) with B `b_major`."""
    import dataclasses

    from cute_examples.dense_gemm.bench_run import bench_shape

    return dataclasses.replace(bench_shape((*mnk, 1), dtype), b_major=b_major)


def picks(dtype: str, mnk: tuple[int, int, int]) -> tuple:
    """((config, parts, modelled us) of the direct problem, the same of the transposed one, whether gemm() runs the
    transposed one: `launch_plan.plan_pick`) on a 132-SM GPU."""
    from cute_examples.dense_gemm.k_choice import estimate_us
    from cute_examples.dense_gemm.launch_plan import plan_config, plan_pick
    from cute_examples.dense_gemm.transposed import min_tile, transposed_shape

    options = (dtype, "float32", None, None, None)
    direct = _shape(dtype, mnk)
    t_shape = transposed_shape(direct)
    pick, t_pick = plan_pick(direct, options, None, 132)
    taken = t_pick is not None
    # the transposed pick also where gemm() keeps direct
    t_pick = t_pick or plan_config(t_shape, options, None, 132, min_tile=min_tile(direct))
    out = [(cfg, splits, estimate_us(shape, cfg, 132, cfg.decomposition, splits))
           for shape, (cfg, splits) in ((direct, pick), (t_shape, t_pick))]
    return (*out, taken)


def by_quantising(dtype: str, mnk: tuple[int, int, int], fields: dict | None = None, b_major: str = "k") -> bool:
    """Whether gemm() runs the transposed problem of a shape only by `transposed.quantises` (without that rule it would
    run the direct one)."""
    from cute_examples.dense_gemm import transposed
    from cute_examples.dense_gemm.launch_plan import plan_pick

    shape, options = _shape(dtype, mnk, b_major), (dtype, "float32", None, None, None)
    if plan_pick(shape, options, fields, 132)[1] is None:
        return False
    saved = transposed.quantises
    transposed.quantises = lambda *_: False
    try:
        return plan_pick(shape, options, fields, 132)[1] is None
    finally:
        transposed.quantises = saved


def added(dtype: str, mnk: tuple[int, int, int], fields: dict | None = None) -> bool:
    """Whether the transposed problem's pick among all tiles has a side under `transposed.MIN_TILE` (a row gemm() runs
    transposed only since the pick is restricted to tiles of sides MIN_TILE or more)."""
    from cute_examples.dense_gemm.launch_plan import plan_config
    from cute_examples.dense_gemm.transposed import MIN_TILE, transposed_fields, transposed_shape

    shape = transposed_shape(_shape(dtype, mnk))
    cfg, _ = plan_config(shape, (dtype, "float32", None, None, None), fields and transposed_fields(fields), 132)
    return min(cfg.tile_m, cfg.tile_n) < MIN_TILE


def fused_picks(dtype: str, mnk: tuple[int, int, int], activation: str | None, b_major: str = "k") -> tuple:
    """(the direct pick, the transposed one or None) of a bias-along-N call with `activation` (None: a plain call) and
    b `b_major` (132 SMs)."""
    from cute_examples.dense_gemm.launch_plan import plan_pick

    fields = None if activation is None else {"activation": activation, **FUSED}
    return plan_pick(_shape(dtype, mnk, b_major), (dtype, "float32", None, None, None), fields, 132)


def fused_rows(args) -> int:  # noqa: ANN001 - the parsed command line
    """--epilogue / --b-major n: gemm()'s plans with and without the transposed problem (a bias and the activation)."""
    fields = None if args.epilogue is None else {"activation": args.epilogue, **FUSED}
    rows = draw(args, lambda d, mnk: (d, mnk, fused_picks(d, mnk, args.epilogue, args.b_major)),
                lambda r: r[2][1] is not None and (not args.new or added(r[0], r[1], fields)), fields)
    if args.specs:
        n = write_config_specs(args.specs, [c for *_, (d, t) in rows for c in (d[0], t[0])])
        print(f"{len(rows)} rows, {n} specs written to {args.specs}")
        return 0
    import torch
    from cute_examples.dense_gemm import launch_plan

    what = "plain" if args.epilogue is None else f"bias along N and {args.epilogue}"
    print(f"{torch.cuda.get_device_name()}; gemm() plans, {what}, b {args.b_major}-major, graphs, {args.rounds} "
          "alternating rounds, identical tensors")

    def build(a, b, outs, epi) -> list:  # noqa: ANN001 - fused_graph_ab's operands
        with direct_plans():  # the direct plan, then gemm()'s
            plans = [launch_plan._build(a, b, outs[0], (None, "float32", None, None, None), epi)]
        plans.append(launch_plan._build(a, b, outs[1], (None, "float32", None, None, None), epi))
        assert not plans[0].transposed and plans[1].transposed
        return plans

    ratios = []
    for dtype, (m, n, k), _ in rows:
        us, plans = fused_graph_ab((m, n, k), dtype, args.epilogue, build, args.rounds, args.b_major)
        ratios.append(us[1] / us[0])
        print(f"{dtype:9} {m}x{n}x{k:<10} {us[0]:8.2f} {us[1]:8.2f} {us[1] / us[0]:8.3f}  {plans[0].config.name} | "
              f"{plans[1].config.name}", flush=True)
    print(ab_summary("transposed / direct", ratios))
    return 0


def main() -> int:
    args = ab_arguments(__doc__, "both picks' specs", 24, 11, layers=True, every=True, epilogue=True,
                        new="only the rows the tile-side rule's restricted pick added", random=True, b_major=True)
    if args.epilogue or args.b_major != "k":
        return fused_rows(args)
    every = args.every

    def keep(r: tuple) -> bool:
        return (r[4] or (every and r[3][2] < r[2][2])) and (not args.new or added(r[0], r[1]))

    rows = [r[:4] for r in draw(args, lambda dtype, mnk: (dtype, mnk, *picks(dtype, mnk)), keep)]
    if args.specs:
        n = write_config_specs(args.specs, [c for *_, d, s in rows for c in (d[0], s[0])])
        print(f"{len(rows)} rows, {n} specs written to {args.specs}")
        return 0
    import torch

    print(f"{torch.cuda.get_device_name()}; graphs, {args.rounds} alternating rounds, identical tensors")
    print(f"{'dtype':9} {'M x N x K':18} {'direct':>8} {'swapped':>8} {'torch':>8} {'swap/dir':>8} {'model':>6} "
          f"{'torch/dir':>9} {'torch/swp':>9}  direct pick | swapped pick")
    ratios = []
    for dtype, mnk, (dc, ds, dus), (sc, ss, sus) in rows:
        us, _, _ = graph_ab(mnk, dtype, [(dc, ds), (sc, ss, True)], args.rounds)
        ratios.append(us[1] / us[0])
        print(f"{dtype:9} {'x'.join(map(str, mnk)):18} {us[0]:8.2f} {us[1]:8.2f} {us[2]:8.2f} {us[1] / us[0]:8.3f} "
              f"{sus / dus:6.3f} {us[2] / us[0]:9.3f} {us[2] / us[1]:9.3f}  {dc.name} S={ds} | {sc.name} S={ss}",
              flush=True)
    print(ab_summary("swapped / direct", ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())

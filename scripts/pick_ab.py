"""gemm()'s pick against its pick under a baseline rule, on the model suite's rows and random shapes whose pick moved,
in one process on identical tensors, alternating, in CUDA graphs; each output checked against torch's.

    python3 scripts/pick_ab.py --specs FILE   # here (MLIR host): both picks' specs
    python -m cute_examples.build_bundle build/aot --add-specs FILE
    python3 scripts/pick_ab.py                # there (GPU host, CUTE_BUNDLE_DIR=build/aot)
    python3 scripts/pick_ab.py --baseline square-split-clusters --count 16 --seed 7
    python3 scripts/pick_ab.py --baseline no-rounds-stream-k --epilogue silu   # gemm()'s fused plans, bias along N

Baselines (`--baseline`): `no-split-clusters` (the default: `k_choice.SPLIT_K_CLUSTERS` cut to no cluster),
`square-split-clusters` (split-K takes a cluster only on `k_choice.clustered_split_tile`'s tiles, whatever the rows'
alignment: the rule before 128x256 took one where A's and B's rows are off sectors), `uniform-min-gain` (that clustered
128x256 split needs the calibration's `min_gain`, not `k_choice.OFF_SECTOR_SPLIT_MIN_GAIN`), `no-rounds-stream-k`
(no stream-K past one round: `k_choice.ROUNDS_STREAM_K_GAIN` at 1), `one-odd-chunk-buffer` (a shared-K tile of an odd
number of epilogue chunks takes one staging buffer: `k_choice.ODD_CHUNK_BUFFERS` at 1), `no-one-round-tiles`
(`choice.ONE_ROUND_TILES` empty: no 128x144 / 128x176), `no-fit-n-tiles` (those tiles only on single-round launches:
`choice.ONE_ROUND_FIT_N` at 0).

`--full` compares gemm()'s whole picks (`pick_survey.pick`: the transposed problem's where gemm() runs it, timed on the
transposed operands) instead of the direct ones; `--layers` draws the Llama-3 layers at random token counts
(`pick_survey.layer_rows`) instead of the suite's and random rows.

Shapes: the suite's rows whose pick moved (both 16-bit dtypes), then `--count` random ones (M 64..8191, N 256..16376 and
K 512..16376 in multiples of 8, both dtypes, seed `--seed`) whose pick moved on a 132-SM GPU.
"""

from __future__ import annotations

import contextlib
import sys

from gemm_sweep import (
    FUSED,
    ab_arguments,
    ab_summary,
    direct_pick,
    direct_plans,
    fused_graph_ab,
    graph_ab,
    random_rows,
    write_config_specs,
)


def _square_split_gain(shape, tile, cal):  # noqa: ANN001, ANN202 - k_choice._clustered_split_gain's arguments
    """`k_choice._clustered_split_gain` before 128x256 took a cluster where rows are off sectors."""
    from cute_examples.dense_gemm import k_choice

    pays = shape.k >= k_choice.CLUSTERED_SPLIT_MIN_K and k_choice.clustered_split_tile(tile)
    return k_choice._min_gain(shape, cal) if pays else None


def _uniform_gain() -> float:
    from cute_examples.dense_gemm.calibration import calibration

    return calibration().min_gain


# each baseline: the k_choice attribute it replaces and a function that gives the replacement
BASELINES = {
    "no-split-clusters": ("SPLIT_K_CLUSTERS", lambda: ((1, 1),)),
    "square-split-clusters": ("_clustered_split_gain", lambda: _square_split_gain),
    "uniform-min-gain": ("OFF_SECTOR_SPLIT_MIN_GAIN", _uniform_gain),
    "no-fitted-shared-k-tiles": ("SIXTEEN_BIT_SHARED_K_TILES", lambda: ()),
    "no-rounds-stream-k": ("ROUNDS_STREAM_K_GAIN", lambda: 1.0),
    "one-odd-chunk-buffer": ("ODD_CHUNK_BUFFERS", lambda: 1),
    "no-one-round-tiles": ("choice.ONE_ROUND_TILES", dict),
    "no-fit-n-tiles": ("choice.ONE_ROUND_FIT_N", lambda: 0),
}


@contextlib.contextmanager
def _baseline(name: str):  # noqa: ANN202
    """k_choice (or choice, for a `choice.` name) with `BASELINES[name]`'s attribute replaced, restored on exit (the
    choice's ranking cache emptied on both)."""
    from cute_examples.dense_gemm import choice, k_choice

    attr, value = BASELINES[name]
    module = choice if attr.startswith("choice.") else k_choice
    attr = attr.removeprefix("choice.")
    saved = getattr(module, attr)
    setattr(module, attr, value())
    choice._ranked.cache_clear()
    try:
        yield
    finally:
        setattr(module, attr, saved)
        choice._ranked.cache_clear()


def picks(dtype: str, mnk: tuple[int, int, int], baseline: str = "no-split-clusters",
          activation: str | None = None, full: bool = False) -> tuple:
    """((config, parts) of gemm()'s pick, (config, parts) under `baseline`) for a shape (`activation`: of a fused call
    with a bias along N; `full`: gemm()'s whole pick, (config, parts, transposed), `pick_survey.pick`)."""
    from pick_survey import pick

    fields = None if activation is None else {"activation": activation, **FUSED}

    def one() -> tuple:
        return pick(dtype, mnk) if full else direct_pick(dtype, mnk, fields)

    new = one()
    with _baseline(baseline):
        old = one()
    return new, old


def shapes(count: int, seed: int, baseline: str = "no-split-clusters", activation: str | None = None,
           full: bool = False, layers: bool = False) -> list:
    """(dtype, (m, n, k), new pick, old pick under `baseline`) of the suite's and `count` random rows whose pick
    moved (`activation`: random rows only, of a fused call with a bias along N; `full`: gemm()'s whole picks;
    `layers`: the first `count` of the Llama-3 layers at random token counts whose pick moved, instead)."""
    from cute_examples.dense_gemm.bench_models import suite
    from pick_survey import layer_rows

    def row(dtype: str, mnk: tuple[int, int, int]) -> tuple | None:
        new, old = picks(dtype, mnk, baseline, activation, full)
        return (dtype, mnk, new, old) if new != old else None

    if layers:
        return [r for r in layer_rows(100 * count, seed, row) if r is not None][:count]
    out = []
    for dtype in ("bfloat16", "float16") if activation is None else ():
        for s in suite():
            if s.l == 1:
                r = row(dtype, (s.m, s.n, s.k))
                if r is not None:
                    out.append(r)
    return out + random_rows(count, seed, row, k_from=512)


def main() -> int:
    args = ab_arguments(__doc__, "both picks' specs", 40, 1130, epilogue=True, layers=True, full=True,
                        baseline=("no-split-clusters", tuple(BASELINES), "the rule the pick is compared with"))
    if args.epilogue and args.full:
        raise SystemExit("--full times plain calls only")
    rows = shapes(args.count, args.seed, args.baseline, args.epilogue, args.full, args.layers)
    if args.specs:
        n = write_config_specs(args.specs, [new[0] for _, _, *picked in rows for new in picked])
        print(f"{len(rows)} rows, {n} specs written to {args.specs}")
        return 0
    if args.epilogue:
        return fused_rows(rows, args)
    import torch

    print(f"{torch.cuda.get_device_name()}; graphs, {args.rounds} alternating rounds, identical tensors")
    print(f"{'dtype':9} {'M x N x K':20} {'new us':>8} {'old us':>8} {'new/old':>8} {'torch/new':>9}  "
          "new pick <- old pick")
    ratios = []
    for dtype, mnk, new, old in rows:
        us, _, _ = graph_ab(mnk, dtype, [new, old], args.rounds)
        ratios.append(us[0] / us[1])
        print(f"{dtype:9} {'x'.join(map(str, mnk)):20} {us[0]:8.2f} {us[1]:8.2f} {us[0] / us[1]:8.3f} "
              f"{us[2] / us[0]:9.3f}  {_named(new)} <- {_named(old)}", flush=True)
    print(ab_summary("new / old", ratios))
    return 0


def _named(pick: tuple) -> str:
    """A pick's config name, split-K parts and whether it runs the transposed problem."""
    return f"{pick[0].name} S={pick[1]}" + (" (transposed)" if pick[2:] and pick[2] else "")


def fused_rows(rows: list, args) -> int:  # noqa: ANN001 - the parsed command line
    """--epilogue: gemm()'s direct plans of a fused call (a bias along N, the activation) with and without the rule."""
    import torch
    from cute_examples.dense_gemm import launch_plan

    print(f"{torch.cuda.get_device_name()}; gemm() plans, bias along N and {args.epilogue}, graphs, {args.rounds} "
          "alternating rounds, identical tensors")

    def build(a, b, outs, epi) -> list:  # noqa: ANN001 - fused_graph_ab's operands
        with direct_plans():  # the direct plans, which the rule moves
            plans = [launch_plan._build(a, b, outs[0], (None, "float32", None, None, None), epi)]
            with _baseline(args.baseline):
                plans.append(launch_plan._build(a, b, outs[1], (None, "float32", None, None, None), epi))
        return plans

    ratios = []
    for dtype, mnk, _, _ in rows:
        us, plans = fused_graph_ab(mnk, dtype, args.epilogue, build, args.rounds)
        ratios.append(us[0] / us[1])
        print(f"{dtype:9} {'x'.join(map(str, mnk)):20} {us[0]:8.2f} {us[1]:8.2f} {us[0] / us[1]:8.3f}  "
              f"{plans[0].config.name} <- {plans[1].config.name}", flush=True)
    print(ab_summary("new / old", ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())

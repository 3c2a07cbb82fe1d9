"""gemm()'s pick against torch.matmul (cuBLAS) on random shapes, in one process on identical tensors, alternating, in
CUDA graphs; each output checked against torch's; the ratios grouped by the launch's class.

    python3 scripts/pick_survey.py --specs FILE   # here (MLIR host): the picks' specs
    python -m cute_examples.build_bundle build/aot --add-specs FILE
    python3 scripts/pick_survey.py                # there (GPU host, CUTE_BUNDLE_DIR=build/aot)

Shapes: `--count` random ones (M 64..8191, N 256..16376 and K 512..16376 in multiples of 8, both 16-bit dtypes, seed
`--seed`); with `--layers`, the model suite's Llama-3 layers (`bench_models.LLAMA3`: K = in, N = out) at random token
counts M (log-uniform in 17..8191) instead. Per row: cuBLAS / ours (above 1: ours faster), gemm()'s config and
split-K parts; then the geometric mean per class: M < 512 or not, one round of the data-parallel tiles or more, A's and
B's rows on or off 32-byte sectors (`choice.rows_off_sectors`), and the decomposition picked.
"""

from __future__ import annotations

import collections
import statistics
import sys

from gemm_sweep import ab_arguments, graph_ab, random_rows, write_config_specs


def pick(dtype: str, mnk: tuple[int, int, int]) -> tuple:
    """(config, split-K parts, transposed) of gemm()'s pick for a shape on a 132-SM GPU (`launch_plan.plan_pick`: the
    transposed problem's where gemm() runs that)."""
    from cute_examples.dense_gemm.bench_run import bench_shape
    from cute_examples.dense_gemm.launch_plan import plan_pick

    direct, t_pick = plan_pick(bench_shape((*mnk, 1), dtype), (dtype, "float32", None, None, None), None, 132)
    return (*direct, False) if t_pick is None else (*t_pick, True)


def classes(dtype: str, mnk: tuple[int, int, int], cfg, transposed: bool = False) -> tuple[str, ...]:  # noqa: ANN001
    """The row's class labels: M range, rounds of its data-parallel tiles, row alignment, decomposition, and whether
    gemm() runs the transposed problem."""
    from cute_examples.dense_gemm.bench_run import bench_shape
    from cute_examples.dense_gemm.choice import _rounds_of, rows_off_sectors
    from cute_examples.dense_gemm.transposed import transposed_shape

    shape = bench_shape((*mnk, 1), dtype)
    rounds = _rounds_of(cfg.tile_scheduler, transposed_shape(shape) if transposed else shape, 132)
    off = rows_off_sectors(shape)
    labels = ("M<512" if mnk[0] < 512 else "M>=512", "1 round" if rounds == 1 else "rounds>1",
              "rows off sectors" if off else "rows on sectors", cfg.decomposition)
    return labels + (("transposed",) if transposed else ())


def layer_rows(count: int, seed: int, row) -> list:  # noqa: ANN001 - row(dtype, mnk)
    """`count` values of row(dtype, (m, n, k)) over the Llama-3 layers at random token counts and 16-bit dtypes."""
    import math
    import random

    from cute_examples.dense_gemm.bench_models import LLAMA3

    rng = random.Random(seed)
    layers = [(k, n) for model in LLAMA3.values() for _, k, n in model]
    out = []
    for _ in range(count):
        k, n = rng.choice(layers)
        m = int(math.exp(rng.uniform(math.log(17), math.log(8192))))
        out.append(row(rng.choice(("bfloat16", "float16")), (m, n, k)))
    return out


def main() -> int:
    args = ab_arguments(__doc__, "the picks' specs", 48, 2026, layers=True)
    draw = layer_rows if args.layers else lambda c, s, r: random_rows(c, s, r, k_from=512)
    rows = draw(args.count, args.seed, lambda dtype, mnk: (dtype, mnk, *pick(dtype, mnk)))
    if args.specs:
        n = write_config_specs(args.specs, [cfg for _, _, cfg, *_ in rows])
        print(f"{len(rows)} rows, {n} specs written to {args.specs}")
        return 0
    import torch

    print(f"{torch.cuda.get_device_name()}; graphs, {args.rounds} alternating rounds, identical tensors")
    print(f"{'dtype':9} {'M x N x K':20} {'ours us':>8} {'torch us':>8} {'torch/ours':>10}  config")
    ratios, grouped = [], collections.defaultdict(list)
    for dtype, mnk, cfg, splits, transposed in rows:
        (ours, peer), (label,), _ = graph_ab(mnk, dtype, [(cfg, splits, transposed)], args.rounds)
        ratios.append(peer / ours)
        for c in classes(dtype, mnk, cfg, transposed):
            grouped[c].append(peer / ours)
        print(f"{dtype:9} {'x'.join(map(str, mnk)):20} {ours:8.2f} {peer:8.2f} {peer / ours:10.3f}  {cfg.name} "
              f"S={splits} {label}{' (transposed problem)' if transposed else ''}", flush=True)
    print(f"torch / ours: geomean {statistics.geometric_mean(ratios):.3f} over {len(ratios)} rows "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    for c, rs in sorted(grouped.items()):
        print(f"  {c:18} {len(rs):3} rows  geomean {statistics.geometric_mean(rs):.3f}  min {min(rs):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

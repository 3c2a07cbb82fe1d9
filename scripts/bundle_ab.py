"""gemm()'s picks with the kernels of two AOT bundles (old and new kernel code, the same configs), in one process on
identical tensors, alternating, in CUDA graphs; each output checked against torch's.

    python3 scripts/bundle_ab.py --specs FILE          # here (MLIR host): the picks' specs
    python -m cute_examples.build_bundle OLD --no-gemm --add-specs FILE   # in the old tree
    python -m cute_examples.build_bundle NEW --no-gemm --add-specs FILE   # in the new tree
    python3 scripts/bundle_ab.py OLD NEW [--count 24 --seed 1] [--no-suite]   # there (GPU host)

A kernel change that keeps every config (and so every spec) cannot put old and new kernels in one bundle; this
loads each row's pick once from each bundle (`CUTE_BUNDLE_DIR` switched between the two, the JIT tables emptied) and
times the two launches and torch.matmul in alternating rounds. Rows: the model suite's single-matrix rows of M >= 16
(both 16-bit dtypes), then `--count` random shapes (M 64..8191, N 256..16376, K 256..16376 in multiples of 8); the
pick is `launch_plan.plan_config`'s direct one (the transposed problems' picks are not in these rows).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

from gemm_sweep import _operands, _prepare, ab_summary, direct_pick, graph_calls, random_rows, write_config_specs


def rows(count: int, seed: int, suite: bool) -> list:
    """(dtype, (m, n, k), (config, parts)) of the suite's rows (with `suite`) and `count` random shapes."""
    from cute_examples.dense_gemm.bench_models import suite as model_suite

    out = [(d, (s.m, s.n, s.k), direct_pick(d, (s.m, s.n, s.k))) for d in ("bfloat16", "float16") if suite
           for s in model_suite() if s.l == 1 and s.m >= 16]
    return out + random_rows(count, seed, lambda d, mnk: (d, mnk, direct_pick(d, mnk)))


def use_bundle(path: str) -> None:
    """Serve the GEMM kernels loaded from now on from the bundle at `path` (those loaded before stay as they are)."""
    from cute_examples.dense_gemm import kernel
    from cute_runtime import JitKernel

    os.environ["CUTE_BUNDLE_DIR"] = path
    for fn in vars(kernel).values():
        if isinstance(fn, JitKernel):  # every kernel a GemmConfig can run (`kernel._kernel_fn`)
            fn._kernels.clear()


def cubin_digest(cfg) -> str:  # noqa: ANN001 - a GemmConfig
    """The sha256 of the cubin the active bundle serves for `cfg`."""
    from cute_examples.dense_gemm.kernel import gemm_spec
    from cute_runtime.frontend import env_bundle

    return hashlib.sha256(env_bundle().item(gemm_spec(cfg), "sm_90a").cubin).hexdigest()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("bundles", nargs="*", metavar="OLD NEW", help="the two bundle directories (GPU host)")
    p.add_argument("--specs", metavar="FILE", help="write the picks' specs (for build_bundle --add-specs)")
    p.add_argument("--count", type=int, default=24)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--no-suite", action="store_true", help="random shapes only")
    args = p.parse_args()
    table = rows(args.count, args.seed, not args.no_suite)
    if args.specs:
        n = write_config_specs(args.specs, [cfg for _, _, (cfg, _) in table])
        print(f"{len(table)} rows, {n} specs written to {args.specs}")
        return 0
    if len(args.bundles) != 2:
        p.error("give the OLD and NEW bundle directories (or --specs FILE)")
    import torch
    from cute_examples.timing import interleaved_graph_ms

    old, new = args.bundles
    print(f"{torch.cuda.get_device_name()}; old {old}, new {new}; graphs, {args.rounds} alternating rounds, "
          "identical tensors")
    print(f"{'dtype':9} {'M x N x K':20} {'new us':>8} {'old us':>8} {'new/old':>8} {'torch/new':>9}  "
          "config S schedule")
    ratios, same = [], 0
    for dtype, mnk, (cfg, splits) in table:
        torch.manual_seed(0)
        ops = _operands(mnk, dtype, 0)
        launches, digests = [], []
        for path in (new, old):
            use_bundle(path)
            launch, err, label = _prepare(cfg, splits, ops, 132)
            if not err <= 2e-2:
                raise AssertionError(f"{path}: {cfg.name} S={splits} {mnk}: normwise error {err:.1e}")
            launches.append(launch)
            digests.append(cubin_digest(cfg))
        same += digests[0] == digests[1]
        us = [t * 1e3 for t in interleaved_graph_ms([*launches, ops[4]], calls=graph_calls(mnk),
                                                     iterations=5 * args.rounds, rounds=args.rounds)]
        ratios.append(us[0] / us[1])
        print(f"{dtype:9} {'x'.join(map(str, mnk)):20} {us[0]:8.2f} {us[1]:8.2f} {us[0] / us[1]:8.3f} "
              f"{us[2] / us[0]:9.3f}  {cfg.name} S={splits} {label}", flush=True)
    if same:
        print(f"note: {same} rows' two bundles hold the same cubin")
    print(ab_summary("new / old", ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The dense GEMM benchmark: ours against torch.matmul, same tensors, same process, same timer.

    python -m cute_examples.dense_gemm.bench [--variant fast,cluster_release,base] [--iterations 30]
                                             [--bundle DIR]
    python -m cute_examples.dense_gemm.bench --suite models [--quick] [--decomposition auto|data_parallel]

`--suite models` runs the real-model shape suite instead (`bench_models`: Llama-3 8B/70B layers at 1..8192
tokens, squares, odd and batched shapes, with the split-K / stream-K choice; rows print config and schedule).
The "pingpong" variant is CUTLASS's ping-pong consumer schedule (`GemmConfig.with_schedule`): `--variant
pingpong,fast` times it against the cooperative kernel on the same tensors; `--suite models --variant pingpong`
runs the suite's data-parallel rows with it.

For float16 and bfloat16 (float32 accumulation, C in the input dtype) at every `BENCH_SHAPES` entry: A is
row-major (M, K), B is the transpose of a row-major (N, K) (both K-major: CUTLASS's "TN" GEMM), C row-major.
Each kernel's result is first checked against torch.matmul's (normwise relative error within the
CLI's tolerance for C's dtype), then both are timed with CUDA events (`cute_examples.timing.median_ms`:
median of `iterations` >= 20 after warm-up). The config is `choose_config`'s for the shape; the first
variant gives the headline TFLOP/s and ratio, the others their TFLOP/s and the first one's speed relative
to them: by default "cluster_release" (the "fast" kernel with the per-K-tile `MEMBAR.ALL.GPU` of a
cluster-scope stage release, i.e. the kernel before that fix) and "base" (the unpipelined first kernel).
The last row is the geometric mean of the ratios.
Every config these rows use is in `aot.bench_configs()` (and so in the AOT bundle).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..cli import Parser, add_bundle_flag, make_parser, number, option, switch
from .bench_run import bench_config, bench_shape, geomean, no_gpu_ends
from .bench_run import operands as _operands
from .bench_run import prepare_ours as _prepare_ours
from .spec import AB_DTYPES, VARIANTS, runs_on

__all__ = [
    "BENCH_DTYPES",
    "BENCH_SHAPES",
    "DEFAULT_VARIANTS",
    "bench_config",
    "bench_shape",
    "gemm_rows",
    "main",
]

# (M, N, K, L)
BENCH_SHAPES = (
    (2048, 2048, 2048, 1),
    (4096, 4096, 4096, 1),
    (8192, 8192, 8192, 1),
    (8192, 8192, 1024, 1),
    (16384, 16384, 8192, 1),
    (4096, 4096, 4096, 4),
)
BENCH_DTYPES = AB_DTYPES
DEFAULT_VARIANTS = ("fast", "cluster_release", "base")
MIN_ITERATIONS = 20


def _w1(variant: str) -> int:
    """Width of a variant's TFLOP/s column."""
    return max(11, len(variant) + 5)


def _w2(head: str, variant: str) -> int:
    """Width of the headline-over-variant speed-up column."""
    return max(10, len(head) + 1 + len(variant))


def gemm_rows(iterations: int, variants: Sequence[str] = DEFAULT_VARIANTS) -> list[str]:
    """Rows of TFLOP/s for ours and torch.matmul and their ratio per dtype and shape, then the geomean."""
    import torch
    from cute_runtime import device_properties

    from ..timing import interleaved_median_ms
    from .spec import TOLERANCE

    for v in variants:
        if v not in VARIANTS:
            raise ValueError(f"variants must be among {tuple(VARIANTS)}, got {v!r}")
    if not variants:
        raise ValueError("variants must name at least one variant")
    iterations = max(iterations, MIN_ITERATIONS)
    props = device_properties(torch.cuda.current_device())
    if not runs_on(tuple(props.compute_capability)):
        cc = props.compute_capability
        return [f"dense GEMM: needs an sm_90 GPU, found compute capability {cc[0]}.{cc[1]}"]
    num_sms = props.sm_count
    head, others = variants[0], list(variants[1:])
    rows = [
        "A (M,K) row-major, B = (N,K)^T (TN), C (M,N) in the input dtype, float32 accumulation; "
        f"ours = variant {head!r}; config = choose_config's",
        f"{'dtype':8} {'M x N x K (L)':22} {'ours TF/s':>9} {'torch TF/s':>10} {'ratio':>6}  "
        + "".join(f"{v + ' TF/s':>{_w1(v)}} {head + '/' + v:>{_w2(head, v)}}  " for v in others)
        + f"{'rel.err':>8}  config",
    ]
    ratios = []
    for dtype in BENCH_DTYPES:
        for mnkl in BENCH_SHAPES:
            m, n, k, l = mnkl
            label = f"{m}x{n}x{k}" + (f" ({l})" if l > 1 else "")
            a, b, c = _operands(mnkl, dtype)
            ref = torch.matmul(a, b)
            flops = 2.0 * m * n * k * l
            cfg = bench_config(mnkl, dtype, head, num_sms)
            cells = []
            try:
                launches, errs = [], []
                for v in [head, *others]:
                    fn, err = _prepare_ours(cfg.with_variant(v) if v != head else cfg, a, b, c, ref, num_sms)
                    launches.append(fn)
                    errs.append(err)
                # ours, its variants and torch.matmul in alternating order (the GPU's clocks follow power)
                times = interleaved_median_ms(
                    [*launches, lambda a=a, b=b: torch.matmul(a, b)], warmup=5, iterations=iterations
                )
                t_ours, t_torch, err = times[0], times[-1], errs[0]
                ok = err <= TOLERANCE[dtype]
                for v, vt, verr in zip(others, times[1:-1], errs[1:], strict=True):
                    w1, w2 = _w1(v), _w2(head, v)
                    if verr <= TOLERANCE[dtype]:
                        cells.append(f"{flops / vt / 1e9:{w1}.1f} {vt / t_ours:{w2 - 1}.3f}x  ")
                    else:
                        cells.append(f"{'WRONG':>{w1}} {f'err {verr:.1e}':>{w2}}  ")
            except Exception as exc:  # noqa: BLE001 - one failing row must not hide the others
                rows.append(f"{dtype:8} {label:22} error: {type(exc).__name__}: {exc}")
                continue
            finally:
                del a, b, c, ref
                torch.cuda.empty_cache()
            if not ok:
                rows.append(
                    f"{dtype:8} {label:22} WRONG RESULT: relative error {err:.2e} > {TOLERANCE[dtype]:.1e} "
                    f"({cfg.name})"
                )
                continue
            ratio = t_torch / t_ours
            ratios.append(ratio)
            rows.append(
                f"{dtype:8} {label:22} {flops / t_ours / 1e9:9.1f} {flops / t_torch / 1e9:10.1f} "
                f"{ratio:6.3f}  "
                + "".join(cells)
                + f"{err:8.1e}  {cfg.name}"
            )
    if ratios:
        geo = geomean(ratios)
        rows.append(f"geometric mean of ours/torch speed ratios over {len(ratios)} rows: {geo:.3f}")
    return rows


def parser() -> Parser:
    """The command line of the GEMM benchmark."""
    p = make_parser("python -m cute_examples.dense_gemm.bench", (__doc__ or "").split("\n")[0], [
        "python -m cute_examples.dense_gemm.bench",
        "python -m cute_examples.dense_gemm.bench --variant fast,base --iterations 50 --bundle build/aot",
        "python -m cute_examples.dense_gemm.bench --suite models --quick --bundle build/aot",
        "python -m cute_examples.dense_gemm.bench --variant pingpong,fast",
    ])
    option(p, "--iterations", type=number(int, 1), default=30, example="50", metavar="N",
           help=f"timed calls per measurement (at least {MIN_ITERATIONS} are taken)")
    option(p, "--variant", type=_variants, default=DEFAULT_VARIANTS, example="fast,base", metavar="LIST",
           help=f"comma-separated names of {', '.join(VARIANTS)}; the first gives the headline")
    option(p, "--suite", choices=("default", "models"), default="default", example="models",
           help="default: the variant table; models: the real-model shape suite (bench_models)")
    switch(p, "--quick", help="with --suite models: the quick subset")
    option(p, "--decomposition", choices=("auto", "data_parallel"), default="auto", example="data_parallel",
           help="with --suite models: the k_choice pick (auto) or data-parallel only")
    add_bundle_flag(p)
    return p


def _variants(text: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in text.split(",") if v.strip())
    if not names or any(v not in VARIANTS for v in names):
        raise argparse.ArgumentTypeError(f"must list names among {', '.join(VARIANTS)}, got {text!r}")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    """Print the GEMM table (`--variant fast,base` compares speed options on the same tensors)."""
    args = parser().parse_args(argv)
    variants = list(args.variant)
    if no_gpu_ends(args, "nothing (python -m cute_examples.dense_gemm compiles a GEMM without a GPU)",
                   "the GEMM benchmark"):
        return 0
    import torch
    print(f"device: {torch.cuda.get_device_name()}")
    if args.suite == "models":
        from .bench_models import model_rows

        model_rows(min(args.iterations, 20), args.quick, args.decomposition, log=lambda r: print(r, flush=True),
                   schedule=VARIANTS[variants[0]]["schedule"])
        return 0
    for row in gemm_rows(args.iterations, variants):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())

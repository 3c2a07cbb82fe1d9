"""Every GEMM config `GemmConfig` accepts, a seeded sample of them, and a compile sweep over either.

`every_config()` is the 1,728 configs of every (A/B, accumulator, C) dtype combination x every (a, b, c)
major x every tile (M 64/128 x N 64/128/256, K 64) x every cluster shape (1x1, 2x1, 1x2, 2x2), with
`stages=None` and the "fast" speed options. `sample_configs(count, seed)` draws `count` of them and always
includes one config of each class that issue 9 found failing (A m-major with tile_m 128 and cluster_n 2;
B n-major with tile_n >= 128 and cluster_m 2; for float16 and for bfloat16).

    python -m cute_examples.dense_gemm.configs --jobs 16     # compile all 1,728, one worker per job
    python -m cute_examples.dense_gemm.configs --sample 30   # a seeded sample of 30

compiles each through cute-ir (MLIR -> PTX -> ptxas, through the compile cache) and prints
`N of M configs compiled, S with spills`; the exit status is 1 unless every config compiled without spills.
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from .aot import dtype_combinations
from .spec import CLUSTER_SHAPES, TILE_M, TILE_N, GemmConfig

__all__ = [
    "FORMERLY_FAILING",
    "CompileResult",
    "compile_config",
    "every_config",
    "main",
    "sample_configs",
    "sweep",
]

SAMPLE_SEED = 9


def every_config() -> list[GemmConfig]:
    """The 1,728 configs: dtype combinations x (a, b, c) majors x tiles x clusters ("fast", stages=None)."""
    return [
        GemmConfig(
            a_dtype=ab,
            b_dtype=ab,
            acc_dtype=acc,
            c_dtype=c,
            a_major=am,
            b_major=bm,
            c_major=cm,
            tile_m=tm,
            tile_n=tn,
            cluster_m=cx,
            cluster_n=cy,
        )
        for (ab, acc, c), am, bm, cm, tm, tn, (cx, cy) in itertools.product(
            dtype_combinations(), "km", "kn", "nm", TILE_M, TILE_N, CLUSTER_SHAPES
        )
    ]


def _a_split(cfg: GemmConfig) -> bool:
    return cfg.a_major == "m" and cfg.tile_m == 128 and cfg.cluster_n == 2


def _b_split(cfg: GemmConfig) -> bool:
    return cfg.b_major == "n" and cfg.tile_n >= 128 and cfg.cluster_m == 2


# the classes whose multicast TMA boxes two planners split differently (issue 9): (name, predicate)
FORMERLY_FAILING: tuple[tuple[str, Callable[[GemmConfig], bool]], ...] = tuple(
    (f"{what} {ab}", lambda c, ab=ab, test=test: c.a_dtype == ab and test(c))
    for ab in ("float16", "bfloat16")
    for what, test in (
        ("A m-major, tile_m 128, cluster_n 2", _a_split),
        ("B n-major, tile_n >= 128, cluster_m 2", _b_split),
    )
)


def sample_configs(count: int = 24, seed: int = SAMPLE_SEED) -> list[GemmConfig]:
    """`count` distinct configs of `every_config()` drawn with `seed`, one of each formerly failing class first."""
    configs = every_config()
    if not len(FORMERLY_FAILING) <= count <= len(configs):
        raise ValueError(f"count must be in {len(FORMERLY_FAILING)}..{len(configs)}, got {count!r}")
    rng = random.Random(seed)
    picked: list[GemmConfig] = []
    for _, in_class in FORMERLY_FAILING:
        picked.append(rng.choice([c for c in configs if in_class(c) and c not in picked]))
    rest = [c for c in configs if c not in picked]
    return picked + rng.sample(rest, count - len(picked))


@dataclass(frozen=True)
class CompileResult:
    """One config's compile: its kernel name, seconds, ptxas spill bytes (stores + loads), or the error."""

    name: str
    seconds: float
    spill_bytes: int
    error: str | None = None


def compile_config(cfg: GemmConfig) -> CompileResult:
    """Compile `cfg` for sm_90a through cute-ir (its compile cache included) and read ptxas' spill counts."""
    from .host import compile_gemm

    t0 = time.perf_counter()
    try:
        art = compile_gemm(cfg)
    except Exception as e:  # noqa: BLE001 - a sweep reports every failure and goes on
        return CompileResult(cfg.name, time.perf_counter() - t0, 0, f"{type(e).__name__}: {e}")
    r = art.resources
    spills = r["spill_stores"] + r["spill_loads"] + r["local_memory"]
    return CompileResult(cfg.name, time.perf_counter() - t0, spills)


def sweep(configs: Sequence[GemmConfig], jobs: int, report: Callable[[CompileResult], None] = print) -> list:
    """Compile every config with `jobs` worker processes; `report` sees each result as it comes."""
    if jobs == 1:
        results = []
        for cfg in configs:
            results.append(compile_config(cfg))
            report(results[-1])
        return results
    import multiprocessing

    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = []
        for res in pool.map(compile_config, configs, chunksize=1):
            results.append(res)
            report(res)
    return results


def _report(res: CompileResult) -> None:
    if res.error is not None:
        print(f"FAILED {res.name}: {res.error}", flush=True)
    elif res.spill_bytes:
        print(f"SPILLS {res.name}: {res.spill_bytes} bytes", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Compile every config (or a seeded sample) and print how many compiled and how many spill."""
    from ..cli import make_parser, number, option

    p = make_parser(
        "python -m cute_examples.dense_gemm.configs",
        "Compile every GEMM config GemmConfig accepts (or a seeded sample) and count spills.",
        [
            "python -m cute_examples.dense_gemm.configs --jobs 16",
            "python -m cute_examples.dense_gemm.configs --sample 30 --jobs 2",
        ],
    )
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    option(p, "--jobs", type=number(int, 1), default=cores, example="16", shown="one per core",
           help="worker processes")
    option(p, "--sample", type=number(int, len(FORMERLY_FAILING), below=len(every_config()) + 1), default=None,
           example="30", shown="all 1728", help="compile a seeded sample of this many configs instead")
    option(p, "--seed", type=number(int, 0), default=SAMPLE_SEED, example="3", help="the sample's seed")
    args = p.parse_args(argv)
    configs = every_config() if args.sample is None else sample_configs(args.sample, args.seed)
    t0 = time.perf_counter()
    results = sweep(configs, args.jobs, _report)
    wall = time.perf_counter() - t0
    ok = [r for r in results if r.error is None]
    spilled = sum(1 for r in ok if r.spill_bytes)
    per = sum(r.seconds for r in results) / max(1, len(results))
    print(f"{len(ok)} of {len(configs)} configs compiled, {spilled} with spills")
    print(f"{wall:.1f} s with {args.jobs} job(s); {per:.2f} s per config in a worker")
    return 0 if len(ok) == len(configs) and spilled == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

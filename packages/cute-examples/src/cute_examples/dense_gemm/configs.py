"""Every GEMM config `GemmConfig` accepts, a seeded sample of them, and a compile sweep over either.

`every_config()` is the 6,048 configs of every (A/B, accumulator, C) dtype combination x every (a, b, c)
major x every tile (`spec.TILES`: M 64/128 x N 64/96/128/144/160/176/192/224/256 and 256 x 64/96/128, K 64) x every
cluster shape (1x1, 2x1, 1x2, 2x2), with `stages=None` and the "fast" speed options. `sample_configs(count,
seed)` draws `count` of them and always includes one config of each class that issue 9 found failing (A m-major
with tile_m 128 and cluster_n 2; B n-major with tile_n >= 128 and cluster_m 2; for float16 and for bfloat16).

    python -m cute_examples.dense_gemm.configs --jobs 16     # compile all 6,048 (+ epilogue kinds), one per job
    python -m cute_examples.dense_gemm.configs --sample 30   # a seeded sample of 30

The full sweep (`sweep_configs()`) adds every fused-epilogue kind on a representative set of tiles
(`epilogue_cases.kind_configs()`: 12 kinds x 3 tiles, not the cross product with all 6,048) and the ping-pong
schedule's 5 tiles x 3 clusters, plain and with two epilogues (`pingpong_cases.sweep_configs()`, 45). It
compiles each through cute-ir (MLIR -> PTX -> ptxas, through the compile cache) and prints
`N of M configs compiled, S with spills`; the exit status is 1 unless every config compiled without spills.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from .aot import dtype_combinations
from .spec import AB_DTYPES, CLUSTER_SHAPES, TILES, GemmConfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..cli import Parser

__all__ = [
    "FORMERLY_FAILING",
    "any_shape_configs",
    "RANDOM_PROBLEM_COUNT",
    "RANDOM_PROBLEM_SEED",
    "CompileResult",
    "RandomProblem",
    "compile_config",
    "every_config",
    "gemm_call_configs",
    "gpu_test_configs",
    "main",
    "multicast_split_configs",
    "random_problem_configs",
    "random_problems",
    "sample_configs",
    "sweep",
    "sweep_configs",
]

SAMPLE_SEED = 9


def every_config() -> list[GemmConfig]:
    """The 6,048 configs: dtype combinations x (a, b, c) majors x tiles x clusters ("fast", stages=None)."""
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
        for (ab, acc, c), am, bm, cm, (tm, tn), (cx, cy) in itertools.product(
            dtype_combinations(), "km", "kn", "nm", TILES, CLUSTER_SHAPES
        )
    ]


def sweep_configs() -> list[GemmConfig]:
    """What the full sweep compiles: `every_config()`, every epilogue kind on the representative tiles and the
    representative split-K / stream-K configs (`split_k_cases.split_sweep_configs`) and the ping-pong tiles x
    clusters, plain and with two epilogues (`pingpong_cases.sweep_configs`)."""
    from .epilogue_cases import kind_configs
    from .pingpong_cases import sweep_configs as pingpong_sweep_configs
    from .split_k_cases import split_sweep_configs

    return every_config() + kind_configs() + split_sweep_configs() + pingpong_sweep_configs()


def _a_split(cfg: GemmConfig) -> bool:
    return cfg.a_major == "m" and cfg.tile_m == 128 and cfg.cluster_n == 2


def _b_split(cfg: GemmConfig) -> bool:
    return cfg.b_major == "n" and cfg.tile_n >= 128 and cfg.cluster_m == 2


# the classes whose multicast TMA boxes two planners split differently (issue 9): (name, predicate)
FORMERLY_FAILING: tuple[tuple[str, Callable[[GemmConfig], bool]], ...] = tuple(
    (f"{what} {ab}", lambda c, ab=ab, test=test: c.a_dtype == ab and test(c))
    for ab in AB_DTYPES
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


def multicast_split_configs() -> list[GemmConfig]:
    """The GPU tests' configs of the formerly failing classes, at every tile, float16 and bfloat16.

    Per A/B dtype and tile: A m-major under a 1x2 cluster (B k-major, C n-major), B n-major under 2x1 (A
    k-major, C m-major) and both under 2x2 (C alternating); float32 accumulation, C of the input dtype (at tile_m
    256 the 2x2 one writes a float32 C: its two slabs per warpgroup through the float32 staging path).
    """
    out = []
    for ab in AB_DTYPES:
        for i, (tm, tn) in enumerate(TILES):
            for am, bm, cm, cluster in (
                ("m", "k", "n", (1, 2)),
                ("k", "n", "m", (2, 1)),
                ("m", "n", "nm"[i % 2], (2, 2)),
            ):
                c = "float32" if tm > 128 and cluster == (2, 2) else ab
                out.append(
                    GemmConfig(
                        a_dtype=ab, b_dtype=ab, c_dtype=c, a_major=am, b_major=bm, c_major=cm,
                        tile_m=tm, tile_n=tn, cluster_m=cluster[0], cluster_n=cluster[1],
                    )
                )
    return out


RANDOM_PROBLEM_SEED = 9
RANDOM_PROBLEM_COUNT = 48


@dataclass(frozen=True)
class RandomProblem:
    """One drawn GEMM call: sizes, dtypes, majors, whether 3-D (batched) and whether `out` is passed."""

    m: int
    n: int
    k: int
    l: int
    ab_dtype: str
    c_dtype: str
    a_major: str
    b_major: str
    c_major: str  # "n" whenever out is not passed (gemm() allocates an N-major out)
    batched: bool
    out_given: bool


def random_problems(count: int = RANDOM_PROBLEM_COUNT, seed: int = RANDOM_PROBLEM_SEED) -> list[RandomProblem]:
    """`count` GEMM calls drawn with `seed`: odd and round sizes (log-uniform), majors, dtypes, batch counts."""
    rng = random.Random(seed)

    def size(top: int) -> int:
        low = 0 if rng.random() < 0.25 else 7  # a quarter tiny (down to 1), the rest 128 and up
        v = int(round(2 ** rng.uniform(low, top.bit_length() - 1)))
        return v if rng.random() < 0.7 else max(1, v - v % 64)  # mostly odd, some tile multiples

    out = []
    for _ in range(count):
        ab = rng.choice(AB_DTYPES)
        l = rng.choice((1, 1, 1, 2, 3, 5))
        out_given = rng.random() < 0.5
        out.append(
            RandomProblem(
                m=size(4096), n=size(4096), k=size(2048), l=l, ab_dtype=ab,
                c_dtype=rng.choice((ab, ab, "float32")) if out_given else ab,
                a_major=rng.choice("km"), b_major=rng.choice("kn"),
                c_major=rng.choice("nm") if out_given else "n",
                batched=l > 1 or rng.random() < 0.3, out_given=out_given,
            )
        )
    return out


def gemm_call_configs(problem: object, num_sms: int, acc_dtype: str = "float32",
                      decomposed: bool | None = False) -> list[GemmConfig]:
    """The configs `gemm()` asks for on a problem without tile, cluster, variant or tuned entry.

    `launch_plan.gemm_picks`: the pick where no split-K / stream-K kernel can be had (the data-parallel config, on the
    schedule gemm() runs it), with `decomposed` True its pick where every kernel can, None both; and when C's
    contiguous extent ends inside a 16-byte chunk also the picks for the N-major scratch output that gemm() stages
    such an output through (gemm() looks up both kernels).
    """
    from .choice import GemmShape
    from .host import _store_spills_past
    from .launch_plan import gemm_picks

    p = problem
    shape = GemmShape(p.m, p.n, p.k, p.l, p.ab_dtype, p.c_dtype, p.a_major, p.b_major, p.c_major)
    shapes = [shape] + ([dataclasses.replace(shape, c_major="n")] if _store_spills_past(shape) else [])
    return [cfg for s in shapes for cfg in gemm_picks(s, num_sms, acc_dtype, decomposed)]


def random_problem_configs() -> list[GemmConfig]:
    """The configs `gemm()` chooses for `random_problems()` on 132- and 114-SM GPUs (H100/H200 SXM, H100 PCIe):
    the data-parallel picks and, where `k_choice` prefers one, the split-K / stream-K config (so the random GPU
    test runs those kernels on every major, dtype and odd size the model sends them)."""
    from .aot import BENCH_NUM_SMS

    seen: dict[str, GemmConfig] = {}
    for p in random_problems():
        for sms in BENCH_NUM_SMS:
            for cfg in gemm_call_configs(p, sms, decomposed=None):
                seen.setdefault(cfg.name, cfg)
    return list(seen.values())


def gpu_test_configs() -> list[GemmConfig]:
    """Every config the multicast-split, random-problem and any-shape GPU tests launch (for the AOT bundle)."""
    seen: dict[str, GemmConfig] = {}
    for cfg in multicast_split_configs():
        seen.setdefault(cfg.name, cfg)
        # gemm() stages an M-major C whose M ends inside a 16-byte chunk through an N-major scratch buffer
        staged = dataclasses.replace(cfg, c_major="n")
        seen.setdefault(staged.name, staged)
    for cfg in random_problem_configs() + any_shape_configs():
        seen.setdefault(cfg.name, cfg)
    return list(seen.values())


def any_shape_configs() -> list[GemmConfig]:
    """The configs gemm() picks for `ANY_SHAPE_CASES` (after staging), `TRANSPOSED_CASES`, `QUANTISED_CASES` and
    `ONE_ROUND_CASES` on 132- and 114-SM GPUs."""
    from .any_shape_cases import ANY_SHAPE_CASES, ONE_ROUND_CASES, QUANTISED_CASES, TRANSPOSED_CASES, case_layouts
    from .aot import BENCH_NUM_SMS
    from .launch_plan import gemm_picks, staged_problem

    out = []
    for case in ANY_SHAPE_CASES + TRANSPOSED_CASES + QUANTISED_CASES + ONE_ROUND_CASES:
        problem = staged_problem(*case_layouts(case))
        out += [cfg for sms in BENCH_NUM_SMS for cfg in gemm_picks(problem, sms)]
    return out


@dataclass(frozen=True)
class CompileResult:
    """One config's compile: its kernel name, seconds, ptxas spill bytes (stores + loads), or the error."""

    name: str
    seconds: float
    spill_bytes: int
    error: str | None = None


def compile_config(cfg: GemmConfig) -> CompileResult:
    """Compile `cfg` for sm_90a through cute-ir (its compile cache included) and read ptxas' spill counts."""
    from .kernel import compile_gemm

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


def parser() -> Parser:
    """The command line of the config sweep."""
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
    total = len(every_config())
    option(p, "--sample", type=number(int, len(FORMERLY_FAILING), below=total + 1), default=None,
           example="30", shown=f"all {total} + epilogue kinds",
           help="compile a seeded sample of this many configs instead")
    option(p, "--seed", type=number(int, 0), default=SAMPLE_SEED, example="3", help="the sample's seed")
    return p


def main(argv: list[str] | None = None) -> int:
    """Compile every config (or a seeded sample) and print how many compiled and how many spill."""
    args = parser().parse_args(argv)
    configs = sweep_configs() if args.sample is None else sample_configs(args.sample, args.seed)
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

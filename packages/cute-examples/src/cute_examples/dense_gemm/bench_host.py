"""gemm()'s host cost and small-GEMM speed against torch.matmul (issue 13's rows).

    python -m cute_examples.dense_gemm.bench_host [--iterations 30] [--bundle DIR]

Host time: per `HOST_SHAPES` entry and dtype, `ROTATION` buffer sets of one shape, rotated every call; blocks of
`CALLS` calls of `gemm(a, b, c)` and of `torch.matmul(a, b, out=c)` alternate (the host loop is timed, the
stream is synchronised between blocks, so the launch queue never fills); the median per call of each. The
breakdown times the hit path's parts alone: key (`plan_key`), lookup (the plan table), descriptor update (three
`cuTensorMapReplaceAddress` in the plan's parameter block, which is also the pack: nothing is copied), driver
(the launch call). The plan-miss cost (checks, config choice, schedule, three encodes; kernel already loaded) is
timed with the table emptied. GPU rows: 1024^3 and 256x8192x8192 (and the host shapes) through the public call,
back to back and alternating with torch.matmul, ratio to cuBLAS; under 50 us both sides also inside a CUDA
graph. Every config these rows use is in `aot.bench_configs()` (so in the AOT bundle).

Operator dispatch (`op_rows`): host us per call through `torch.ops.cute.gemm_out(a, b, c)` against `gemm(a, b, c)`,
`torch.ops.cute.gemm(a, b)` against `gemm(a, b)` and `torch.ops.cute.elementwise_add_out` against
`elementwise_add(x, y, z)`, rotated buffer sets, alternating blocks as above: the cost of the `cute::` operators
(`torch_ops`) that torch.compile's graphs call.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..cli import Parser, add_bundle_flag, make_parser, number, option
from .bench_run import no_gpu_ends
from .spec import AB_DTYPES

__all__ = ["CALLS", "HOST_SHAPES", "ROTATION", "SPEED_SHAPES", "host_rows", "main", "op_rows", "speed_rows"]

# (M, N, K, L): host cost is measured where the kernel is shortest; speed where issue 13 reports it
HOST_SHAPES = ((64, 64, 64, 1), (1024, 1024, 1024, 1))
SPEED_SHAPES = ((1024, 1024, 1024, 1), (256, 8192, 8192, 1), (64, 64, 64, 1))
ROTATION = 8
CALLS = 200
GRAPH_CALLS = 20


def _sets(mnkl: tuple[int, int, int, int], dtype: str, count: int) -> list[tuple[Any, Any, Any]]:
    """`count` buffer sets of the benchmarked layout (bench.bench_shape): A (M,K), B = (N,K)^T, C (M,N)."""
    from .bench_run import operands as _operands

    return [_operands(mnkl, dtype) for _ in range(count)]


def _host_us(fn: Callable[[int], object], calls: int) -> float:
    """Host microseconds per call of fn(i) over `calls` calls (the stream is synchronised after, untimed)."""
    import torch

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(calls):
        fn(i)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def _alternate(fns: Sequence[Callable[[int], object]], rounds: int) -> list[float]:
    """Median host us per call of each fn, in `rounds` alternating blocks of CALLS calls."""
    samples: list[list[float]] = [[] for _ in fns]
    for r in range(rounds):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            samples[i].append(_host_us(fns[i], CALLS))
    return [statistics.median(s) for s in samples]


def host_rows(iterations: int = 30) -> list[str]:
    """Host us per call of gemm() and torch.matmul over rotated buffers, the hit path's breakdown, a miss."""
    rows = [
        f"host us per call, {ROTATION} rotated buffer sets, blocks of {CALLS} calls alternating with "
        "torch.matmul(a, b, out=c); hit breakdown: key / lookup / descriptor update (= pack) / driver",
        f"{'dtype':9} {'M x N x K':16} {'gemm()':>7} {'torch':>7} {'ratio':>6}  {'key':>5} {'lookup':>6} "
        f"{'desc':>5} {'driver':>6}  {'miss us':>8}",
    ]
    for dtype in AB_DTYPES:
        for mnkl in HOST_SHAPES:
            rows.append(_host_row(dtype, mnkl, iterations))
    return rows


def _host_row(dtype: str, mnkl: tuple[int, int, int, int], iterations: int) -> str:
    import torch

    from .launch_plan import gemm, plan_key, plans

    options = (None, "float32", None, None, None)
    m, n, k, _ = mnkl
    sets = _sets(mnkl, dtype, ROTATION)
    for a, b, c in sets:
        gemm(a, b, c)
        torch.matmul(a, b, out=c)

    def ours(i: int) -> None:
        gemm(*sets[i % ROTATION])

    def peer(i: int) -> None:
        a, b, c = sets[i % ROTATION]
        torch.matmul(a, b, out=c)

    t_ours, t_peer = _alternate([ours, peer], max(4, iterations // 5))
    ptrs = [(a.data_ptr(), b.data_ptr(), c.data_ptr()) for a, b, c in sets]
    keys = [plan_key(a, pa, b, pb, c, pc, options) for (a, b, c), (pa, pb, pc) in zip(sets, ptrs, strict=True)]
    table = plans.table()
    plan = table[keys[0]]
    s = torch.cuda.current_stream().cuda_stream

    def key(i: int) -> object:
        (a, b, c), (pa, pb, pc) = sets[i % ROTATION], ptrs[i % ROTATION]
        return plan_key(a, pa, b, pb, c, pc, options)

    def lookup(i: int) -> object:
        return table.get(keys[i % ROTATION])

    def desc(i: int) -> None:
        pa, pb, pc = ptrs[i % ROTATION]
        plan.point(0, pa)
        plan.point(1, pb)
        plan.point(2, pc)

    def driver(i: int) -> None:
        plan.launch(s)

    t_key, t_lookup, t_desc, t_drv = (
        statistics.median(_host_us(fn, CALLS) for _ in range(5)) for fn in (key, lookup, desc, driver)
    )
    misses = []
    for _ in range(5):
        table.clear()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        gemm(*sets[0])
        misses.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    return (
        f"{dtype:9} {f'{m}x{n}x{k}':16} {t_ours:7.2f} {t_peer:7.2f} {t_ours / t_peer:6.2f}  {t_key:5.2f} "
        f"{t_lookup:6.2f} {t_desc:5.2f} {t_drv:6.2f}  {statistics.median(misses):8.1f}"
    )


def op_rows(iterations: int = 30) -> list[str]:
    """Host us per call through the torch.ops.cute operators against the public functions (rotated buffers)."""
    import torch

    from .. import torch_ops  # noqa: F401 - registers torch.ops.cute.*
    from ..elementwise_add.host import elementwise_add
    from .launch_plan import gemm

    rows = [
        f"operator dispatch, host us per call, {ROTATION} rotated buffer sets, blocks of {CALLS} calls alternating",
        f"{'call':44} {'M x N x K':16} {'public':>7} {'op':>7} {'op - public':>11}",
    ]
    rounds = max(4, iterations // 5)
    for mnkl in HOST_SHAPES:
        m, n, k, _ = mnkl
        sets = _sets(mnkl, "float16", ROTATION)
        for a, b, c in sets:
            gemm(a, b, c)
            torch.ops.cute.gemm_out(a, b, c)
            torch.ops.cute.gemm(a, b)
        pairs = (
            ("gemm(a, b, c) / cute.gemm_out(a, b, c)", lambda i, s=sets: gemm(*s[i % ROTATION]),
             lambda i, s=sets: torch.ops.cute.gemm_out(*s[i % ROTATION])),
            ("gemm(a, b) / cute.gemm(a, b)", lambda i, s=sets: gemm(*s[i % ROTATION][:2]),
             lambda i, s=sets: torch.ops.cute.gemm(*s[i % ROTATION][:2])),
        )
        for what, public, op in pairs:
            t_public, t_op = _alternate([public, op], rounds)
            rows.append(f"{what:44} {f'{m}x{n}x{k}':16} {t_public:7.2f} {t_op:7.2f} {t_op - t_public:11.2f}")
    adds = [tuple(torch.randn(64, 64, device="cuda") for _ in range(3)) for _ in range(ROTATION)]
    for x, y, z in adds:
        elementwise_add(x, y, z)
        torch.ops.cute.elementwise_add_out(x, y, z)
    t_public, t_op = _alternate([lambda i: elementwise_add(*adds[i % ROTATION]),
                                 lambda i: torch.ops.cute.elementwise_add_out(*adds[i % ROTATION])], rounds)
    rows.append(f"{'elementwise_add(x, y, z) / cute.elementwise_add_out':44} {'64x64':16} {t_public:7.2f} "
                f"{t_op:7.2f} {t_op - t_public:11.2f}")
    return rows


def speed_rows(iterations: int = 30) -> list[str]:
    """TFLOP/s of gemm() (the public call) and torch.matmul per SPEED_SHAPES row, and in a CUDA graph when short."""
    from ..timing import GRAPH_BELOW_US

    rows = [
        "gemm(a, b, c) vs torch.matmul(a, b, out=c), back to back (host included) and, under "
        f"{GRAPH_BELOW_US:.0f} us, in a CUDA graph",
        f"{'dtype':9} {'M x N x K':16} {'ours us':>8} {'cuBLAS us':>9} {'ratio':>6}  {'graph ours':>10} "
        f"{'graph cuBLAS':>12} {'ratio':>6}  config",
    ]
    for dtype in AB_DTYPES:
        for mnkl in SPEED_SHAPES:
            rows.append(_speed_row(dtype, mnkl, iterations))
    return rows


def _speed_row(dtype: str, mnkl: tuple[int, int, int, int], iterations: int) -> str:
    import torch

    from ..timing import GRAPH_BELOW_US, interleaved_graph_ms, interleaved_median_ms
    from .launch_plan import gemm, plan_key, plans

    m, n, k, _ = mnkl
    a, b, c = _sets(mnkl, dtype, 1)[0]
    gemm(a, b, c)
    ref = torch.matmul(a, b)
    err = float((c.float() - ref.float()).norm() / ref.float().norm())
    key = plan_key(a, a.data_ptr(), b, b.data_ptr(), c, c.data_ptr(), (None, "float32", None, None, None))
    cfg = plans.table()[key].config

    def ours() -> None:
        gemm(a, b, c)

    def peer() -> None:
        torch.matmul(a, b, out=c)

    t_ours, t_peer = interleaved_median_ms([ours, peer], iterations=max(iterations, 20))
    cells = f"{'':>10} {'':>12} {'':>6}"
    if min(t_ours, t_peer) * 1e3 < GRAPH_BELOW_US:
        g_ours, g_peer = interleaved_graph_ms([ours, peer], calls=GRAPH_CALLS)
        cells = f"{g_ours * 1e3:10.2f} {g_peer * 1e3:12.2f} {g_peer / g_ours:6.3f}"
    return (
        f"{dtype:9} {f'{m}x{n}x{k}':16} {t_ours * 1e3:8.2f} {t_peer * 1e3:9.2f} {t_peer / t_ours:6.3f}  {cells}  "
        f"{cfg.name} (err {err:.1e})"
    )


def parser() -> Parser:
    """The command line of the host-cost benchmark."""
    p = make_parser("python -m cute_examples.dense_gemm.bench_host", (__doc__ or "").split("\n")[0], [
        "python -m cute_examples.dense_gemm.bench_host",
        "python -m cute_examples.dense_gemm.bench_host --iterations 50 --bundle build/aot",
    ])
    option(p, "--iterations", type=number(int, 1), default=30, example="50", metavar="N",
           help="timed blocks / calls per measurement")
    add_bundle_flag(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Print the host-cost rows and the small-GEMM speed rows."""
    args = parser().parse_args(argv)
    if no_gpu_ends(args, "nothing (python -m cute_examples.dense_gemm compiles a GEMM without a GPU)",
                   "the GEMM host benchmark"):
        return 0
    import torch
    print(f"device: {torch.cuda.get_device_name()}")
    for row in host_rows(args.iterations) + op_rows(args.iterations) + speed_rows(args.iterations):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())

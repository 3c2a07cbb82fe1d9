"""Benchmark section `jit`: host time per call of a JIT kernel (bench_transpose has the tutorial transpose).

`jit`: a JIT add kernel with three torch tensors called through the public call (key, lookup, pack, driver),
alternating with `torch.add(a, b, out=c)` in blocks over 8+ rotated buffer sets, and the breakdown of our call.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from cute_runtime import Tensor, kernel

__all__ = ["add", "bench_add_host", "bench_jit_host"]

BLOCK = 128


@kernel(block=BLOCK)
def add(k, a: Tensor(rank=1), b: Tensor(rank=1), c: Tensor(rank=1)):
    """c[i] = a[i] + b[i], one element per thread."""
    from cute_ir.control import if_
    from cute_ir.tensor import copy, local_tile, make_fragment_like

    i = k.block_idx(0) * BLOCK + k.thread_idx(0)

    def body() -> None:
        pa, pb, pc = (local_tile(t, (1,), i) for t in (a, b, c))
        fa, fb, fc = make_fragment_like(pa), make_fragment_like(pb), make_fragment_like(pc)
        copy(pa, fa)
        copy(pb, fb)
        fc.store(fa.load() + fb.load())
        copy(fc, pc)

    if_(i < a.shape[0], body)


def _per_call_us(fn: Callable[[], Any], calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def _alternating_us(fns: list[Callable[[], Any]], calls: int, rounds: int) -> list[float]:
    """Median host us per call of each fn over `rounds` alternating blocks (synchronising between blocks)."""
    import torch

    samples: list[list[float]] = [[] for _ in fns]
    for r in range(rounds):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            torch.cuda.synchronize()
            samples[i].append(_per_call_us(fns[i], calls))
    torch.cuda.synchronize()
    return [statistics.median(s) for s in samples]


def _pack_and_driver(kernel_: Any, packed: list[tuple], grid: int, it: list[int]) -> tuple[Callable, Callable]:
    """The breakdown's pack (set i's converted values into one parameter block, i rotating with `it`) and driver
    call (kernel_ launched on grid with that block on torch's current stream)."""
    import torch

    params = kernel_.prepare(*packed[0])
    pack_into, buf, base = kernel_.layout.struct.pack_into, params.buffer, params.base

    def pack() -> None:
        i = it[0] = (it[0] + 1) % len(packed)
        pack_into(buf, base, *packed[i])

    stream = torch.cuda.current_stream().cuda_stream

    def driver() -> None:
        kernel_.launch_packed((grid, 1, 1), stream, params)

    return pack, driver


def bench_jit_host(n: int = 4096, sets: int = 8, calls: int = 2000, rounds: int = 10) -> list[str]:
    """Host us per call: ours (public call) against torch.add(a, b, out=c), and our call's breakdown."""
    import torch

    bufs = [tuple(torch.randn(n, device="cuda") for _ in range(3)) for _ in range(sets)]
    grid = -(-n // BLOCK)
    a, b, c = bufs[0]
    add(a, b, c, grid=grid)
    torch.cuda.synchronize()
    if not torch.equal(c, a + b):
        raise AssertionError("jit add: result differs from torch")
    it = [0]

    def ours() -> None:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        add(x, y, z, grid=grid)

    def peer() -> None:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        torch.add(x, y, out=z)

    def key() -> Any:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        return (x.dtype, x.shape, x.stride(), x.data_ptr() & 15, x.get_device(),
                y.dtype, y.shape, y.stride(), y.data_ptr() & 15, y.get_device(),
                z.dtype, z.shape, z.stride(), z.data_ptr() & 15, z.get_device())

    plans = add.plans
    keys = [add.call_key(list(s)) for s in bufs]
    for s in bufs:
        add(*s, grid=grid)
    (kernel_,) = add.kernels

    def lookup() -> Any:
        i = it[0] = (it[0] + 1) % sets
        return plans[keys[i]]

    packed = [tuple(kernel_.layout.convert(add.specialize(*s)[1], kernel_.device)) for s in bufs]
    pack, driver = _pack_and_driver(kernel_, packed, grid, it)

    plan = plans[keys[0]]  # one plan serves every set (the same key): (grid, stream, per tensor ptr, shape, stride)
    plan_args = [tuple(v for t in s for v in (t.data_ptr(), t.shape, t.stride())) for s in bufs]

    def launch_plan() -> None:
        i = it[0] = (it[0] + 1) % sets
        plan(grid, None, *plan_args[i])

    get_stream = torch._C._cuda_getCurrentRawStream
    device = a.get_device()

    def default_stream() -> Any:
        i = it[0] = (it[0] + 1) % sets
        return get_stream(device), i

    def rotation() -> Any:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        return x

    fns = {"ours": ours, "torch.add": peer, "key": key, "lookup": lookup, "pack": pack, "driver": driver,
           "plan": launch_plan, "stream": default_stream, "rotation": rotation}
    t = dict(zip(fns, _alternating_us(list(fns.values()), calls, rounds), strict=True))
    rest = t["ours"] - t["key"] - t["lookup"] - t["plan"] + 2 * t["rotation"]
    return [
        f"{'ours us':>8} {'torch.add':>10} {'ratio':>7}   (n={n}, {sets} buffer sets, median of {rounds} blocks)",
        f"{t['ours']:8.2f} {t['torch.add']:10.2f} {t['ours'] / t['torch.add']:6.3f}x",
        f"breakdown (us): key {t['key']:.2f}, lookup {t['lookup']:.2f}, pack {t['pack']:.2f}, driver call "
        f"{t['driver']:.2f} (each with the loop's buffer rotation, timed in the same alternation)",
        f"launch plan alone (pack, grid, default stream, driver call) {t['plan']:.2f}; torch's current-stream "
        f"getter {t['stream']:.2f}; the loop's rotation {t['rotation']:.2f}; the call's remainder (ours - key - "
        f"lookup - plan, rotation counted once: instance call, argument passing) {rest:.2f}",
    ]


def bench_add_host(shape: tuple[int, int] = (64, 64), sets: int = 8, calls: int = 2000, rounds: int = 10) -> list[str]:
    """Host us per call of the public elementwise_add() against torch.add(a, b, out=c) over `sets` rotated
    buffer sets, alternating, and the breakdown of ours (key, lookup, pack, driver call) and of a plan miss."""
    import torch

    from .elementwise_add import host

    bufs = [tuple(torch.randn(shape, device="cuda") for _ in range(3)) for _ in range(sets)]
    for x, y, z in bufs:
        host.elementwise_add(x, y, z)
    torch.cuda.synchronize()
    x, y, z = bufs[0]
    if not torch.equal(z, x + y):
        raise AssertionError("elementwise_add: result differs from torch")
    it = [0]

    def ours() -> None:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        host.elementwise_add(x, y, z)

    def peer() -> None:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        torch.add(x, y, out=z)

    def key() -> Any:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        return (x.dtype, y.dtype, z.dtype, x.shape, y.shape, z.shape, x.stride(), y.stride(), z.stride(),
                x.get_device(), y.get_device(), z.get_device(), (x.data_ptr() | y.data_ptr() | z.data_ptr()) & 15)

    keys = [host._key(*s) for s in bufs]
    plans = host.plans

    def lookup() -> Any:
        i = it[0] = (it[0] + 1) % sets
        return plans[keys[i]]

    plan = plans[keys[0]]
    kernel_ = plan.kernel
    packed = [tuple(kernel_.layout.convert([x.data_ptr(), *plan.ta, y.data_ptr(), *plan.tb, z.data_ptr(), *plan.tc],
                                           kernel_.device)) for x, y, z in bufs]
    pack, driver = _pack_and_driver(kernel_, packed, plan.grid, it)

    t_ours, t_peer = _alternating_us([ours, peer], calls, rounds)
    t_key, t_lookup, t_pack, t_driver = _alternating_us([key, lookup, pack, driver], calls, 2)
    misses = []
    for x, y, z in bufs:
        host.plans.clear()
        t0 = time.perf_counter()
        host.elementwise_add(x, y, z)
        misses.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    return [
        f"{'ours us':>8} {'torch.add':>10} {'ratio':>7}   (elementwise_add {shape[0]}x{shape[1]} float32, {sets} "
        f"buffer sets, median of {rounds} blocks)",
        f"{t_ours:8.2f} {t_peer:10.2f} {t_ours / t_peer:6.3f}x",
        f"breakdown (us): key {t_key:.2f}, lookup {t_lookup:.2f}, pack {t_pack:.2f}, driver call {t_driver:.2f}"
        f" (each with the loop's buffer rotation); a plan miss (checks, coalescing, specialization of a loaded "
        f"kernel) {statistics.median(misses):.1f} us",
    ]

"""GPU timing with CUDA events: the median over batches, after warm-up, for ours and the peer alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch

__all__ = ["GRAPH_BELOW_US", "capture_graph", "host_us_per_call", "interleaved_graph_ms", "interleaved_median_ms",
           "median_ms"]

GRAPH_BELOW_US = 50.0  # benchmark rows whose kernels run shorter are also timed inside CUDA graphs


def median_ms(fn: Callable[[], object], *, warmup: int = 5, iterations: int = 20, batch: int = 1) -> float:
    """Median milliseconds per call of fn over `iterations` event-timed batches of `batch` calls each."""
    if iterations < 1 or batch < 1 or warmup < 0:
        raise ValueError(f"iterations and batch must be >= 1 and warmup >= 0, got {iterations}, {batch}, {warmup}")
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
    for s, e in zip(starts, ends, strict=True):
        s.record()
        for _ in range(batch):
            fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)) / batch


def host_us_per_call(fn: Callable[[], object], *, calls: int = 2000, repeats: int = 5) -> float:
    """Host microseconds per call of fn (best of `repeats` loops of `calls`), synchronising only between loops."""
    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        best = min(best, (t1 - t0) / calls)
        torch.cuda.synchronize()
    return best * 1e6


def interleaved_median_ms(
    fns: Sequence[Callable[[], object]], *, warmup: int = 5, iterations: int = 20, batch: int = 1, rounds: int = 4
) -> list[float]:
    """Median ms per call of each fn, timed in `rounds` alternating blocks (forward, then reversed order, ...).

    Clocks on these GPUs follow power and temperature: whichever kernel runs first in a long sequence gets the
    higher boost. Alternating the order gives ours and the peer the same conditions.
    """
    if not fns or rounds < 1 or iterations < rounds:
        raise ValueError(f"need at least one function and iterations >= rounds >= 1, got {iterations}, {rounds}")
    for fn in fns:
        for _ in range(warmup):
            fn()
    samples: list[list[float]] = [[] for _ in fns]
    per_round = -(-iterations // rounds)
    for r in range(rounds):
        order = list(range(len(fns))) if r % 2 == 0 else list(reversed(range(len(fns))))
        for i in order:
            samples[i].append(median_ms(fns[i], warmup=0, iterations=per_round, batch=batch))
    return [statistics.median(s) for s in samples]


def capture_graph(fn: Callable[[], object], calls: int) -> Callable[[], object]:
    """The replay of a CUDA graph of `calls` calls of fn (captured after one eager call on a side stream, as torch's
    capture needs)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    return g.replay


def interleaved_graph_ms(fns: Sequence[Callable[[], object]], *, calls: int = 20, iterations: int = 20,
                         rounds: int = 4) -> list[float]:
    """ms per call of each fn replayed from its own CUDA graph of `calls` calls, the replays timed in alternating
    blocks (`interleaved_median_ms`)."""
    replays = [capture_graph(fn, calls) for fn in fns]
    return [t / calls for t in interleaved_median_ms(replays, warmup=3, iterations=iterations, rounds=rounds)]

"""Benchmark section `transpose`: GB/s of every tutorial step beside `x.t().contiguous()` and a copy.

The steps are the naive and swizzled 32-bit-word tiles and the 16-byte vector step (docs/tutorial.md), each
printed with the configuration it ran; the matrices are transpose_cases' "bench" cases (16384 x 16384 float32
and float16). GB/s counts the bytes read and written; ours/copy is the best step against a device-to-device
copy of the same bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["bench_transpose", "steps"]


def steps(x: Any, y: Any) -> list[tuple[str, str, Callable[[], None]]]:
    """(name, configuration, launch) of each tutorial step that runs on x, y (the vector step needs 16-byte rows)."""
    from cute_runtime import describe

    from .transpose import (
        ROWS,
        TILE,
        VROWS,
        VTILE,
        pack_for,
        smem_layout,
        transpose,
        transpose_vec,
        vector_layout,
        vector_pack_for,
    )

    m, n = describe(x).shape

    def grid(side: int) -> tuple[int, int]:
        return -(-n // side), -(-m // side)

    pack = pack_for(x, y)
    out = []
    for swizzle in (False, True):
        config = (f"transpose p{pack}: {TILE}x{TILE} 4-byte words, block {TILE}x{ROWS}, "
                  f"smem {smem_layout(pack, swizzle)}")
        out.append(("swizzled" if swizzle else "naive", config,
                    functools.partial(transpose, x, y, pack, swizzle, grid=grid(TILE * pack))))
    vpack = vector_pack_for(x, y)
    if vpack is not None:
        config = (f"transpose_vec p{vpack}: {VTILE}x{VTILE} 16-byte units, block {VTILE}x{VROWS}, "
                  f"smem {vector_layout(vpack, True)}")
        out.append(("vector", config, functools.partial(transpose_vec, x, y, vpack, grid=grid(VTILE * vpack))))
    return out


def _rows(dtype: Any, shape: tuple[int, int], iterations: int) -> list[str]:
    import torch

    from .timing import interleaved_median_ms

    x = torch.randn(*shape, device="cuda").to(dtype)
    y = torch.full(shape[::-1], float("nan"), device="cuda", dtype=dtype)
    ref = x.t().contiguous()
    ours = steps(x, y)
    for name, _, launch in ours:
        y.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        if not torch.equal(y, ref):
            raise AssertionError(f"transpose {dtype} {name}: result differs from torch")
    del ref
    peers = [("torch", "x.t().contiguous()", lambda: x.t().contiguous()),
             ("copy", "y.copy_(x): device-to-device, the same bytes", lambda: y.copy_(x))]
    runs = ours + peers
    ms = interleaved_median_ms([launch for _, _, launch in runs], iterations=iterations)
    gbs = [2 * x.numel() * x.element_size() / t / 1e6 for t in ms]
    copy = gbs[-1]
    label = f"{str(dtype).removeprefix('torch.')} {shape[0]}x{shape[1]}"
    rows = [f"{label:21} {name:9} {g:9.1f} {g / copy:7.1%}  {config}"
            for (name, config, _), g in zip(runs, gbs, strict=True)]
    best = max(range(len(ours)), key=lambda i: gbs[i])
    rows.append(f"{label:21} {'ours/copy':9} {gbs[best] / copy:17.1%}  best step: {ours[best][0]}")
    return rows


def bench_transpose(iterations: int) -> list[str]:
    """One row per tutorial step, torch and the copy, for each bench matrix; then the best step against the copy."""
    import torch

    from .transpose_cases import cases

    rows = [f"{'matrix':21} {'variant':9} {'GB/s':>9} {'/copy':>7}  configuration"]
    for case in cases():
        if case.label == "bench":
            rows += _rows(getattr(torch, case.dtype), case.x.shape, iterations)
            torch.cuda.empty_cache()
    return rows

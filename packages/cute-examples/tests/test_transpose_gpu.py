"""The tutorial transpose and the JIT call path on a GPU: exact results, guard regions, streams, DLPack."""

from __future__ import annotations

import pytest
from cute_runtime.testing import requires_gpu

pytest.importorskip("mlir")

SHAPES = [(1, 1), (1, 77), (65, 1), (31, 33), (64, 64), (129, 257), (1000, 3001), (4097, 130)]
GUARD = 4096


def _guarded(shape: tuple[int, int], dtype: object) -> tuple[object, object]:
    """A poisoned matrix of `shape` inside a buffer whose guard regions hold a sentinel."""
    import torch

    n = shape[0] * shape[1]
    buf = torch.full((n + 2 * GUARD,), -7.0, device="cuda", dtype=dtype)
    buf[GUARD : GUARD + n] = float("nan")
    return buf, buf[GUARD : GUARD + n].view(shape)


def _check(x: object, swizzle: bool = True, **kw: object) -> None:
    import torch
    from cute_examples.transpose import transpose_into

    buf, y = _guarded((x.shape[1], x.shape[0]), x.dtype)
    transpose_into(x, y, swizzle=swizzle, **kw)
    torch.cuda.synchronize()
    assert torch.equal(y, x.t().contiguous())
    assert bool((buf[:GUARD] == -7).all()) and bool((buf[-GUARD:] == -7).all())


@requires_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("swizzle", [True, False], ids=["swizzled", "naive"])
def test_exact_with_guards(dtype: str, shape: tuple[int, int], swizzle: bool) -> None:
    import torch

    x = torch.randn(shape, device="cuda").to(getattr(torch, dtype))
    _check(x, swizzle)


@requires_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_views(dtype: str) -> None:
    """A misaligned view (pairs impossible), a padded row stride and a transposed view."""
    import torch
    from cute_examples.transpose import pack_for, transpose

    base = torch.randn(300, 513, device="cuda").to(getattr(torch, dtype))
    before = len(transpose._kernels)
    _check(base[:, 1:])  # misaligned by one element
    _check(base[:, :500])  # rows padded to 513
    _check(base.t())  # column-major input
    assert pack_for(base[:, 1:], base[:, 1:]) == 1
    assert len(transpose._kernels) > before


@requires_gpu
def test_dynamic_extents_compile_once() -> None:
    import torch
    from cute_examples.transpose import transpose

    before = transpose.compiles
    specs = []
    for shape in ((100, 200), (300, 64), (48, 400)):  # rows of both x and y stay 16-byte aligned
        x = torch.randn(shape, device="cuda")
        _check(x)
        specs.append(transpose.specialize(x, torch.empty(shape[::-1], device="cuda"), 1, True)[0])
    assert specs[0] == specs[1] == specs[2]
    assert transpose.compiles - before <= 1


@requires_gpu
def test_non_default_stream_is_honoured() -> None:
    import torch
    from cute_examples.transpose import transpose_into

    x = torch.randn(2048, 2048, device="cuda")
    y = torch.full((2048, 2048), float("nan"), device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # keeps s busy: a kernel queued behind it has not run yet
        transpose_into(x, y)  # stream=None: torch's current stream, i.e. s
    assert bool(torch.isnan(y).all())  # read on the default stream, which does not wait for s
    s.synchronize()
    assert torch.equal(y, x.t())
    y.fill_(float("nan"))
    s2 = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(s2):
        torch.cuda._sleep(200_000_000)
    transpose_into(x, y, stream=s2)  # an explicit stream
    assert bool(torch.isnan(y).all())
    s2.synchronize()
    assert torch.equal(y, x.t())


class _DLPackOnly:
    """Exposes only DLPack (no torch type, no __cuda_array_interface__)."""

    def __init__(self, t: object) -> None:
        self.t = t

    def __dlpack__(self, stream: object = None) -> object:
        return self.t.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.t.__dlpack_device__()


@requires_gpu
def test_dlpack_inputs() -> None:
    import torch
    from cute_examples.transpose import transpose

    x = torch.randn(100, 70, device="cuda")
    y = torch.full((70, 100), float("nan"), device="cuda")
    transpose(_DLPackOnly(x), _DLPackOnly(y), 1, True, grid=(3, 4))
    torch.cuda.synchronize()
    assert torch.equal(y, x.t())


@requires_gpu
def test_fast_path_rotating_buffers() -> None:
    """Repeated calls over rotated buffer sets (the fast path) stay exact."""
    import torch
    from cute_examples.bench_jit import add

    sets = [tuple(torch.randn(1000 + i, device="cuda") for _ in range(3)) for i in range(3)]
    for _ in range(3):
        for a, b, c in sets:
            c.fill_(float("nan"))
            add(a, b, c, grid=-(-a.shape[0] // 128))
    torch.cuda.synchronize()
    for a, b, c in sets:
        assert torch.equal(c, a + b)
    assert len(add._plans) >= 3 and add.compiles <= 1

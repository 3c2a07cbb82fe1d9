"""The tutorial transpose and the JIT call path on a GPU: exact results, guard regions, streams, DLPack.

The matrices are `cute_examples.transpose_cases`' (the catalogue compiles the same specializations into the
AOT bundle, so these tests also run on a host with only cute-runtime and the bundle).
"""

from __future__ import annotations

import pytest
from cute_examples.transpose_cases import GUARD, cases
from cute_runtime.testing import requires_gpu

SENTINEL = -7.0


def _by_label(prefix: str) -> list:
    return [c for c in cases() if c.label.startswith(prefix)]


def _run(case, swizzle: bool = True, vector: bool = False, **kw: object) -> None:  # noqa: ANN001
    """Transpose case.x into a poisoned case.y and compare with torch; guards (if any) keep their sentinel.

    `vector`: through the tutorial's last step, transpose_vec_into (16-byte units where both matrices allow them,
    test_vector_cases_take_the_vector_step says which cases do; 32-bit words otherwise)."""
    import torch
    from cute_examples.transpose import transpose_into, transpose_vec_into

    dtype = getattr(torch, case.dtype)
    x = case.x.make(dtype)
    buf = case.y.allocate(dtype, SENTINEL)
    y = case.y.view(buf)
    y.fill_(float("nan"))
    if vector:
        transpose_vec_into(x, y, **kw)
    else:
        transpose_into(x, y, swizzle=swizzle, **kw)
    torch.cuda.synchronize()
    assert torch.equal(y, x.t())
    if case.y.offset:
        assert bool((buf[:GUARD] == SENTINEL).all()) and bool((buf[-GUARD:] == SENTINEL).all())


@requires_gpu
@pytest.mark.parametrize("case", _by_label("exact"), ids=lambda c: f"{c.dtype}-{c.x.shape[0]}x{c.x.shape[1]}")
@pytest.mark.parametrize("step", ["swizzled", "naive", "vector"])
def test_exact_with_guards(case, step: str) -> None:  # noqa: ANN001
    _run(case, swizzle=step != "naive", vector=step == "vector")


VIEWS = ("misaligned view", "padded rows", "column-major", "padded vector rows")


@requires_gpu
@pytest.mark.parametrize("case", [c for c in cases() if c.label in VIEWS], ids=lambda c: f"{c.dtype}-{c.label}")
@pytest.mark.parametrize("vector", [False, True], ids=["words", "vector"])
def test_views(case, vector: bool) -> None:  # noqa: ANN001
    _run(case, vector=vector)


def test_vector_cases_take_the_vector_step() -> None:
    """16-byte units (4 float32 / 8 16-bit elements) exactly for the cases whose matrices have 16-byte rows."""
    from cute_examples.transpose import UNIT, vector_pack_for

    vector = {(c.label, c.dtype, c.x.shape) for c in cases() if c.x.shape[0] * c.x.shape[1]
              and vector_pack_for(c.x.placeholder(c.dtype), c.y.placeholder(c.dtype)) is not None}
    expected = set()
    for c in cases():
        nbytes = 4 if c.dtype == "float32" else 2
        rows_ok = all(m.stride[1] == 1 and m.stride[0] * nbytes % UNIT == 0 for m in (c.x, c.y))
        if rows_ok and c.x.offset * nbytes % UNIT == 0 and c.y.offset * nbytes % UNIT == 0:
            expected.add((c.label, c.dtype, c.x.shape))
    assert vector == expected
    for label in ("exact (200, 136)", "exact (1032, 4104)", "padded vector rows", "bench", "tutorial vector"):
        assert any(v[0] == label for v in vector), label


@requires_gpu
def test_dynamic_extents_compile_once() -> None:
    from cute_examples.transpose import pack_for, transpose

    before = transpose.compiles
    specs = []
    for case in _by_label("dynamic"):
        _run(case)
        x, y = case.x.placeholder(case.dtype), case.y.placeholder(case.dtype)
        specs.append(transpose.specialize(x, y, pack_for(x, y), True)[0])
    assert specs[0] == specs[1] == specs[2]
    assert transpose.compiles - before <= 1


@requires_gpu
def test_non_default_stream_is_honoured() -> None:
    import torch
    from cute_examples.transpose import transpose_into

    (case,) = _by_label("streams")
    x = case.x.make(torch.float32)
    y = case.y.make(torch.float32, float("nan"))
    transpose_into(x, torch.empty_like(y))  # loaded and compiled before timing matters
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
    transpose_into(x, y, stream=s2)  # an explicit stream, from the default one
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

    (case,) = _by_label("dlpack")
    x = case.x.make(torch.float32)
    y = case.y.make(torch.float32, float("nan"))
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
    assert len(add.plans) >= 3 and add.compiles <= 1


@requires_gpu
def test_placeholders_specialize_like_the_tensors() -> None:
    """The catalogue's placeholders give the specs the real matrices give (so the bundle holds them)."""
    import torch
    from cute_examples.transpose import pack_for, transpose, transpose_vec, vector_pack_for

    for case in cases():
        dtype = getattr(torch, case.dtype)
        x, y = case.x.make(dtype), case.y.make(dtype)
        px, py = case.x.placeholder(case.dtype), case.y.placeholder(case.dtype)
        assert pack_for(x, y) == pack_for(px, py), case
        pack = pack_for(x, y)
        assert transpose.specialize(x, y, pack, True)[0] == transpose.specialize(px, py, pack, True)[0], case
        vpack = vector_pack_for(x, y)
        assert vpack == vector_pack_for(px, py), case
        if vpack is not None:
            assert transpose_vec.specialize(x, y, vpack)[0] == transpose_vec.specialize(px, py, vpack)[0], case
        del x, y
        torch.cuda.empty_cache()


def test_vector_pack_must_fill_16_bytes(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """A pack that does not make a 16-byte unit of the dtype is refused by name before any PTX (CPU, ptxas)."""
    pytest.importorskip("mlir")
    from cute_examples.transpose import transpose_vec
    from cute_runtime import Placeholder

    monkeypatch.setenv("CUTE_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="transpose_vec: pack must be 4 for float32, got 2"):
        transpose_vec.compile(Placeholder((64, 64)), Placeholder((64, 64)), 2, target="sm_90a")

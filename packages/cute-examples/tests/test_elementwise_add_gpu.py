"""elementwise_add on a GPU: exact for every dtype and every call of elementwise_add.cases (odd N contiguous,
non-contiguous views, size-1 modes, broadcast inputs, 0-size), poisoned output, guard regions untouched."""

from __future__ import annotations

import pytest
from cute_examples.checks import EW_SHAPES, check_elementwise
from cute_examples.elementwise_add.cases import Case, cases
from cute_examples.elementwise_add.kernel import DTYPES
from cute_runtime.testing import requires_gpu

GPU_CASES = [c for c in cases() if not c.label.startswith(("bench", "cli", "exact"))]


@requires_gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", EW_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_exact(dtype: str, shape: tuple[int, int]) -> None:
    check_elementwise(dtype, shape)


@requires_gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_view(dtype: str) -> None:
    check_elementwise(dtype, (127, 129), transposed=True)
    check_elementwise(dtype, (4096, 4096), transposed=True)


@requires_gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: f"{c.dtype}-{c.label}")
def test_case(case: Case) -> None:
    """out (in a poisoned allocation) equals torch's a + b exactly; nothing else in the allocation changes."""
    import torch
    from cute_examples.elementwise_add import elementwise_add
    from cute_examples.elementwise_add.host import describe_plan, plan_for

    dtype = getattr(torch, case.dtype)
    a, b = case.a.make(dtype), case.b.make(dtype)
    if case.label == "in place":
        want = a + b
        elementwise_add(a, b, a)
        torch.cuda.synchronize()
        assert torch.equal(a, want)
        return
    poison = float("nan") if dtype.is_floating_point else -123456789
    storage = torch.full((case.out.span(),), poison, device="cuda", dtype=dtype)
    out = storage.as_strided(case.out.shape, case.out.stride, case.out.offset)
    before = storage.clone()
    want = a + b
    elementwise_add(a, b, out)
    torch.cuda.synchronize()
    assert torch.equal(out, want), describe_plan(plan_for(a, b, out))
    mask = torch.ones(storage.shape, dtype=torch.bool, device="cuda")
    mask.as_strided(case.out.shape, case.out.stride, case.out.offset).fill_(False)
    bits = torch.int32 if storage.element_size() == 4 else torch.int16
    assert torch.equal(storage[mask].view(bits), before[mask].view(bits)), "a write landed outside out"


@requires_gpu
def test_contiguous_odd_n_runs_one_vectorized_range() -> None:
    import torch
    from cute_examples.elementwise_add.host import plan_for

    a = torch.randn(1000, 10007, device="cuda")
    plan = plan_for(a, a, torch.empty_like(a))
    assert plan.modes == (1000 * 10007,) and [t["align"] for t in plan.spec["args"][:3]] == [16, 16, 16]


@requires_gpu
def test_partial_overlap_is_rejected() -> None:
    import torch
    from cute_examples.elementwise_add import elementwise_add

    buf = torch.zeros(64 * 65, device="cuda")
    a = buf[: 64 * 64].view(64, 64)
    out = buf[64:].view(64, 64)
    with pytest.raises(ValueError, match="out partly overlaps a"):
        elementwise_add(a, torch.ones_like(a), out)
    # the same key with other addresses: the plan's fast overlap test finds it too
    other = torch.zeros(64 * 65, device="cuda")
    elementwise_add(other[: 64 * 64].view(64, 64), torch.ones_like(a), torch.zeros_like(a))
    with pytest.raises(ValueError, match="out partly overlaps a"):
        elementwise_add(other[: 64 * 64].view(64, 64), torch.ones_like(a), other[64:].view(64, 64))


@requires_gpu
def test_in_place_into_a() -> None:
    import torch
    from cute_examples.elementwise_add import elementwise_add

    a = torch.randn(300, 500, device="cuda")
    b = torch.randn(300, 500, device="cuda")
    want = a + b
    elementwise_add(a, b, a)
    assert torch.equal(a, want)


def _two_gpus() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.device_count() >= 2


@pytest.mark.multi_gpu
@pytest.mark.skipif(not _two_gpus(), reason="needs torch.cuda.device_count() >= 2 "
                    "(multi-GPU machines are not lent: not forced by CUTE_REQUIRE_GPU=1)")
def test_each_device_gets_its_own_plan_and_kernel() -> None:
    import torch
    from cute_examples.elementwise_add import host

    plans = []
    for d in (0, 1):
        a = torch.randn(300, 1001, device=f"cuda:{d}")
        b = torch.randn(300, 1001, device=f"cuda:{d}")
        out = host.elementwise_add(a, b)
        out = host.elementwise_add(a, b, out)  # a hit: the bound launcher
        torch.cuda.synchronize(d)
        assert out.device == a.device and torch.equal(out, a + b)
        plans.append(host.plans[host._key(a, b, out)])
    assert plans[0] is not plans[1] and plans[0].kernel is not plans[1].kernel
    assert (plans[0].kernel.device, plans[1].kernel.device) == (0, 1)

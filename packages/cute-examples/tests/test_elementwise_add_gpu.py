"""elementwise_add on a GPU: exact for every dtype and shape, poisoned output, guard regions untouched."""

from __future__ import annotations

import pytest
from cute_examples.checks import EW_SHAPES, check_elementwise
from cute_examples.elementwise_add.kernel import DTYPES
from cute_runtime.testing import requires_gpu


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
def test_partial_overlap_is_rejected() -> None:
    import torch
    from cute_examples.elementwise_add import elementwise_add

    buf = torch.zeros(64 * 65, device="cuda")
    a = buf[: 64 * 64].view(64, 64)
    out = buf[64:].view(64, 64)
    with pytest.raises(ValueError, match="out partly overlaps a"):
        elementwise_add(a, torch.ones_like(a), out)


@requires_gpu
def test_in_place_into_a() -> None:
    import torch
    from cute_examples.elementwise_add import elementwise_add

    a = torch.randn(300, 500, device="cuda")
    b = torch.randn(300, 500, device="cuda")
    want = a + b
    elementwise_add(a, b, a)
    assert torch.equal(a, want)

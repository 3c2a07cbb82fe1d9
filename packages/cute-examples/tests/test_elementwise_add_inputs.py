"""Bad inputs to elementwise_add raise ValueError/TypeError naming the argument, before any GPU work."""

from __future__ import annotations

import pytest
import torch
from cute_examples.elementwise_add import elementwise_add


def test_cpu_tensor_is_rejected() -> None:
    a = torch.ones(4, 4)
    with pytest.raises(ValueError, match="a must be a CUDA tensor"):
        elementwise_add(a, a.clone())


def test_dtype_mismatch() -> None:
    with pytest.raises(TypeError, match="b has dtype torch.float16 but a has torch.float32"):
        elementwise_add(torch.ones(4, 4), torch.ones(4, 4, dtype=torch.float16))


def test_out_dtype_mismatch() -> None:
    with pytest.raises(TypeError, match="out has dtype torch.int32"):
        elementwise_add(torch.ones(4, 4), torch.ones(4, 4), torch.ones(4, 4, dtype=torch.int32))


def test_shape_mismatch() -> None:
    with pytest.raises(ValueError, match=r"b has shape \(4, 5\) but a has \(4, 4\): the shapes must broadcast"):
        elementwise_add(torch.ones(4, 4), torch.ones(4, 5))


def test_out_shape_must_be_the_broadcast_shape() -> None:
    with pytest.raises(ValueError, match=r"out has shape \(4, 5\) but a \+ b has \(4, 4\)"):
        elementwise_add(torch.ones(4, 1), torch.ones(1, 4), torch.ones(4, 5))


def test_unsupported_dtype() -> None:
    for error in (TypeError, ValueError):
        with pytest.raises(error, match="a has dtype torch.float64; supported"):
            elementwise_add(torch.ones(4, 4, dtype=torch.float64), torch.ones(4, 4, dtype=torch.float64))


def test_broadcast_cpu_tensors_are_rejected_by_device() -> None:
    with pytest.raises(ValueError, match="a must be a CUDA tensor, got a tensor on cpu"):
        elementwise_add(torch.ones(3, 1), torch.ones(1, 5))


def test_not_a_tensor() -> None:
    with pytest.raises(TypeError, match="b must be a torch.Tensor, got list"):
        elementwise_add(torch.ones(2, 2), [[1.0, 2.0], [3.0, 4.0]])

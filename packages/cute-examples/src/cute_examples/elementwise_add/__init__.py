"""Elementwise add C = A + B on 2-D tensors of any shape and strides, following CuTeDSL's elementwise_add."""

from __future__ import annotations

__all__ = ["elementwise_add"]


def __getattr__(name: str) -> object:
    # torch is imported by `host` only, so that the CLI checks its arguments and the kernel builds without it
    if name == "elementwise_add":  # also registers torch.ops.cute.elementwise_add (`torch_ops`)
        from .. import torch_ops  # noqa: F401
        from .host import elementwise_add

        return elementwise_add
    raise AttributeError(f"module 'cute_examples.elementwise_add' has no attribute {name!r}")

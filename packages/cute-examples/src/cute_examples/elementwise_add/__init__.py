"""Elementwise add C = A + B on 2-D tensors of any shape and strides, following CuTeDSL's elementwise_add."""

from __future__ import annotations

from .host import elementwise_add

__all__ = ["elementwise_add"]

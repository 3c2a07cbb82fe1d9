"""cute_examples: kernels built with cute-layout, cute-nvarch, cute-ir and cute-runtime."""

from __future__ import annotations

from .__about__ import __version__

__all__ = ["__version__", "elementwise_add"]


def __getattr__(name: str) -> object:
    if name == "elementwise_add":
        from .elementwise_add import elementwise_add

        return elementwise_add
    raise AttributeError(f"module 'cute_examples' has no attribute {name!r}")

"""CuTe's notation for values: ints, None as _, tuples without spaces, layouts as they print."""

from __future__ import annotations

from typing import Any

__all__ = ["format_value"]


def format_value(value: Any) -> str:
    """Return a value in CuTe's notation: ints, None as _, tuples without spaces, layouts as they print."""
    if value is None:
        return "_"
    if isinstance(value, tuple):
        return "(" + ",".join(format_value(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ",".join(format_value(v) for v in value) + "]"
    return str(value)

"""The canonical kernel spec: what identifies a compiled kernel in caches and bundles.

A spec is a JSON object of numbers, booleans, identifier tokens (`"float16"`, `"vec"`, `"sm_90a"`) and
lists/objects of those: no layout strings, no prose, nothing parsed back. Its canonical JSON text (sorted
keys, no spaces) is its identity; the sha256 of that text names the kernel's files in a bundle.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from .target import parse_arch

__all__ = ["canonical_spec", "check_spec", "file_stem", "spec_digest"]

_TOKEN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check(value: Any, where: str) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} = {value!r}: a spec number must be finite")
        return
    if isinstance(value, str):
        if not _TOKEN_RE.match(value):
            raise ValueError(
                f"{where} = {value!r}: spec strings must be identifier tokens (numbers only: no layout "
                f"strings, no prose)"
            )
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check(v, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str) or not _TOKEN_RE.match(k):
                raise ValueError(f"{where}: key {k!r} must be an identifier")
            _check(v, f"{where}.{k}")
        return
    raise ValueError(f"{where}: {type(value).__name__} is not allowed in a spec (numbers, bools, tokens, lists)")


def check_spec(spec: Any) -> dict:
    """The spec itself after checking that it is an object of numbers and identifier tokens only."""
    if not isinstance(spec, dict):
        raise TypeError(f"spec must be a dict, got {type(spec).__name__}")
    _check(spec, "spec")
    return spec


def canonical_spec(spec: Any) -> str:
    """The canonical JSON text of a kernel spec, which identifies the kernel."""
    try:
        return json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"spec must be JSON-able (str/int/float/bool/list/dict): {exc}") from None


def spec_digest(spec: Any) -> str:
    """The sha256 hex digest of the spec's canonical JSON text."""
    return hashlib.sha256(canonical_spec(spec).encode()).hexdigest()


def file_stem(spec: Any, target: str) -> str:
    """The bundle file stem of a kernel: first 16 hex digits of its spec digest, '-', its target name."""
    return f"{spec_digest(spec)[:16]}-{parse_arch(target).name}"

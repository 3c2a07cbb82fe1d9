"""Every environment variable cute-runtime reads, in one place."""

from __future__ import annotations

import os

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def _flag(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f"environment variable {name}={raw!r}: expected one of 1/0, true/false, yes/no, on/off")


def require_gpu() -> bool:
    """Whether GPU tests must run (CUTE_REQUIRE_GPU=1): they then fail instead of skipping without a GPU."""
    return _flag("CUTE_REQUIRE_GPU")


def default_device() -> int | None:
    """The device ordinal named by CUTE_DEVICE, or None when it is unset."""
    raw = os.environ.get("CUTE_DEVICE", "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(
            f"environment variable CUTE_DEVICE={raw!r}: expected a device ordinal (int >= 0)"
        ) from None
    if value < 0:
        raise ValueError(f"environment variable CUTE_DEVICE={raw!r}: expected a device ordinal (int >= 0)")
    return value


def bundle_dir() -> str | None:
    """The AOT bundle directory named by CUTE_BUNDLE_DIR, or None when it is unset."""
    raw = os.environ.get("CUTE_BUNDLE_DIR", "").strip()
    return raw or None


def record_misses() -> str | None:
    """The file named by CUTE_RECORD_MISSES: a JIT kernel that neither this process, its bundle nor a compiler
    can serve appends `{"kernel": name, "spec": spec, "target": target}` there (one JSON line) before failing,
    so that a bundle-only host can list what to add to its bundle (`python -m cute_examples.build_bundle
    --add-specs FILE`)."""
    raw = os.environ.get("CUTE_RECORD_MISSES", "").strip()
    return raw or None

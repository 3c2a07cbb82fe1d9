"""pytest helpers: requires_gpu / requires_sm90 mark GPU tests and skip them without a GPU, unless
CUTE_REQUIRE_GPU=1, where they fail instead."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from . import config, driver

T = TypeVar("T")


def gpu_missing_reason() -> str | None:
    """Why no GPU can be used here, or None when one can."""
    return driver.unavailable_reason()


def sm90_missing_reason() -> str | None:
    """Why no sm_90 (Hopper, compute capability 9.0) device can be used here, or None when one can."""
    reason = driver.unavailable_reason()
    if reason is not None:
        return reason
    try:
        cc = driver.compute_capability_of(driver.current_device())
    except Exception as exc:  # a driver that answers init but not queries: report, never crash collection
        return f"cannot read the device's compute capability: {exc}"
    if cc != (9, 0):
        return f"the device is sm_{cc[0]}{cc[1]}, not sm_90 (compute capability 9.0)"
    return None


def _failing(func: Callable[..., Any], message: str) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import pytest

        pytest.fail(message, pytrace=False)

    return wrapper


def _apply(obj: Any, markers: tuple[str, ...], reason: str | None) -> Any:
    import pytest

    for marker in markers:
        obj = getattr(pytest.mark, marker)(obj)
    if reason is None:
        return obj
    if not config.require_gpu():
        return pytest.mark.skip(reason=reason)(obj)
    message = f"CUTE_REQUIRE_GPU=1 but this test cannot run: {reason}"
    if inspect.isclass(obj):
        for name, member in list(vars(obj).items()):
            if name.startswith("test") and callable(member):
                setattr(obj, name, _failing(member, message))
        return obj
    return _failing(obj, message)


def _decorator(markers: tuple[str, ...], why: Callable[[], str | None]) -> Callable[..., Any]:
    def decorate(obj: T | None = None) -> Any:
        if obj is None:
            return lambda target: _apply(target, markers, why())
        return _apply(obj, markers, why())

    return decorate


requires_gpu = _decorator(("gpu",), gpu_missing_reason)
requires_gpu.__doc__ = (
    "Mark a test function or class `gpu`; skip it without a GPU (fail with CUTE_REQUIRE_GPU=1)."
)
requires_sm90 = _decorator(("gpu", "sm90"), sm90_missing_reason)
requires_sm90.__doc__ = (
    "Mark a test function or class `gpu` and `sm90`; skip it without an sm_90 GPU "
    "(fail with CUTE_REQUIRE_GPU=1)."
)

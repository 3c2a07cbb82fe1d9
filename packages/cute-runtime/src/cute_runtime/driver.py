"""The CUDA driver through cuda-bindings: lazy init, error checks, devices and their primary contexts."""

from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import Any

from . import config
from .errors import DriverError, NoDeviceError

_lock = threading.RLock()
_driver: ModuleType | None = None
_init_error: NoDeviceError | None = None
_primary: dict[int, Any] = {}


def _import_bindings() -> ModuleType:
    try:
        from cuda.bindings import driver
    except Exception as exc:  # an unusable cuda-bindings install is a missing driver stack for us
        raise NoDeviceError(
            f"no NVIDIA driver/GPU found: cuda.bindings.driver cannot be imported ({exc})"
        ) from exc
    return driver


def error_text(drv: ModuleType, err: Any) -> str:
    """'NAME (code): description' for a CUresult."""
    code = int(err)
    try:
        name_res = drv.cuGetErrorName(err)
        str_res = drv.cuGetErrorString(err)
        name = name_res[1].decode() if name_res[0] == 0 and name_res[1] else f"CUresult {code}"
        desc = str_res[1].decode() if str_res[0] == 0 and str_res[1] else ""
    except Exception:  # the error lookup itself must never mask the error being reported
        name, desc = getattr(err, "name", f"CUresult {code}"), ""
    return f"{name} ({code})" + (f": {desc}" if desc else "")


def check(result: tuple[Any, ...], what: str) -> Any:
    """The outputs of a cuda-bindings call; DriverError naming `what` unless it returned CUDA_SUCCESS."""
    err = result[0]
    if err:
        drv = _driver if _driver is not None else _import_bindings()
        text = error_text(drv, err)
        raise DriverError(f"{what} failed: {text}", int(err), getattr(err, "name", ""))
    if len(result) == 1:
        return None
    if len(result) == 2:
        return result[1]
    return result[1:]


def init() -> ModuleType:
    """The cuda.bindings.driver module after cuInit (once); NoDeviceError without a usable GPU."""
    global _driver, _init_error
    if _driver is not None:
        return _driver
    with _lock:
        if _driver is not None:
            return _driver
        if _init_error is not None:
            raise _init_error
        drv = _import_bindings()
        try:
            (err,) = drv.cuInit(0)
        except Exception as exc:  # DynamicLibNotFoundError, 'Failed to dlopen libcuda.so.1', ...
            _init_error = NoDeviceError(f"no NVIDIA driver/GPU found: {type(exc).__name__}: {exc}")
            raise _init_error from exc
        if err:
            _init_error = NoDeviceError(
                f"no NVIDIA driver/GPU found: cuInit failed with {error_text(drv, err)}"
            )
            raise _init_error
        err, count = drv.cuDeviceGetCount()
        if err or count == 0:
            _init_error = NoDeviceError("no NVIDIA driver/GPU found: the driver reports no CUDA devices")
            raise _init_error
        _driver = drv
        return drv


def available() -> bool:
    """Whether a CUDA driver and at least one GPU can be used here (never raises)."""
    try:
        init()
    except NoDeviceError:
        return False
    return True


def unavailable_reason() -> str | None:
    """Why no GPU can be used here, or None when one can."""
    try:
        init()
    except NoDeviceError as exc:
        return str(exc)
    return None


def device_count() -> int:
    """The number of CUDA devices the driver sees."""
    drv = init()
    return int(check(drv.cuDeviceGetCount(), "cuDeviceGetCount"))


def device_handle(ordinal: int) -> Any:
    """The CUdevice for a device ordinal, after checking the ordinal's range."""
    drv = init()
    count = device_count()
    if isinstance(ordinal, bool) or not isinstance(ordinal, int) or not 0 <= ordinal < count:
        raise ValueError(f"device {ordinal!r} is not a device ordinal in [0, {count})")
    return check(drv.cuDeviceGet(ordinal), f"cuDeviceGet({ordinal})")


def compute_capability_of(ordinal: int) -> tuple[int, int]:
    """The (major, minor) compute capability of a device."""
    drv = init()
    dev = device_handle(ordinal)
    attr = drv.CUdevice_attribute
    major = check(
        drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute",
    )
    minor = check(
        drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute",
    )
    return (int(major), int(minor))


def primary_context(ordinal: int) -> Any:
    """The device's primary context (the one torch uses), retained once and made current on this thread if no
    context is current."""
    drv = init()
    with _lock:
        ctx = _primary.get(ordinal)
        if ctx is None:
            dev = device_handle(ordinal)
            ctx = check(drv.cuDevicePrimaryCtxRetain(dev), f"cuDevicePrimaryCtxRetain(device {ordinal})")
            _primary[ordinal] = ctx
    current = check(drv.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if current is None or int(current) == 0:
        check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


def make_current(ordinal: int) -> None:
    """Make the device's primary context current on this thread."""
    drv = init()
    ctx = primary_context(ordinal)
    current = check(drv.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if current is None or int(current) != int(ctx):
        check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


def current_device() -> int:
    """The device a launch goes to by default.

    CUTE_DEVICE, else torch's current device once torch has initialised CUDA, else the current context's
    device, else 0.
    """
    drv = init()
    chosen = config.default_device()
    if chosen is not None:
        device_handle(chosen)
        return chosen
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return int(torch.cuda.current_device())
        except Exception:  # a torch without CUDA support: fall through to the driver's view
            pass
    current = check(drv.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if current is not None and int(current) != 0:
        return int(check(drv.cuCtxGetDevice(), "cuCtxGetDevice"))
    return 0

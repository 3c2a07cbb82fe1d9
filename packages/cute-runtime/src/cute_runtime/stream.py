"""CUDA streams: raw handles from stream-like objects, and the pluggable default (torch's current stream)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

StreamProvider = Callable[[int], int]


def stream_handle(stream: Any) -> int:
    """The raw CUstream handle (int) of a stream-like value.

    Accepts an int, a cuda.bindings CUstream, a torch.cuda.Stream (.cuda_stream), or an object with
    __cuda_stream__() or .handle.
    """
    if isinstance(stream, bool):
        raise TypeError("stream must be a CUDA stream or its int handle, got bool")
    if isinstance(stream, int):
        if not 0 <= stream < (1 << 64):
            raise ValueError(f"stream handle {stream} is outside [0, 2**64)")
        return stream
    raw = getattr(stream, "cuda_stream", None)
    if isinstance(raw, int):
        return raw
    protocol = getattr(stream, "__cuda_stream__", None)
    if callable(protocol):
        value = protocol()
        if isinstance(value, tuple) and len(value) == 2:
            return int(value[1])
        raise TypeError(
            f"{type(stream).__name__}.__cuda_stream__() must return (version, handle), got {value!r}"
        )
    if type(stream).__name__ == "CUstream" and hasattr(stream, "getPtr"):
        return int(stream)
    handle = getattr(stream, "handle", None)
    if handle is not None and not isinstance(handle, bool):
        try:
            return int(handle)
        except (TypeError, ValueError):
            pass
    raise TypeError(
        f"stream must be an int handle, a CUstream, a torch.cuda.Stream or an object with __cuda_stream__, "
        f"got {type(stream).__name__}"
    )


def _auto(device: int) -> int:
    """torch's current stream once torch has initialised CUDA (then used directly), else the null stream."""
    global current
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            ready = torch.cuda.is_initialized()
        except Exception:  # torch without CUDA support
            ready = False
        if ready:
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            if raw is not None:
                if current is _auto:
                    current = raw
                return int(raw(device))
            return int(torch.cuda.current_stream(device).cuda_stream)
    return 0


current: StreamProvider = _auto
"""The function a launch without stream= calls to get the stream handle for a device ordinal."""


def set_stream_provider(provider: StreamProvider | None) -> None:
    """Replace the default stream provider (device ordinal -> raw handle); None restores the automatic one.

    The automatic provider gives torch's current stream once torch uses CUDA, else the null stream.
    """
    global current
    if provider is not None and not callable(provider):
        raise TypeError(f"provider must be callable(device) -> int or None, got {type(provider).__name__}")
    current = _auto if provider is None else provider


def current_stream(device: int) -> int:
    """The raw handle of the stream a launch on device uses when no stream is given."""
    return int(current(device))

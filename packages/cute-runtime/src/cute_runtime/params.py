"""Kernel parameter signatures (kinds: cute-nvarch's params): argument checks, byte layout, a precompiled packer."""

from __future__ import annotations

import ctypes
import math
import operator
import struct
import sys
from collections.abc import Callable, Sequence
from typing import Any

from cute_nvarch.params import PARAM_KINDS, Param, parse_params

from .pointers import device_pointer, is_torch_tensor
from .tma import TensorMap

__all__ = [
    "Param",
    "ParamBuffer",
    "ParamLayout",
    "convert_arg",
    "make_packer",
    "pack_source",
    "parse_params",
]

_F32_MAX = 3.4028234663852886e38


def _arg_error(kernel: str, param: Param, message: str) -> str:
    return f"kernel {kernel!r}: argument {param.name!r} ({param.kind}) {message}"


def convert_arg(param: Param, value: Any, device: int | None = None, kernel: str = "kernel") -> Any:
    """The value packed for one argument, after checking its type and range (errors name it)."""
    kind = param.kind
    if kind == "ptr":
        try:
            return device_pointer(value, param.name, device)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"kernel {kernel!r}: {exc}") from None
    if kind == "tma":
        if not isinstance(value, TensorMap):
            raise TypeError(
                _arg_error(kernel, param, f"expects a cute_runtime TensorMap, got {type(value).__name__}")
            )
        return value.raw
    int_range = PARAM_KINDS[kind].int_range
    if int_range is not None:
        if isinstance(value, float):
            raise TypeError(_arg_error(kernel, param, f"expects a Python int, got {type(value).__name__}"))
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(
                _arg_error(kernel, param, f"expects a Python int, got {type(value).__name__}")
            ) from None
        lo, hi = int_range
        if not lo <= v <= hi:
            raise ValueError(_arg_error(kernel, param, f"value {v} is outside [{lo}, {hi}]"))
        return v
    # f32 / f64
    if isinstance(value, (str, bytes)):
        raise TypeError(_arg_error(kernel, param, f"expects a Python float, got {type(value).__name__}"))
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(
            _arg_error(kernel, param, f"expects a Python float, got {type(value).__name__}")
        ) from None
    if kind == "f32" and math.isfinite(v) and abs(v) > _F32_MAX:
        raise ValueError(_arg_error(kernel, param, f"value {v!r} overflows float32"))
    return v


class ParamLayout:
    """Where each parameter lives in the packed block (natural alignment; TMA maps 64-byte aligned)."""

    def __init__(self, params: Sequence[Param]) -> None:
        self.params = tuple(params)
        offsets: list[int] = []
        fmt = ["<"]
        cursor = 0
        for p in self.params:
            k = PARAM_KINDS[p.kind]
            code, size, align = k.struct_code, k.size, k.align
            offset = -(-cursor // align) * align
            if offset > cursor:
                fmt.append(f"{offset - cursor}x")
            fmt.append(code)
            offsets.append(offset)
            cursor = offset + size
        self.offsets = tuple(offsets)
        self.struct = struct.Struct("".join(fmt))
        self.size = self.struct.size

    @property
    def names(self) -> tuple[str, ...]:
        """The parameter names in order."""
        return tuple(p.name for p in self.params)

    def convert(self, args: Sequence[Any], device: int | None = None, kernel: str = "kernel") -> list[Any]:
        """Check every argument (count, types, ranges) and return the values to pack."""
        if len(args) != len(self.params):
            raise TypeError(
                f"kernel {kernel!r} takes {len(self.params)} arguments ({', '.join(self.names)}), "
                f"got {len(args)}"
            )
        return [convert_arg(p, a, device, kernel) for p, a in zip(self.params, args, strict=True)]

    def pack(self, args: Sequence[Any], device: int | None = None, kernel: str = "kernel") -> bytes:
        """The packed parameter block for args, exactly as the kernel's parameter space lays it out."""
        return self.struct.pack(*self.convert(args, device, kernel))


class ParamBuffer:
    """Host memory with one packed parameter block (64-byte aligned) and the void* array for the launch."""

    def __init__(self, layout: ParamLayout) -> None:
        self.layout = layout
        n = len(layout.params)
        ptr_bytes = 8 * max(n, 1)
        total = 64 + layout.size + 8 + ptr_bytes
        self.buffer = bytearray(total)
        self._view = (ctypes.c_char * total).from_buffer(self.buffer)  # pins the bytearray's memory
        base_address = ctypes.addressof(self._view)
        self.base = (-base_address) % 64
        self.address = base_address + self.base
        ptr_off = -(-(self.base + layout.size) // 8) * 8
        struct.pack_into(f"<{n}Q", self.buffer, ptr_off, *(self.address + o for o in layout.offsets))
        self.kernel_params = base_address + ptr_off if n else 0

    def packed(self) -> bytes:
        """The bytes of the parameter block as last packed."""
        return bytes(self.buffer[self.base : self.base + self.layout.size])

    def write(self, values: Sequence[Any]) -> None:
        """Pack already converted values into the block."""
        self.layout.struct.pack_into(self.buffer, self.base, *values)


class _NotATensor:
    """Placeholder type for torch.Tensor until torch is imported."""


def pack_source(
    layout: ParamLayout, target: ParamBuffer, device: int | None, kernel: str = "kernel"
) -> tuple[list[str], str, dict[str, Any]]:
    """The pieces of generated packing code: argument names, a `pack_into(...)` statement over them, and the
    namespace it runs in (bad arguments make it raise; callers then re-check with layout.convert)."""
    ns: dict[str, Any] = {
        "pack_into": layout.struct.pack_into,
        "buf": target.buffer,
        "base": target.base,
        "T": _NotATensor,
        "TM": TensorMap,
        "dev": -2 if device is None else device,
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        ns["T"] = torch.Tensor

    def ptr(value: Any, i: int) -> int:
        p = layout.params[i]
        if ns["T"] is _NotATensor and is_torch_tensor(value):
            mod = sys.modules.get("torch")
            if mod is not None:
                ns["T"] = mod.Tensor
        return convert_arg(p, value, device, kernel)

    def tma(value: Any, i: int) -> bytes:
        return convert_arg(layout.params[i], value, device, kernel)

    ns["ptr"] = ptr
    ns["tma"] = tma
    args = [f"a{i}" for i in range(len(layout.params))]
    exprs = []
    for i, p in enumerate(layout.params):
        a = args[i]
        if p.kind == "ptr":
            if device is None:
                exprs.append(f"({a}.data_ptr() if type({a}) is T and {a}.is_cuda else ptr({a}, {i}))")
            else:
                exprs.append(
                    f"({a}.data_ptr() if type({a}) is T and {a}.get_device() == dev else ptr({a}, {i}))"
                )
        elif p.kind == "tma":
            exprs.append(f"({a}.raw if type({a}) is TM else tma({a}, {i}))")
        else:
            exprs.append(a)
    return args, f"pack_into(buf, base{''.join(', ' + e for e in exprs)})", ns


def make_packer(
    layout: ParamLayout, target: ParamBuffer, device: int | None, kernel: str = "kernel"
) -> Callable[..., None]:
    """A function f(*args) that packs args into target with as little per-call work as possible; any bad
    argument raises (struct.error, TypeError, ValueError) and the caller re-checks with layout.convert."""
    args, statement, ns = pack_source(layout, target, device, kernel)
    src = f"def pack({', '.join(args)}):\n    {statement}\n"
    exec(compile(src, f"<cute_runtime packer for {kernel}>", "exec"), ns)
    return ns["pack"]

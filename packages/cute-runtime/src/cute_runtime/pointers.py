"""Device addresses of tensor-like arguments: torch, __cuda_array_interface__, DLPack, ints."""

from __future__ import annotations

import ctypes
from typing import Any

_KDL_CUDA = 2
_KDL_CUDA_MANAGED = 13
_U64_MAX = (1 << 64) - 1


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def is_torch_tensor(value: Any) -> bool:
    """Whether value is a torch.Tensor (duck-typed: torch is never imported here)."""
    for cls in type(value).__mro__:
        if cls.__name__ == "Tensor" and cls.__module__ == "torch":
            return True
    return False


def _where(name: str) -> str:
    return f"argument {name!r}"


def _check_device(name: str, found: int, device: int | None) -> None:
    if device is not None and found != device:
        raise ValueError(f"{_where(name)}: tensor is on cuda:{found}, but the kernel runs on cuda:{device}")


def _dlpack_pointer(value: Any, name: str, device: int | None) -> int:
    dev_type, dev_id = value.__dlpack_device__()
    if int(dev_type) not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise ValueError(f"{_where(name)}: DLPack device type {int(dev_type)} is not CUDA memory (kDLCUDA=2)")
    _check_device(name, int(dev_id), device)
    capsule = value.__dlpack__()
    if not _capsule_is_valid(capsule, b"dltensor"):
        raise TypeError(f"{_where(name)}: __dlpack__() did not return an unconsumed 'dltensor' capsule")
    # DLManagedTensor starts with its DLTensor; the capsule stays unconsumed, so its destructor releases it.
    tensor = _DLTensor.from_address(_capsule_get_pointer(capsule, b"dltensor"))
    return int(tensor.data or 0) + int(tensor.byte_offset)


def device_pointer(value: Any, name: str = "ptr", device: int | None = None) -> int:
    """The device address of a CUDA tensor-like value or int address; errors name the argument."""
    if isinstance(value, bool):
        raise TypeError(f"{_where(name)} (ptr): expected a CUDA tensor or an int address, got bool")
    if isinstance(value, int):
        if not 0 <= value <= _U64_MAX:
            raise ValueError(f"{_where(name)} (ptr): address {value} is outside [0, 2**64)")
        return value
    if is_torch_tensor(value):
        if not value.is_cuda:
            raise ValueError(f"{_where(name)} (ptr): tensor is on {value.device}, expected a CUDA tensor")
        _check_device(name, int(value.get_device()), device)
        return int(value.data_ptr())
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        data = cai.get("data") if isinstance(cai, dict) else None
        if not isinstance(data, tuple) or not data or not isinstance(data[0], int):
            raise TypeError(
                f"{_where(name)} (ptr): __cuda_array_interface__ has no ('data': (ptr, readonly)) entry"
            )
        return int(data[0])
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        return _dlpack_pointer(value, name, device)
    raise TypeError(
        f"{_where(name)} (ptr): expected a CUDA tensor (torch, __cuda_array_interface__ or __dlpack__) "
        f"or an int address, got {type(value).__name__}"
    )

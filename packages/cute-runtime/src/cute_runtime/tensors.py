"""What a tensor-like argument is: address, dtype, shape, strides (elements), device; torch, CAI or DLPack.

torch is never imported here (a torch.Tensor is recognised by its class); `__cuda_array_interface__` (v2/v3)
and DLPack (`__dlpack__` + `__dlpack_device__`, the capsule is read but not consumed) work without torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cute_nvarch.numeric import numeric_from_dlpack, numeric_from_typestr, numeric_type

from .pointers import _capsule_get_pointer, _capsule_is_valid, _DLTensor, is_torch_tensor

__all__ = ["Placeholder", "TensorInfo", "describe"]

_KDL_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


@dataclass(frozen=True)
class TensorInfo:
    """One tensor argument: device address, canonical dtype name, shape and strides (elements), device."""

    ptr: int
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    device: int

    @property
    def itemsize(self) -> int:
        """Bytes per element (1 for sub-byte types)."""
        return max(1, numeric_type(self.dtype).width // 8)


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, step = [], 1
    for e in reversed(shape):
        out.append(step)
        step *= max(e, 1)
    return tuple(reversed(out))


def _from_torch(value: Any, name: str) -> TensorInfo:
    if not value.is_cuda:
        raise ValueError(f"argument {name!r}: tensor is on {value.device}, expected a CUDA tensor")
    dtype = str(value.dtype).removeprefix("torch.")
    try:
        canonical = numeric_type(dtype).canonical
    except ValueError:
        raise TypeError(f"argument {name!r}: torch dtype {dtype} is not a supported element type") from None
    return TensorInfo(
        int(value.data_ptr()), canonical, tuple(value.shape), tuple(value.stride()), int(value.get_device())
    )


def _from_cai(cai: Any, name: str) -> TensorInfo:
    if not isinstance(cai, dict):
        raise TypeError(f"argument {name!r}: __cuda_array_interface__ must be a dict")
    data, shape, typestr = cai.get("data"), cai.get("shape"), cai.get("typestr")
    if not isinstance(data, tuple) or not data or not isinstance(data[0], int):
        raise TypeError(f"argument {name!r}: __cuda_array_interface__ has no ('data': (ptr, readonly)) entry")
    if not isinstance(shape, tuple) or not all(isinstance(e, int) and e >= 0 for e in shape):
        raise TypeError(f"argument {name!r}: __cuda_array_interface__ 'shape' must be a tuple of ints >= 0")
    numeric = numeric_from_typestr(typestr) if isinstance(typestr, str) else None
    if numeric is None:
        raise TypeError(f"argument {name!r}: __cuda_array_interface__ typestr {typestr!r} is not supported")
    nbytes = int(typestr[2:])
    dtype = numeric.canonical
    strides = cai.get("strides")
    if strides is None:
        elem = _contiguous(shape)
    else:
        if len(strides) != len(shape) or any(s % nbytes for s in strides):
            raise ValueError(f"argument {name!r}: strides {strides} are not whole elements of {nbytes} bytes")
        elem = tuple(s // nbytes for s in strides)
    return TensorInfo(data[0], dtype, shape, elem, -1)


def _from_dlpack(value: Any, name: str) -> TensorInfo:
    dev_type, dev_id = value.__dlpack_device__()
    if int(dev_type) not in _KDL_CUDA:
        raise ValueError(f"argument {name!r}: DLPack device type {int(dev_type)} is not CUDA memory (kDLCUDA=2)")
    capsule = value.__dlpack__()
    if not _capsule_is_valid(capsule, b"dltensor"):
        raise TypeError(f"argument {name!r}: __dlpack__() did not return an unconsumed 'dltensor' capsule")
    t = _DLTensor.from_address(_capsule_get_pointer(capsule, b"dltensor"))
    numeric = numeric_from_dlpack(t.dtype.code, t.dtype.bits) if t.dtype.lanes == 1 else None
    if numeric is None:
        raise TypeError(
            f"argument {name!r}: DLPack dtype (code {t.dtype.code}, bits {t.dtype.bits}, lanes {t.dtype.lanes}) "
            f"is not supported"
        )
    dtype = numeric.canonical
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    strides = _contiguous(shape) if not t.strides else tuple(int(t.strides[i]) for i in range(t.ndim))
    return TensorInfo(int(t.data or 0) + int(t.byte_offset), dtype, shape, strides, int(dev_id))


class Placeholder:
    """A stand-in tensor for specializing and compiling without data (never launch with it): dtype, shape,
    strides in elements (default: row-major) and the byte alignment its fake address has."""

    def __init__(
        self, shape: tuple[int, ...], dtype: str = "float32", *, strides: tuple[int, ...] | None = None,
        align: int = 16,
    ) -> None:
        if isinstance(align, bool) or not isinstance(align, int) or align < 1 or align & (align - 1):
            raise ValueError(f"Placeholder: align must be a power of two, got {align!r}")
        shape = tuple(shape)
        if strides is not None and len(strides) != len(shape):
            raise ValueError(f"Placeholder: strides {strides} and shape {shape} differ in rank")
        self.info = TensorInfo(
            (1 << 40) | align, numeric_type(dtype).canonical, shape,
            _contiguous(shape) if strides is None else tuple(strides), -1,
        )

    def __repr__(self) -> str:
        return f"Placeholder({self.info.shape}, {self.info.dtype!r}, strides={self.info.strides})"


def describe(value: Any, name: str = "tensor") -> TensorInfo:
    """The TensorInfo of a CUDA tensor-like value; TypeError/ValueError naming the argument otherwise."""
    if type(value) is Placeholder:
        return value.info
    if is_torch_tensor(value):
        return _from_torch(value, name)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(cai, name)
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        return _from_dlpack(value, name)
    raise TypeError(
        f"argument {name!r}: expected a CUDA tensor (torch, __cuda_array_interface__ or DLPack), "
        f"got {type(value).__name__}"
    )

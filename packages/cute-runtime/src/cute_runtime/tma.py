"""TMA descriptors: cuTensorMapEncodeTiled into a 128-byte TensorMap passed to kernels by value."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from cute_nvarch.numeric import TENSOR_MAP_ELEMENTS, tensor_map_data_type
from cute_nvarch.params import TMA_DESCRIPTOR_BYTES

from . import driver
from .pointers import device_pointer

_INTERLEAVE_NAMES = {"none": 0, "16b": 1, "32b": 2}
_SWIZZLE_NAMES = {
    "none": 0,
    "32b": 1,
    "64b": 2,
    "128b": 3,
    "128b_atom_32b": 4,
    "128b_atom_32b_flip_8b": 5,
    "128b_atom_64b": 6,
}
_SWIZZLE_SPAN = {0: None, 1: 32, 2: 64, 3: 128, 4: 128, 5: 128, 6: 128}
_L2_NAMES = {"none": 0, "64b": 1, "l2_64b": 1, "128b": 2, "l2_128b": 2, "256b": 3, "l2_256b": 3}
_OOB_NAMES = {"none": 0, "zero": 0, "nan": 1, "nan_request_zero_fma": 1}


class TensorMap:
    """An encoded CUtensorMap (128 bytes), passed by value to a `tma` kernel parameter."""

    __slots__ = ("raw", "owner", "__weakref__")

    def __init__(self, raw: bytes, owner: Any = None) -> None:
        if not isinstance(raw, (bytes, bytearray, memoryview)):
            raise TypeError(f"raw must be bytes, got {type(raw).__name__}")
        raw = bytes(raw)
        if len(raw) != TMA_DESCRIPTOR_BYTES:
            raise ValueError(f"raw must be {TMA_DESCRIPTOR_BYTES} bytes (a CUtensorMap), got {len(raw)}")
        self.raw = raw
        self.owner = owner  # keeps the described tensor alive as long as the map

    def __bytes__(self) -> bytes:
        return self.raw

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorMap) and other.raw == self.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"TensorMap({self.raw[:16].hex()}...)"

    @classmethod
    def from_plan(cls, plan: Any, tensor: Any) -> TensorMap:
        """Encode a cute-nvarch TMA plan for the given CUDA tensor (or int base address)."""
        return encode_plan(plan, tensor)


def _enum_value(value: Any, names: dict[str, int], valid: Sequence[int], what: str) -> int:
    if isinstance(value, str):
        key = value.strip().lower()
        for prefix in (
            "cu_tensor_map_interleave_",
            "cu_tensor_map_swizzle_",
            "cu_tensor_map_l2_promotion_",
            "cu_tensor_map_float_oob_fill_",
            "swizzle_",
        ):
            if key.startswith(prefix):
                key = key[len(prefix) :]
        if key not in names:
            raise ValueError(f"{what} {value!r} is not one of {sorted(names)}")
        return names[key]
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an enum value or name, got bool")
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an enum value (int) or a name, got {type(value).__name__}") from None
    if v not in valid:
        raise ValueError(f"{what} {v} is not a valid value (expected one of {list(valid)})")
    return v


def _data_type(value: Any) -> int:
    if isinstance(value, str):
        try:
            return tensor_map_data_type(value)
        except ValueError:
            raise ValueError(f"data_type {value!r} is not a CUtensorMapDataType name or a numeric type") from None
    return _enum_value(value, {}, list(TENSOR_MAP_ELEMENTS), "data_type")


def _uint_list(values: Sequence[int], n: int, lo: int, hi: int, what: str) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{what} must be a sequence of {n} ints")
    if len(values) != n:
        raise ValueError(f"{what} must have {n} entries, got {len(values)}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{what}[{i}] must be an int, got {type(v).__name__}")
        v = int(v)
        if not lo <= v <= hi:
            raise ValueError(f"{what}[{i}] = {v} is outside [{lo}, {hi}]")
        out.append(v)
    return out


def check_tiled(
    data_type: Any,
    rank: int,
    global_address: int,
    global_dims: Sequence[int],
    global_strides_bytes: Sequence[int],
    box_dims: Sequence[int],
    element_strides: Sequence[int],
    interleave: Any = 0,
    swizzle: Any = 0,
    l2_promotion: Any = 0,
    oob_fill: Any = 0,
) -> tuple[int, int, int, list[int], list[int], list[int], list[int], int, int, int, int]:
    """cuTensorMapEncodeTiled's arguments, checked by the driver's documented rules and normalised."""
    dtype = _data_type(data_type)
    esize, is_float = TENSOR_MAP_ELEMENTS[dtype]
    inter = _enum_value(interleave, _INTERLEAVE_NAMES, [0, 1, 2], "interleave")
    swz = _enum_value(swizzle, _SWIZZLE_NAMES, list(_SWIZZLE_SPAN), "swizzle")
    l2 = _enum_value(l2_promotion, _L2_NAMES, [0, 1, 2, 3], "l2_promotion")
    oob = _enum_value(oob_fill, _OOB_NAMES, [0, 1], "oob_fill")
    if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= 5:
        raise ValueError(f"rank must be an int in [1, 5], got {rank!r}")
    if inter != 0 and rank < 3:
        raise ValueError(f"rank must be >= 3 with an interleaved layout, got {rank}")
    if isinstance(global_address, bool) or not isinstance(global_address, int):
        raise TypeError(f"global_address must be an int device address, got {type(global_address).__name__}")
    align = 32 if inter == 2 else 16
    if not 0 < global_address < (1 << 64) or global_address % align:
        raise ValueError(f"global_address {global_address:#x} must be non-null and {align}-byte aligned")
    dims = _uint_list(global_dims, rank, 1, 1 << 32, "global_dims")
    strides = _uint_list(global_strides_bytes, rank - 1, 0, (1 << 40) - 1, "global_strides_bytes")
    stride_align = 32 if inter == 2 else 16
    for i, s in enumerate(strides):
        if s % stride_align:
            raise ValueError(f"global_strides_bytes[{i}] = {s} must be a multiple of {stride_align}")
    box = _uint_list(box_dims, rank, 1, 256, "box_dims")
    estr = _uint_list(element_strides, rank, 1, 8, "element_strides")
    inner_bytes = box[0] * esize
    if inter == 0 and inner_bytes % 16:
        raise ValueError(f"box_dims[0] * element size = {inner_bytes} bytes must be a multiple of 16")
    if inter == 2 and swz != 1:
        raise ValueError("interleave 32B requires swizzle 32B")
    span = _SWIZZLE_SPAN[swz]
    if inter == 0 and span is not None and inner_bytes > span:
        raise ValueError(
            f"box_dims[0] * element size = {inner_bytes} bytes exceeds the {span}-byte swizzle span"
        )
    if oob == 1 and not is_float:
        raise ValueError("oob_fill NAN_REQUEST_ZERO_FMA needs a floating-point data_type")
    return (dtype, rank, global_address, dims, strides, box, estr, inter, swz, l2, oob)


def encode_tiled(
    data_type: Any,
    rank: int,
    global_address: int,
    global_dims: Sequence[int],
    global_strides_bytes: Sequence[int],
    box_dims: Sequence[int],
    element_strides: Sequence[int],
    interleave: Any = 0,
    swizzle: Any = 0,
    l2_promotion: Any = 0,
    oob_fill: Any = 0,
    *,
    owner: Any = None,
) -> TensorMap:
    """Encode a tiled TMA descriptor (cuTensorMapEncodeTiled).

    Dims innermost first; strides in bytes for dimensions 1..rank-1; enums as values or names.
    """
    dtype, rank, addr, dims, strides, box, estr, inter, swz, l2, oob = check_tiled(
        data_type,
        rank,
        global_address,
        global_dims,
        global_strides_bytes,
        box_dims,
        element_strides,
        interleave,
        swizzle,
        l2_promotion,
        oob_fill,
    )
    drv = driver.init()
    u64, u32 = drv.cuuint64_t, drv.cuuint32_t
    tmap = driver.check(
        drv.cuTensorMapEncodeTiled(
            drv.CUtensorMapDataType(dtype),
            rank,
            addr,
            [u64(d) for d in dims],
            [u64(s) for s in strides],
            [u32(b) for b in box],
            [u32(e) for e in estr],
            drv.CUtensorMapInterleave(inter),
            drv.CUtensorMapSwizzle(swz),
            drv.CUtensorMapL2promotion(l2),
            drv.CUtensorMapFloatOOBfill(oob),
        ),
        "cuTensorMapEncodeTiled",
    )
    raw = struct.pack("<16Q", *(int(w) for w in tmap.opaque))
    return TensorMap(raw, owner)


_PLAN_FIELDS = (
    "data_type",
    "rank",
    "global_dims",
    "box_dims",
    "element_strides",
    "interleave",
    "swizzle",
    "l2_promotion",
    "oob_fill",
)


def plan_arguments(plan: Any, global_address: int) -> tuple[Any, ...]:
    """The argument tuple of encode_tiled for a TMA plan and a base address.

    Uses the plan's `encode_args(address)` (cute-nvarch's TmaPlan) when it has one, else its fields
    data_type, rank, global_dims, global_strides (or global_strides_bytes), box_dims, element_strides,
    interleave, swizzle, l2_promotion, oob_fill.
    """
    encode_args = getattr(plan, "encode_args", None)
    if callable(encode_args):
        return tuple(encode_args(global_address))
    strides_field = next((f for f in ("global_strides", "global_strides_bytes") if hasattr(plan, f)), None)
    missing = [f for f in _PLAN_FIELDS if not hasattr(plan, f)] + (
        ["global_strides"] if strides_field is None else []
    )
    if missing:
        raise TypeError(f"plan of type {type(plan).__name__} is not a TMA plan: it lacks {missing}")
    v = {f: getattr(plan, f) for f in _PLAN_FIELDS}
    return (
        v["data_type"],
        v["rank"],
        global_address,
        v["global_dims"],
        getattr(plan, strides_field),
        v["box_dims"],
        v["element_strides"],
        v["interleave"],
        v["swizzle"],
        v["l2_promotion"],
        v["oob_fill"],
    )


def encode_plan(plan: Any, tensor: Any) -> TensorMap:
    """Encode a TMA plan for a CUDA tensor (its data pointer) or an int base address."""
    address = device_pointer(tensor, "tensor")
    return encode_tiled(*plan_arguments(plan, address), owner=None if isinstance(tensor, int) else tensor)

"""Numeric types as data: bit width, MLIR and PTX spellings, and the cuTensorMap data-type enum.

This is the one dtype table of the project: every other spelling (cute-ir's element types, the examples'
specs and CLIs, cute-runtime's TMA data types, torch's dtypes in cute-examples) maps to it here.
Every type is a frozen `NumericType`; the module-level names (`Float16`, `BFloat16`, ...) are the
instances code generators use. `tensor_map_data_type` is the plain-int value of
`CUtensorMapDataType` that TMA descriptors use for the type (8-bit types, signed or not, travel as
`UINT8` as CUTLASS does; there is no signed 8-bit TMA type).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "NumericType",
    "Float16",
    "BFloat16",
    "Float32",
    "Float64",
    "TFloat32",
    "Float8E4M3FN",
    "Float8E5M2",
    "Int8",
    "Uint8",
    "Int16",
    "Uint16",
    "Int32",
    "Uint32",
    "Int64",
    "Uint64",
    "Boolean",
    "NUMERIC_TYPES",
    "numeric_type",
    "numeric_from_dlpack",
    "numeric_from_typestr",
    "TensorMapDataType",
    "TENSOR_MAP_ELEMENTS",
    "tensor_map_data_type",
]


class TensorMapDataType:
    """Plain-int values of the driver's `CUtensorMapDataType` enum (cuda.h)."""

    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12


# CUtensorMapDataType value -> (element bytes, is floating point)
TENSOR_MAP_ELEMENTS: dict[int, tuple[int, bool]] = {
    TensorMapDataType.UINT8: (1, False),
    TensorMapDataType.UINT16: (2, False),
    TensorMapDataType.UINT32: (4, False),
    TensorMapDataType.INT32: (4, False),
    TensorMapDataType.UINT64: (8, False),
    TensorMapDataType.INT64: (8, False),
    TensorMapDataType.FLOAT16: (2, True),
    TensorMapDataType.FLOAT32: (4, True),
    TensorMapDataType.FLOAT64: (8, True),
    TensorMapDataType.BFLOAT16: (2, True),
    TensorMapDataType.FLOAT32_FTZ: (4, True),
    TensorMapDataType.TFLOAT32: (4, True),
    TensorMapDataType.TFLOAT32_FTZ: (4, True),
}


@dataclass(frozen=True)
class NumericType:
    """One element type.

    Fields:
      name: CuTeDSL's class name (`"Float16"`).
      canonical: the lower-case name specs, CLIs and torch use (`"float16"`, `"float8_e4m3fn"`).
      short: the short name kernel symbols use (`"f16"`, `"bf16"`, `"i32"`, `"e4m3"`).
      width: bits the type occupies in memory (Boolean: 8, a byte per value, as CuTe stores `bool`).
      mlir_type: MLIR builtin type spelling of a value in registers (`"f16"`, `"i1"` for Boolean).
      mlir_memory_type: MLIR spelling of the element in memory (`"i8"` for Boolean, else `mlir_type`).
      ptx_type: PTX type suffix (`"f16"`, `"e4m3"`, `"s8"`, `"pred"` for Boolean).
      tensor_map_data_type: `CUtensorMapDataType` value as a plain int.
      is_float: floating point (TFloat32 and the float8 types included).
      signed: has a sign (every float type; Int8, Int32, Int64).
    """

    name: str
    canonical: str
    short: str
    width: int
    mlir_type: str
    mlir_memory_type: str
    ptx_type: str
    tensor_map_data_type: int
    is_float: bool
    signed: bool

    @property
    def bytes(self) -> int:
        """Bytes one element occupies in memory."""
        return self.width // 8

    @property
    def is_integer(self) -> bool:
        """True for the integer types (Boolean included)."""
        return not self.is_float

    def __str__(self) -> str:
        return self.name


_T = TensorMapDataType

Float16 = NumericType("Float16", "float16", "f16", 16, "f16", "f16", "f16", _T.FLOAT16, True, True)
BFloat16 = NumericType("BFloat16", "bfloat16", "bf16", 16, "bf16", "bf16", "bf16", _T.BFLOAT16, True, True)
Float32 = NumericType("Float32", "float32", "f32", 32, "f32", "f32", "f32", _T.FLOAT32, True, True)
Float64 = NumericType("Float64", "float64", "f64", 64, "f64", "f64", "f64", _T.FLOAT64, True, True)
TFloat32 = NumericType("TFloat32", "tfloat32", "tf32", 32, "tf32", "f32", "tf32", _T.TFLOAT32, True, True)
Float8E4M3FN = NumericType(
    "Float8E4M3FN", "float8_e4m3fn", "e4m3", 8, "f8E4M3FN", "f8E4M3FN", "e4m3", _T.UINT8, True, True
)
Float8E5M2 = NumericType("Float8E5M2", "float8_e5m2", "e5m2", 8, "f8E5M2", "f8E5M2", "e5m2", _T.UINT8, True, True)
Int8 = NumericType("Int8", "int8", "i8", 8, "i8", "i8", "s8", _T.UINT8, False, True)
Uint8 = NumericType("Uint8", "uint8", "u8", 8, "i8", "i8", "u8", _T.UINT8, False, False)
# no 16-bit integer TMA type: 16-bit integers travel as UINT16
Int16 = NumericType("Int16", "int16", "i16", 16, "i16", "i16", "s16", _T.UINT16, False, True)
Uint16 = NumericType("Uint16", "uint16", "u16", 16, "i16", "i16", "u16", _T.UINT16, False, False)
Int32 = NumericType("Int32", "int32", "i32", 32, "i32", "i32", "s32", _T.INT32, False, True)
Uint32 = NumericType("Uint32", "uint32", "u32", 32, "i32", "i32", "u32", _T.UINT32, False, False)
Int64 = NumericType("Int64", "int64", "i64", 64, "i64", "i64", "s64", _T.INT64, False, True)
Uint64 = NumericType("Uint64", "uint64", "u64", 64, "i64", "i64", "u64", _T.UINT64, False, False)
Boolean = NumericType("Boolean", "boolean", "bool", 8, "i1", "i8", "pred", _T.UINT8, False, False)

NUMERIC_TYPES: tuple[NumericType, ...] = (
    Float16,
    BFloat16,
    Float32,
    Float64,
    TFloat32,
    Float8E4M3FN,
    Float8E5M2,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Boolean,
)

# every spelling: CuTeDSL names and canonical names (lower-cased), short names, PTX names, and a few more
_ALIASES: dict[str, NumericType] = {}
for _t in NUMERIC_TYPES:
    for _key in (_t.name.lower(), _t.canonical, _t.short, _t.ptx_type):
        _ALIASES.setdefault(_key, _t)
_ALIASES.update(
    {
        "half": Float16,
        "fp16": Float16,
        "float": Float32,
        "fp32": Float32,
        "double": Float64,
        "float8e4m3": Float8E4M3FN,
        "int": Int32,
        "bool": Boolean,
    }
)

def numeric_type(name: str | NumericType | object) -> NumericType:
    """The NumericType named `name`: CuTeDSL (`Float16`), canonical/torch (`float16`, `torch.float16`), short
    (`f16`) or PTX (`s32`) names, or any object whose `name` attribute holds one."""
    if isinstance(name, NumericType):
        return name
    text = name if isinstance(name, str) else getattr(name, "name", None)
    if not isinstance(text, str):
        raise TypeError(f"numeric_type: name must be a str or NumericType, got {type(name).__name__}")
    key = text.strip().lower().removeprefix("torch.").removeprefix("cutlass.")
    found = _ALIASES.get(key) or _ALIASES.get(key.replace("_", ""))
    if found is None:
        known = ", ".join(t.name for t in NUMERIC_TYPES)
        raise ValueError(f"numeric_type: unknown type name {text!r}; known: {known}")
    return found


# DLPack's DLDataTypeCode and __cuda_array_interface__'s typestr kind, as the prefix of a canonical name
_DLPACK_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}
_TYPESTR_KINDS = {"i": "int", "u": "uint", "f": "float", "b": "bool"}


def _by_prefix(prefix: str | None, bits: int) -> NumericType | None:
    if prefix is None:
        return None
    found = _ALIASES.get("bool" if prefix == "bool" else f"{prefix}{bits}")
    return found if found is not None and found.width == (8 if prefix == "bool" else bits) else None


def numeric_from_dlpack(code: int, bits: int) -> NumericType | None:
    """The NumericType of a DLPack dtype (type code, bits; one lane), or None when there is none."""
    return _by_prefix(_DLPACK_CODES.get(code), bits)


def numeric_from_typestr(typestr: str) -> NumericType | None:
    """The NumericType of a little-endian `__cuda_array_interface__` typestr (`<f4`, `|u1`), or None."""
    if len(typestr) < 3 or typestr[0] not in "<|" or not typestr[2:].isdigit():
        return None
    return _by_prefix(_TYPESTR_KINDS.get(typestr[1]), 8 * int(typestr[2:]))


def tensor_map_data_type(name: str) -> int:
    """The CUtensorMapDataType value named by an enum name (`"FLOAT32_FTZ"`, `"CU_TENSOR_MAP_DATA_TYPE_UINT8"`)
    or by any spelling of a numeric type (`"float16"`, `"bf16"`)."""
    key = name.strip().upper().removeprefix("CU_TENSOR_MAP_DATA_TYPE_")
    value = getattr(TensorMapDataType, key, None) if key.isidentifier() else None
    if isinstance(value, int):
        return value
    return numeric_type(name).tensor_map_data_type

"""Numeric types as data: bit width, MLIR and PTX spellings, and the cuTensorMap data-type enum.

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
    "TFloat32",
    "Float8E4M3FN",
    "Float8E5M2",
    "Int8",
    "Uint8",
    "Int32",
    "Int64",
    "Boolean",
    "NUMERIC_TYPES",
    "numeric_type",
    "TensorMapDataType",
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


@dataclass(frozen=True)
class NumericType:
    """One element type.

    Fields:
      name: CuTeDSL's class name (`"Float16"`).
      width: bits the type occupies in memory (Boolean: 8, a byte per value, as CuTe stores `bool`).
      mlir_type: MLIR builtin type spelling of a value in registers (`"f16"`, `"i1"` for Boolean).
      mlir_memory_type: MLIR spelling of the element in memory (`"i8"` for Boolean, else `mlir_type`).
      ptx_type: PTX type suffix (`"f16"`, `"e4m3"`, `"s8"`, `"pred"` for Boolean).
      tensor_map_data_type: `CUtensorMapDataType` value as a plain int.
      is_float: floating point (TFloat32 and the float8 types included).
      signed: has a sign (every float type; Int8, Int32, Int64).
    """

    name: str
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

Float16 = NumericType("Float16", 16, "f16", "f16", "f16", _T.FLOAT16, True, True)
BFloat16 = NumericType("BFloat16", 16, "bf16", "bf16", "bf16", _T.BFLOAT16, True, True)
Float32 = NumericType("Float32", 32, "f32", "f32", "f32", _T.FLOAT32, True, True)
TFloat32 = NumericType("TFloat32", 32, "tf32", "f32", "tf32", _T.TFLOAT32, True, True)
Float8E4M3FN = NumericType("Float8E4M3FN", 8, "f8E4M3FN", "f8E4M3FN", "e4m3", _T.UINT8, True, True)
Float8E5M2 = NumericType("Float8E5M2", 8, "f8E5M2", "f8E5M2", "e5m2", _T.UINT8, True, True)
Int8 = NumericType("Int8", 8, "i8", "i8", "s8", _T.UINT8, False, True)
Uint8 = NumericType("Uint8", 8, "i8", "i8", "u8", _T.UINT8, False, False)
Int32 = NumericType("Int32", 32, "i32", "i32", "s32", _T.INT32, False, True)
Int64 = NumericType("Int64", 64, "i64", "i64", "s64", _T.INT64, False, True)
Boolean = NumericType("Boolean", 8, "i1", "i8", "pred", _T.UINT8, False, False)

NUMERIC_TYPES: tuple[NumericType, ...] = (
    Float16,
    BFloat16,
    Float32,
    TFloat32,
    Float8E4M3FN,
    Float8E5M2,
    Int8,
    Uint8,
    Int32,
    Int64,
    Boolean,
)

_ALIASES: dict[str, NumericType] = {}
for _t in NUMERIC_TYPES:
    _ALIASES[_t.name.lower()] = _t
_ALIASES.update(
    {
        "float16": Float16,
        "half": Float16,
        "f16": Float16,
        "bfloat16": BFloat16,
        "bf16": BFloat16,
        "float32": Float32,
        "float": Float32,
        "f32": Float32,
        "tfloat32": TFloat32,
        "tf32": TFloat32,
        "float8_e4m3fn": Float8E4M3FN,
        "float8e4m3fn": Float8E4M3FN,
        "float8e4m3": Float8E4M3FN,
        "e4m3": Float8E4M3FN,
        "float8_e5m2": Float8E5M2,
        "float8e5m2": Float8E5M2,
        "e5m2": Float8E5M2,
        "int8": Int8,
        "s8": Int8,
        "uint8": Uint8,
        "u8": Uint8,
        "int32": Int32,
        "s32": Int32,
        "int64": Int64,
        "s64": Int64,
        "bool": Boolean,
        "boolean": Boolean,
    }
)


def numeric_type(name: str | NumericType) -> NumericType:
    """The NumericType named `name` (CuTeDSL names like `Float16`, torch names like `float16`, PTX names)."""
    if isinstance(name, NumericType):
        return name
    if not isinstance(name, str):
        raise TypeError(f"numeric_type: name must be a str or NumericType, got {type(name).__name__}")
    key = name.lower().removeprefix("torch.").removeprefix("cutlass.")
    try:
        return _ALIASES[key]
    except KeyError:
        known = ", ".join(t.name for t in NUMERIC_TYPES)
        raise ValueError(f"numeric_type: unknown type name {name!r}; known: {known}") from None

"""Element types: canonical names, bit widths and MLIR types of the numeric types kernels move.

A dtype may be given as a canonical name (`"float32"`), a short name (`"f32"`), CuTe's class-style name
(`"Float32"`), or any object with a `name` attribute holding one of those (e.g. cute_nvarch's numeric types).
This module does not import MLIR until `element_type` is called.
"""

from __future__ import annotations

__all__ = ["canonical_dtype", "dtype_bits", "element_type", "is_float", "short_name"]

# canonical name -> (MLIR spelling, bits, short name)
_DTYPES = {
    "float64": ("f64", 64, "f64"),
    "float32": ("f32", 32, "f32"),
    "tfloat32": ("f32", 32, "tf32"),
    "float16": ("f16", 16, "f16"),
    "bfloat16": ("bf16", 16, "bf16"),
    "float8_e4m3fn": ("f8E4M3FN", 8, "e4m3"),
    "float8_e5m2": ("f8E5M2", 8, "e5m2"),
    "int64": ("i64", 64, "i64"),
    "int32": ("i32", 32, "i32"),
    "int16": ("i16", 16, "i16"),
    "int8": ("i8", 8, "i8"),
    "uint64": ("i64", 64, "u64"),
    "uint32": ("i32", 32, "u32"),
    "uint16": ("i16", 16, "u16"),
    "uint8": ("i8", 8, "u8"),
    "boolean": ("i8", 8, "bool"),
}
_ALIASES = {}
for _canon, (_mlir, _bits, _short) in _DTYPES.items():
    _ALIASES[_canon] = _canon
    _ALIASES[_short] = _canon
_ALIASES.update(
    {
        "float": "float32",
        "half": "float16",
        "bf16": "bfloat16",
        "fp32": "float32",
        "fp16": "float16",
        "tf32": "tfloat32",
        "float8e4m3fn": "float8_e4m3fn",
        "float8e5m2": "float8_e5m2",
        "e4m3": "float8_e4m3fn",
        "e5m2": "float8_e5m2",
        "bool": "boolean",
        "int": "int32",
    }
)


def canonical_dtype(dtype: object) -> str:
    """The canonical name ("float32", "bfloat16", ...) of a dtype given by name or by an object's `name`."""
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"dtype must be a type name or an object with a `name`, got {dtype!r}")
    key = name.lower().replace("torch.", "")
    canon = _ALIASES.get(key) or _ALIASES.get(key.replace("_", ""))
    if canon is None:
        raise ValueError(f"dtype {name!r} is not one of {sorted(_DTYPES)}")
    return canon


def dtype_bits(dtype: object) -> int:
    """Bit width of one element of the dtype."""
    return _DTYPES[canonical_dtype(dtype)][1]


def short_name(dtype: object) -> str:
    """Short name of the dtype used in kernel symbols ("f32", "bf16", "i32", ...)."""
    return _DTYPES[canonical_dtype(dtype)][2]


def is_float(dtype: object) -> bool:
    """Whether the dtype is a floating-point type (arithmetic uses arith.addf etc.)."""
    return _DTYPES[canonical_dtype(dtype)][0][0] in "fb"


def element_type(dtype: object) -> object:
    """The MLIR type (in the current Context) of one element of the dtype."""
    from mlir import ir

    return ir.Type.parse(_DTYPES[canonical_dtype(dtype)][0])

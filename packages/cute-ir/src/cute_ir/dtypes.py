"""Element types of the values kernels move: cute-nvarch's numeric types, seen from the IR builders.

A dtype may be given in any spelling cute-nvarch's `numeric_type` reads (`"float32"`, `"f32"`, `"Float32"`,
`torch.float32`'s name, a NumericType). This module does not import MLIR until `element_type` is called.
"""

from __future__ import annotations

from cute_nvarch.numeric import NumericType, numeric_type

__all__ = ["canonical_dtype", "dtype_bits", "element_type", "is_float", "numeric"]


def numeric(dtype: object) -> NumericType:
    """The cute-nvarch NumericType of a dtype; TypeError/ValueError naming the dtype otherwise."""
    try:
        return numeric_type(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a type name or an object with a `name`, got {dtype!r}") from None
    except ValueError as exc:
        raise ValueError(f"dtype {dtype!r}: {exc}") from None


def canonical_dtype(dtype: object) -> str:
    """The canonical name ("float32", "bfloat16", ...) of a dtype."""
    return numeric(dtype).canonical


def dtype_bits(dtype: object) -> int:
    """Bit width of one element of the dtype in memory."""
    return numeric(dtype).width


def is_float(dtype: object) -> bool:
    """Whether the dtype is a floating-point type (arithmetic uses arith.addf etc.)."""
    return numeric(dtype).is_float


def element_type(dtype: object) -> object:
    """The MLIR type (in the current Context) of one element of the dtype in memory."""
    from mlir import ir

    return ir.Type.parse(numeric(dtype).mlir_memory_type)

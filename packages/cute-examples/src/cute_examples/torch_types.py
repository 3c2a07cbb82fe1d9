"""torch's dtypes <-> cute-nvarch's numeric types: the one place the examples map torch tensors to the table."""

from __future__ import annotations

from typing import Any

import torch
from cute_nvarch.numeric import NUMERIC_TYPES, NumericType, numeric_type

__all__ = ["TORCH_DTYPES", "numeric_of", "torch_dtype"]

# torch.dtype -> NumericType, for every numeric type torch has under its canonical name
TORCH_DTYPES: dict[torch.dtype, NumericType] = {
    getattr(torch, t.canonical): t for t in NUMERIC_TYPES if isinstance(getattr(torch, t.canonical, None), torch.dtype)
}
TORCH_DTYPES[torch.bool] = numeric_type("bool")
_BY_TYPE = {t: d for d, t in TORCH_DTYPES.items()}


def numeric_of(dtype: Any) -> NumericType:
    """The NumericType of a torch dtype (or a tensor's dtype); TypeError for a dtype the table lacks."""
    dt = dtype.dtype if isinstance(dtype, torch.Tensor) else dtype
    try:
        return TORCH_DTYPES[dt]
    except (KeyError, TypeError):
        raise TypeError(f"torch dtype {dt} has no cute-nvarch numeric type") from None


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of a numeric type given in any spelling cute-nvarch reads (`"float16"`, `Float16`)."""
    t = numeric_type(dtype)
    try:
        return _BY_TYPE[t]
    except KeyError:
        raise TypeError(f"{t.name} has no torch dtype") from None

"""`elementwise_add(a, b, out=None)` on torch tensors: checks, picks the kernel variant, launches."""

from __future__ import annotations

from typing import Any

import torch

from .._compiled import kernel_for
from ..torch_types import TORCH_DTYPES as _ALL_TORCH_DTYPES
from .kernel import DTYPES, choose_variant, compile_elementwise_add, elementwise_add_spec, grid_for

__all__ = ["TORCH_DTYPES", "elementwise_add", "select_kernel"]

# the torch dtypes the kernel takes -> their canonical names
TORCH_DTYPES = {d: t.canonical for d, t in _ALL_TORCH_DTYPES.items() if t.canonical in DTYPES}
_INT32_LIMIT = 2**31

# key of (dtypes, shapes, strides, devices, pointer alignment) -> launch plan; a hit skips every check but overlap
_plans: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _check_tensor(name: str, t: Any) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 2:
        raise ValueError(f"{name} must be 2-D, got shape {tuple(t.shape)}")
    if t.dtype not in TORCH_DTYPES:
        raise TypeError(f"{name} has dtype {t.dtype}; supported: {', '.join(map(str, TORCH_DTYPES))}")


def _check_out_injective(out: torch.Tensor) -> None:
    modes = sorted((s, e) for s, e in zip(out.stride(), out.shape, strict=True) if e > 1)
    if modes and modes[0][0] == 0:
        raise ValueError(f"out has a stride-0 mode of extent > 1 (strides {out.stride()}): elements would alias")
    if len(modes) == 2 and modes[1][0] < modes[0][0] * modes[0][1]:
        raise ValueError(f"out's strides {out.stride()} for shape {tuple(out.shape)} make elements overlap")


def _max_offset(t: torch.Tensor) -> int:
    m, n = t.shape
    sm, sn = t.stride()
    return (m - 1) * sm + (n - 1) * sn


def _overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    if x.numel() == 0 or y.numel() == 0:
        return False
    x0, y0 = x.data_ptr(), y.data_ptr()
    x1, y1 = x0 + (_max_offset(x) + 1) * x.element_size(), y0 + (_max_offset(y) + 1) * y.element_size()
    return x0 < y1 and y0 < x1


def _check(a: Any, b: Any, out: Any) -> torch.Tensor:
    tensors = {"a": a, "b": b} if out is None else {"a": a, "b": b, "out": out}
    for name, t in tensors.items():
        _check_tensor(name, t)
    for name, t in tensors.items():
        if t.dtype != a.dtype:
            raise TypeError(f"{name} has dtype {t.dtype} but a has {a.dtype}: all tensors must share one dtype")
        if t.shape != a.shape:
            raise ValueError(f"{name} has shape {tuple(t.shape)} but a has {tuple(a.shape)}: shapes must match")
    for name, t in tensors.items():
        if t.device.type != "cuda":
            raise ValueError(f"{name} must be a CUDA tensor, got a tensor on {t.device}")
        if t.device != a.device:
            raise ValueError(f"{name} is on {t.device} but a is on {a.device}: all tensors must share one device")
    if out is None:
        return torch.empty(a.shape, dtype=a.dtype, device=a.device)
    _check_out_injective(out)
    for name, t in (("a", a), ("b", b)):
        if _overlaps(out, t) and (out.data_ptr(), out.stride()) != (t.data_ptr(), t.stride()):
            raise ValueError(f"out partly overlaps {name}: it must be {name} itself or share no memory with it")
    return out


def select_kernel(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> tuple[Any, dict[str, Any]]:
    """The loaded kernel and its spec (built once, here) for these (already checked) tensors."""
    tensors = (a, b, out)
    variant = choose_variant(TORCH_DTYPES[a.dtype], [t.data_ptr() for t in tensors], [t.stride() for t in tensors])
    offset_bits = 32 if max(_max_offset(t) for t in tensors) < _INT32_LIMIT else 64
    spec = elementwise_add_spec(TORCH_DTYPES[a.dtype], variant, offset_bits=offset_bits)
    device = a.device.index if a.device.index is not None else torch.cuda.current_device()
    cc = torch.cuda.get_device_capability(device)
    return kernel_for(spec, lambda target: compile_elementwise_add(spec, target), cc, device=device), spec


def _plan(a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    """Check (a, b, out) fully and return the launch plan that every call with the same key reuses."""
    _check(a, b, out)
    m, n = a.shape
    if m >= _INT32_LIMIT or n >= _INT32_LIMIT:
        raise ValueError(f"shape {(m, n)}: each extent must be below 2**31")
    if m == 0 or n == 0:
        return (None, None, (), 0, 0, 0, False, False)
    kernel, spec = select_kernel(a, b, out)
    spans = [(_max_offset(t) + 1) * t.element_size() for t in (a, b, out)]
    tail = (m, n, *a.stride(), *b.stride(), *out.stride())
    grid = grid_for(spec, m, n)
    launch_grid = grid[0] if grid[1:] == (1, 1) else grid  # an int grid skips the launcher's tuple checks
    return (kernel, launch_grid, tail, *spans, a.stride() == out.stride(), b.stride() == out.stride())


def _key(a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    return (a.dtype, b.dtype, out.dtype, a.shape, b.shape, out.shape, a.stride(), b.stride(), out.stride(),
            a.get_device(), b.get_device(), out.get_device(),
            (a.data_ptr() | b.data_ptr() | out.data_ptr()) & 15)


def elementwise_add(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """C = A + B for 2-D CUDA tensors of one dtype (float32, float16, bfloat16, int32), any shape and strides."""
    if out is None:
        out = _check(a, b, None)
    try:
        key = _key(a, b, out)
        plan = _plans[key]
    except (AttributeError, KeyError, TypeError):
        plan = _plan(a, b, out)  # every check, with errors naming the argument
        if len(_plans) > 4096:
            _plans.clear()
        _plans[_key(a, b, out)] = plan
    kernel, grid, tail, span_a, span_b, span_c, same_a, same_b = plan
    if kernel is None:
        return out
    pa, pb, pc = a.data_ptr(), b.data_ptr(), out.data_ptr()
    # Pointers change from call to call: out must be a or b exactly, or share no memory with them.
    if (pc < pa + span_a and pa < pc + span_c and not (pc == pa and same_a)) or (
        pc < pb + span_b and pb < pc + span_c and not (pc == pb and same_b)
    ):
        _check(a, b, out)  # raises the overlap error
    kernel.launch(grid, a, b, out, *tail)
    return out

"""`elementwise_add(a, b, out=None)` on torch tensors: checks, coalesces the layouts, picks the kernel, launches.

A call's plan depends on the tensors' dtypes, shapes, strides, devices and the alignment class of their
addresses (`address & 15`), which form the key of a dict of plans. A hit costs the key, the lookup, an overlap
test on the three addresses and the kernel's packed launch; a miss checks everything (errors name the argument),
broadcasts a and b to the result's shape, coalesces the three layouts jointly with cute-layout and specializes
`add_kernel` (cute-runtime's JIT: this process, the AOT bundle, or cute-ir's compiler) for the device.

Coalescing: modes of extent 1 drop out and neighbouring modes merge wherever all three tensors' strides allow
(cute-layout's `coalesce` on each); a tensor that is then one unit-stride range in all three runs the 1-D
kernel (128-bit accesses when the three addresses are 16-byte aligned, a predicated tail), whatever N is.
Anything else runs the 2-D kernel on the two remaining modes (vectorized where the strides allow).
"""

from __future__ import annotations

from typing import Any

import torch

from ..torch_types import TORCH_DTYPES as _ALL_TORCH_DTYPES
from ..tracing import compiling as _compiling
from ..tracing import traced_add as _traced_add
from .kernel import DTYPES, add_kernel, grid_for, tile_shape
from .modes import standins

__all__ = [
    "TORCH_DTYPES", "DtypeError", "Plan", "compiled_here", "describe_plan", "elementwise_add", "plan_for", "plans",
]

# the torch dtypes the kernel takes -> their canonical names
TORCH_DTYPES = {d: t.canonical for d, t in _ALL_TORCH_DTYPES.items() if t.canonical in DTYPES}
_PLANS_MAX = 4096
_UNBOUNDED = 1 << 80

# key (dtypes, shapes, strides, devices, alignment class of the three addresses) -> Plan
plans: dict[tuple[Any, ...], Plan] = {}


class DtypeError(TypeError, ValueError):
    """A tensor's dtype is not one the kernel takes, or differs from a's."""


class Plan:
    """What a call with one key launches: the Kernel (None: nothing to do), grid, per-tensor packed values
    after the pointer, the byte spans and in-place flags for the overlap test, and `launch(pa, pb, pc)`."""

    __slots__ = ("grid", "kernel", "launch", "modes", "same_a", "same_b", "span_a", "span_b", "span_c", "spec",
                 "ta", "tb", "tc")

    def __init__(self, kernel: Any = None, spec: Any = None, grid: int = 0, modes: tuple = (),
                 tails: tuple = ((), (), ()), spans: tuple = (0, 0, 0), same: tuple = (False, False)) -> None:
        self.kernel, self.spec, self.grid, self.modes = kernel, spec, grid, modes
        self.ta, self.tb, self.tc = tails
        self.span_a, self.span_b, self.span_c = spans
        self.same_a, self.same_b = same
        self.launch = self._first_launch

    def _first_launch(self, pa: int, pb: int, pc: int) -> None:
        """Launch through the Kernel's checked path (which loads it), then bind the fast launcher."""
        self.kernel.launch(self.grid, pa, *self.ta, pb, *self.tb, pc, *self.tc)
        self.launch = _bound_launcher(self)


def _bound_launcher(plan: Plan) -> Any:
    """launch(pa, pb, pc) for this thread: pack the three addresses and the plan's values into the plan's own
    parameter block and make one driver call on torch's current stream (other threads: the checked path)."""
    import threading

    from cute_runtime import stream as streams
    from cute_runtime.params import ParamBuffer

    kernel, grid, ta, tb, tc = plan.kernel, plan.grid, plan.ta, plan.tb, plan.tc
    params = ParamBuffer(kernel.layout)
    pack_into, buf, base = kernel.layout.struct.pack_into, params.buffer, params.base
    run = kernel.bound_launch(grid, params)
    owner, get_ident, dev = threading.get_ident(), threading.get_ident, kernel.device

    def launch(pa: int, pb: int, pc: int) -> None:
        if get_ident() != owner:
            return kernel.launch(grid, pa, *ta, pb, *tb, pc, *tc)
        pack_into(buf, base, pa, *ta, pb, *tb, pc, *tc)
        run(streams.current(dev))
        return None

    return launch


def _check_tensor(name: str, t: Any) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype not in TORCH_DTYPES:
        raise DtypeError(f"{name} has dtype {t.dtype}; supported: {', '.join(map(str, TORCH_DTYPES))}")


def _result_shape(a: torch.Tensor, b: torch.Tensor) -> tuple[int, ...]:
    try:
        return tuple(torch.broadcast_shapes(a.shape, b.shape))
    except RuntimeError:
        raise ValueError(
            f"b has shape {tuple(b.shape)} but a has {tuple(a.shape)}: the shapes must broadcast"
        ) from None


def _check(a: Any, b: Any, out: Any) -> torch.Tensor:
    """Every check of a call (errors name the argument); returns out, allocated when None."""
    tensors = {"a": a, "b": b} if out is None else {"a": a, "b": b, "out": out}
    for name, t in tensors.items():
        _check_tensor(name, t)
    for name, t in tensors.items():
        if t.dtype != a.dtype:
            raise DtypeError(f"{name} has dtype {t.dtype} but a has {a.dtype}: all tensors must share one dtype")
    shape = _result_shape(a, b)
    if out is not None and tuple(out.shape) != shape:
        raise ValueError(f"out has shape {tuple(out.shape)} but a + b has {shape}")
    for name, t in tensors.items():
        if t.device.type != "cuda":
            raise ValueError(f"{name} must be a CUDA tensor, got a tensor on {t.device}")
        if t.device != a.device:
            raise ValueError(f"{name} is on {t.device} but a is on {a.device}: all tensors must share one device")
    if out is None:
        return torch.empty(shape, dtype=a.dtype, device=a.device)
    _check_out_injective(out)
    for name, t in (("a", a), ("b", b)):
        if _overlaps(out, t) and not _same_view(out, t):
            raise ValueError(f"out partly overlaps {name}: it must be {name} itself or share no memory with it")
    return out


def _check_out_injective(out: torch.Tensor) -> None:
    modes = sorted((abs(s), e) for s, e in zip(out.stride(), out.shape, strict=True) if e > 1)
    if modes and modes[0][0] == 0:
        raise ValueError(f"out has a stride-0 mode of extent > 1 (strides {out.stride()}): elements would alias")
    for (s0, e0), (s1, _) in zip(modes, modes[1:], strict=False):
        if s1 < s0 * e0:
            raise ValueError(f"out's strides {out.stride()} for shape {tuple(out.shape)} make elements overlap")


def _bounds(t: torch.Tensor) -> tuple[int, int]:
    """[first, last] element offsets of t (strides may be negative)."""
    lo = hi = 0
    for e, s in zip(t.shape, t.stride(), strict=True):
        if e > 1:
            lo, hi = (lo + (e - 1) * s, hi) if s < 0 else (lo, hi + (e - 1) * s)
    return lo, hi


def _overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    if x.numel() == 0 or y.numel() == 0:
        return False
    (xl, xh), (yl, yh) = _bounds(x), _bounds(y)
    x0, y0, es = x.data_ptr(), y.data_ptr(), x.element_size()
    return x0 + xl * es < y0 + (yh + 1) * es and y0 + yl * es < x0 + (xh + 1) * es


def _same_view(out: torch.Tensor, t: torch.Tensor) -> bool:
    return out.data_ptr() == t.data_ptr() and tuple(out.shape) == tuple(t.shape) and out.stride() == t.stride()


def _lowbit(x: int) -> int:
    return x & -x if x else 16


def plan_for(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> Plan:
    """Check (a, b, out) fully and return the launch plan every call with the same key reuses."""
    _check(a, b, out)
    shape = tuple(out.shape)
    if out.numel() == 0:
        return Plan()
    ea, eb = a.expand(shape), b.expand(shape)
    dtype = TORCH_DTYPES[a.dtype]
    align = _lowbit((a.data_ptr() | b.data_ptr() | out.data_ptr()) & 15)
    modes, args = standins(dtype, shape, (ea.stride(), eb.stride(), out.stride()), align)
    spec, packed, _ = add_kernel.specialize(*args)
    device = out.get_device()
    kernel = add_kernel.kernel_for(spec, torch.cuda.get_device_capability(device), device)
    ptrs = [i for i, p in enumerate(kernel.entry.params) if p.kind == "ptr"]
    tails = tuple(tuple(packed[i + 1 : j]) for i, j in zip(ptrs, [*ptrs[1:], len(packed)], strict=True))
    bounds = [_bounds(t) for t in (ea, eb, out)]
    if any(lo < 0 for lo, _ in bounds):  # elements before the address: every call runs the full overlap check
        spans, same = [_UNBOUNDED] * 3, (False, False)
    else:  # bytes from the address to past the last element
        spans, same = [(hi + 1) * a.element_size() for _, hi in bounds], (_same_view(out, a), _same_view(out, b))
    return Plan(kernel, spec, grid_for(tile_shape(dtype, len(modes)), modes), modes, tails, tuple(spans), same)


def describe_plan(plan: Plan) -> str:
    """The plan in words: kernel entry, modes, proven alignment of each tensor."""
    if plan.kernel is None:
        return "empty: no launch"
    aligns = "/".join(str(t["align"]) for t in plan.spec["args"] if t["kind"] == "tensor")
    dims = "x".join(map(str, plan.modes))
    return f"{plan.kernel.name}, {len(plan.modes)}-D over {dims}, {aligns}-byte aligned, {plan.grid} CTAs"


def compiled_here(plan: Plan) -> bool:
    """Whether this process compiled the plan's kernel (else cute-ir's disk cache or an AOT bundle served it)."""
    return add_kernel.compiled_here(plan.kernel)


def _key(a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    return (a.dtype, b.dtype, out.dtype, a.shape, b.shape, out.shape, a.stride(), b.stride(), out.stride(),
            a.get_device(), b.get_device(), out.get_device(), (a.data_ptr() | b.data_ptr() | out.data_ptr()) & 15)


def elementwise_add(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """out = a + b for CUDA tensors of one dtype (float32, float16, bfloat16, int32); a and b broadcast as in
    torch; any strides (out may be a or b itself, else must not overlap them). Under torch.compile /
    torch.export it is the operator `torch.ops.cute.elementwise_add` (`elementwise_add_out` with out)."""
    if _compiling():
        return _traced_add(a, b, out)
    if out is None:  # checked with the plan (a miss) or by the key (a hit)
        try:
            shape = a.shape if a.shape == b.shape else _result_shape(a, b)
            out = torch.empty(shape, dtype=a.dtype, device=a.device)
        except (AttributeError, TypeError):
            out = _check(a, b, None)
    try:
        pa, pb, pc = a.data_ptr(), b.data_ptr(), out.data_ptr()
        plan = plans[(a.dtype, b.dtype, out.dtype, a.shape, b.shape, out.shape, a.stride(), b.stride(),
                      out.stride(), a.get_device(), b.get_device(), out.get_device(), (pa | pb | pc) & 15)]
    except (AttributeError, KeyError, TypeError):
        plan = plan_for(a, b, out)  # every check, with errors naming the argument
        if len(plans) >= _PLANS_MAX:
            plans.clear()
        plans[_key(a, b, out)] = plan
        pa, pb, pc = a.data_ptr(), b.data_ptr(), out.data_ptr()
    if plan.kernel is None:
        return out
    # Addresses change from call to call: out must be a or b exactly, or share no memory with them.
    if (pc < pa + plan.span_a and pa < pc + plan.span_c and not (pc == pa and plan.same_a)) or (
        pc < pb + plan.span_b and pb < pc + plan.span_c and not (pc == pb and plan.same_b)
    ):
        _check(a, b, out)  # raises the overlap error
    plan.launch(pa, pb, pc)
    return out

"""cute-ir as the compiler of cute-runtime's JIT kernels (entry point group `cute.compilers`).

    compile_jit(fn, spec, target) -> Artifact     # through the compile cache (`cute_ir.cache.compile_kernel`)

The spec is cute-nvarch's `jit_spec`: its `kernel_params` are the kernel's parameters; each tensor argument
reaches the kernel function as a `cute_ir.tensor.Tensor` (pointer with the proven alignment, layout with
static extents as ints, dynamic extents and strides as `Int` parameters, the unit-stride mode as a static
1, strides known divisible by align // element bytes); each compile-time argument as its value (an int, a
bool, a str, a rebuilt cute_layout Layout / Swizzle / ComposedLayout, or the annotation's frozen dataclass
rebuilt from its fields); each scalar as its kernel parameter (a "tma" one is the by-value descriptor, and
the kernel is finalized as `cute_ir.hopper.finalize_tma_params` does). The function's first argument is a
`JitBuilder`: the KernelBuilder's names plus `shared_memory(bytes)`, `reserve_shared_memory(bytes)`,
`launch_bounds(...)`, `restrict(...)` and `target`.

The compile cache is keyed by the spec (which names the kernel function's source digest), the target, the
tool versions and the source of cute-ir's own modules the build reaches: never the user's other files.
Importing this module imports no MLIR.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any

from cute_nvarch.jit_spec import entry_symbol, kernel_params, tensor_arg, tensor_param_names

from .cache import compile_kernel

__all__ = ["JitBuilder", "compile_jit", "const_value"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .artifact import Artifact
    from .kernel import KernelDef


def _tup(x: Any) -> Any:
    return tuple(_tup(e) for e in x) if isinstance(x, list) else x


def const_value(v: Any, ann: Any = None) -> Any:
    """The Python value of a compile-time argument's spec value (layouts rebuilt with cute_layout, a dataclass
    with `ann`, the parameter's annotation)."""
    if not isinstance(v, dict):
        return v
    if "fields" in v:
        if not isinstance(ann, type):
            raise TypeError(f"a dataclass argument needs its class as the parameter's annotation, got {ann!r}")
        return ann(**{k: _tup(x) for k, x in v["fields"].items()})
    from cute_layout import ComposedLayout, Layout, Swizzle

    tup = _tup
    if "swizzle" in v:
        return Swizzle(*v["swizzle"])
    if "outer" in v:
        return ComposedLayout(const_value(v["outer"]), tup(v["offset"]), const_value(v["inner"]))
    return Layout(tup(v["shape"]), tup(v["stride"]))


class JitBuilder:
    """The kernel builder handed to a JIT kernel function: KernelBuilder's names + `shared_memory`."""

    def __init__(self, builder: Any, kd: KernelDef) -> None:
        self._k = builder
        self._kd = kd
        self._smem_used = 0
        self._smem_base: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._k, name)

    @property
    def target(self) -> str:
        """The compile target's name (e.g. "sm_90a")."""
        return self._kd.target

    def reserve_shared_memory(self, nbytes: int) -> None:
        """Give the kernel nbytes of dynamic shared memory that it lays out itself (from `dynamic_smem()` or
        `cute_ir.hopper.dynamic_smem_base`); not combined with `shared_memory`."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise ValueError(f"reserve_shared_memory: nbytes must be an int >= 0, got {nbytes!r}")
        if self._smem_used:
            raise ValueError("reserve_shared_memory: the kernel already allocates through shared_memory()")
        self._kd.dynamic_smem = nbytes

    def launch_bounds(self, min_blocks_per_sm: int | None = None, max_registers: int | None = None) -> None:
        """The kernel's occupancy hints: at least min_blocks_per_sm resident CTAs (`.minnctapersm`), at most
        max_registers registers per thread (`.maxnreg`)."""
        from mlir import ir

        i32 = ir.IntegerType.get_signless(32)
        for what, v, attr in (("min_blocks_per_sm", min_blocks_per_sm, "nvvm.minctasm"),
                              ("max_registers", max_registers, "nvvm.maxnreg")):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"launch_bounds: {what} must be a positive int, got {v!r}")
            setattr(self._kd, what, v)
            self._k.func.attributes[attr] = ir.IntegerAttr.get(i32, v)

    def restrict(self, *tensors: str, readonly: bool = False) -> None:
        """Promise that these tensor parameters' memory is reached through no other parameter (CUDA's
        `__restrict__`), and with readonly that the kernel only reads it (`const __restrict__`: ld.global.nc)."""
        from mlir import ir

        from .kernel import param_kind

        for name in tensors:
            p = self._k.params.get(name)
            if p is None or p.kind != "ptr":
                raise ValueError(f"restrict: {name!r} is not a tensor parameter of kernel {self._kd.name!r}")
            p.noalias = True
            p.readonly = p.readonly or bool(readonly)
        attrs = [ir.DictAttr.get(param_kind(p.kind).arg_attrs(p)) for p in self._kd.params]
        self._k.func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)

    def shared_memory(self, nbytes: int, align: int = 16) -> Any:
        """A fresh `!llvm.ptr<3>` to nbytes of dynamic shared memory (the kernel's dynamic smem grows)."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise ValueError(f"shared_memory: nbytes must be an int >= 0, got {nbytes!r}")
        if not isinstance(align, int) or align < 1 or align & (align - 1) or align > 16:
            raise ValueError(f"shared_memory: align must be a power of two <= 16, got {align!r}")
        from mlir import ir
        from mlir.dialects import llvm

        if self._smem_base is None:
            self._smem_base = self._k.dynamic_smem()
        offset = -(-self._smem_used // align) * align
        self._smem_used = offset + nbytes
        self._kd.dynamic_smem = self._smem_used
        if offset == 0:
            return self._smem_base
        i8 = ir.IntegerType.get_signless(8)
        return llvm.getelementptr(self._smem_base.type, self._smem_base, [], [offset], i8, llvm.GEPNoWrapFlags.inbounds)


def _divisible(x: Any, divby: int) -> Any:
    return x.assume_divisible(divby) if divby > 1 else x


def _arguments(k: Any, spec: dict[str, Any], annotations: dict[str, Any]) -> list[Any]:
    from cute_layout import Layout

    from .dtypes import dtype_bits
    from .tensor import make_tensor

    out: list[Any] = []
    for d in spec["args"]:
        if d["kind"] == "tensor":
            t = tensor_arg(d)
            extents, strides = tensor_param_names(t)
            dyn_extent = dict(extents)
            dyn_stride = dict(strides)
            nbytes = max(1, dtype_bits(t.dtype) // 8)
            divby = max(1, t.align // nbytes)
            shape = tuple(k.arg(dyn_extent[m]) if e is None else e for m, e in enumerate(t.shape))
            stride = tuple(1 if m == t.unit else _divisible(k.arg(dyn_stride[m]), divby) for m in range(t.rank))
            out.append(make_tensor(k.arg(t.name), Layout(shape, stride), t.dtype, align=max(t.align, 1)))
        elif d["kind"] == "const":
            out.append(const_value(d["value"], annotations.get(d["name"])))
        else:
            out.append(k.arg(d["name"]))
    return out


class _Request:
    """What one build needs (a plain object, so that the cache's source record stops at cute-ir)."""

    __slots__ = ("fn", "spec", "target")

    def __init__(self, fn: Callable[..., Any], spec: dict[str, Any], target: str) -> None:
        self.fn, self.spec, self.target = fn, spec, target


def _build(req: _Request) -> KernelDef:
    from .kernel import KernelDef, Param

    spec = req.spec
    tensors = {d["name"]: tensor_arg(d) for d in spec["args"] if d["kind"] == "tensor"}
    params = []
    for p in kernel_params(spec):
        t = tensors.get(p.name) if p.kind == "ptr" else None
        params.append(Param(p.name, p.kind, dtype=t.dtype, align=t.align) if t is not None else Param(p.name, p.kind))
    tma = any(p.kind == "tma" for p in params)
    if tma:
        from .hopper import tma as hopper_tma  # registers the "tma" parameter kind
    kd = KernelDef(
        entry_symbol(spec), params, block=tuple(spec["block"]), cluster=tuple(spec["cluster"]), target=req.target,
        spec=spec,
    )
    annotations = {n: p.annotation for n, p in inspect.signature(req.fn, eval_str=True).parameters.items()}
    with kd.body() as k:
        jb = JitBuilder(k, kd)
        req.fn(jb, *_arguments(k, spec, annotations))
    if tma:
        hopper_tma.finalize_tma_params(kd)
    return kd


def compile_jit(fn: Callable[..., Any], spec: dict[str, Any], target: str) -> Artifact:
    """The compiled kernel of a JIT specialization for target (from the compile cache, else built)."""
    build = functools.partial(_build, _Request(fn, spec, target))
    return compile_kernel(spec, build, target, sources_of=_loaded_project)


def _loaded_project() -> list[str]:
    """The loaded modules of the packages below cute-runtime (the kernel function's own code is keyed by the
    spec's source digest; the builders it imported, e.g. cute_ir.scalar, key the stored artifact here)."""
    return [m for m in list(sys.modules) if m.split(".")[0] in ("cute_layout", "cute_nvarch", "cute_ir")]

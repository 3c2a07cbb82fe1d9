"""cute_ir: MLIR builders for CuTe kernels, layout algebra on run-time values, stages to PTX/cubin, a cache.

Importing cute_ir (and cute_ir.cache, cute_ir.bundle, cute_ir.config) does not import MLIR; the names that
need MLIR (KernelDef, Param, Int, Bool, Tensor, lower, to_ptx, ...) are loaded on first access, so a warm
cache hit in a new process never imports MLIR.

The builder vocabulary kernels are written in: `Int`, `Bool`, `Tensor`, `const`, `as_value`, `select`,
`min_`, `max_`, `if_`, `if_values`, `for_`, `while_` (no raw `scf` ops needed); special registers and the
dynamic shared-memory base live in `cute_ir.special`.

Modules: values (Int/Bool SSA integers, const/as_value), control (if_/if_values/for_/while_), special
(thread/block/cluster ids, elect, dynamic shared memory), types (integer and pointer types), kernel
(KernelDef/Param/KernelBuilder), algebra (layout algebra on run-time values), tensor (pointer + layout
tensors, fragments, predicated vector copies), math (exp, erf, tanh, sigmoid, ... on float values: libdevice
or PTX approximations), scalar (float arithmetic on f32 values, predicated global loads), stages (lower,
to_ptx, to_cubin, compile), cache (compile_kernel), bundle (write_bundle), hopper (Hopper builders).
"""

from __future__ import annotations

from .__about__ import __version__
from .artifact import Artifact
from .cache import compile_kernel
from .errors import CompileError, CuteIRError

__all__ = [
    "Artifact",
    "Bool",
    "CompileError",
    "CuteIRError",
    "Int",
    "KernelDef",
    "Param",
    "ParamKind",
    "Tensor",
    "__version__",
    "as_value",
    "compile",
    "compile_kernel",
    "const",
    "for_",
    "if_",
    "if_values",
    "lower",
    "max_",
    "min_",
    "register_param_kind",
    "select",
    "to_cubin",
    "to_ptx",
    "while_",
    "write_bundle",
]

_LAZY = {
    "Int": "values",
    "Bool": "values",
    "as_value": "values",
    "const": "values",
    "select": "values",
    "min_": "values",
    "max_": "values",
    "if_": "control",
    "if_values": "control",
    "for_": "control",
    "while_": "control",
    "KernelDef": "kernel",
    "Param": "kernel",
    "ParamKind": "kernel",
    "register_param_kind": "kernel",
    "Tensor": "tensor",
    "compile": "stages",
    "lower": "stages",
    "to_ptx": "stages",
    "to_cubin": "stages",
    "write_bundle": "bundle",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cute_ir' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

"""The compilers of JIT kernels: registered ones first, else the entry points of the group `cute.compilers`.

cute-ir declares its compiler there (`cute_ir.jit:compile_jit`); cute-runtime never imports cute-ir by name.
A compiler is `fn(kernel_fn, spec, target) -> artifact` with `.entry` (KernelEntry), `.cubin`, `.ptx`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import CompilerError

__all__ = ["COMPILER_GROUP", "compiler", "register_compiler"]

COMPILER_GROUP = "cute.compilers"
_compilers: list[Callable[..., Any]] = []


def register_compiler(fn: Callable[..., Any] | None) -> None:
    """Register `fn(kernel_fn, spec, target) -> artifact (.entry, .cubin, .ptx)` first; None clears the list."""
    if fn is None:
        _compilers.clear()
        return
    if not callable(fn):
        raise TypeError(f"register_compiler: expected a callable, got {type(fn).__name__}")
    _compilers.insert(0, fn)


def compiler() -> Callable[..., Any]:
    """The compiler for misses: the registered one, else the first entry point of the group cute.compilers."""
    if not _compilers:
        from importlib.metadata import entry_points

        for ep in entry_points(group=COMPILER_GROUP):
            _compilers.append(ep.load())
    if not _compilers:
        raise CompilerError(
            f"no kernel compiler is installed (entry point group {COMPILER_GROUP!r}): install cute-ir to "
            f"compile JIT kernels, or serve them from an AOT bundle (CUTE_BUNDLE_DIR, cute_runtime.load_bundle)"
        )
    return _compilers[0]

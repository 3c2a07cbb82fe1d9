"""`@kernel`: the decorator of JIT kernels, whose misses look in the AOT bundle of CUTE_BUNDLE_DIR first.

    @cute_runtime.kernel(block=(32, 8))
    def transpose(k, x: Tensor(rank=2), y: Tensor(rank=2), pack: int = 1, swizzle: bool = True): ...

On a miss (a spec not yet loaded in this process) the kernel comes from the bundle named by CUTE_BUNDLE_DIR
when that bundle holds the spec, else from the registered compiler (`cute_runtime.compilers`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import config
from .bundle import Bundle, load_bundle
from .jit import JitKernel
from .kernel import Kernel

__all__ = ["env_bundle", "kernel"]

_bundle: Bundle | None = None


def env_bundle() -> Bundle | None:
    """The bundle of CUTE_BUNDLE_DIR (read and verified once per path), or None when it is unset."""
    global _bundle
    path = config.bundle_dir()
    if path is None:
        return None
    if _bundle is None or str(_bundle.path) != path:
        _bundle = load_bundle(path)
    return _bundle


def _from_env_bundle(spec: dict[str, Any], target: str | tuple[int, int], device: int | None) -> Kernel | None:
    bundle = env_bundle()
    if bundle is None or bundle.find(spec) is None:
        return None
    return bundle.load_kernel(spec, target, device=device)


def kernel(
    fn: Callable[..., Any] | None = None,
    *,
    block: Any = (128, 1, 1),
    cluster: Any = (1, 1, 1),
    name: str | None = None,
    target: str | None = None,
) -> Any:
    """Decorate a kernel function `fn(k, *params)` (see cute_runtime.jit); block and cluster are ints or tuples,
    or callables of the compile-time arguments (by name) that return them; target fixes the compile target."""

    def wrap(f: Callable[..., Any]) -> JitKernel:
        if not callable(f):
            raise TypeError(f"kernel: expected a function, got {type(f).__name__}")
        return JitKernel(f, name=name, block=block, cluster=cluster, target=target, fallback=_from_env_bundle)

    return wrap(fn) if fn is not None else wrap

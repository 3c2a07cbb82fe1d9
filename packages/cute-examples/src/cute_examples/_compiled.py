"""Where an example's compiled kernel comes from: this process, an AOT bundle, cute-ir's cache, or a fresh build.

The order is the cheapest first. A bundle (``--bundle DIR`` or ``CUTE_BUNDLE_DIR``) serves hosts without MLIR; the
compile cache of cute-ir is read without importing MLIR; only a miss everywhere builds IR.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cute_nvarch.kernel_spec import canonical_spec
from cute_nvarch.target import compile_target
from cute_runtime import Kernel, load_bundle
from cute_runtime.config import bundle_dir

__all__ = ["ArtifactBuilder", "compiled_here", "kernel_for", "use_bundle"]

# compile_fn(target) -> cute_ir Artifact; imported lazily by the examples so that a bundle host needs no cute-ir.
ArtifactBuilder = Callable[[str], Any]

_kernels: dict[tuple[str, str, str], Kernel] = {}
_bundle: Any = None
_bundle_path: str | None = None
_compiled_here: set[int] = set()  # ids of the Kernels in _kernels whose artifact this process built


def use_bundle(path: str | None) -> None:
    """Serve kernels from the AOT bundle at path (None: back to CUTE_BUNDLE_DIR, if set)."""
    global _bundle, _bundle_path
    _bundle, _bundle_path = None, path
    _kernels.clear()
    _compiled_here.clear()


def _active_bundle() -> Any:
    global _bundle
    path = _bundle_path or bundle_dir()
    if path is None:
        return None
    if _bundle is None or str(_bundle.path) != str(path):
        _bundle = load_bundle(path)
    return _bundle


def kernel_for(
    spec: dict[str, Any], compile_fn: ArtifactBuilder, cc: tuple[int, int], *, device: int | None = None
) -> Kernel:
    """A Kernel (loaded on first launch) for spec on device `device` of compute capability cc."""
    key = (canonical_spec(spec), f"{cc[0]}.{cc[1]}", str(device))
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    bundle = _active_bundle()
    if bundle is not None:
        kernel = bundle.load_kernel(spec, cc, device=device)
    else:
        art = compile_fn(compile_target(cc).name)
        kernel = Kernel(art.entry, art.cubin, art.ptx, device=device)
        if not getattr(art, "cached", False):
            _compiled_here.add(id(kernel))
    _kernels[key] = kernel
    return kernel


def compiled_here(kernel: Kernel) -> bool:
    """Whether this process compiled the kernel (else it came from cute-ir's disk cache or an AOT bundle, and
    the compile time in its entry is that of an earlier run)."""
    return id(kernel) in _compiled_here

"""Environment settings of cute_ir (the only module that reads the environment).

CUTE_CACHE_DIR  directory of the on-disk compile cache (default: ~/.cache/cute-ir)
CUTE_CACHE      "0" disables the on-disk cache (the in-memory cache stays on)
CUTE_DUMP_DIR   when set, every stage of every kernel compiled is written there
                (<kernel>.mlir, .nvvm.mlir, .ptx, .cubin, .ptxas.txt and .json)
CUTE_PTXAS      path of the ptxas executable (default: the one of the nvidia-cuda-nvcc wheel, else PATH)
CUTE_LIBDEVICE  path of libdevice.10.bc, linked by the accurate `cute_ir.math` functions (default: the one of
                the nvidia-nvvm wheel that nvidia-cuda-nvcc depends on)
"""

from __future__ import annotations

import os

__all__ = ["cache_dir", "cache_enabled", "dump_dir", "libdevice_override", "ptxas_override"]


def cache_dir() -> str:
    """Directory of the on-disk compile cache."""
    d = os.environ.get("CUTE_CACHE_DIR")
    if d:
        return os.path.abspath(os.path.expanduser(d))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cute-ir")


def cache_enabled() -> bool:
    """Whether the on-disk cache is used (CUTE_CACHE != "0")."""
    return os.environ.get("CUTE_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def dump_dir() -> str | None:
    """Directory to dump every compilation stage into, or None."""
    d = os.environ.get("CUTE_DUMP_DIR")
    return os.path.abspath(os.path.expanduser(d)) if d else None


def ptxas_override() -> str | None:
    """Explicit ptxas path from CUTE_PTXAS, or None."""
    return os.environ.get("CUTE_PTXAS") or None


def libdevice_override() -> str | None:
    """Explicit libdevice.10.bc path from CUTE_LIBDEVICE, or None."""
    return os.environ.get("CUTE_LIBDEVICE") or None

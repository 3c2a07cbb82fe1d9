"""Versions that key the compile cache (cute_ir, the MLIR wheel, ptxas, libdevice), found without importing MLIR.

The ptxas version comes from `ptxas --version` once per (path, mtime, size), cached in memory and in the
cache directory, so a warm process never spawns a subprocess.
"""

from __future__ import annotations

import os
import sys

from . import config
from .__about__ import __version__
from .files import atomic_write

__all__ = [
    "cute_ir_version",
    "find_libdevice",
    "find_ptxas",
    "libdevice_version",
    "mlir_version",
    "ptxas_version",
    "versions",
]

_MLIR_DIST = "xtc_mlir_python_bindings-"
_memo: dict[str, object] = {}


def cute_ir_version() -> str:
    """This package's version."""
    return __version__


def mlir_version() -> str:
    """Version of the xtc-mlir-python-bindings wheel (read off its dist-info directory name)."""
    v = _memo.get("mlir")
    if v is None:
        v = _dist_version_fast(_MLIR_DIST, "mlir")
        if v is None:
            import importlib.metadata

            try:
                v = importlib.metadata.version("xtc-mlir-python-bindings")
            except importlib.metadata.PackageNotFoundError:
                v = "unknown"
        _memo["mlir"] = v
    return v  # type: ignore[return-value]


def _dist_version_fast(prefix: str, package_dir: str) -> str | None:
    for entry in sys.path:
        if not entry or not os.path.isdir(os.path.join(entry, package_dir)):
            continue
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(".dist-info"):
                return name[len(prefix) : -len(".dist-info")]
    return None


def find_ptxas() -> str:
    """Path of ptxas: CUTE_PTXAS, else the nvidia-cuda-nvcc wheel's, else the first on PATH."""
    p = _memo.get("ptxas_path")
    if p is not None:
        return p  # type: ignore[return-value]
    p = config.ptxas_override()
    if p is None:
        for entry in sys.path:
            for sub in ("cu13", "cuda_nvcc"):
                cand = os.path.join(entry or ".", "nvidia", sub, "bin", "ptxas")
                if os.path.isfile(cand):
                    p = cand
                    break
            if p is not None:
                break
    if p is None:
        import shutil

        p = shutil.which("ptxas")
    if p is None or not os.path.isfile(p):
        raise FileNotFoundError(
            "ptxas not found: install nvidia-cuda-nvcc==13.0.88 (a dependency of cute-ir) or set CUTE_PTXAS"
        )
    _memo["ptxas_path"] = p
    return p


def ptxas_version(path: str | None = None) -> str:
    """Version of ptxas ("13.0.88"), cached by (path, mtime, size) in memory and on disk."""
    path = path or find_ptxas()
    st = os.stat(path)
    key = f"{path}|{st.st_mtime_ns}|{st.st_size}"
    v = _memo.get(key)
    if v is not None:
        return v  # type: ignore[return-value]
    cache_file = os.path.join(config.cache_dir(), "ptxas-version.json")
    import json

    try:
        with open(cache_file) as f:
            known = json.load(f)
        if not isinstance(known, dict):
            known = {}
    except (OSError, ValueError):
        known = {}
    v = known.get(key)
    if not isinstance(v, str):
        v = _query_ptxas_version(path)
        known[key] = v
        try:
            atomic_write(cache_file, json.dumps(known, sort_keys=True).encode())
        except OSError:
            pass
    _memo[key] = v
    return v


def _query_ptxas_version(path: str) -> str:
    import re
    import subprocess

    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    m = re.search(r"V(\d+\.\d+\.\d+)", out) or re.search(r"release (\d+\.\d+)", out)
    if m is None:
        raise RuntimeError(f"cannot parse the version of {path} from: {out!r}")
    return m.group(1)


def find_libdevice() -> str | None:
    """Path of libdevice.10.bc: CUTE_LIBDEVICE, else the nvidia-nvvm wheel's (nvidia/cu13/nvvm/libdevice); None
    when neither exists."""
    p = config.libdevice_override()
    if p is not None:
        return p if os.path.isfile(p) else None
    if "libdevice_path" not in _memo:
        found = None
        for entry in sys.path:
            cand = os.path.join(entry or ".", "nvidia", "cu13", "nvvm", "libdevice", "libdevice.10.bc")
            if os.path.isfile(cand):
                found = cand
                break
        _memo["libdevice_path"] = found
    return _memo["libdevice_path"]  # type: ignore[return-value]


def libdevice_version(path: str | None = None) -> str:
    """The first 16 hex digits of libdevice.10.bc's sha256 ("none" when it is not installed)."""
    path = path or find_libdevice()
    if path is None:
        return "none"
    st = os.stat(path)
    key = f"libdevice|{path}|{st.st_mtime_ns}|{st.st_size}"
    v = _memo.get(key)
    if v is None:
        import hashlib

        with open(path, "rb") as f:
            v = _memo[key] = hashlib.sha256(f.read()).hexdigest()[:16]
    return v  # type: ignore[return-value]


def versions() -> dict[str, str]:
    """The tool versions recorded in every kernel entry and compile-cache key: cute_ir, mlir (wheel), ptxas,
    libdevice (content hash)."""
    return {
        "cute_ir": cute_ir_version(),
        "mlir": mlir_version(),
        "ptxas": ptxas_version(),
        "libdevice": libdevice_version(),
    }

"""AOT bundle writer (SCHEMA.md): DIR/manifest.json + DIR/<stem>.cubin + DIR/<stem>.ptx per kernel.

    write_bundle("out/bundle", [art1, art2])   # art: cute_ir Artifact (or any object with entry/cubin/ptx)

stem = first 16 hex digits of sha256(canonical spec) + "-" + arch. The whole directory is written into a
temporary sibling and renamed into place (an existing bundle is swapped out, then removed), so a reader sees
the old bundle or the new one, never a mix. cute_runtime.bundle.load_bundle reads it. Imports no MLIR.
"""

from __future__ import annotations

import hashlib
import json
import os

from .cache import atomic_write, canonical_json

__all__ = ["BUNDLE_FORMAT", "BUNDLE_VERSION", "bundle_stem", "write_bundle"]

BUNDLE_FORMAT = "cute-bundle"
BUNDLE_VERSION = 1
_ENTRY_FIELDS = ("spec", "name", "arch", "params", "launch", "resources", "versions")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .artifact import Artifact


def bundle_stem(spec: dict, arch: str) -> str:
    """File stem of a kernel in a bundle: sha256(canonical spec)[:16] + "-" + arch."""
    return hashlib.sha256(canonical_json(spec).encode()).hexdigest()[:16] + "-" + arch


def _check(art: object, i: int) -> tuple[dict, bytes, str]:
    entry = getattr(art, "entry", None)
    cubin = getattr(art, "cubin", None)
    ptx = getattr(art, "ptx", None)
    if not isinstance(entry, dict) or not isinstance(cubin, (bytes, bytearray)) or not isinstance(ptx, str):
        raise TypeError(f"artifacts[{i}] must have entry (dict), cubin (bytes) and ptx (str), got {art!r}")
    missing = [f for f in _ENTRY_FIELDS if f not in entry]
    if missing:
        raise ValueError(f"artifacts[{i}] ({entry.get('name')!r}): entry lacks {missing}")
    return entry, bytes(cubin), ptx


def write_bundle(directory: str | os.PathLike, artifacts: Iterable[Artifact]) -> str:
    """Write an AOT bundle of the artifacts to `directory` atomically; return the manifest path."""
    import shutil

    directory = os.path.abspath(os.fspath(directory))
    arts = list(artifacts)
    if not arts:
        raise ValueError("write_bundle: artifacts must hold at least one compiled kernel")
    kernels = []
    payloads: dict[str, bytes] = {}
    for i, art in enumerate(arts):
        entry, cubin, ptx = _check(art, i)
        stem = bundle_stem(entry["spec"], entry["arch"])
        if stem + ".cubin" in payloads:
            raise ValueError(f"write_bundle: artifacts[{i}] repeats spec and arch of an earlier one ({stem})")
        ptx_bytes = ptx.encode()
        payloads[stem + ".cubin"] = cubin
        payloads[stem + ".ptx"] = ptx_bytes
        k = dict(entry)
        k.update(
            cubin=stem + ".cubin",
            ptx=stem + ".ptx",
            sha256={"cubin": hashlib.sha256(cubin).hexdigest(), "ptx": hashlib.sha256(ptx_bytes).hexdigest()},
        )
        kernels.append(k)
    manifest = {"format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "kernels": kernels}
    parent = os.path.dirname(directory)
    os.makedirs(parent, exist_ok=True)
    tag = f"{os.getpid()}.{os.urandom(4).hex()}"
    tmp = os.path.join(parent, f".{os.path.basename(directory)}.{tag}.tmp")
    os.makedirs(tmp)
    try:
        for name, data in payloads.items():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        atomic_write(
            os.path.join(tmp, "manifest.json"), json.dumps(manifest, indent=1, sort_keys=True).encode()
        )
        if os.path.lexists(directory):
            old = os.path.join(parent, f".{os.path.basename(directory)}.{tag}.old")
            os.rename(directory, old)
            os.rename(tmp, directory)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return os.path.join(directory, "manifest.json")

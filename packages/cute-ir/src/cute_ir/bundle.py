"""AOT bundle writer: DIR/manifest.json + DIR/<stem>.cubin + DIR/<stem>.ptx per kernel.

    write_bundle("out/bundle", [art1, art2])   # art: cute_ir Artifact (or any object with entry/cubin/ptx)
    write_bundle("out/bundle", arts, {"transpose": transpose.signature()})  # + JIT signatures, by name

The manifest format, its keys and the file stems are cute-nvarch's `bundle_format`; this module does the
writing. The whole directory is written into a temporary sibling and renamed into place (an existing bundle
is swapped out, then removed), so a reader sees the old bundle or the new one, never a mix.
cute_runtime.bundle.load_bundle reads it. Imports no MLIR.
"""

from __future__ import annotations

import os

from cute_nvarch.bundle_format import MANIFEST, check_writable, dump_manifest, make_manifest, manifest_kernel
from cute_nvarch.kernel_spec import check_spec

from .files import atomic_write

__all__ = ["write_bundle"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .artifact import Artifact


def write_bundle(
    directory: str | os.PathLike, artifacts: Iterable[Artifact], signatures: dict[str, dict] | None = None
) -> str:
    """Write an AOT bundle of the artifacts (and JIT kernels' signatures, by name) atomically; return the
    manifest path."""
    import shutil

    directory = os.path.abspath(os.fspath(directory))
    arts = list(artifacts)
    if not arts:
        raise ValueError("write_bundle: artifacts must hold at least one compiled kernel")
    kernels = []
    payloads: dict[str, bytes] = {}
    for i, art in enumerate(arts):
        cubin, ptx = getattr(art, "cubin", None), getattr(art, "ptx", None)
        if not isinstance(cubin, (bytes, bytearray)) or not isinstance(ptx, str):
            raise TypeError(
                f"artifacts[{i}] must have entry (KernelEntry), cubin (bytes) and ptx (str), got {art!r}"
            )
        entry = check_writable(getattr(art, "entry", None), f"artifacts[{i}]")
        check_spec(entry.spec)
        kernel, files = manifest_kernel(entry, bytes(cubin), ptx.encode())
        if any(name in payloads for name in files):
            raise ValueError(
                f"write_bundle: artifacts[{i}] repeats spec and arch of an earlier one ({kernel['cubin']})"
            )
        payloads.update(files)
        kernels.append(kernel)
    manifest = make_manifest(kernels, signatures)
    parent = os.path.dirname(directory)
    os.makedirs(parent, exist_ok=True)
    tag = f"{os.getpid()}.{os.urandom(4).hex()}"
    tmp = os.path.join(parent, f".{os.path.basename(directory)}.{tag}.tmp")
    os.makedirs(tmp)
    try:
        for name, data in payloads.items():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        atomic_write(os.path.join(tmp, MANIFEST), dump_manifest(manifest))
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
    return os.path.join(directory, MANIFEST)

"""The AOT bundle manifest format: its name, version, keys, and the checks of its writer and its reader.

A bundle is a directory (or a zip of one) holding `manifest.json` and, per kernel, `<stem>.cubin` and
`<stem>.ptx` (stem: `kernel_spec.file_stem`). The manifest is
`{"format": "cute-bundle", "version": 2, "kernels": [entry + {"cubin", "ptx", "sha256"}, ...],
"signatures": {name: signature}}` where each entry is a `KernelEntry.to_dict()` and each signature is a JIT
kernel's signature and specialization rules (`jit_spec.check_signature`), by kernel name, so that a host without
cute-ir dispatches calls to the bundled specializations. Version 1 (no "signatures") is still read.
cute-ir writes bundles with `manifest_kernel`/`make_manifest`;
cute-runtime reads them with `parse_manifest` and then verifies the payloads' sha256. No I/O here.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from .entry import ENTRY_FIELDS, KernelEntry
from .jit_spec import check_signature
from .kernel_spec import file_stem

__all__ = [
    "FORMAT",
    "MANIFEST",
    "MANIFEST_KEYS",
    "READ_VERSIONS",
    "PAYLOAD_FIELDS",
    "VERSION",
    "ManifestKernel",
    "check_writable",
    "dump_manifest",
    "make_manifest",
    "manifest_kernel",
    "parse_manifest",
]

FORMAT = "cute-bundle"
VERSION = 2
READ_VERSIONS = (1, 2)  # version 1: no "signatures"
MANIFEST = "manifest.json"
# the top-level keys of a manifest, and the keys each kernel adds to its entry
MANIFEST_KEYS = ("format", "version", "kernels", "signatures")
PAYLOAD_FIELDS = ("cubin", "ptx", "sha256")


@dataclass(frozen=True)
class ManifestKernel:
    """One kernel of a parsed manifest: its raw object, typed entry, payload file names and their sha256."""

    raw: dict[str, Any]
    entry: KernelEntry
    cubin: str | None
    ptx: str | None
    sha256: dict[str, Any]


def manifest_kernel(entry: KernelEntry, cubin: bytes, ptx: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest object of one kernel and its payload files {name: bytes}."""
    stem = file_stem(entry.spec, entry.target)
    d = entry.to_dict()
    d.update(
        cubin=stem + ".cubin",
        ptx=stem + ".ptx",
        sha256={"cubin": hashlib.sha256(cubin).hexdigest(), "ptx": hashlib.sha256(ptx).hexdigest()},
    )
    return d, {stem + ".cubin": cubin, stem + ".ptx": ptx}


def make_manifest(kernels: list[dict[str, Any]], signatures: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest object of a bundle of these kernel objects and JIT signatures (by kernel name)."""
    sigs = dict(signatures or {})
    for name, sig in sigs.items():
        check_signature(sig, f"signatures[{name!r}]")
        if sig["name"] != name:
            raise ValueError(f"signatures[{name!r}] names the kernel {sig['name']!r}")
    return dict(zip(MANIFEST_KEYS, (FORMAT, VERSION, list(kernels), sigs), strict=True))


def dump_manifest(manifest: dict[str, Any]) -> bytes:
    """The manifest's bytes on disk."""
    return json.dumps(manifest, indent=1, sort_keys=True).encode()


def _file_name(where: str, name: Any) -> str:
    if (
        not isinstance(name, str)
        or not name
        or "/" in name
        or "\\" in name
        or name in (".", "..")
        or name == MANIFEST
    ):
        raise ValueError(f"{where} {name!r} must be a plain file name inside the bundle")
    return name


def parse_manifest(raw: bytes) -> tuple[dict[str, Any], list[ManifestKernel]]:
    """Check a manifest's bytes (format, version, every entry, file names, no repeats); ValueError naming
    the field otherwise. The payloads themselves are the reader's to load and verify."""
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{MANIFEST} is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise ValueError(f"{MANIFEST} is not a cute bundle (format {found!r}, expected {FORMAT!r})")
    version = manifest.get("version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        raise ValueError(
            f"format version {version!r} is not supported; this reader reads versions "
            f"{', '.join(map(str, READ_VERSIONS))}"
        )
    signatures = manifest.get("signatures", {}) if version >= 2 else {}
    if not isinstance(signatures, dict):
        raise ValueError(f"{MANIFEST} 'signatures' must be an object {{name: signature}}")
    for name, sig in signatures.items():
        check_signature(sig, f"signatures[{name!r}]")
    kernels = manifest.get("kernels")
    if not isinstance(kernels, list):
        raise ValueError(f"{MANIFEST} 'kernels' must be a list")
    out: list[ManifestKernel] = []
    seen: dict[tuple[str, str], int] = {}
    for i, d in enumerate(kernels):
        where = f"kernels[{i}]"
        entry = KernelEntry.from_dict(d, where)
        ident = (entry.key, entry.target)
        if ident in seen:
            raise ValueError(f"{where} repeats the spec and arch of kernels[{seen[ident]}]")
        seen[ident] = i
        sha = d.get("sha256")
        if not isinstance(sha, dict):
            raise ValueError(f"{where}.sha256 must be an object {{'cubin': hex, 'ptx': hex}}")
        cubin, ptx = d.get("cubin"), d.get("ptx")
        if cubin is None and ptx is None:
            raise ValueError(f"{where} names neither a cubin nor a PTX file")
        if cubin is not None:
            cubin = _file_name(f"{where}.cubin", cubin)
        if ptx is not None:
            ptx = _file_name(f"{where}.ptx", ptx)
        out.append(ManifestKernel(d, entry, cubin, ptx, sha))
    return manifest, out


def check_writable(entry: Any, where: str) -> KernelEntry:
    """The KernelEntry a writer may store: every field of ENTRY_FIELDS present (resources and versions)."""
    if not isinstance(entry, KernelEntry):
        raise TypeError(f"{where}: entry must be a KernelEntry, got {type(entry).__name__}")
    missing = [f for f in ("resources", "versions") if not getattr(entry, f)]
    if missing:
        raise ValueError(f"{where} ({entry.name!r}): entry lacks {missing} (of {list(ENTRY_FIELDS)})")
    return entry

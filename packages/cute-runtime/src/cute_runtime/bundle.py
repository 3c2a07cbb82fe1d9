"""AOT bundles: a directory (or a zip of one) with manifest.json, cubins and PTX; read, verified and launched
without cute-ir or MLIR."""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cute_nvarch.bundle_format import MANIFEST, parse_manifest
from cute_nvarch.entry import KernelEntry
from cute_nvarch.jit_spec import spec_without_launch
from cute_nvarch.kernel_spec import canonical_spec
from cute_nvarch.target import compute_capability, cubin_runs_on, device_arch_name, parse_arch, ptx_runs_on

from .__about__ import __version__
from .arch import ptx_entries, ptx_target
from .errors import ArchMismatchError, BundleError, KernelNotFoundError
from .jit import JitKernel
from .kernel import Kernel


@dataclass(frozen=True)
class BundleItem:
    """One kernel of a bundle: its entry dict (as in the manifest), parsed entry and verified payloads."""

    raw: dict[str, Any]
    entry: KernelEntry
    cubin: bytes | None
    ptx: str | None
    ptx_arch: str | None


class _DirReader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, name: str) -> bytes | None:
        p = self.path / name
        return p.read_bytes() if p.is_file() else None


class _ZipReader:
    def __init__(self, path: Path) -> None:
        try:
            self.zf = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise BundleError(f"bundle {path}: not a directory and not a valid zip file ({exc})") from None
        self.names = set(self.zf.namelist())

    def read(self, name: str) -> bytes | None:
        return self.zf.read(name) if name in self.names else None


class Bundle:
    """A verified AOT bundle: find kernels by spec and load them for the live device; `bundle[name]` is a JIT
    kernel's callable, dispatched by its stored signature."""

    def __init__(self, path: Path, manifest: dict[str, Any], items: list[BundleItem]) -> None:
        self.path = path
        self.manifest = manifest
        self.items = items
        self._jit: dict[str, JitKernel] = {}

    @property
    def signatures(self) -> dict[str, dict[str, Any]]:
        """The JIT kernels' signatures, by kernel name (empty for a version-1 bundle)."""
        return dict(self.manifest.get("signatures") or {})

    def __getitem__(self, name: str) -> JitKernel:
        """The JIT kernel `name`, callable as on a host with cute-ir; it dispatches to this bundle's kernels."""
        k = self._jit.get(name)
        if k is None:
            sig = self.signatures.get(name)
            if sig is None:
                raise KernelNotFoundError(
                    f"bundle {self.path}: no JIT kernel {name!r} (it has {sorted(self.signatures) or 'none'})"
                )
            k = self._jit[name] = JitKernel(
                None, signature=sig,
                source=lambda spec, arch, device: self.load_kernel(self._with_launch(spec), arch, device=device),
            )
        return k

    def _with_launch(self, spec: dict[str, Any]) -> dict[str, Any]:
        """A call's spec whose block or cluster is null (derived from compile-time arguments: the signature does
        not hold them) completed from the bundle's kernel that matches it on everything else."""
        if spec.get("block") is not None and spec.get("cluster") is not None:
            return spec
        want = canonical_spec(spec_without_launch(spec))
        for item in self.items:
            if isinstance(item.entry.spec, dict) and canonical_spec(spec_without_launch(item.entry.spec)) == want:
                return item.entry.spec
        return spec

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (item.raw for item in self.items)

    def __repr__(self) -> str:
        return f"Bundle({str(self.path)!r}, {len(self.items)} kernels)"

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The manifest's kernel entries."""
        return [item.raw for item in self.items]

    def _candidates(self, spec: Any) -> list[BundleItem]:
        key = canonical_spec(spec)
        return [item for item in self.items if item.entry.key == key]

    def item(self, spec: Any, arch: str | None = None) -> BundleItem | None:
        """The bundle item for spec: with arch, the one built for exactly that target, else the best one whose
        cubin runs on a device of that arch; without arch, the first one."""
        found = self._candidates(spec)
        if not found:
            return None
        if arch is None:
            return found[0]
        target = parse_arch(arch)
        for item in found:
            if item.entry.target == target.name:
                return item
        runnable = [
            i for i in found if i.cubin is not None and cubin_runs_on(i.entry.target, target.compute_capability)
        ]
        return _best(runnable)

    def find(self, spec: Any, arch: str | None = None) -> dict[str, Any] | None:
        """The manifest entry for spec (see item() for how arch chooses), or None."""
        item = self.item(spec, arch)
        return None if item is None else item.raw

    def select(self, spec: Any, device_arch: str | tuple[int, int]) -> BundleItem:
        """The item to load on a device of that arch: a cubin that runs there, else PTX that JITs there."""
        found = self._candidates(spec)
        if not found:
            raise KernelNotFoundError(
                f"bundle {self.path}: no kernel for spec {canonical_spec(spec)} "
                f"(it holds {len(self.items)} kernels)"
            )
        cc = compute_capability(device_arch)
        by_cubin = [i for i in found if i.cubin is not None and cubin_runs_on(i.entry.target, cc)]
        if by_cubin:
            return _best(by_cubin)
        by_ptx = [i for i in found if i.ptx_arch is not None and ptx_runs_on(i.ptx_arch, cc)]
        if by_ptx:
            return max(by_ptx, key=lambda i: parse_arch(i.ptx_arch or "sm_10").compute_capability)
        have = ", ".join(f"{i.entry.target}" + (f" (PTX {i.ptx_arch})" if i.ptx_arch else "") for i in found)
        raise ArchMismatchError(
            f"bundle {self.path}: kernel {found[0].entry.name!r} was built for {have}; none runs on the "
            f"device "
            f"{device_arch_name(cc)} (compute capability {cc[0]}.{cc[1]})"
        )

    def load_kernel(
        self, spec: Any, device_arch: str | tuple[int, int] | None = None, *, device: int | None = None
    ) -> Kernel:
        """A Kernel for spec that runs on the device (default: the live current device, queried through the
        driver); ArchMismatchError naming both archs when nothing in the bundle runs there."""
        if device_arch is None:
            from .device import device_properties

            device_arch = device_properties(device).compute_capability
        item = self.select(spec, device_arch)
        cc = compute_capability(device_arch)
        cubin = item.cubin if item.cubin is not None and cubin_runs_on(item.entry.target, cc) else None
        return Kernel(item.entry, cubin, item.ptx, device=device)


def _best(items: list[BundleItem]) -> BundleItem | None:
    if not items:
        return None
    # Prefer the most specific target: 'a' targets first, then the highest minor version.
    return max(items, key=lambda i: (parse_arch(i.entry.target).suffix == "a", parse_arch(i.entry.target).minor))


def _read_payload(reader: Any, bundle: str, where: str, name: str, expected: Any) -> bytes:
    data = reader.read(name)
    if data is None:
        raise BundleError(f"bundle {bundle}: {where} names {name!r}, which is missing from the bundle")
    if not isinstance(expected, str) or len(expected) != 64:
        raise BundleError(f"bundle {bundle}: {where} has no valid sha256 for {name!r}")
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected.lower():
        raise BundleError(
            f"bundle {bundle}: {name!r} is corrupt: its sha256 is {actual}, the manifest says {expected}"
        )
    return data


def load_bundle(path: str | Path) -> Bundle:
    """Read and verify a bundle directory (or a zip of one): format, version, entries, payload sha256."""
    p = Path(path)
    if p.is_dir():
        reader: Any = _DirReader(p)
    elif p.is_file():
        reader = _ZipReader(p)
    else:
        raise BundleError(f"bundle {p}: no such directory or file")
    bundle = str(p)
    raw = reader.read(MANIFEST)
    if raw is None:
        raise BundleError(f"bundle {bundle}: {MANIFEST} is missing")
    try:
        manifest, kernels = parse_manifest(raw)
    except ValueError as exc:
        raise BundleError(f"bundle {bundle}: {exc} (cute-runtime {__version__})") from None
    items: list[BundleItem] = []
    for i, k in enumerate(kernels):
        where = f"kernels[{i}]"
        entry, sha = k.entry, k.sha256
        cubin = ptx = ptx_arch = None
        if k.cubin is not None:
            cubin = _read_payload(reader, bundle, where, k.cubin, sha.get("cubin"))
        if k.ptx is not None:
            data = _read_payload(reader, bundle, where, k.ptx, sha.get("ptx"))
            try:
                ptx = data.decode("utf-8")
                ptx_arch = ptx_target(ptx)
            except (UnicodeDecodeError, ValueError) as exc:
                raise BundleError(f"bundle {bundle}: {k.ptx!r} is not PTX text ({exc})") from None
            if entry.name not in ptx_entries(ptx):
                raise BundleError(f"bundle {bundle}: {k.ptx!r} declares no `.entry {entry.name}` ({where}.name)")
        items.append(BundleItem(k.raw, entry, cubin, ptx, ptx_arch))
    return Bundle(p, manifest, items)

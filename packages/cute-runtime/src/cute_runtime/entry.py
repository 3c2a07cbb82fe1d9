"""A compiled kernel's entry (the JSON-able dict shared with cute-ir) and its spec's canonical key."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .arch import parse_arch
from .params import Param, parse_params

_SYMBOL_RE = re.compile(r"^[A-Za-z_$][\w$]*$")


def canonical_spec(spec: Any) -> str:
    """The canonical JSON text of a kernel spec, which identifies the kernel."""
    try:
        return json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"spec must be JSON-able (str/int/float/bool/list/dict): {exc}") from None


def spec_digest(spec: Any) -> str:
    """The sha256 hex digest of the spec's canonical JSON text."""
    return hashlib.sha256(canonical_spec(spec).encode()).hexdigest()


def file_stem(spec: Any, arch: str) -> str:
    """The bundle file stem of a kernel: first 16 hex digits of its spec digest, '-', its arch."""
    return f"{spec_digest(spec)[:16]}-{parse_arch(arch).name}"


def _dim3(value: Any, where: str) -> tuple[int, int, int]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ValueError(f"{where} must be a list of 3 ints, got {value!r}")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{where} must be 3 ints >= 1, got {value!r}")
    return (value[0], value[1], value[2])


@dataclass(frozen=True)
class KernelEntry:
    """One compiled kernel: entry symbol, target, parameter signature and launch rules."""

    name: str
    arch: str
    params: tuple[Param, ...]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] = (1, 1, 1)
    dynamic_smem: int = 0
    spec: Any = field(default=None, compare=False)
    resources: dict[str, Any] = field(default_factory=dict, compare=False)
    versions: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        """The canonical JSON text of the spec."""
        return canonical_spec(self.spec)

    @property
    def is_cluster_launch(self) -> bool:
        """Whether the kernel launches with thread-block clusters larger than one block."""
        return self.cluster != (1, 1, 1)

    @classmethod
    def from_dict(cls, d: Any, where: str = "entry") -> KernelEntry:
        """Validate an entry dict (see docs/bundle.md); ValueError naming the offending field."""
        if not isinstance(d, dict):
            raise ValueError(f"{where} must be an object, got {type(d).__name__}")
        for key in ("name", "arch", "params", "launch"):
            if key not in d:
                raise ValueError(f"{where} lacks the required field {key!r}")
        name = d["name"]
        if not isinstance(name, str) or not _SYMBOL_RE.match(name):
            raise ValueError(f"{where}.name {name!r} is not a valid kernel symbol")
        arch = d["arch"]
        try:
            arch = parse_arch(arch).name
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}.arch: {exc}") from None
        params = parse_params(d["params"], f"{where}.params")
        launch = d["launch"]
        if not isinstance(launch, dict):
            raise ValueError(f"{where}.launch must be an object, got {type(launch).__name__}")
        if "block" not in launch:
            raise ValueError(f"{where}.launch lacks the required field 'block'")
        block = _dim3(launch["block"], f"{where}.launch.block")
        if block[0] * block[1] * block[2] > 1024:
            raise ValueError(f"{where}.launch.block {list(block)} has more than 1024 threads")
        cluster = _dim3(launch.get("cluster", [1, 1, 1]), f"{where}.launch.cluster")
        smem = launch.get("dynamic_smem", 0)
        if isinstance(smem, bool) or not isinstance(smem, int) or smem < 0:
            raise ValueError(f"{where}.launch.dynamic_smem must be an int >= 0, got {smem!r}")
        spec = d.get("spec")
        canonical_spec(spec)
        resources = d.get("resources", {})
        versions = d.get("versions", {})
        for key, value in (("resources", resources), ("versions", versions)):
            if not isinstance(value, dict):
                raise ValueError(f"{where}.{key} must be an object, got {type(value).__name__}")
        return cls(name, arch, params, block, cluster, smem, spec, dict(resources), dict(versions))

    def to_dict(self) -> dict[str, Any]:
        """The entry as the JSON-able dict of the interface."""
        return {
            "spec": self.spec,
            "name": self.name,
            "arch": self.arch,
            "params": [{"name": p.name, "kind": p.kind} for p in self.params],
            "launch": {
                "block": list(self.block),
                "cluster": list(self.cluster),
                "dynamic_smem": self.dynamic_smem,
            },
            "resources": dict(self.resources),
            "versions": dict(self.versions),
        }

"""The typed kernel entry: everything a launcher needs to know about one compiled kernel.

cute-ir produces a `KernelEntry` when it compiles; cute-runtime launches from one; bundles and the compile
cache store it as the JSON object `to_dict` gives (`from_dict` reads it back, checking every field).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from .kernel_spec import canonical_spec
from .params import Param, parse_params
from .target import parse_arch

__all__ = ["ENTRY_FIELDS", "KernelEntry", "Launch"]

# the fields of an entry's JSON object, in order (bundle manifests and cache records hold all of them)
ENTRY_FIELDS = ("spec", "name", "arch", "params", "launch", "resources", "versions")
_SYMBOL_RE = re.compile(r"^[A-Za-z_$][\w$]*$")
MAX_THREADS_PER_BLOCK = 1024


def _dim3(value: Any, where: str) -> tuple[int, int, int]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ValueError(f"{where} must be a list of 3 ints, got {value!r}")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{where} must be 3 ints >= 1, got {value!r}")
    return (value[0], value[1], value[2])


@dataclass(frozen=True)
class Launch:
    """How a kernel launches: block shape, cluster shape, dynamic shared memory bytes."""

    block: tuple[int, int, int]
    cluster: tuple[int, int, int] = (1, 1, 1)
    dynamic_smem: int = 0

    @property
    def num_threads(self) -> int:
        """Threads per block."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def is_cluster_launch(self) -> bool:
        """Whether the kernel launches with thread-block clusters larger than one block."""
        return self.cluster != (1, 1, 1)

    @classmethod
    def from_dict(cls, launch: Any, where: str = "launch") -> Launch:
        """Validate a launch object ({"block": [x, y, z], "cluster": [...], "dynamic_smem": n})."""
        if not isinstance(launch, dict):
            raise ValueError(f"{where} must be an object, got {type(launch).__name__}")
        if "block" not in launch:
            raise ValueError(f"{where} lacks the required field 'block'")
        block = _dim3(launch["block"], f"{where}.block")
        if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK:
            raise ValueError(f"{where}.block {list(block)} has more than {MAX_THREADS_PER_BLOCK} threads")
        cluster = _dim3(launch.get("cluster", [1, 1, 1]), f"{where}.cluster")
        smem = launch.get("dynamic_smem", 0)
        if isinstance(smem, bool) or not isinstance(smem, int) or smem < 0:
            raise ValueError(f"{where}.dynamic_smem must be an int >= 0, got {smem!r}")
        return cls(block, cluster, smem)

    def to_dict(self) -> dict[str, Any]:
        """The launch as a JSON-able object."""
        return {"block": list(self.block), "cluster": list(self.cluster), "dynamic_smem": self.dynamic_smem}


@dataclass(frozen=True)
class KernelEntry:
    """One compiled kernel: entry symbol, target name, parameter signature, launch, spec, resources."""

    name: str
    target: str
    params: tuple[Param, ...]
    launch: Launch
    spec: Any = field(default=None, compare=False)
    resources: dict[str, Any] = field(default_factory=dict, compare=False)
    versions: dict[str, Any] = field(default_factory=dict, compare=False)

    @functools.cached_property
    def key(self) -> str:
        """The canonical JSON text of the spec (computed once per entry)."""
        return canonical_spec(self.spec)

    def with_build(self, resources: dict[str, Any], versions: dict[str, Any]) -> KernelEntry:
        """This entry with what compiling it reported: ptxas resources and tool versions."""
        return KernelEntry(self.name, self.target, self.params, self.launch, self.spec, resources, versions)

    @classmethod
    def from_dict(cls, d: Any, where: str = "entry") -> KernelEntry:
        """Validate an entry object (see docs/bundle.md); ValueError naming the offending field."""
        if not isinstance(d, dict):
            raise ValueError(f"{where} must be an object, got {type(d).__name__}")
        for key in ("name", "arch", "params", "launch"):
            if key not in d:
                raise ValueError(f"{where} lacks the required field {key!r}")
        name = d["name"]
        if not isinstance(name, str) or not _SYMBOL_RE.match(name):
            raise ValueError(f"{where}.name {name!r} is not a valid kernel symbol")
        try:
            target = parse_arch(d["arch"]).name
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}.arch: {exc}") from None
        params = parse_params(d["params"], f"{where}.params")
        launch = Launch.from_dict(d["launch"], f"{where}.launch")
        spec = d.get("spec")
        canonical_spec(spec)
        resources = d.get("resources", {})
        versions = d.get("versions", {})
        for key, value in (("resources", resources), ("versions", versions)):
            if not isinstance(value, dict):
                raise ValueError(f"{where}.{key} must be an object, got {type(value).__name__}")
        return cls(name, target, params, launch, spec, dict(resources), dict(versions))

    def to_dict(self) -> dict[str, Any]:
        """The entry as the JSON-able object of bundles and the compile cache (keys: ENTRY_FIELDS)."""
        return {
            "spec": self.spec,
            "name": self.name,
            "arch": self.target,
            "params": [{"name": p.name, "kind": p.kind} for p in self.params],
            "launch": self.launch.to_dict(),
            "resources": dict(self.resources),
            "versions": dict(self.versions),
        }

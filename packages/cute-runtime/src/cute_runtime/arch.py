"""What a PTX text declares (target, ISA version, entries); the target-name rules are cute-nvarch's."""

from __future__ import annotations

import re

from cute_nvarch.target import (
    Arch,
    compute_capability,
    cubin_runs_on,
    device_arch_name,
    parse_arch,
    ptx_runs_on,
)

__all__ = [
    "Arch",
    "compute_capability",
    "cubin_runs_on",
    "device_arch_name",
    "parse_arch",
    "ptx_entries",
    "ptx_runs_on",
    "ptx_target",
    "ptx_version",
]

_TARGET_RE = re.compile(r"^\s*\.target\s+([^\s,/]+)", re.MULTILINE)
_VERSION_RE = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)", re.MULTILINE)
_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$%][\w$%]*)\s*\(")


def ptx_target(ptx: str) -> str:
    """The target named by the PTX text's `.target` directive, e.g. 'sm_90a'."""
    m = _TARGET_RE.search(ptx)
    if m is None:
        raise ValueError("ptx has no `.target sm_XY` directive")
    target = m.group(1)
    parse_arch(target)
    return target


def ptx_version(ptx: str) -> tuple[int, int]:
    """The PTX ISA version named by the PTX text's `.version` directive, e.g. (8, 0)."""
    m = _VERSION_RE.search(ptx)
    if m is None:
        raise ValueError("ptx has no `.version X.Y` directive")
    return (int(m.group(1)), int(m.group(2)))


def ptx_entries(ptx: str) -> list[str]:
    """The names of the kernel entry points (`.entry NAME(`) declared in the PTX text."""
    return _ENTRY_RE.findall(ptx)

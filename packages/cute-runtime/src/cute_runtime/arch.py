"""GPU targets (sm_XY, sm_XYa, sm_XYf) and the rules for which cubin or PTX runs on which device."""

from __future__ import annotations

import re
from dataclasses import dataclass

_ARCH_RE = re.compile(r"^sm_(\d{2,3})([af]?)$")
_TARGET_RE = re.compile(r"^\s*\.target\s+([^\s,/]+)", re.MULTILINE)
_VERSION_RE = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)", re.MULTILINE)
_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$%][\w$%]*)\s*\(")


@dataclass(frozen=True)
class Arch:
    """A compilation target: compute capability major.minor and an optional 'a' or 'f' suffix."""

    major: int
    minor: int
    suffix: str = ""

    @property
    def name(self) -> str:
        """The target's name, e.g. 'sm_90a'."""
        return f"sm_{self.major}{self.minor}{self.suffix}"

    @property
    def compute_capability(self) -> tuple[int, int]:
        """The (major, minor) compute capability the target names."""
        return (self.major, self.minor)

    def __str__(self) -> str:
        return self.name


def parse_arch(arch: str | Arch) -> Arch:
    """Parse a target name such as 'sm_80', 'sm_90a' or 'sm_100f'."""
    if isinstance(arch, Arch):
        return arch
    if not isinstance(arch, str):
        raise TypeError(f"arch must be a str such as 'sm_90a', got {type(arch).__name__}")
    m = _ARCH_RE.match(arch.strip())
    if m is None:
        raise ValueError(f"arch {arch!r} is not a GPU target name of the form sm_XY, sm_XYa or sm_XYf")
    digits, suffix = m.groups()
    return Arch(int(digits[:-1]), int(digits[-1]), suffix)


def compute_capability(device: str | Arch | tuple[int, int]) -> tuple[int, int]:
    """The (major, minor) compute capability of a device given as (9, 0), '9.0', 'sm_90' or 'sm_90a'."""
    if isinstance(device, Arch):
        return device.compute_capability
    if isinstance(device, tuple):
        if len(device) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in device
        ):
            raise ValueError(f"compute capability {device!r} must be a (major, minor) pair of ints >= 0")
        return (device[0], device[1])
    if isinstance(device, str):
        text = device.strip()
        m = re.match(r"^(\d+)\.(\d)$", text)
        if m:
            return (int(m.group(1)), int(m.group(2)))
        return parse_arch(text).compute_capability
    raise TypeError(
        f"device arch must be a (major, minor) tuple or a str such as 'sm_90', got {type(device).__name__}"
    )


def device_arch_name(cc: tuple[int, int]) -> str:
    """The plain target name of a device of compute capability cc, e.g. (9, 0) -> 'sm_90'."""
    major, minor = compute_capability(cc)
    return f"sm_{major}{minor}"


def cubin_runs_on(arch: str | Arch, device: str | Arch | tuple[int, int]) -> bool:
    """Whether a cubin built for arch loads on the device.

    sm_XY and sm_XYf: same major and minor >= Y; sm_XYa: exactly compute capability X.Y.
    """
    a = parse_arch(arch)
    major, minor = compute_capability(device)
    if a.suffix == "a":
        return (major, minor) == (a.major, a.minor)
    return major == a.major and minor >= a.minor


def ptx_runs_on(arch: str | Arch, device: str | Arch | tuple[int, int]) -> bool:
    """Whether PTX for target arch can be JIT-compiled for the device.

    sm_XY: any device of compute capability >= X.Y; sm_XYa: exactly X.Y; sm_XYf: major X with minor >= Y.
    """
    a = parse_arch(arch)
    cc = compute_capability(device)
    if a.suffix == "a":
        return cc == (a.major, a.minor)
    if a.suffix == "f":
        return cc[0] == a.major and cc[1] >= a.minor
    return cc >= (a.major, a.minor)


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

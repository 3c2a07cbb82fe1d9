"""Compilation targets: the rules of target names (sm_XY, sm_XYa, sm_XYf: which cubin or PTX runs on which
device), and sm_80, sm_89 and sm_90a with their documented limits, as data.

This module owns the mapping compute capability -> compile target -> PTX ISA version (`compile_target`,
`Target.ptx_isa`); cute-ir compiles for a `Target`, cute-runtime checks images against the name rules.

The figures are the CUDA programming guide's per-compute-capability limits; reading them off a live
device is cute-runtime's job. Shared-memory figures are bytes: `smem_per_block` is the opt-in maximum
of dynamic shared memory one block may request (above the 48 KiB static limit), `smem_per_sm` the
capacity the SM's blocks share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Arch",
    "Target",
    "SM80",
    "SM89",
    "SM90A",
    "TARGETS",
    "compile_target",
    "compute_capability",
    "cubin_runs_on",
    "device_arch_name",
    "get_target",
    "parse_arch",
    "ptx_runs_on",
]

_ARCH_RE = re.compile(r"^sm_(\d{2,3})([af]?)$")


@dataclass(frozen=True)
class Arch:
    """A target name: compute capability major.minor and an optional 'a' or 'f' suffix."""

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


@dataclass(frozen=True)
class Target:
    """One GPU target.

    Fields:
      name: the `-arch` spelling (`"sm_90a"`), as ptxas and NVVM's chip take it.
      compute_capability: (major, minor).
      ptx_isa_floor: the lowest PTX ISA version (major, minor) that can target it.
      ptx_isa: the PTX ISA version kernels for it are emitted with (>= the floor; 8.0, which every
        instruction the kernels here use exists in).
      smem_per_block: opt-in maximum dynamic shared memory per block, bytes.
      smem_per_block_static: shared memory a block gets without opting in, bytes.
      smem_per_sm: shared memory per SM, bytes.
      registers_per_sm: 32-bit registers per SM.
      registers_per_block: 32-bit registers one block may use.
      registers_per_thread: registers one thread may use.
      max_threads_per_block, max_threads_per_sm, max_blocks_per_sm, warp_size: thread limits.
      cluster_support: thread-block clusters (with distributed shared memory).
      max_cluster_size: largest portable cluster (CTAs), 1 without cluster support.
      max_cluster_size_nonportable: largest cluster with the non-portable opt-in.
      has_cp_async, has_ldmatrix, has_stmatrix, has_mma_sync, has_fp8_mma, has_wgmma, has_tma: features.
    """

    name: str
    compute_capability: tuple[int, int]
    ptx_isa_floor: tuple[int, int]
    ptx_isa: tuple[int, int]
    smem_per_block: int
    smem_per_block_static: int
    smem_per_sm: int
    registers_per_sm: int
    registers_per_block: int
    registers_per_thread: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    warp_size: int
    cluster_support: bool
    max_cluster_size: int
    max_cluster_size_nonportable: int
    has_cp_async: bool
    has_ldmatrix: bool
    has_stmatrix: bool
    has_mma_sync: bool
    has_fp8_mma: bool
    has_wgmma: bool
    has_tma: bool

    @property
    def ptx_version(self) -> str:
        """PTX `.version` directive value kernels are emitted with (`"8.0"`)."""
        return f"{self.ptx_isa[0]}.{self.ptx_isa[1]}"

    @property
    def ptx_features(self) -> str:
        """NVVM target feature string of the emitted PTX ISA (`"+ptx80"`)."""
        return f"+ptx{self.ptx_isa[0]}{self.ptx_isa[1]}"

    def __str__(self) -> str:
        return self.name


_KIB = 1024

SM80 = Target(
    name="sm_80",
    compute_capability=(8, 0),
    ptx_isa_floor=(7, 0),
    ptx_isa=(8, 0),
    smem_per_block=163 * _KIB,
    smem_per_block_static=48 * _KIB,
    smem_per_sm=164 * _KIB,
    registers_per_sm=65536,
    registers_per_block=65536,
    registers_per_thread=255,
    max_threads_per_block=1024,
    max_threads_per_sm=2048,
    max_blocks_per_sm=32,
    warp_size=32,
    cluster_support=False,
    max_cluster_size=1,
    max_cluster_size_nonportable=1,
    has_cp_async=True,
    has_ldmatrix=True,
    has_stmatrix=False,
    has_mma_sync=True,
    has_fp8_mma=False,
    has_wgmma=False,
    has_tma=False,
)

SM89 = Target(
    name="sm_89",
    compute_capability=(8, 9),
    ptx_isa_floor=(7, 8),
    ptx_isa=(8, 0),
    smem_per_block=99 * _KIB,
    smem_per_block_static=48 * _KIB,
    smem_per_sm=100 * _KIB,
    registers_per_sm=65536,
    registers_per_block=65536,
    registers_per_thread=255,
    max_threads_per_block=1024,
    max_threads_per_sm=1536,
    max_blocks_per_sm=24,
    warp_size=32,
    cluster_support=False,
    max_cluster_size=1,
    max_cluster_size_nonportable=1,
    has_cp_async=True,
    has_ldmatrix=True,
    has_stmatrix=False,
    has_mma_sync=True,
    has_fp8_mma=True,
    has_wgmma=False,
    has_tma=False,
)

SM90A = Target(
    name="sm_90a",
    compute_capability=(9, 0),
    ptx_isa_floor=(8, 0),
    ptx_isa=(8, 0),
    smem_per_block=227 * _KIB,
    smem_per_block_static=48 * _KIB,
    smem_per_sm=228 * _KIB,
    registers_per_sm=65536,
    registers_per_block=65536,
    registers_per_thread=255,
    max_threads_per_block=1024,
    max_threads_per_sm=2048,
    max_blocks_per_sm=32,
    warp_size=32,
    cluster_support=True,
    max_cluster_size=8,
    max_cluster_size_nonportable=16,
    has_cp_async=True,
    has_ldmatrix=True,
    has_stmatrix=True,
    has_mma_sync=True,
    has_fp8_mma=True,
    has_wgmma=True,
    has_tma=True,
)

TARGETS: dict[str, Target] = {t.name: t for t in (SM80, SM89, SM90A)}


def get_target(name: str | tuple[int, int] | Target) -> Target:
    """The Target for `"sm_90a"`, `"sm_90"`, `"90a"`, `(9, 0)` and the like."""
    if isinstance(name, Target):
        return name
    if isinstance(name, tuple):
        if len(name) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in name):
            raise TypeError(f"get_target: a compute capability must be (major, minor) ints, got {name!r}")
        for t in TARGETS.values():
            if t.compute_capability == name:
                return t
        raise ValueError(f"get_target: no target for compute capability {name}; known: {sorted(TARGETS)}")
    if not isinstance(name, str):
        raise TypeError(
            f"get_target: name must be a str, (major, minor) or Target, got {type(name).__name__}"
        )
    key = name.strip().lower()
    if not key.startswith("sm_"):
        key = "sm_" + key.removeprefix("sm")
    if key == "sm_90":
        key = "sm_90a"
    try:
        return TARGETS[key]
    except KeyError:
        raise ValueError(f"get_target: unknown target {name!r}; known: {sorted(TARGETS)}") from None


def compile_target(cc: tuple[int, int]) -> Target:
    """The Target to compile for a device of compute capability cc: the newest whose cubin runs there (Hopper
    gets its arch-specific sm_90a), else the oldest whose PTX the driver JIT-compiles there."""
    major, minor = compute_capability(cc)
    by_cubin = [t for t in TARGETS.values() if cubin_runs_on(t.name, (major, minor))]
    if by_cubin:
        return max(by_cubin, key=lambda t: t.compute_capability)
    by_ptx = [t for t in TARGETS.values() if ptx_runs_on(t.name, (major, minor))]
    if by_ptx:
        return min(by_ptx, key=lambda t: t.compute_capability)
    raise ValueError(
        f"device of compute capability {major}.{minor}: the kernels need one of {sorted(TARGETS)} (sm_80 or newer)"
    )

"""Compilation targets sm_80, sm_89 and sm_90a with their documented limits, as data.

The figures are the CUDA programming guide's per-compute-capability limits; reading them off a live
device is cute-runtime's job. Shared-memory figures are bytes: `smem_per_block` is the opt-in maximum
of dynamic shared memory one block may request (above the 48 KiB static limit), `smem_per_sm` the
capacity the SM's blocks share.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Target", "SM80", "SM89", "SM90A", "TARGETS", "get_target"]


@dataclass(frozen=True)
class Target:
    """One GPU target.

    Fields:
      name: the `-arch` spelling (`"sm_90a"`), as ptxas and NVVM's chip take it.
      compute_capability: (major, minor).
      ptx_isa_floor: the lowest PTX ISA version (major, minor) that can target it.
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
        """PTX `.version` directive value of the ISA floor (`"8.0"`)."""
        return f"{self.ptx_isa_floor[0]}.{self.ptx_isa_floor[1]}"

    @property
    def ptx_features(self) -> str:
        """NVVM target feature string for the ISA floor (`"+ptx80"`)."""
        return f"+ptx{self.ptx_isa_floor[0]}{self.ptx_isa_floor[1]}"

    def __str__(self) -> str:
        return self.name


_KIB = 1024

SM80 = Target(
    name="sm_80",
    compute_capability=(8, 0),
    ptx_isa_floor=(7, 0),
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

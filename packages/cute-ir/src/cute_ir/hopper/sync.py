"""Synchronization builders for Hopper: named barriers, cluster barriers, proxy fences, elect.

Each function emits `nvvm` ops at the caller's insertion point.

- Named barriers (`bar.sync id, n` / `bar.arrive id, n`): ids 1..15 are free for kernels (id 0 is
  `__syncthreads`); `n` counts threads and must be a multiple of 32.
- `fence_proxy_async_shared()`: `fence.proxy.async.shared::cta`, needed by every thread that wrote
  shared memory with ordinary stores (st.shared, stmatrix) before a barrier after which TMA or
  WGMMA (the async proxy) reads that memory.
- Programmatic dependent launch: `grid_dependency_wait()` (`griddepcontrol.wait`: until the grids this one
  depends on have completed and their memory is visible; a no-op for a launch without that dependency) and
  `launch_dependents()` (`griddepcontrol.launch_dependents`: once every CTA ran it, a grid launched after this
  one with programmatic stream serialization may start).
- Cluster barriers: `cluster_arrive(relaxed=...)` / `cluster_wait()` (`barrier.cluster.*.aligned`),
  and `cluster_sync()`; `fence_mbarrier_init()` (`fence.mbarrier_init.release.cluster`) makes
  mbarrier initialisation visible to the other CTAs of the cluster before a cluster barrier.
- Identity (re-exported from `cute_ir.special`, their one definition; `cluster_cta_rank`,
  `block_in_cluster` and `cluster_id` are its `cluster_ctarank`, `block_idx_in_cluster`, `cluster_idx`):
  `thread_idx`, `warp_idx(uniform=True)`, `lane_idx`, `elect_one`, ... as `Int`s (`elect_one`: a `Bool`).
"""

from __future__ import annotations

from mlir.dialects import nvvm

from ..special import (
    block_dim,
    block_idx,
    cluster_dim,
    elect_one,
    grid_dim,
    lane_idx,
    num_clusters,
    thread_idx,
    warp_idx,
)
from ..special import block_idx_in_cluster as block_in_cluster
from ..special import cluster_ctarank as cluster_cta_rank
from ..special import cluster_idx as cluster_id
from ..types import I32
from ..values import Int, as_value

__all__ = [
    "MAX_NAMED_BARRIER_ID",
    "block_dim",
    "block_idx",
    "block_in_cluster",
    "cluster_arrive",
    "cluster_cta_rank",
    "cluster_dim",
    "cluster_id",
    "cluster_sync",
    "cluster_wait",
    "elect_one",
    "fence_mbarrier_init",
    "fence_proxy_async_shared",
    "grid_dependency_wait",
    "grid_dim",
    "lane_idx",
    "launch_dependents",
    "named_barrier_arrive",
    "named_barrier_sync",
    "num_clusters",
    "thread_idx",
    "warp_idx",
]

MAX_NAMED_BARRIER_ID = 15


def _check_barrier(barrier_id: int | Int, num_threads: int) -> None:
    if isinstance(barrier_id, int) and not 0 <= barrier_id <= MAX_NAMED_BARRIER_ID:
        raise ValueError(f"barrier_id must be in [0, {MAX_NAMED_BARRIER_ID}], got {barrier_id}")
    if num_threads <= 0 or num_threads % 32:
        raise ValueError(f"num_threads must be a positive multiple of 32, got {num_threads}")


def named_barrier_sync(barrier_id: int | Int, num_threads: int) -> None:
    """`bar.sync barrier_id, num_threads`: wait until `num_threads` threads reached barrier `barrier_id`.

    `barrier_id` may be a run-time Int (warp-uniform, in [0, 15]: e.g. one barrier per warpgroup).
    """
    _check_barrier(barrier_id, num_threads)
    nvvm.barrier(None, barrier_id=as_value(barrier_id, I32()), number_of_threads=as_value(num_threads, I32()))


def named_barrier_arrive(barrier_id: int | Int, num_threads: int) -> None:
    """`bar.arrive barrier_id, num_threads`: count this thread at barrier `barrier_id` without waiting."""
    _check_barrier(barrier_id, num_threads)
    nvvm.barrier_arrive(as_value(num_threads, I32()), barrier_id=as_value(barrier_id, I32()))


def fence_proxy_async_shared() -> None:
    """`fence.proxy.async.shared::cta`: order this thread's smem writes before async-proxy reads."""
    nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)


def fence_mbarrier_init() -> None:
    """`fence.mbarrier_init.release.cluster`: publish mbarrier.init to the cluster."""
    nvvm.fence_mbarrier_init()


def grid_dependency_wait() -> None:
    """`griddepcontrol.wait`: wait until the prerequisite grids completed and their memory is visible."""
    nvvm.griddepcontrol(nvvm.GridDepActionKind.wait)


def launch_dependents() -> None:
    """`griddepcontrol.launch_dependents`: allow a programmatically dependent grid to launch (per CTA)."""
    nvvm.griddepcontrol(nvvm.GridDepActionKind.launch_dependents)


def cluster_arrive(relaxed: bool = False) -> None:
    """`barrier.cluster.arrive[.relaxed].aligned` (every thread of the CTA executes it)."""
    if relaxed:
        nvvm.cluster_arrive_relaxed(aligned=True)
    else:
        nvvm.cluster_arrive(aligned=True)


def cluster_wait() -> None:
    """`barrier.cluster.wait.aligned` (every thread of the CTA executes it)."""
    nvvm.cluster_wait(aligned=True)


def cluster_sync() -> None:
    """A full cluster barrier: arrive (release) then wait (acquire)."""
    cluster_arrive(relaxed=False)
    cluster_wait()

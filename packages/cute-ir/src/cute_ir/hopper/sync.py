"""Synchronization builders for Hopper: named barriers, cluster barriers, proxy fences, elect.

Each function emits `nvvm` ops at the caller's insertion point.

- Named barriers (`bar.sync id, n` / `bar.arrive id, n`): ids 1..15 are free for kernels (id 0 is
  `__syncthreads`); `n` counts threads and must be a multiple of 32.
- `fence_proxy_async_shared()`: `fence.proxy.async.shared::cta`, needed by every thread that wrote
  shared memory with ordinary stores (st.shared, stmatrix) before a barrier after which TMA or
  WGMMA (the async proxy) reads that memory.
- Cluster barriers: `cluster_arrive(relaxed=...)` / `cluster_wait()` (`barrier.cluster.*.aligned`),
  and `cluster_sync()`; `fence_mbarrier_init()` (`fence.mbarrier_init.release.cluster`) makes
  mbarrier initialisation visible to the other CTAs of the cluster before a cluster barrier.
- Identity: `cluster_cta_rank()`, `block_in_cluster(dim)`, `cluster_id(dim)`, `num_clusters(dim)`,
  `warp_idx()` (warp-uniform), `lane_idx()`, `elect_one()` (one lane of the warp, `elect.sync`).
"""

from __future__ import annotations

from typing import Any

from mlir import ir
from mlir.dialects import arith, nvvm

from ._values import I1, I32, const, i32

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
    "grid_dim",
    "lane_idx",
    "named_barrier_arrive",
    "named_barrier_sync",
    "num_clusters",
    "thread_idx",
    "warp_idx",
]

MAX_NAMED_BARRIER_ID = 15


def _check_barrier(barrier_id: int, num_threads: int) -> None:
    if not 0 <= barrier_id <= MAX_NAMED_BARRIER_ID:
        raise ValueError(f"barrier_id must be in [0, {MAX_NAMED_BARRIER_ID}], got {barrier_id}")
    if num_threads <= 0 or num_threads % 32:
        raise ValueError(f"num_threads must be a positive multiple of 32, got {num_threads}")


def named_barrier_sync(barrier_id: int, num_threads: int) -> None:
    """`bar.sync barrier_id, num_threads`: wait until `num_threads` threads reached barrier `barrier_id`."""
    _check_barrier(barrier_id, num_threads)
    nvvm.barrier(None, barrier_id=i32(barrier_id), number_of_threads=i32(num_threads))


def named_barrier_arrive(barrier_id: int, num_threads: int) -> None:
    """`bar.arrive barrier_id, num_threads`: count this thread at barrier `barrier_id` without waiting."""
    _check_barrier(barrier_id, num_threads)
    nvvm.barrier_arrive(i32(num_threads), barrier_id=i32(barrier_id))


def fence_proxy_async_shared() -> None:
    """`fence.proxy.async.shared::cta`: order this thread's smem writes before async-proxy reads."""
    nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)


def fence_mbarrier_init() -> None:
    """`fence.mbarrier_init.release.cluster`: publish mbarrier.init to the cluster."""
    nvvm.fence_mbarrier_init()


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


_SREG = {
    "tid": (nvvm.ThreadIdXOp, nvvm.ThreadIdYOp, nvvm.ThreadIdZOp),
    "ntid": (nvvm.BlockDimXOp, nvvm.BlockDimYOp, nvvm.BlockDimZOp),
    "ctaid": (nvvm.BlockIdXOp, nvvm.BlockIdYOp, nvvm.BlockIdZOp),
    "nctaid": (nvvm.GridDimXOp, nvvm.GridDimYOp, nvvm.GridDimZOp),
    "cluster_ctaid": (nvvm.BlockInClusterIdXOp, nvvm.BlockInClusterIdYOp, nvvm.BlockInClusterIdZOp),
    "cluster_nctaid": (nvvm.ClusterDimBlocksXOp, nvvm.ClusterDimBlocksYOp, nvvm.ClusterDimBlocksZOp),
    "clusterid": (nvvm.ClusterIdXOp, nvvm.ClusterIdYOp, nvvm.ClusterIdZOp),
    "nclusterid": (nvvm.ClusterDimXOp, nvvm.ClusterDimYOp, nvvm.ClusterDimZOp),
}


def _sreg(kind: str, dim: int) -> ir.Value:
    if dim not in (0, 1, 2):
        raise ValueError(f"dim must be 0, 1 or 2, got {dim}")
    return _SREG[kind][dim](I32()).result


def thread_idx(dim: int = 0) -> ir.Value:
    """`%tid.{x,y,z}` as i32."""
    return _sreg("tid", dim)


def block_dim(dim: int = 0) -> ir.Value:
    """`%ntid.{x,y,z}` as i32."""
    return _sreg("ntid", dim)


def block_idx(dim: int = 0) -> ir.Value:
    """`%ctaid.{x,y,z}` as i32."""
    return _sreg("ctaid", dim)


def grid_dim(dim: int = 0) -> ir.Value:
    """`%nctaid.{x,y,z}` as i32."""
    return _sreg("nctaid", dim)


def block_in_cluster(dim: int = 0) -> ir.Value:
    """`%cluster_ctaid.{x,y,z}`: this CTA's coordinate inside its cluster, as i32."""
    return _sreg("cluster_ctaid", dim)


def cluster_dim(dim: int = 0) -> ir.Value:
    """`%cluster_nctaid.{x,y,z}`: CTAs per cluster along `dim`, as i32."""
    return _sreg("cluster_nctaid", dim)


def cluster_id(dim: int = 0) -> ir.Value:
    """`%clusterid.{x,y,z}`: this cluster's coordinate in the grid of clusters, as i32."""
    return _sreg("clusterid", dim)


def num_clusters(dim: int = 0) -> ir.Value:
    """`%nclusterid.{x,y,z}`: clusters in the grid along `dim`, as i32."""
    return _sreg("nclusterid", dim)


def cluster_cta_rank() -> ir.Value:
    """`%cluster_ctarank`: this CTA's linear rank in its cluster (x fastest), as i32."""
    return nvvm.read_ptx_sreg_cluster_ctarank(I32())


def lane_idx() -> ir.Value:
    """`%laneid` as i32."""
    return nvvm.read_ptx_sreg_laneid(I32())


def warp_idx() -> ir.Value:
    """This thread's warp index in the CTA (tid.x / 32, x-only blocks), made warp-uniform with shfl."""
    w = arith.divui(thread_idx(0), const(I32(), 32))
    # broadcast lane 0's value so the compiler knows it is uniform (as CUTLASS's canonical_warp_idx_sync)
    return nvvm.shfl_sync(I32(), const(I32(), -1), w, const(I32(), 0), const(I32(), 31), nvvm.ShflKind.idx)


def elect_one(membermask: Any = None) -> ir.Value:
    """`elect.sync`: an i1 that is true in exactly one active lane of the warp."""
    return nvvm.elect_sync(I1(), membermask=None if membermask is None else i32(membermask))

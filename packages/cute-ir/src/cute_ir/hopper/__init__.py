"""Hopper (sm_90a) builders: TMA, mbarrier pipelines, named/cluster barriers, fences, WGMMA, stmatrix, ...

Every builder emits MLIR (`nvvm`, `llvm`, `arith`, `scf`) at the caller's `ir.InsertionPoint.current`, so it
works inside any `gpu.func`/`llvm.func` the caller holds. Architecture numbers (GMMA descriptors and their
advances, TMA boxes) come from cute-nvarch; these builders only place them into instructions.

Modules: `smem` (shared-memory plan, aligned dynamic base), `mbarrier`, `pipeline` (the multistage TMA
pipeline block: stages, phases, transaction bytes, cluster release), `sync` (named/cluster barriers, fences;
the ids re-exported from `cute_ir.special`), `tma` (loads/stores/`tma` param kind), `wgmma` (builders that
take cute-nvarch's MMA atom), `regs` (setmaxnreg), `stmatrix` (stmatrix, packing, st.shared). Builders take
and return the vocabulary of `cute_ir.values` (`Int`, `Bool`) where a value is an integer. Importing this
package imports MLIR.
"""

from __future__ import annotations

from .mbarrier import (
    MBARRIER_BYTES,
    RELEASE_SCOPES,
    map_shared_rank,
    mbarrier_arrive,
    mbarrier_arrive_cluster,
    mbarrier_arrive_expect_tx,
    mbarrier_expect_tx,
    mbarrier_init,
    mbarrier_try_wait,
    mbarrier_wait,
)
from .pipeline import PipelineSpec, TmaPipeline, release_targets, releases_to, stage_and_phase
from .regs import check_register_split, setmaxnreg_dec, setmaxnreg_inc
from .smem import SmemBuffer, SmemPlan, dynamic_smem_base, smem_address, smem_offset
from .stmatrix import pack_b16x2, st_shared, stmatrix, to_f32
from .sync import (
    block_dim,
    block_idx,
    block_in_cluster,
    cluster_arrive,
    cluster_cta_rank,
    cluster_dim,
    cluster_id,
    cluster_sync,
    cluster_wait,
    elect_one,
    fence_mbarrier_init,
    fence_proxy_async_shared,
    grid_dependency_wait,
    grid_dim,
    lane_idx,
    launch_dependents,
    named_barrier_arrive,
    named_barrier_sync,
    num_clusters,
    thread_idx,
    warp_idx,
)
from .tma import (
    TMA_DESCRIPTOR_ALIGN,
    TMA_DESCRIPTOR_BYTES,
    apply_tma_param_attrs,
    finalize_tma_params,
    multicast_mask,
    tma_load,
    tma_param_arg_attrs,
    tma_param_type,
    tma_prefetch_descriptor,
    tma_store,
    tma_store_commit,
    tma_store_wait,
)
from .wgmma import (
    accumulator_elements,
    accumulator_from_values,
    accumulator_type,
    accumulator_values,
    gmma_descriptor,
    undef_accumulator,
    wgmma_atom,
    wgmma_commit_group,
    wgmma_fence,
    wgmma_mma_async,
    wgmma_wait_group,
    zero_accumulator,
)

__all__ = [
    "MBARRIER_BYTES",
    "RELEASE_SCOPES",
    "TMA_DESCRIPTOR_ALIGN",
    "TMA_DESCRIPTOR_BYTES",
    "PipelineSpec",
    "SmemBuffer",
    "SmemPlan",
    "TmaPipeline",
    "accumulator_elements",
    "accumulator_from_values",
    "accumulator_type",
    "accumulator_values",
    "apply_tma_param_attrs",
    "finalize_tma_params",
    "block_dim",
    "block_idx",
    "block_in_cluster",
    "check_register_split",
    "cluster_arrive",
    "cluster_cta_rank",
    "cluster_dim",
    "cluster_id",
    "cluster_sync",
    "cluster_wait",
    "dynamic_smem_base",
    "elect_one",
    "fence_mbarrier_init",
    "fence_proxy_async_shared",
    "gmma_descriptor",
    "grid_dependency_wait",
    "grid_dim",
    "lane_idx",
    "launch_dependents",
    "map_shared_rank",
    "mbarrier_arrive",
    "mbarrier_arrive_cluster",
    "mbarrier_arrive_expect_tx",
    "mbarrier_expect_tx",
    "mbarrier_init",
    "mbarrier_try_wait",
    "mbarrier_wait",
    "multicast_mask",
    "named_barrier_arrive",
    "named_barrier_sync",
    "num_clusters",
    "pack_b16x2",
    "setmaxnreg_dec",
    "setmaxnreg_inc",
    "smem_address",
    "smem_offset",
    "release_targets",
    "releases_to",
    "stage_and_phase",
    "st_shared",
    "stmatrix",
    "thread_idx",
    "tma_load",
    "tma_param_arg_attrs",
    "tma_param_type",
    "tma_prefetch_descriptor",
    "tma_store",
    "tma_store_commit",
    "tma_store_wait",
    "to_f32",
    "undef_accumulator",
    "warp_idx",
    "wgmma_atom",
    "wgmma_commit_group",
    "wgmma_fence",
    "wgmma_mma_async",
    "wgmma_wait_group",
    "zero_accumulator",
]

"""The warp-specialized persistent Hopper GEMM kernel, built with cute_ir's KernelDef and hopper builders.

Structure (CUTLASS's SM90 TMA warp-specialized cooperative kernel, CuTeDSL's `dense_gemm.py`):

- warpgroup 0 (producer, `setmaxnreg.dec` to 40): one thread walks the tile schedule and issues the TMA
  loads of A and B into a `stages`-deep shared-memory ring (full/empty mbarrier pairs, see
  `cute_ir.hopper.pipeline`), multicasting across the cluster;
- warpgroups 1..tile_m/64 (consumers, `setmaxnreg.inc`): each computes 64 rows of the CTA tile with
  `wgmma.mma_async` (A and B from shared-memory descriptors advanced per K-block), releases each stage,
  and writes its accumulators through a swizzled shared-memory staging buffer with TMA stores. A 256-row tile
  has two consumers of two 64-row atoms each (`GemmConfig.atoms_m`), which store their two slabs in turn.
- the static persistent scheduler: clusters walk work units `w = cluster_id + i * num_clusters`; each
  unit is one cluster-shaped block of tiles of one batch, ordered by a raster (along M or N) with a
  swizzle of `1 << swizzle_log` rows/columns for L2 reuse. CTAs of a cluster beyond the matrix load
  zeros (TMA out-of-bounds fill) and store nothing (TMA stores clip), so clusters need not divide the grid.

Ping-pong (`GemmConfig.schedule` "pingpong", CUTLASS's KernelTmaWarpSpecializedPingpong): two consumer
warpgroups each own whole CTA tiles; consumer warpgroup g takes the CTA's work units g, g + 2, ... while the
producer still walks every unit in order (so the running stage/phase count `u * k_tiles + kt` holds and each
stage is released by the one warpgroup that read it: `GemmConfig.mma_warpgroups` = 1 arrival per CTA). Each
runs its tile's whole epilogue (its own staging buffers and named barrier 1 + g, buffer parity counted over its
own units) while the other runs its mainloop. The math order barrier is two named barriers (3 + g): warpgroup g
waits on its own before a unit's mainloop (except unit 0) and, once the unit's last wgmma is issued, arrives on
the other's (when a next unit exists), so the mainloops alternate as the producer fills the stages. It is also
what keeps the full-barrier parity waits sound: a warpgroup starts unit u only after every fill of units < u has
landed (the other warpgroup waited for them), so it never polls a stage more than one phase ahead. A warpgroup
issues tile_m / 64 wgmma atoms per k-block (`GemmConfig.atoms_m`, A advanced one M-atom per atom), carries that
many accumulators and stores them slab by slab (64 rows each).

The kernel is a public-API JIT kernel (`@cute_runtime.kernel`): its compile-time argument is the
`GemmConfig` (every field is part of the specialization), its run-time parameters the three TMA descriptors
(`cute_runtime.TensorMap`, by value) and the i32 scalars m, n, k, l, raster_along_n (0 or 1) and swizzle_log
(0..4). Launch: block (num_threads,1,1), cluster (cluster_m, cluster_n, 1), grid (cluster_m * clusters,
cluster_n, 1) with `clusters` <= the number of work units (`host.schedule`). `compile_gemm(cfg, target)` and
`kernel_of(cfg, cc, device)` specialize it on a config alone (its run-time parameters do not change the spec).

A config whose `decomposition` shares tiles' K loops (split-K, stream-K) is the kernel `dense_gemm_split`
(`split_k`): the same body walking the scheduler's split units with a running stage/phase count, whose
run-time parameters add `split_k.SPLIT_PARAMS` and whose consumers run the parallel fix-up before the epilogue
of a tile's last unit. The data-parallel kernels and their PTX are unchanged. A shared-K config with device scales
or an 8-bit C is `dense_gemm_split_scaled`: dense_gemm_scaled's parameters, then SPLIT_PARAMS; the fix-up adds the
float32 partials before the final unit's epilogue applies the scales (and bias, activation, out_scale, amax). One
with another fused epilogue is `dense_gemm_split_fused`: dense_gemm_fused's parameters, then SPLIT_PARAMS; the final
unit's epilogue applies it to the fixed-up accumulators.

A config with a fused epilogue (`GemmConfig.fused`: activation, bias, input, alpha) is the kernel
`dense_gemm_fused`: the same body, whose run-time parameters add `FUSED_PARAMS` (the contiguous bias's and the
input's addresses as u64, the input's element strides as i64, alpha and beta as f32, the pre-activation output's
TMA descriptor: C's when the config has none, never read) and whose epilogue computes each output value with
`epilogue_fused` before staging it (with `has_aux` each chunk's pre-activation values go through staging buffers
of their own, after C's, and TMA stores of C's boxes). The plain kernel, its parameters and its PTX are
unchanged.

A config that reads float32 device scales of A or B, or writes an 8-bit C (`GemmConfig.scaled`), is the kernel
`dense_gemm_scaled`: run-time parameters add `SCALE_PARAMS` (the scales' addresses; an 8-bit C's device
out_scale and amax addresses, 0 when not given, and its by-value out_scale). Its 8-bit C path converts each pair
of a thread's output values to `satfinite(D * out_scale)` E4M3 bytes (one 2-byte st.shared into the 8-bit
staging buffer) and raises amax with one atomic max per warp and work unit (`FusedEpilogue.e4m3_pair`,
`store_amax`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from cute_runtime import Kernel, Scalar, TensorMap, kernel

from .epilogue import f32_store_coords, stmatrix_pair_values, stmatrix_row_coords
from .plan import make_plan
from .spec import CONSUMER_REGS, PRODUCER_REGS, GemmConfig

if TYPE_CHECKING:
    from cute_ir.values import Int

__all__ = [
    "FUSED_PARAMS",
    "PARAMS",
    "SCALE_PARAMS",
    "compile_gemm",
    "dense_gemm",
    "dense_gemm_fused",
    "dense_gemm_scaled",
    "dense_gemm_split",
    "dense_gemm_split_fused",
    "dense_gemm_split_scaled",
    "gemm_spec",
    "kernel_of",
]

PARAMS = ("a_desc", "b_desc", "c_desc", "m", "n", "k", "l", "raster_along_n", "swizzle_log")
_EPI_BARRIER_BASE = 1  # named barrier id of consumer warpgroup g is 1 + g (0 is __syncthreads)
# ping-pong's math order: consumer warpgroup g waits on named barrier 3 + g before its mainloop (ids 1, 2 are the
# epilogues')
_ORDER_BARRIER_BASE = 3
# the fused epilogue's input loads (and with an input or the pre-activation output its bias pairs) run this many
# `values` calls ahead (two stmatrix pairs of a 16-bit C): the most that keeps every input config at 0 spills (a
# whole 64-column chunk ahead spilled up to 232 bytes at 128x256 GELU)
INPUT_PREFETCH_CALLS = 2
_I32 = Scalar("i32")
_U64, _I64, _F32 = Scalar("u64"), Scalar("i64"), Scalar("f32")
# the fused kernel's run-time parameters after PARAMS (names as in its signature)
FUSED_PARAMS = ("bias_ptr", "input_ptr", "input_stride_m", "input_stride_n", "input_stride_l", "alpha", "beta",
                "aux_desc")
# the scaled kernel's run-time parameters after FUSED_PARAMS: the float32 scales' addresses (0 when unused); an
# 8-bit C's float32 device out_scale and amax addresses (0 when unused) and its by-value out_scale factor
SCALE_PARAMS = ("scale_a_ptr", "scale_b_ptr", "out_scale_ptr", "amax_ptr", "out_scale")


# every entry's block and cluster: the config's warpgroups and cluster shape
_LAUNCH_SHAPE = dict(
    block=lambda config: (config.num_threads, 1, 1),
    cluster=lambda config: (config.cluster_m, config.cluster_n, 1),
)


def _tile_origins(cfg: GemmConfig, sched: Any, wu: Any) -> tuple[Any, Any]:
    """The first row and first accumulator column of work unit `wu`'s CTA tile (`GemmConfig.tile_origin`: edge
    tiles start inside the problem)."""
    from cute_ir.hopper.scheduler import IR_OPS

    return (cfg.tile_origin(0, wu.m, sched.m, IR_OPS, sched.edges_whole(0)),
            cfg.tile_origin(1, wu.n, sched.n, IR_OPS, sched.edges_whole(1)))


def _load_operand(plan_op, desc, smem_stage, bar, tile_mn, k0, batch, mask, my_slot) -> None:  # noqa: ANN001
    """TMA loads of this CTA's share of one operand stage (boxes distributed over the multicast group)."""
    from cute_ir import hopper as H
    from cute_ir.control import if_

    for box in plan_op.boxes:
        mn = tile_mn + box.mn if box.mn else tile_mn
        kk = k0 + box.k if box.k else k0
        coords = [kk, mn, batch] if plan_op.major == "k" else [mn, kk, batch]
        if plan_op.multicast == 1:
            H.tma_load(desc, H.smem_offset(smem_stage, box.smem_offset), bar, coords, mask)
            continue
        # the CTA at position `slot` of the multicast group issues the box, for all of them
        if_(my_slot == box.slot, lambda box=box, coords=coords: H.tma_load(
            desc, H.smem_offset(smem_stage, box.smem_offset), bar, coords, mask
        ))


@kernel(name="dense_gemm", **_LAUNCH_SHAPE)
def dense_gemm(
    kb,  # noqa: ANN001 - the JitBuilder
    a_desc: TensorMap,
    b_desc: TensorMap,
    c_desc: TensorMap,
    m: _I32,
    n: _I32,
    k: _I32,
    l: _I32,  # noqa: E741 - the batch extent, CuTe's name
    raster_along_n: _I32,
    swizzle_log: _I32,
    config: GemmConfig,
):
    """C = A @ B for the TMA descriptors of A, B and C: the warp-specialized persistent kernel of `config`."""
    if config.fused:
        raise ValueError(f"config has a fused epilogue ({config.epilogue_label[1:]}): use dense_gemm_fused")
    _start(kb, config, (a_desc, b_desc, c_desc), (m, n, k, l), raster_along_n, swizzle_log, None)


@kernel(name="dense_gemm_fused", **_LAUNCH_SHAPE)
def dense_gemm_fused(
    kb,  # noqa: ANN001 - the JitBuilder
    a_desc: TensorMap,
    b_desc: TensorMap,
    c_desc: TensorMap,
    m: _I32,
    n: _I32,
    k: _I32,
    l: _I32,  # noqa: E741 - the batch extent, CuTe's name
    raster_along_n: _I32,
    swizzle_log: _I32,
    bias_ptr: _U64,
    input_ptr: _U64,
    input_stride_m: _I64,
    input_stride_n: _I64,
    input_stride_l: _I64,
    alpha: _F32,
    beta: _F32,
    aux_desc: TensorMap,
    config: GemmConfig,
):
    """D = act(alpha * A @ B + beta * input + bias) into C (and the pre-activation into aux when config.has_aux): the
    GEMM kernel of `config` with its fused epilogue."""
    if not config.fused:
        raise ValueError("config has no fused epilogue: use dense_gemm")
    if config.scaled:
        raise ValueError("config reads device scales of A or B: use dense_gemm_scaled")
    fused = (bias_ptr, input_ptr, input_stride_m, input_stride_n, input_stride_l, alpha, beta, aux_desc)
    _start(kb, config, (a_desc, b_desc, c_desc), (m, n, k, l), raster_along_n, swizzle_log, fused)


@kernel(name="dense_gemm_scaled", **_LAUNCH_SHAPE)
def dense_gemm_scaled(
    kb,  # noqa: ANN001 - the JitBuilder
    a_desc: TensorMap,
    b_desc: TensorMap,
    c_desc: TensorMap,
    m: _I32,
    n: _I32,
    k: _I32,
    l: _I32,  # noqa: E741 - the batch extent, CuTe's name
    raster_along_n: _I32,
    swizzle_log: _I32,
    bias_ptr: _U64,
    input_ptr: _U64,
    input_stride_m: _I64,
    input_stride_n: _I64,
    input_stride_l: _I64,
    alpha: _F32,
    beta: _F32,
    aux_desc: TensorMap,
    scale_a_ptr: _U64,
    scale_b_ptr: _U64,
    out_scale_ptr: _U64,
    amax_ptr: _U64,
    out_scale: _F32,
    config: GemmConfig,
):
    """D = act(alpha * scale_a * scale_b * A @ B + beta * input + bias) with float32 device scales of A and B; an
    8-bit C stores satfinite(D * out_scale) (and max |D| at amax_ptr when not 0)."""
    if not config.scaled:
        raise ValueError("config reads no device scales and writes no 8-bit C: use dense_gemm or dense_gemm_fused")
    fused = (bias_ptr, input_ptr, input_stride_m, input_stride_n, input_stride_l, alpha, beta, aux_desc,
             scale_a_ptr, scale_b_ptr, out_scale_ptr, amax_ptr, out_scale)
    _start(kb, config, (a_desc, b_desc, c_desc), (m, n, k, l), raster_along_n, swizzle_log, fused)


@kernel(name="dense_gemm_split", **_LAUNCH_SHAPE)
def dense_gemm_split(
    kb,  # noqa: ANN001 - the JitBuilder
    a_desc: TensorMap,
    b_desc: TensorMap,
    c_desc: TensorMap,
    m: _I32,
    n: _I32,
    k: _I32,
    l: _I32,  # noqa: E741 - the batch extent, CuTe's name
    raster_along_n: _I32,
    swizzle_log: _I32,
    workspace: _U64,
    flags: _U64,
    splits: _I32,
    config: GemmConfig,
):
    """C = A @ B with units sharing tiles' K loops (split-K / stream-K) and the parallel fix-up of `config`."""
    if not config.shares_k:
        raise ValueError("config.decomposition is data_parallel: use dense_gemm")
    if config.fused:
        raise ValueError(f"config has a fused epilogue ({config.epilogue_label[1:]}): use dense_gemm_split_fused")
    from .split_k import SplitParams

    _start(kb, config, (a_desc, b_desc, c_desc), (m, n, k, l), raster_along_n, swizzle_log, None,
           SplitParams(workspace, flags, splits))


@kernel(name="dense_gemm_split_fused", **_LAUNCH_SHAPE)
def dense_gemm_split_fused(
    kb,  # noqa: ANN001 - the JitBuilder
    a_desc: TensorMap,
    b_desc: TensorMap,
    c_desc: TensorMap,
    m: _I32,
    n: _I32,
    k: _I32,
    l: _I32,  # noqa: E741 - the batch extent, CuTe's name
    raster_along_n: _I32,
    swizzle_log: _I32,
    bias_ptr: _U64,
    input_ptr: _U64,
    input_stride_m: _I64,
    input_stride_n: _I64,
    input_stride_l: _I64,
    alpha: _F32,
    beta: _F32,
    aux_desc: TensorMap,
    workspace: _U64,
    flags: _U64,
    splits: _I32,
    config: GemmConfig,
):
    """dense_gemm_fused's D with units sharing tiles' K loops (split-K / stream-K): the float32 partials are fixed up
    first, then a tile's final unit runs the fused epilogue."""
    if not (config.shares_k and config.fused) or config.scaled:
        raise ValueError("dense_gemm_split_fused needs a split-K / stream-K config with a fused epilogue and no device "
                         "scales or 8-bit C (those are dense_gemm_split_scaled's)")
    from .split_k import SplitParams

    fused = (bias_ptr, input_ptr, input_stride_m, input_stride_n, input_stride_l, alpha, beta, aux_desc)
    _start(kb, config, (a_desc, b_desc, c_desc), (m, n, k, l), raster_along_n, swizzle_log, fused,
           SplitParams(workspace, flags, splits))


@kernel(name="dense_gemm_split_scaled", **_LAUNCH_SHAPE)
def dense_gemm_split_scaled(
    kb,  # noqa: ANN001 - the JitBuilder
    a_desc: TensorMap,
    b_desc: TensorMap,
    c_desc: TensorMap,
    m: _I32,
    n: _I32,
    k: _I32,
    l: _I32,  # noqa: E741 - the batch extent, CuTe's name
    raster_along_n: _I32,
    swizzle_log: _I32,
    bias_ptr: _U64,
    input_ptr: _U64,
    input_stride_m: _I64,
    input_stride_n: _I64,
    input_stride_l: _I64,
    alpha: _F32,
    beta: _F32,
    aux_desc: TensorMap,
    scale_a_ptr: _U64,
    scale_b_ptr: _U64,
    out_scale_ptr: _U64,
    amax_ptr: _U64,
    out_scale: _F32,
    workspace: _U64,
    flags: _U64,
    splits: _I32,
    config: GemmConfig,
):
    """dense_gemm_scaled's D with units sharing tiles' K loops (split-K / stream-K): the float32 partials are
    fixed up first, then a tile's final unit applies the scales and the epilogue."""
    if not (config.shares_k and config.scaled):
        raise ValueError("dense_gemm_split_scaled needs a split-K / stream-K config with device scales or an 8-bit C")
    from .split_k import SplitParams

    fused = (bias_ptr, input_ptr, input_stride_m, input_stride_n, input_stride_l, alpha, beta, aux_desc,
             scale_a_ptr, scale_b_ptr, out_scale_ptr, amax_ptr, out_scale)
    _start(kb, config, (a_desc, b_desc, c_desc), (m, n, k, l), raster_along_n, swizzle_log, fused,
           SplitParams(workspace, flags, splits))


def _start(kb, config, descs, mnkl, raster_n, swz_log, fused, split=None) -> None:  # noqa: ANN001 - JitBuilder, values
    if kb.target != config.target:
        raise ValueError(f"config.target is {config.target}, the kernel compiles for {kb.target}")
    plan = make_plan(config)
    kb.reserve_shared_memory(plan.smem.dynamic_smem_bytes)
    kb.launch_bounds(min_blocks_per_sm=1)
    _emit(plan, kb, descs, mnkl, raster_n, swz_log, fused, split)


def _kernel_fn(cfg: GemmConfig) -> Any:
    """The JIT kernel function of cfg: dense_gemm, dense_gemm_fused for a fused epilogue, dense_gemm_scaled for
    device scales or an 8-bit C, dense_gemm_split (dense_gemm_split_fused, dense_gemm_split_scaled) when units share
    tiles' K loops."""
    if cfg.shares_k:
        if cfg.scaled:
            return dense_gemm_split_scaled
        return dense_gemm_split_fused if cfg.fused else dense_gemm_split
    if cfg.scaled:
        return dense_gemm_scaled
    return dense_gemm_fused if cfg.fused else dense_gemm


def _config(cfg: GemmConfig) -> GemmConfig:
    """The config with its stage count resolved (one spec per kernel, however the stages were given)."""
    return dataclasses.replace(cfg, stages=cfg.num_stages)


def gemm_spec(cfg: GemmConfig) -> dict:
    """The JIT spec of `cfg`'s kernel (what the compile cache and AOT bundles key it by)."""
    fn = _kernel_fn(cfg)
    unset = (None,) * sum(d.kind != "const" for d in fn.decls)  # run-time values: not in the spec
    return fn.specialize(*unset, config=_config(cfg))[0]


def compile_gemm(cfg: GemmConfig, target: str = "sm_90a") -> Any:
    """The artifact (entry, cubin, PTX) of `cfg`'s kernel for target from the registered compiler (cute-ir: its
    compile cache, else a build); not kept in the JIT kernel's in-process table."""
    from cute_runtime.compilers import compiler

    return compiler()(_kernel_fn(cfg).fn, gemm_spec(cfg), target)


def kernel_of(cfg: GemmConfig, cc: tuple[int, int], device: int | None = None) -> Kernel:
    """The loaded-on-first-launch Kernel of `cfg` for a device of compute capability cc (bundle or compiler)."""
    return _kernel_fn(cfg).kernel_for(gemm_spec(cfg), cc, device)


def _emit(plan, k, descs, mnkl, raster_n, swz_log, fused, split) -> None:  # noqa: ANN001 - JitBuilder, values
    from cute_ir import hopper as H
    from cute_ir.control import if_
    from cute_ir.hopper.scheduler import PersistentScheduler

    cfg = plan.cfg
    a_desc, b_desc, c_desc = descs
    m, n, kk, l = mnkl

    base = H.dynamic_smem_base(1024)
    smem = plan.smem
    a_smem = H.smem_offset(base, smem["a"].offset)
    b_smem = H.smem_offset(base, smem["b"].offset)
    epi_smem = H.smem_offset(base, smem["epi"].offset)
    pipe = H.TmaPipeline(plan.pipeline, H.smem_offset(base, smem["barriers"].offset))

    tid = H.thread_idx(0)
    warp = H.warp_idx(uniform=True)
    wg = warp // 4
    tid_in_wg = tid % 128

    # one thread initialises the barriers; everyone sees them after the CTA (or cluster) barrier
    pipe.init(tid == 0)
    if cfg.short_a_box:
        # fewer rows than a tile: A's box loads only M's rows (rounded up to 8, `a_box_rows`); the stages' other
        # rows are zeroed here once (out-of-problem rows compute act(0) = 0, as amax assumes)
        if_(m < cfg.tile_m, lambda: _zero_smem(a_smem, cfg.num_stages * cfg.a_stage_bytes, tid, cfg.num_threads))
    if cfg.cluster_size > 1:
        H.cluster_arrive(relaxed=True)
        H.cluster_wait()
    else:
        k.barrier()
    # programmatic dependent launch (`launch_plan`): the prologue above touches only shared memory and the
    # parameters, so it may overlap the stream's previous kernel; every global access below (TMA loads, bias and
    # scale loads, stores, the split workspace) waits for that kernel to complete (a no-op without the
    # dependency). `launch_dependents` only after the mainloop of a CTA's last unit (`_consumer`): a trigger at
    # the start let the next kernel park CTAs on the idle SMs for the whole run (decode rows of 80-96 CTAs ran
    # 20-37% slower back to back)
    H.grid_dependency_wait()

    def role_sched() -> PersistentScheduler:
        # each role evaluates the schedule itself: values computed before the role split live across setmaxnreg
        # (into the producer's 40 registers), where ptxas spilled one (the unit count) of fused 128x256 kernels
        return PersistentScheduler(cfg.tile_scheduler, m, n, kk, l, raster_n, swz_log,
                                   *(() if split is None else (cfg.decomposition, split.splits)))

    def producer() -> None:
        H.setmaxnreg_dec(PRODUCER_REGS)
        _producer(plan, role_sched(), pipe, tid, a_desc, b_desc, a_smem, b_smem, m)

    def consumer() -> None:
        H.setmaxnreg_inc(CONSUMER_REGS)
        epilogue = None
        if fused is not None:
            from .epilogue_fused import FusedParams, with_unit_invariants

            # per-tensor scales and an 8-bit C's out_scale: loaded once here, before the unit loop
            epilogue = (with_unit_invariants(cfg, FusedParams(*fused), m), m, n)
        _consumer(
            plan, role_sched(), pipe, wg - 1, tid_in_wg, warp % 4, c_desc, a_smem, b_smem, epi_smem, epilogue, split
        )

    # the warpgroup roles are the two branches of one if/else (what setmaxnreg needs)
    if_(wg == 0, producer, consumer)
    if cfg.cluster_size > 1:
        # no CTA leaves while others of its cluster may still address its shared memory
        H.cluster_arrive(relaxed=False)
        H.cluster_wait()


def _zero_smem(base, nbytes: int, tid, num_threads: int) -> None:  # noqa: ANN001
    """Zero `nbytes` (a multiple of 16) of shared memory at `base`, 16 bytes per thread and step, then fence them
    for the async proxy (TMA writes, wgmma reads) before the CTA barrier that follows."""
    from cute_ir import hopper as H
    from cute_ir import scalar as S
    from cute_ir.control import for_

    zero = S.f32(0.0)

    def step(off: Any) -> None:
        H.st_shared(H.smem_offset(base, off), [zero] * 4, alignment=16)

    for_(tid * 16, nbytes, num_threads * 16, step)
    H.fence_proxy_async_shared()


def _producer(plan, sched, pipe, tid, a_desc, b_desc, a_smem, b_smem, m) -> None:  # noqa: ANN001
    from cute_ir import hopper as H
    from cute_ir.control import for_, if_
    from cute_ir.hopper.scheduler import IR_OPS

    cfg = plan.cfg

    def one_thread() -> None:
        # A's box holds a_box_rows(M) rows (the tile's, or fewer): the stage's transaction bytes follow
        tx = None
        if cfg.short_a_box:
            tx = cfg.a_box_rows(m, IR_OPS) * (cfg.tile_k * cfg.ab_bytes) + cfg.b_stage_bytes
        H.tma_prefetch_descriptor(a_desc)
        H.tma_prefetch_descriptor(b_desc)
        # multicast masks: A goes to the CTAs of this cluster row (same cta_m), B to this column (same cta_n)
        cluster, cta = (cfg.cluster_m, cfg.cluster_n), (sched.cta_m, sched.cta_n)
        a_mask = H.multicast_mask(cluster, cta, 1) if cfg.cluster_n > 1 else None
        b_mask = H.multicast_mask(cluster, cta, 0) if cfg.cluster_m > 1 else None

        def unit_body(u: Int, count: Any = None) -> list:
            wu = sched.work_unit(u)
            row0, col0 = _tile_origins(cfg, sched, wu)
            batch = wu.l

            def k_tile(kt: Int) -> None:
                # the running K-tile count: unit * k_tiles when every unit covers all of K
                it = u * sched.k_tiles + kt if count is None else count + (kt - wu.k_begin)
                stage, phase = pipe.stage_phase(it)
                pipe.producer_acquire(stage, phase)
                pipe.producer_commit(stage, tx)
                full = pipe.full(stage)
                a_stage = H.smem_offset(a_smem, stage * cfg.a_stage_bytes)
                b_stage = H.smem_offset(b_smem, stage * cfg.b_stage_bytes)
                k0 = kt * cfg.tile_k
                _load_operand(plan.a, a_desc, a_stage, full, row0, k0, batch, a_mask, sched.cta_n)
                _load_operand(plan.b, b_desc, b_stage, full, col0, k0, batch, b_mask, sched.cta_m)

            if count is None:
                for_(0, sched.k_tiles, 1, k_tile)
                return []
            for_(wu.k_begin, wu.k_end, 1, k_tile)
            return [count + (wu.k_end - wu.k_begin)]

        if not cfg.shares_k:
            for_(0, sched.num_units, 1, unit_body)
            pipe.producer_tail(sched.num_units * sched.k_tiles)
        else:
            (count,) = for_(0, sched.num_units, 1, unit_body, init=[_zero_i32()])
            pipe.producer_tail(count)

    if_(tid == 0, one_thread)


def _zero_i32() -> Any:
    """A run-time i32 0 (the initial running K-tile count)."""
    from cute_ir.types import I32
    from cute_ir.values import Int, const

    return Int(const(0, I32()))


def _release(plan, pipe, stage, tid_in_wg, sched) -> None:  # noqa: ANN001
    pipe.release_group(stage, tid_in_wg, sched.cta_m, sched.cta_n)


def _mma_k_tile(plan, pipe, it: Any, acc, a_base, b_base, first: bool):  # noqa: ANN001
    """Wait for the stage of the CTA's `it`-th K-tile, issue its wgmma chain and commit it; returns
    (accumulator, stage). `acc` is a list of `cfg.atoms_m` accumulators (64-row slabs) when a warpgroup issues
    several atoms per K-block (ping-pong at tile_m 128, the cooperative tile_m 256). `a_base` / `b_base`: the
    warpgroup's descriptors of stage 0 (`_descriptor_bases`); each stage, atom and K-block is one add on them."""
    from cute_ir import hopper as H

    cfg = plan.cfg
    atom = plan.wgmma
    stage, phase = pipe.stage_phase(it)
    pipe.consumer_wait(stage, phase)
    a_stage = a_base.plus(stage * (cfg.a_stage_bytes // 16))
    b_stage = b_base.plus(stage * (cfg.b_stage_bytes // 16))
    H.wgmma_fence()
    accs = list(acc) if cfg.atoms_m > 1 else [acc]
    for kb in range(cfg.tile_k // atom.shape_mnk[2]):
        das = [a_stage.at(i * plan.a.mn_atom_bytes + kb * plan.a.k_block_bytes) for i in range(len(accs))]
        db = b_stage.at(kb * plan.b.k_block_bytes)
        # scale-d = 0 on the tile's first K-block: D = A*B, whatever the registers held
        scale_d_zero = first and kb == 0 and cfg.acc_init == "scale_d"
        for i, da in enumerate(das):
            accs[i] = H.wgmma_mma_async(atom, accs[i], da, db, accumulate=not scale_d_zero)
    H.wgmma_commit_group()
    return (accs if cfg.atoms_m > 1 else accs[0]), stage


def _descriptor_bases(plan, a_addr: Any, b_addr: Any) -> tuple:  # noqa: ANN001
    """The GMMA descriptors of A's stage 0 at shared address `a_addr` (a warpgroup's first slab) and B's at `b_addr`,
    built once per warpgroup (`_mma_k_tile` advances them)."""
    from cute_ir import hopper as H

    return (H.gmma_descriptor_base(a_addr, plan.a.desc_lo, plan.a.desc_hi),
            H.gmma_descriptor_base(b_addr, plan.b.desc_lo, plan.b.desc_hi))


def _mainloop(plan, pipe, sched, unit: Int, tid_in_wg: Int, a_base, b_base, krange=None,  # noqa: ANN001
              issued=None) -> Any:
    """One work unit's K loop of a consumer warpgroup; returns the finished accumulators (all groups waited).

    `krange` = (count, k_begin, k_end): the unit's K tiles and the running K-tile count at its start (split
    units); None: all K tiles, unit `unit` starting at count unit * k_tiles.

    K-tile 0 is peeled (its first K-block may use scale-d = 0). With k_pipe_mmas = 1 the group of K-tile kt
    stays in flight while K-tile kt+1's is issued: after committing kt+1, `wait_group 1` retires kt's group
    and kt's stage is released; the last stage is released after the final `wait_group 0`. `issued()`, when
    given, is emitted once every wgmma of the unit is issued (before that final wait: ping-pong's math order).
    """
    from cute_ir import hopper as H
    from cute_ir.control import for_

    cfg = plan.cfg
    atom = plan.wgmma
    if krange is None:
        k_first, k_end = 0, sched.k_tiles

        def it_of(kt: Any) -> Any:
            return unit * sched.k_tiles + kt
    else:
        count, k_first, k_end = krange

        def it_of(kt: Any) -> Any:
            return count + (kt - k_first)

    init = H.zero_accumulator(atom) if cfg.acc_init == "zero" else H.undef_accumulator(atom)
    if cfg.mma_promotion_interval:
        return _promoting_k_loop(plan, pipe, sched, it_of, k_first, k_end, tid_in_wg, a_base, b_base, init)
    if cfg.atoms_m > 1:
        init = [init] * cfg.atoms_m
    acc, stage0 = _mma_k_tile(plan, pipe, it_of(k_first), init, a_base, b_base, first=True)
    if cfg.k_pipe_mmas == 0:
        H.wgmma_wait_group(0)
        _release(plan, pipe, stage0, tid_in_wg, sched)
    multi = cfg.atoms_m > 1  # several accumulators carried through the K loop

    def k_tile(kt: Int, *carried: Any) -> list:
        acc = list(carried) if multi else carried[0]
        acc, stage = _mma_k_tile(plan, pipe, it_of(kt), acc, a_base, b_base, first=False)
        H.wgmma_wait_group(cfg.k_pipe_mmas)
        # the stage whose reads have now retired: this K-tile's (no group in flight) or the previous one's
        done = stage if cfg.k_pipe_mmas == 0 else pipe.stage_phase(it_of(kt - 1))[0]
        _release(plan, pipe, done, tid_in_wg, sched)
        return acc if multi else [acc]

    carried = for_(k_first + 1, k_end, 1, k_tile, init=acc if multi else [acc])
    acc = list(carried) if multi else carried[0]
    if issued is not None:
        issued()
    if cfg.k_pipe_mmas > 0:
        H.wgmma_wait_group(0)
        _release(plan, pipe, pipe.stage_phase(it_of(k_end - 1))[0], tid_in_wg, sched)
    return acc


def _promoting_k_loop(plan, pipe, sched, it_of, k_first, k_end, tid_in_wg, a_base, b_base, init) -> Any:  # noqa: ANN001
    """The K loop with two-level accumulation (CUTLASS's 2xAcc): every `T = mma_promotion_interval / k_blocks`
    K-tiles the wgmma accumulator is added into a second float32 accumulator and restarted; returns their sum.

    T = 1 (CUTLASS's default interval: every K-tile) with scale-d 0 chains and one consumer warpgroup (tile M 64)
    keeps one K-tile in flight (`_promoting_pairs`): alone on the SM's tensor cores, its own waits would leave them
    idle (measured on an H200: 128x6144x4096 took 13.2 us with promotion, 9.1 us without); two consumer warpgroups
    overlap each other's waits, where the third live accumulator only cost registers (8192^3 on 128 x 128: 0.900
    of `_scaled_mm` against 0.960 with the serial loop). Otherwise every K-tile's group is waited for (`wait_group
    0`) before its stage is released and before the promotion reads the accumulator: T = 1 restarts each K-tile's
    chain (scale-d 0 or from zero); T > 1 promotes and zeroes with selects on `(kt - k_first + 1) % T == 0` (the
    K-tile count of a unit is a run-time value).
    """
    from cute_ir import hopper as H
    from cute_ir import scalar as S
    from cute_ir.control import for_

    cfg = plan.cfg
    atom = plan.wgmma
    period = cfg.mma_promotion_interval // cfg.k_blocks

    def regs(acc: Any) -> list:
        return H.accumulator_values(acc, atom)

    def k_tile(kt: Any, acc: Any, first: bool) -> Any:
        acc, stage = _mma_k_tile(plan, pipe, it_of(kt), acc, a_base, b_base, first=first)
        H.wgmma_wait_group(0)
        _release(plan, pipe, stage, tid_in_wg, sched)
        return acc

    def add(total: Any, part: Any) -> Any:
        return H.accumulator_from_values([S.add(x, y) for x, y in zip(regs(total), regs(part), strict=True)], atom)

    if period == 1 and cfg.acc_init == "scale_d" and cfg.mma_warpgroups == 1:
        return _promoting_pairs(plan, pipe, sched, it_of, k_first, k_end, tid_in_wg, a_base, b_base, init, add)

    first = k_tile(k_first, init, True)
    if period == 1:
        def body(kt: Any, total: Any) -> list:
            return [add(total, k_tile(kt, init, True))]  # a fresh chain (scale-d 0 on its first k-block, or from zero)

        (total,) = for_(k_first + 1, k_end, 1, body, init=[first])
        return total

    zero = S.f32(0.0)

    def body_n(kt: Any, total: Any, acc: Any) -> list:
        acc = k_tile(kt, acc, False)
        promote = (kt - k_first + 1) % period == 0
        t, a = regs(total), regs(acc)
        total = [S.select(promote, S.add(x, y), x) for x, y in zip(t, a, strict=True)]
        acc = [S.select(promote, zero, y) for y in a]
        return [H.accumulator_from_values(total, atom), H.accumulator_from_values(acc, atom)]

    total, acc = for_(k_first + 1, k_end, 1, body_n, init=[H.zero_accumulator(atom), first])
    return add(total, acc)


def _promoting_pairs(plan, pipe, sched, it_of, k_first, k_end, tid_in_wg, a_base, b_base, init, add) -> Any:  # noqa: ANN001
    """Promotion every K-tile with one K-tile in flight: each K-tile's chain starts with scale-d 0 in one of two
    register sets (X, Y), so that after issuing K-tile kt, `wait_group 1` retires kt - 1's chain, which is added
    into the total while kt's wgmmas run (((0 + p0) + p1) + ...: the bits of the serial sum).

    The loop takes K-tiles in pairs (kt into Y, kt + 1 into X) so that each set stays in its registers: a chain's
    scale-d-0 wgmma is issued on the set's previous, already added, values (ignored), and nothing moves a set
    while its wgmmas are in flight (a move would make ptxas wait for every group). An odd last K-tile and the
    final `wait_group 0` sit in both branches of one `scf.if`, which yields only finished totals.
    """
    from cute_ir import hopper as H
    from cute_ir.control import for_, if_values

    def issue(kt: Any, dead: Any) -> Any:
        return _mma_k_tile(plan, pipe, it_of(kt), dead, a_base, b_base, first=True)[0]

    def retire(kt: Any) -> None:
        """kt's group has retired: release its stage."""
        _release(plan, pipe, pipe.stage_phase(it_of(kt))[0], tid_in_wg, sched)

    x = issue(k_first, init)

    def pair(kt: Any, total: Any, x: Any, y: Any) -> list:
        y = issue(kt, y)
        H.wgmma_wait_group(1)
        retire(kt - 1)
        total = add(total, x)
        x = issue(kt + 1, x)
        H.wgmma_wait_group(1)
        retire(kt)
        return [add(total, y), x, y]

    rest = k_end - k_first - 1  # K-tiles after the first
    total, x, y = for_(k_first + 1, k_first + 1 + (rest // 2) * 2, 2, pair,
                       init=[H.zero_accumulator(plan.wgmma), x, init])

    def odd() -> list:
        last = issue(k_end - 1, y)
        H.wgmma_wait_group(1)
        retire(k_end - 2)
        t = add(total, x)
        H.wgmma_wait_group(0)
        retire(k_end - 1)
        return [add(t, last)]

    def even() -> list:
        H.wgmma_wait_group(0)
        retire(k_end - 1)
        return [add(total, x)]

    return if_values(rest % 2 == 1, [total.type], odd, even)[0]


def _consumer(plan, sched, pipe, g, tid_in_wg, warp_in_wg, c_desc, a_smem, b_smem, epi_smem, epilogue, split) -> None:  # noqa: ANN001
    from cute_ir import hopper as H
    from cute_ir.control import for_, if_

    cfg = plan.cfg
    a_addr = H.smem_address(a_smem)
    # warpgroup g's first 64-row slab of A: slab g * atoms_m (tile_m 256: two atoms per warpgroup); ping-pong's
    # warpgroups each take the whole tile
    a_wg_addr = a_addr if cfg.pingpong else a_addr + g * (cfg.atoms_m * plan.a.mn_atom_bytes)
    bases = _descriptor_bases(plan, a_wg_addr, H.smem_address(b_smem))
    epi_wg = H.smem_offset(epi_smem, g * (cfg.epi_buffers * cfg.epi_bytes))

    def store_slabs(accs: list, u: Int, origins: tuple, batch: Any) -> None:
        # tile_m 256: the warpgroup's two 64-row slabs one after the other; the buffer parity counts slabs
        for s, acc_s in enumerate(accs):
            _epilogue(plan, acc_s, g, u * cfg.atoms_m + s, tid_in_wg, warp_in_wg, c_desc, epi_wg, *origins, batch,
                      epilogue, slab=g * cfg.atoms_m + s)

    def allow_next_grid(u: Int, step: int = 1) -> None:
        # the CTA's last unit has its accumulators: the stream's next kernel may launch (programmatic dependent
        # launch; it waits for this grid before its own global accesses), overlapping this epilogue
        if_(u + step >= sched.num_units, H.launch_dependents)

    def unit_body(u: Int) -> None:
        wu = sched.work_unit(u)
        origins = _tile_origins(cfg, sched, wu)
        started = []

        def issued() -> None:
            # the fused epilogue's first loads (bias, the input's first calls) fly beside the last K-tile's wgmmas
            started.append(_start_fused(plan, epilogue, g, tid_in_wg, warp_in_wg, *origins, wu.l))

        if cfg.atoms_m > 1:
            accs = _mainloop(plan, pipe, sched, u, tid_in_wg, *bases)
            allow_next_grid(u)
            store_slabs(accs, u, origins, wu.l)
            return
        acc = _mainloop(plan, pipe, sched, u, tid_in_wg, *bases,
                        issued=None if epilogue is None else issued)
        allow_next_grid(u)
        _epilogue(plan, acc, g, u, tid_in_wg, warp_in_wg, c_desc, epi_wg, *origins, wu.l, epilogue,
                  started=started[0] if started else None)

    def split_unit_body(u: Int, count: Any) -> list:
        from .split_k import fixup

        wu = sched.work_unit(u)
        acc = _mainloop(plan, pipe, sched, u, tid_in_wg, *bases, (count, wu.k_begin, wu.k_end))
        acc = fixup(plan, acc, wu, g, tid_in_wg, split, g + _EPI_BARRIER_BASE, sched.work)
        # after the fix-up (a trigger before it let the next kernel park CTAs through the partials' wait: split-K
        # decode rows of 96 CTAs 4-8% slower back to back)
        allow_next_grid(u)

        def store() -> None:
            # only a tile's last unit stores it (`_epilogue` restarts the buffer order where chunks are odd)
            origins = _tile_origins(cfg, sched, wu)
            if cfg.atoms_m > 1:
                store_slabs(acc, u, origins, wu.l)
            else:
                _epilogue(plan, acc, g, u, tid_in_wg, warp_in_wg, c_desc, epi_wg, *origins, wu.l, epilogue)

        if_(wu.part == wu.parts - 1, store)
        return [count + (wu.k_end - wu.k_begin)]

    def pingpong_unit_body(u: Int) -> None:
        # whole tiles, units g, g + 2, ...; the math order barrier: WG 0's mainloop, then WG 1's, alternating
        wu = sched.work_unit(u)
        if_(u != 0, lambda: H.named_barrier_sync(g + _ORDER_BARRIER_BASE, 256))

        def issued() -> None:
            if_(u + 1 < sched.num_units, lambda: H.named_barrier_arrive((1 - g) + _ORDER_BARRIER_BASE, 256))

        acc = _mainloop(plan, pipe, sched, u, tid_in_wg, *bases, issued=issued)
        allow_next_grid(u, 2)
        # the tile's 64-row slabs one after the other; the buffer parity counts this warpgroup's own slabs
        accs = acc if cfg.atoms_m > 1 else [acc]
        row0, col0 = _tile_origins(cfg, sched, wu)
        for s, acc_s in enumerate(accs):
            _epilogue(plan, acc_s, g, (u // 2) * cfg.atoms_m + s if cfg.atoms_m > 1 else u // 2, tid_in_wg,
                      warp_in_wg, c_desc, epi_wg, row0, col0, wu.l, epilogue, slab=s)

    if cfg.pingpong:
        for_(g, sched.num_units, 2, pingpong_unit_body)
    elif split is None:
        for_(0, sched.num_units, 1, unit_body)
    else:
        for_(0, sched.num_units, 1, split_unit_body, init=[_zero_i32()])
    # the staging buffers must stay valid until the last TMA stores have read them
    if_(tid_in_wg == 0, lambda: H.tma_store_wait(0, read=True))


def _start_fused(plan, epilogue, slab, tid_in_wg, warp_in_wg, tile_row0, tile_col0, batch) -> tuple:  # noqa: ANN001
    """A unit's fused epilogue begun: its FusedEpilogue (which loads the unit's bias) and, with an input, the first
    INPUT_PREFETCH_CALLS `values` calls' loads issued; returns (FusedEpilogue, iterator of the calls left to prefetch
    ahead). The data-parallel cooperative kernel emits it once the unit's last wgmmas are issued, so that those loads
    fly beside them; the other paths at their epilogue's start."""
    from .epilogue_fused import FusedEpilogue

    cfg = plan.cfg
    params, m, n = epilogue
    fused = FusedEpilogue(cfg, params, m, n, slab, warp_in_wg, tid_in_wg % 32, tile_row0, tile_col0, batch)
    # with an input addend (or the pre-activation output: `FusedEpilogue.loads_ahead`), each `values` call's loads
    # (input values, bias pairs) are issued INPUT_PREFETCH_CALLS calls ahead (the scaled kernel's, whose scales hold
    # more registers: one), so a chunk's first values' loads cross its barriers and fly while the previous chunk
    # computes and stores; before, every chunk's loads waited behind its barrier (ncu, 2048 x 16384 -> 4096 bias +
    # residual: 10 K more cycles per 128x256 tile than the bias alone, about one load latency per chunk)
    ahead = iter(())
    if fused.loads_ahead:
        step = 2 if cfg.c_bytes == 2 else 1  # accumulator 8-column groups per `values` call
        calls = [range(j, j + step) for j in range(0, cfg.c_tile_n // 8, step)]
        dist = 1 if cfg.scaled else INPUT_PREFETCH_CALLS
        ahead = iter(calls[dist:])
        for c in calls[:dist]:
            fused.prefetch_inputs(c)
    return fused, ahead


def _epilogue(plan, acc, g, unit, tid_in_wg, warp_in_wg, c_desc, epi_wg, tile_row0, tile_col0, batch, epilogue,  # noqa: ANN001
              slab=None, started=None) -> None:
    """Accumulators -> C through the warpgroup's staging buffers, one 64 x epi_n chunk at a time.

    Chunk c of the unit goes through buffer `(unit * chunks + c) % epi_buffers`. Before a buffer is
    rewritten its last TMA store must have finished reading it: the issuing thread waits until at most
    `epi_buffers - 1` bulk groups are pending (with two buffers, the store of the previous chunk keeps
    running while this one is written), then the warpgroup synchronises on its own named barrier. Where units
    share K and the chunk count is not a multiple of `epi_buffers`, units without an epilogue would break that
    running order: there chunk c goes through buffer `c % epi_buffers` and chunk 0 first waits for every store
    (the previous epilogue's, issued at least one K loop earlier).
    With a fused epilogue (`epilogue` = (FusedParams, m, n)) each store's output values are computed just
    before it (one or two 8-column groups at a time, in the accumulators' per-thread order; SwiGLU: from twice
    as many accumulators), which keeps few of them live next to the remaining accumulators. `started`: the unit's
    `_start_fused` result where the caller began the fused epilogue earlier (beside the last wgmmas).
    """
    from cute_ir import hopper as H
    from cute_ir.control import if_
    from cute_ir.dtypes import element_type

    cfg = plan.cfg
    epi = plan.epi
    vals = H.accumulator_elements(acc, plan.wgmma)  # in the atom's value order
    lane = tid_in_wg % 32
    barrier_id = g + _EPI_BARRIER_BASE
    c_elem = element_type(cfg.c_dtype)
    slab = g if slab is None else slab  # the tile's 64-row slab: warpgroup g's, or ping-pong's atom index
    row0 = tile_row0 + slab * 64
    # C's first column: the accumulators' (SwiGLU: half of them, its edge tiles are never clamped along N)
    c_col0 = tile_col0 if cfg.c_tile_n == cfg.tile_n else tile_col0 // (cfg.tile_n // cfg.c_tile_n)
    chunks = cfg.c_tile_n // cfg.epi_n
    fused = aux_desc = None
    ahead = iter(())
    if epilogue is not None:
        fused, ahead = started or _start_fused(plan, epilogue, slab, tid_in_wg, warp_in_wg, tile_row0, tile_col0,
                                               batch)
        aux_desc = epilogue[0].aux_desc if cfg.has_aux else None

    def values(groups: range) -> dict:
        nxt = next(ahead, None)
        if nxt is not None:
            fused.prefetch_inputs(nxt)
        return fused.values(vals, groups)

    restart = cfg.shares_k and chunks % cfg.epi_buffers != 0  # each unit's chunks from buffer 0
    for chunk in range(chunks):
        groups = range(chunk * cfg.epi_n // 8, (chunk + 1) * cfg.epi_n // 8)
        if cfg.epi_buffers == 1:
            buf = epi_wg
        elif chunks % cfg.epi_buffers == 0 or restart:
            buf = H.smem_offset(epi_wg, (chunk % cfg.epi_buffers) * cfg.epi_bytes)
        else:
            parity = (unit * chunks + chunk) % cfg.epi_buffers
            buf = H.smem_offset(epi_wg, parity * cfg.epi_bytes)
        if cfg.epi_buffers > 1:
            pending = 0 if restart and chunk == 0 else cfg.epi_buffers - 1
            if_(tid_in_wg == 0, lambda pending=pending: H.tma_store_wait(pending, read=True))
        H.named_barrier_sync(barrier_id, 128)
        # the buffers a chunk's values go to: C's, and the pre-activation output's with `has_aux`
        bufs = (buf,) if aux_desc is None else (buf, H.smem_offset(buf, cfg.c_staging_bytes))
        if cfg.c_bytes == 1:
            # 8-bit C (N-major): each (group, row half) pair of values is one cvt to two e4m3 bytes, one 2-byte
            # st.shared at the f32 path's coordinates
            for j in groups:
                jloc = j - chunk * cfg.epi_n // 8
                src = values(range(j, j + 1))
                for h in (0, 1):
                    pair = fused.e4m3_pair(src[4 * j + 2 * h], src[4 * j + 2 * h + 1])
                    r, c = f32_store_coords(warp_in_wg, lane, jloc, h)
                    H.st_shared(H.smem_offset(buf, epi.offset(r, c)), [pair], alignment=2)
        elif cfg.c_bytes == 2:
            # stmatrix x4 per pair of 8-column groups (see epilogue.py for the index math)
            for j in list(groups)[::2]:
                src = vals if fused is None else values(range(j, j + 2))
                jloc = j - chunk * cfg.epi_n // 8
                trans = cfg.c_major == "m"
                r, c = stmatrix_row_coords(warp_in_wg, lane, jloc, trans)
                for b, srcs in zip(bufs, (src, fused and fused.pre), strict=False):
                    packed = [H.pack_b16x2(srcs[lo], srcs[hi], c_elem) for lo, hi in stmatrix_pair_values(j)]
                    H.stmatrix(H.smem_offset(b, epi.offset(r, c)), packed, trans=trans)
        else:
            for j in groups:
                jloc = j - chunk * cfg.epi_n // 8
                src = vals if fused is None else values(range(j, j + 1))
                for b, srcs in zip(bufs, (src, fused and fused.pre), strict=False):
                    for h in (0, 1):
                        lo = H.to_f32(srcs[4 * j + 2 * h])
                        hi = H.to_f32(srcs[4 * j + 2 * h + 1])
                        r, c = f32_store_coords(warp_in_wg, lane, jloc, h)
                        if cfg.c_major == "n":
                            H.st_shared(H.smem_offset(b, epi.offset(r, c)), [lo, hi], alignment=8)
                        else:
                            H.st_shared(H.smem_offset(b, epi.offset(r, c)), [lo], alignment=4)
                            H.st_shared(H.smem_offset(b, epi.offset(r, c + 1)), [hi], alignment=4)
        H.fence_proxy_async_shared()
        H.named_barrier_sync(barrier_id, 128)

        def store(chunk: int = chunk, bufs: tuple = bufs) -> None:
            col0 = c_col0 + chunk * cfg.epi_n
            for box in epi.boxes:
                mm = row0 + box.mn if box.mn else row0
                nn = col0 + box.k if box.k else col0
                coords = [nn, mm, batch] if cfg.c_major == "n" else [mm, nn, batch]
                for desc, b in zip((c_desc, aux_desc), bufs, strict=False):
                    H.tma_store(desc, H.smem_offset(b, box.smem_offset), coords)
            H.tma_store_commit()  # one bulk group: the buffers' waits above count both outputs' stores
            if cfg.epi_buffers == 1:
                H.tma_store_wait(0, read=True)

        if_(tid_in_wg == 0, store)
    if cfg.fp8_out:
        fused.store_amax(lane)

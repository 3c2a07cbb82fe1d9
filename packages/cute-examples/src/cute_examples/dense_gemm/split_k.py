"""Split-K and stream-K in the GEMM kernel (`kernel.dense_gemm_split`): its parameters and the parallel fix-up.

A config whose `decomposition` is "split_k" or "stream_k" walks the units of cute-nvarch's `KWork`: a unit
covers K tiles [k_begin, k_end) of one tile and is `part` of the `parts` units of that tile (K order). The
pipeline's stage/phase counter is a running count of the K tiles the CTA has loaded (not unit * k_tiles).

Fix-up (per consumer warpgroup, on its own arrival counter; parallel, and deterministic for a given
decomposition):
- the workspace holds float32 partial tiles, each warpgroup's (64 atoms_m) x tile_n part (tile_m 256: its two
  atoms one after the other) in the threads' own fragment order: float4 q of thread t of partial tile `p` at
  `((p * warpgroups + g) * atoms_m * tile_n / 8 + q) * 128 + t` (in float4s), so every access is one coalesced
  16-byte load or store per thread, no coordinates;
- a non-final part (part < parts - 1) stores its accumulators in its own partial tile (`KWork.partial(slot,
  part)`: split-K parts - 1 per tile, stream-K one per worker) without waiting, then, after the
  warpgroup's named barrier, one thread adds 1 to the tile's counter (`red.release.gpu.global.add.u32`);
- the final part (parts - 1: the tile's last K range, a fixed unit, not the last to arrive) waits until the
  counter equals parts - 1 (one thread polls with `ld.acquire.gpu`, then the named barrier), adds the
  partials of parts 0, 1, ..., parts - 2 to its registers in that order (((acc + p0) + p1) + ...: the same
  bits whatever the arrival order), sets the counter back to 0 (the next launch, a CUDA graph replay
  included, starts from zero) and runs the normal epilogue. Units of unshared tiles skip all of it.
Only final parts wait, and only on non-final units earlier in the launch, which never wait, so a grid whose
clusters are all resident (the persistent launch) cannot deadlock. Launches that share a workspace must not
overlap: the host keeps one workspace per plan and stream (`decomposed`); `MAX_WORKSPACE_BYTES` bounds it
(k_choice keeps data-parallel where a decomposition would need more).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .spec import GemmConfig

__all__ = ["MAX_WORKSPACE_BYTES", "SPLIT_PARAMS", "SplitParams", "fixup", "flag_count", "workspace_bytes"]

# the split kernel's run-time parameters after kernel.PARAMS (names as in its signature)
SPLIT_PARAMS = ("workspace", "flags", "splits")
MAX_WORKSPACE_BYTES = 64 << 20  # partial tiles of one launch, at most (k_choice keeps data-parallel beyond)


class SplitParams(NamedTuple):
    """The split kernel's run-time values: workspace and counter addresses (u64), split-K's parts (i32)."""

    workspace: Any
    flags: Any
    splits: Any


def workspace_bytes(cfg: GemmConfig, partial_cta_tiles: int) -> int:
    """Bytes of float32 partial tiles for `partial_cta_tiles` CTA tiles of `cfg`."""
    return partial_cta_tiles * cfg.tile_m * cfg.tile_n * 4


def flag_count(cfg: GemmConfig, cta_tiles: int) -> int:
    """i32 arrival counters for `cta_tiles` shared CTA tiles (one per consumer warpgroup)."""
    return cta_tiles * cfg.num_consumer_warpgroups


def fixup(plan: Any, acc: Any, wu: Any, g: Any, tid_in_wg: Any, split: SplitParams, barrier_id: Any,
          work: Any) -> Any:
    """The accumulators after the parallel fix-up of work unit `wu` of `work` (the launch's run-time KWork) by
    consumer warpgroup g (whose named barrier is `barrier_id`; see the module doc; unchanged when the tile is
    not shared); only the final part's result is complete."""
    from cute_ir import hopper as H
    from cute_ir import scalar as S
    from cute_ir.control import for_, if_, if_values
    from cute_ir.hopper import gmem_sync as G
    from cute_ir.values import to_i64
    from mlir import ir

    cfg = plan.cfg
    # a warpgroup of several 64-row atoms (tile_m 256) keeps its accumulators one after the other in its partials
    accs = list(acc) if cfg.atoms_m > 1 else [acc]
    regs = [r for a in accs for r in H.accumulator_values(a, plan.wgmma)]
    f32 = ir.F32Type.get()
    if any(r.type != f32 for r in regs):
        raise ValueError("the split-K fix-up needs float32 accumulators")
    quads = len(regs) // 4
    wgs, cs = cfg.num_consumer_warpgroups, cfg.cluster_m * cfg.cluster_n
    counter = split.flags + to_i64(wu.slot * wgs + g) * 4

    def partial_base(part: Any) -> Any:
        """The address of this thread's first float4 in the partial tile of `part` of this unit's tile."""
        cta_tile = work.partial(wu.slot // cs, part) * cs + wu.slot % cs
        return split.workspace + (to_i64(cta_tile * wgs + g) * (quads * 128) + to_i64(tid_in_wg)) * 16

    def shared() -> list:
        final = wu.part == wu.parts - 1

        def publish() -> None:
            base = partial_base(wu.part)
            for q in range(quads):
                G.st_global_cg_v4_f32(base + q * 128 * 16, regs[4 * q:4 * q + 4])
            H.named_barrier_sync(barrier_id, 128)
            if_(tid_in_wg == 0, lambda: G.red_release_gpu_add(counter, 1))

        def gather() -> list:
            if_(tid_in_wg == 0, lambda: G.spin_until_eq(counter, wu.parts - 1))
            H.named_barrier_sync(barrier_id, 128)

            def add(i: Any, *carried: Any) -> list:
                base = partial_base(i)
                out = list(carried)
                for q in range(quads):
                    partial = G.ld_global_cg_v4_f32(base + q * 128 * 16)
                    for j in range(4):
                        out[4 * q + j] = S.add(out[4 * q + j], partial[j])
                return out

            summed = for_(0, wu.parts - 1, 1, add, init=regs)
            if_(tid_in_wg == 0, lambda: G.st_release_gpu(counter, 0))
            return summed

        if_(wu.part < wu.parts - 1, publish)
        return if_values(final, [f32] * len(regs), gather, lambda: regs)

    out = if_values(wu.parts > 1, [f32] * len(regs), shared, lambda: regs)
    per = len(regs) // len(accs)
    fixed = [H.accumulator_from_values(out[i * per:(i + 1) * per], plan.wgmma) for i in range(len(accs))]
    return fixed if cfg.atoms_m > 1 else fixed[0]

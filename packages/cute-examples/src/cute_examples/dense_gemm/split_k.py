"""Split-K and stream-K in the GEMM kernel (`kernel.dense_gemm_split`): its parameters and the ordered fix-up.

A config whose `decomposition` is "split_k" or "stream_k" walks the units of cute-nvarch's `KWork`: a unit
covers K tiles [k_begin, k_end) of one tile and is `part` of the `parts` units of that tile (K order). The
pipeline's stage/phase counter is a running count of the K tiles the CTA has loaded (not unit * k_tiles).

Fix-up (per consumer warpgroup, on its own flag; deterministic for a given decomposition):
- the workspace holds one float32 partial tile per shared CTA tile (`slot`), each warpgroup's 64 x tile_n
  part in the threads' own fragment order: float4 q of thread t at `((slot * warpgroups + g) * tile_n / 8 + q)
  * 128 + t` (in float4s), so every access is one coalesced 16-byte load or store per thread and no
  coordinates are needed;
- part 0 stores its accumulators; part i > 0 waits until its flag equals i (one thread polls with
  `ld.acquire.gpu`, then the warpgroup's named barrier), and adds the partial to its accumulators (the
  order of the additions is fixed: ((p0 + p1) + p2) + ...); a part other than the last stores the sum and,
  after the barrier, one thread releases the flag to i + 1 (`st.release.gpu`);
- the last part keeps the sum in its registers, sets the flag back to 0 (so the next launch, a CUDA graph
  replay included, starts from zero) and runs the normal epilogue. Units of unshared tiles skip all of it.
A part only waits for units that come earlier in the launch, so a grid whose clusters are all resident
(the persistent launch: at most one cluster per SM group) cannot deadlock. Launches that share a workspace
must not overlap: the host keeps one workspace per plan and stream (`decomposed`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .spec import GemmConfig

__all__ = ["SPLIT_PARAMS", "SplitParams", "fixup", "flag_count", "workspace_bytes"]

# the split kernel's run-time parameters after kernel.PARAMS (names as in its signature)
SPLIT_PARAMS = ("workspace", "flags", "splits")


class SplitParams(NamedTuple):
    """The split kernel's run-time values: workspace and flag addresses (u64), split-K's parts (i32)."""

    workspace: Any
    flags: Any
    splits: Any


def workspace_bytes(cfg: GemmConfig, cta_tiles: int) -> int:
    """Bytes of float32 partial tiles for `cta_tiles` shared CTA tiles of `cfg`."""
    return cta_tiles * cfg.tile_m * cfg.tile_n * 4


def flag_count(cfg: GemmConfig, cta_tiles: int) -> int:
    """i32 fix-up flags for `cta_tiles` shared CTA tiles (one per consumer warpgroup)."""
    return cta_tiles * cfg.num_consumer_warpgroups


def fixup(plan: Any, acc: Any, wu: Any, g: Any, tid_in_wg: Any, split: SplitParams, barrier_id: Any) -> Any:
    """The accumulators after the ordered fix-up of work unit `wu` by consumer warpgroup g (whose named barrier
    is `barrier_id`; see the module doc; unchanged when the tile is not shared); only the last part's result is
    complete."""
    from cute_ir import hopper as H
    from cute_ir import scalar as S
    from cute_ir.control import if_, if_values
    from cute_ir.hopper import gmem_sync as G
    from cute_ir.values import to_i64
    from mlir import ir

    cfg = plan.cfg
    regs = H.accumulator_values(acc, plan.wgmma)
    f32 = ir.F32Type.get()
    if any(r.type != f32 for r in regs):
        raise ValueError("the split-K fix-up needs float32 accumulators")
    quads = len(regs) // 4
    slot_wg = to_i64(wu.slot * cfg.num_consumer_warpgroups + g)
    base = split.workspace + (slot_wg * (quads * 128) + to_i64(tid_in_wg)) * 16
    flag = split.flags + slot_wg * 4

    def shared() -> list:
        if_((tid_in_wg == 0) & (wu.part > 0), lambda: G.spin_until_eq(flag, wu.part))
        H.named_barrier_sync(barrier_id, 128)

        def add() -> list:
            out = []
            for q in range(quads):
                partial = G.ld_global_cg_v4_f32(base + q * 128 * 16)
                out += [S.add(partial[i], regs[4 * q + i]) for i in range(4)]
            return out

        summed = if_values(wu.part > 0, [f32] * len(regs), add, lambda: regs)

        def publish() -> None:
            for q in range(quads):
                G.st_global_cg_v4_f32(base + q * 128 * 16, summed[4 * q:4 * q + 4])
            H.named_barrier_sync(barrier_id, 128)
            if_(tid_in_wg == 0, lambda: G.st_release_gpu(flag, wu.part + 1))

        def reset() -> None:
            if_(tid_in_wg == 0, lambda: G.st_release_gpu(flag, 0))

        if_(wu.part == wu.parts - 1, reset, publish)
        return summed

    final = if_values(wu.parts > 1, [f32] * len(regs), shared, lambda: regs)
    return H.accumulator_from_values(final, plan.wgmma)

"""Host side of the K decompositions: a launch's schedule (kind, count, units, grid), its workspace, the launch.

`schedule_of(shape, cfg, num_sms, splits)` describes the persistent launch of `cfg` for an M x N x K x L
problem: data-parallel (host.schedule's grid and order), split-K (`splits` parts of every tile's K tiles)
or stream-K (cfg.decomposition), all from cute-nvarch's TileScheduler/KWork (what the kernel walks).
`Schedule.label` is what bench rows and tests print.

`Workspace` holds, per device and stream, the float32 partial tiles (`Schedule.partial_cta_tiles`: split-K
parts - 1 per tile, stream-K one per worker CTA) and the int32 arrival counters (zeroed once; the kernel
leaves them zero) and grows them when a launch needs more (at most `split_k.MAX_WORKSPACE_BYTES` of
partials: `schedule_of` refuses more, k_choice never picks more); launches on one stream are
ordered, so they may share it, and launches on different streams get their own (`split_k`'s fix-up is
only safe when the launches sharing a workspace do not overlap).

The decomposition may change with the SM count (stream-K's workers are the clusters that fit), so bits
are reproducible for a fixed device model, SM count, shape, strides, dtypes and config.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cute_nvarch.tile_scheduler import Decomposition

from .spec import GemmConfig
from .split_k import MAX_WORKSPACE_BYTES, flag_count, workspace_bytes

__all__ = ["Schedule", "Workspace", "launch_decomposed", "schedule_of"]


@dataclass(frozen=True)
class Schedule:
    """One launch's decomposition and grid (what a bench row prints)."""

    kind: str
    splits: int  # split-K parts per tile (effective: at most the K tiles), else 1
    workers: int  # stream-K workers (clusters sharing the last tiles' K iterations), else 0
    sk_tiles: int  # cluster tiles shared by stream-K workers
    units: int  # cluster-shaped units the launch walks (stream-K: one per worker plus the data-parallel tiles)
    shared_cta_tiles: int  # CTA tiles shared by several units (an arrival counter each)
    grid: tuple[int, int, int]
    raster_along_n: int
    swizzle_log: int
    partial_cta_tiles: int = 0  # CTA tiles of float32 partial accumulators in the workspace
    workspace_bytes: int = 0  # their bytes (at most split_k.MAX_WORKSPACE_BYTES)

    @property
    def label(self) -> str:
        """e.g. "stream_k W=132 sk_tiles=84 units=528 grid=132x1x1 raster_n=1 swz=2"."""
        grid = "x".join(map(str, self.grid))
        count = {"split_k": f" S={self.splits}", "stream_k": f" W={self.workers} sk_tiles={self.sk_tiles}"}
        return (f"{self.kind}{count.get(self.kind, '')} units={self.units} grid={grid} "
                f"raster_n={self.raster_along_n} swz={self.swizzle_log}")

    @property
    def decomposition(self) -> Decomposition:
        """The cute-nvarch Decomposition of this launch."""
        return Decomposition(self.kind, self.splits if self.kind == "split_k" else 1)


def schedule_of(shape: Any, cfg: GemmConfig, num_sms: int, splits: int = 1, order: tuple = (None, None)) -> Schedule:
    """The launch schedule of `cfg` for `shape` (anything with m, n, k, l) on `num_sms` SMs; `order`: the
    (raster_along_n, swizzle_log) to launch with, each None for the host's pick."""
    from .host import schedule

    sched = cfg.tile_scheduler
    m, n, k, l = shape.m, shape.n, shape.k, shape.l
    grid, raster_n, swz = schedule(shape, cfg, num_sms, *order)
    if not cfg.shares_k:
        units = sched.num_units(m, n, l)
        return Schedule("data_parallel", 1, 0, 0, units, 0, grid, raster_n, swz)
    decomp = Decomposition(cfg.decomposition, splits if cfg.decomposition == "split_k" else 1)
    clusters = sched.decomposed_clusters(decomp, m, n, k, l, num_sms)
    work = sched.k_work(decomp, m, n, k, l, clusters)
    partials = sched.partial_tiles(decomp, m, n, k, l, clusters)
    nbytes = workspace_bytes(cfg, partials)
    if nbytes > MAX_WORKSPACE_BYTES:
        raise ValueError(
            f"schedule_of: {cfg.decomposition} of {m}x{n}x{k}x{l} on {cfg.tile_m}x{cfg.tile_n} tiles needs "
            f"{nbytes} bytes of partial tiles, more than MAX_WORKSPACE_BYTES ({MAX_WORKSPACE_BYTES}): use fewer "
            "splits or data-parallel"
        )
    return Schedule(
        cfg.decomposition, work.splits, work.workers, work.sk_tiles, work.total_units,
        sched.workspace_tiles(decomp, m, n, k, l, clusters), (cfg.cluster_m * clusters, cfg.cluster_n, 1),
        raster_n, swz, partials, nbytes,
    )


class Workspace:
    """Per (device, stream) float32 partial tiles and zeroed int32 arrival counters of a plan, grown on demand."""

    def __init__(self) -> None:
        self._held: dict[tuple[int, int], tuple[Any, Any]] = {}

    def held(self, device: int, stream: int) -> tuple[Any, Any] | None:
        """The (partial tiles, counters) torch tensors held for `device` and raw `stream`, if any."""
        return self._held.get((device, stream))

    def pointers(self, cfg: GemmConfig, schedule: Schedule, device: int, stream: int) -> tuple[int, int]:
        """(workspace, flags) device addresses for a launch of `schedule` on device ordinal `device` and raw stream
        handle `stream` (the torch tensors are kept here)."""
        import torch

        need_ws = max(schedule.workspace_bytes // 4, 4)
        need_flags = flag_count(cfg, max(schedule.shared_cta_tiles, 1))
        key = (device, stream)
        held = self._held.get(key)
        if held is None or held[0].numel() < need_ws or held[1].numel() < need_flags:
            # allocated in the stream's order (zeros: a memset queued there, before the launch)
            with torch.cuda.device(device), torch.cuda.stream(torch.cuda.ExternalStream(stream, device=device)):
                held = (
                    torch.empty(need_ws, dtype=torch.float32, device=torch.device("cuda", device)),
                    torch.zeros(need_flags, dtype=torch.int32, device=torch.device("cuda", device)),
                )
            self._held[key] = held
        return held[0].data_ptr(), held[1].data_ptr()


def launch_decomposed(
    kernel: Any, problem: Any, cfg: GemmConfig, schedule: Schedule, workspace: Workspace, stream: Any = None,
    extra: tuple = (),
) -> None:
    """Encode the descriptors and launch `kernel` (cfg's dense_gemm_split; dense_gemm_split_fused with its
    FUSED_PARAMS values in `extra`, dense_gemm_split_scaled with its FUSED_PARAMS and SCALE_PARAMS values) for
    `problem` with `schedule`."""
    import torch

    from .host import tensor_maps, with_aux_desc

    if not cfg.shares_k:
        raise ValueError(f"launch_decomposed: config {cfg.name} is data-parallel (use host.launch_gemm)")
    stream = stream if stream is not None else torch.cuda.current_stream()
    ws, flags = workspace.pointers(cfg, schedule, torch.cuda.current_device(), stream.cuda_stream)
    a_map, b_map, c_map = tensor_maps(problem, cfg)
    p, s = problem, schedule
    kernel.launch(s.grid, a_map, b_map, c_map, p.m, p.n, p.k, p.l, s.raster_along_n, s.swizzle_log,
                  *with_aux_desc(extra, c_map), ws, flags, s.splits, stream=stream.cuda_stream)

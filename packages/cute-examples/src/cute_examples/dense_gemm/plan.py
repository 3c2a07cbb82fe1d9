"""Everything architectural the GEMM kernel needs, as plain numbers from cute-nvarch and cute-layout.

`make_plan(cfg)` computes, at build time and without MLIR:

- the wgmma atom (`make_wgmma_atom`, which the wgmma builders take as it is) and the TiledMma over the
  consumer warpgroups (`make_tiled_mma`, atom layout (tile_m/64, 1, 1));
- the staged A and B shared-memory buffers (`make_gmma_smem_layout`: GMMA atoms, widest swizzle, K-major
  buffers MN-first, MN-major buffers K-first) and their descriptors (`TiledMma.smem_desc_A/B`: the 64-bit
  descriptor of the first K-block as two 32-bit halves, the byte advance per K-block, per M-atom (one per
  consumer warpgroup) and per stage);
- the TMA tile plans of one stage (`make_tma_tile_plan`, their one owner, multicast split included; the
  host binds them to the tensors of each call): box extents, the tile-relative coordinates, the
  shared-memory offset and the issuing CTA (multicast rank) of each box (swizzles are applied
  identically by TMA and WGMMA on the 1024-byte-aligned buffer). The tests check every config's boxes
  against the buffer layout (coverage, placement, equal multicast shares);
- the epilogue staging buffer (64 x epi_n of C, `epi_buffers` of them per consumer warpgroup, a GMMA
  layout of the C type whose contiguous mode is C's, swizzled by `epi_layout_type`: 128 bytes, 64 for the
  32-column chunks of tiles 96 and 160) and its TMA store boxes (the epilogue's accumulator positions,
  `epilogue.py`, are tested against the atom's C layout);
- the shared-memory plan (`GemmConfig.smem_plan`, cute-nvarch's allocator: barriers, A stages, B stages,
  staging buffers, each aligned to its swizzle pattern), checked against the target's capacity.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cute_layout import ComposedLayout
from cute_nvarch.gmma_smem import make_gmma_smem_layout
from cute_nvarch.mma_sm90 import make_wgmma_atom
from cute_nvarch.numeric import numeric_type
from cute_nvarch.smem import SmemPlan
from cute_nvarch.tiled_mma import make_tiled_mma
from cute_nvarch.tma import TmaTilePlan, make_tma_tile_plan

from .spec import GemmConfig

if TYPE_CHECKING:  # cute_ir.hopper imports MLIR: only make_plan (a compile-time step) needs it
    from cute_ir.hopper.pipeline import PipelineSpec
    from cute_nvarch.mma_atom import MmaAtom

__all__ = ["EpiloguePlan", "GemmPlan", "OperandPlan", "TmaBox", "make_plan", "tma_boxes"]



@dataclass(frozen=True)
class TmaBox:
    """One TMA box of a tile: offsets (elements) along the tile's (MN, K) modes, smem byte offset, issuer.

    `slot` is the position, in its multicast group, of the CTA that issues the box (0 without multicast).
    """

    mn: int
    k: int
    smem_offset: int
    slot: int = 0


@dataclass(frozen=True)
class OperandPlan:
    """A or B: descriptor halves and advances, stage size, TMA tile plan and boxes, multicast share."""

    major: str  # "k" or "mn": which mode is contiguous in global and shared memory
    desc_lo: int
    desc_hi: int
    k_block_bytes: int
    mn_atom_bytes: int
    stage_bytes: int
    tma: TmaTilePlan  # one stage of an (MN, K, L) tensor; the host binds it to the operand
    boxes: tuple[TmaBox, ...]
    multicast: int  # CTAs sharing these boxes (the CTA at position p of the group issues boxes of slot p)

    @property
    def box_dims(self) -> tuple[int, int]:
        """(innermost, outer) box extents in elements, the cuTensorMapEncodeTiled boxDim."""
        return self.tma.box_dims[0], self.tma.box_dims[1]

    @property
    def swizzle(self) -> int:
        """The CUtensorMapSwizzle value."""
        return self.tma.swizzle


@dataclass(frozen=True)
class EpiloguePlan:
    """One consumer warpgroup's C staging buffer (64 x epi_n) and its TMA store boxes."""

    layout: ComposedLayout  # (row, col) -> element offset in the staging buffer (swizzled)
    elem_bytes: int
    tma: TmaTilePlan  # one staging buffer of the (M, N, L) tensor C; the host binds it to C
    boxes: tuple[TmaBox, ...]  # mn = row offset, k = column offset

    @property
    def box_dims(self) -> tuple[int, int]:
        """(innermost, outer) box extents in elements."""
        return self.tma.box_dims[0], self.tma.box_dims[1]

    @property
    def swizzle(self) -> int:
        """The CUtensorMapSwizzle value."""
        return self.tma.swizzle

    def offset(self, row: object, col: object) -> object:
        """Byte offset of C element (row, col) of the chunk; works on ints and on cute_ir Ints."""
        return self.layout((row, col)) * self.elem_bytes


@dataclass(frozen=True)
class GemmPlan:
    """The numbers of one GemmConfig's kernel."""

    cfg: GemmConfig
    wgmma: MmaAtom  # cute-nvarch's wgmma atom: the wgmma builders take it as it is
    a: OperandPlan
    b: OperandPlan
    epi: EpiloguePlan
    pipeline: PipelineSpec
    smem: SmemPlan


def _nvarch_boxes(
    layout: object,
    major: str,
    dtype: object,
    cluster: tuple[int, int, int],
    axis: int | None,
    what: str,
) -> tuple[TmaTilePlan, tuple[TmaBox, ...]]:
    """cute-nvarch's TMA tile plan of an (MN, K) tile of an (MN, K, L) tensor, and its boxes as (MN, K) offsets."""
    plan = make_tma_tile_plan(
        dtype, layout, rank=3, contiguous_mode=1 if major == "k" else 0, cluster_shape=cluster, multicast_axis=axis
    )
    if plan.box_dims[2] != 1 or plan.dim_order[2] != 2:
        raise ValueError(f"{what}: unexpected TMA plan {plan.box_dims} / {plan.dim_order}")
    mode_of = plan.dim_order  # tensor-map dim j is tensor mode mode_of[j] (0 = MN, 1 = K)
    boxes = []
    for b in plan.boxes:
        off = [0, 0]
        for j in range(2):
            off[mode_of[j]] = b.coords[j]
        boxes.append(TmaBox(off[0], off[1], b.smem_offset, b.multicast_rank))
    return plan, tuple(boxes)


def _operand(cfg: GemmConfig, which: str, tiled, stages: int) -> OperandPlan:  # noqa: ANN001
    dtype = numeric_type(cfg.a_dtype if which == "A" else cfg.b_dtype)
    major = "k" if (cfg.a_major if which == "A" else cfg.b_major) == "k" else "mn"
    tile_mn = cfg.tile_m if which == "A" else cfg.tile_n
    layout = make_gmma_smem_layout(dtype, "K" if major == "k" else "MN", tile_mn, cfg.tile_k, stages)
    if which == "A":
        d = tiled.smem_desc_A(layout)
        mn_adv = d.mn_atom_advance if d.mn_atoms > 1 else 0
        if cfg.tile_m > 64:
            # the second 64-row slice (consumer warpgroup, or ping-pong's second atom) starts one M-atom further
            d1 = tiled.smem_desc_A(layout, 0, 128)
            mn_adv = d1.desc.start_address - d.desc.start_address
    else:
        d = tiled.smem_desc_B(layout)
        mn_adv = 0
    stage_bytes = d.stage_advance if stages > 1 else tile_mn * cfg.tile_k * cfg.ab_bytes
    if stage_bytes != tile_mn * cfg.tile_k * cfg.ab_bytes:
        raise ValueError(f"{which}: stage advance {stage_bytes} is not the tile size")
    if d.desc.start_address != 0:
        raise ValueError(f"{which}: the first descriptor must start at 0, got {d.desc.start_address}")
    multicast = cfg.cluster_n if which == "A" else cfg.cluster_m
    stage0 = make_gmma_smem_layout(dtype, "K" if major == "k" else "MN", tile_mn, cfg.tile_k)
    # cute-nvarch's plan owns the boxes and their multicast split (A is shared along N, B along M)
    cluster = (cfg.cluster_m, cfg.cluster_n, 1)
    axis = (1 if which == "A" else 0) if multicast > 1 else None
    tma, boxes = _nvarch_boxes(stage0, major, dtype, cluster, axis, which)
    return OperandPlan(
        major=major,
        desc_lo=d.desc.lo,
        desc_hi=d.desc.hi,
        k_block_bytes=d.k_block_advance,
        mn_atom_bytes=mn_adv,
        stage_bytes=stage_bytes,
        tma=tma,
        boxes=boxes,
        multicast=multicast,
    )


def _epilogue(cfg: GemmConfig) -> EpiloguePlan:
    dtype = numeric_type(cfg.c_dtype)
    major = "k" if cfg.c_major == "n" else "mn"  # (M, N) seen as (MN, K): N contiguous is "K-major"
    layout = make_gmma_smem_layout(
        dtype, "K" if major == "k" else "MN", 64, cfg.epi_n, layout_type=cfg.epi_layout_type
    )
    tma, boxes = _nvarch_boxes(layout, major, dtype, (1, 1, 1), None, "C")
    return EpiloguePlan(layout, cfg.c_bytes, tma, boxes)


def _tiled_mma(cfg: GemmConfig) -> tuple[object, object]:
    """cute-nvarch's wgmma atom and TiledMma of `cfg` (one atom per 64 rows of the tile along M)."""
    a_major = "K" if cfg.a_major == "k" else "MN"
    b_major = "K" if cfg.b_major == "k" else "MN"
    atom = make_wgmma_atom(
        cfg.a_dtype, cfg.b_dtype, cfg.acc_dtype, cfg.tile_n, a_major, b_major
    )
    return atom, make_tiled_mma(atom, (cfg.tile_m // 64, 1, 1))


@functools.lru_cache(maxsize=256)
def tma_boxes(cfg: GemmConfig) -> tuple[OperandPlan, OperandPlan, EpiloguePlan]:
    """The A, B and C TMA plans of `cfg` (box extents, swizzle): what the host encodes, without MLIR."""
    _, tiled = _tiled_mma(cfg)
    return _operand(cfg, "A", tiled, cfg.num_stages), _operand(cfg, "B", tiled, cfg.num_stages), _epilogue(cfg)


@functools.lru_cache(maxsize=256)
def make_plan(cfg: GemmConfig) -> GemmPlan:
    """The plan of `cfg`'s kernel (cached per config); needs cute_ir.hopper (and so MLIR)."""
    from cute_ir.hopper.pipeline import PipelineSpec

    atom, _ = _tiled_mma(cfg)
    stages = cfg.num_stages
    a, b, epi = tma_boxes(cfg)
    # the config's allocator plan (its one owner; the launch size and the capacity check come from it)
    plan = cfg.smem_plan(stages).check(cfg.target)
    # A is multicast along the cluster's rows, B along its columns: the pipeline block counts the releases (of
    # the warpgroups sharing a tile: one with ping-pong, whose warpgroups take every other unit)
    pipeline = PipelineSpec.for_groups(
        stages,
        cfg.a_stage_bytes + cfg.b_stage_bytes,
        cfg.mma_warpgroups,
        (cfg.cluster_m, cfg.cluster_n),
        cfg.release_scope,
    )
    return GemmPlan(cfg, atom, a, b, epi, pipeline, plan)

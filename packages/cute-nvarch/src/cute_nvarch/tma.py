"""TMA plans in two steps: how boxes fill one shared-memory tile (static), then the binding to a global
tensor that gives the exact `cuTensorMapEncodeTiled` arguments (per call).

`make_tma_tile_plan(dtype, smem_layout, rank=..., contiguous_mode=...)` plans one tile from the
shared-memory layout of the tile (tile coordinates, in the global tensor's mode order, to shared-memory
elements; a plain Layout or a GMMA-swizzled ComposedLayout; one pipeline stage), the global tensor's rank
and which of its modes is contiguous (stride 1). It needs no extents: a kernel plans its tiles once, at
build time. Tensor map dimension 0 is the contiguous mode; the other tiled modes follow in the order of
their shared-memory strides, then the untiled modes (box extent 1).

`TmaTilePlan.bind(global_shape, global_stride)` (extents and element strides in tensor-mode order) checks
the tensor against TMA's rules and returns the `TmaPlan`: the tile plan plus global dims and byte
strides in tensor-map order, whose `encode_args(address)` is the driver's argument tuple (cute-runtime's
`TensorMap.from_plan` encodes it). `make_tma_plan(global_shape, global_stride, dtype, smem_layout)` is
both steps at once, the contiguous mode read off the strides.

A box is written to shared memory packed, dimension 0 fastest, and swizzled by the address; so along
each tensor-map dimension the box takes the leading run of the tile's shared-memory mode that
continues the packing (capped at 256, and at the swizzle span for dimension 0). Boxes then repeat
over the tile; `boxes` lists each box's coordinates (tensor-map order, elements, relative to the
tile's origin) and its shared-memory byte offset, sorted by that offset.

With multicast (`cluster_shape`, `multicast_axis`: the cluster axis whose CTAs share the tile, 1 for
an A tile shared along N, 0 for B), every CTA of the group issues an equal share of the tile's boxes to
`multicast_mask(cta)`: CTA `r` issues the boxes with `multicast_rank == r`, the r-th of `num_multicast`
equal runs in shared-memory order. The split policy is the fewest, largest copies: whole boxes when their
count divides among the CTAs, else the slowest box dimension is split into the fewest parts that make it
divide (an MN-major 128 x 64 f16 tile over two CTAs: one (64, 64) box each, not two (64, 32) ones).

Enum fields are plain ints equal to the driver's `CUtensorMap*` enums.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

from cute_layout import Layout, coalesce, right_inverse

from cute_nvarch._layouts import (
    LayoutLike,
    concat,
    flat_modes,
    modes_of,
    size_of,
    split_swizzle,
)
from cute_nvarch.copy_atom import make_tma_load_atom, make_tma_store_atom
from cute_nvarch.numeric import NumericType, numeric_type
from cute_nvarch.tiled_copy import TiledCopy, make_tiled_copy

__all__ = [
    "TmaSwizzle",
    "TmaInterleave",
    "TmaL2Promotion",
    "TmaOobFill",
    "TmaBox",
    "TmaPlan",
    "TmaTilePlan",
    "make_tma_plan",
    "make_tma_tile_plan",
    "make_tma_copy",
    "cluster_multicast_mask",
    "TMA_MAX_RANK",
    "TMA_MAX_BOX",
]

TMA_MAX_RANK = 5
TMA_MAX_BOX = 256


class TmaSwizzle:
    """`CUtensorMapSwizzle` values."""

    NONE = 0
    B32 = 1
    B64 = 2
    B128 = 3


class TmaInterleave:
    """`CUtensorMapInterleave` values."""

    NONE = 0
    B16 = 1
    B32 = 2


class TmaL2Promotion:
    """`CUtensorMapL2promotion` values."""

    NONE = 0
    B64 = 1
    B128 = 2
    B256 = 3


class TmaOobFill:
    """`CUtensorMapFloatOOBfill` values."""

    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


_SWIZZLE_BYTES = {TmaSwizzle.NONE: 0, TmaSwizzle.B32: 32, TmaSwizzle.B64: 64, TmaSwizzle.B128: 128}


@dataclass(frozen=True)
class TmaBox:
    """One box of a tile.

    Fields:
      coords: element coordinates of the box's first element relative to the tile's origin, in
        tensor-map dimension order (what `cp.async.bulk.tensor` takes, after adding the tile origin).
      smem_offset: byte offset of the box in the tile's shared memory.
      multicast_rank: which CTA of the multicast group issues it (0 without multicast).
    """

    coords: tuple[int, ...]
    smem_offset: int
    multicast_rank: int


@dataclass(frozen=True)
class TmaTilePlan:
    """The static plan of one tile: boxes, order, swizzle, multicast; see the module docstring.

    Fields that `cuTensorMapEncodeTiled` takes are plain ints.

    Fields:
      dtype: element type; data_type: `CUtensorMapDataType`.
      rank: tensor-map rank (the global tensor's); box_dims: box extents; element_strides: all 1.
      interleave, swizzle, l2_promotion, oob_fill: the enum arguments.
      dim_order: tensor-map dimension j is tensor mode dim_order[j] (dim_order[0]: the contiguous mode).
      tile_shape: the tile's extents in tensor-mode order (1 for untiled modes).
      smem_layout: tile coordinates -> shared-memory element offset, without the swizzle, each mode coalesced.
      boxes: every box of the tile (all multicast ranks), sorted by shared-memory offset.
      cluster_shape, multicast_axis, num_multicast: the multicast setting (num_multicast 1 without).
    """

    dtype: NumericType
    data_type: int
    rank: int
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: int
    swizzle: int
    l2_promotion: int
    oob_fill: int
    dim_order: tuple[int, ...]
    tile_shape: tuple[int, ...]
    smem_layout: Layout
    swizzled_smem_layout: LayoutLike
    boxes: tuple[TmaBox, ...]
    cluster_shape: tuple[int, int, int]
    multicast_axis: int | None
    num_multicast: int
    # bind()'s results by (shape, stride, base_alignment): a launch binds the same tensor geometry repeatedly
    _bound: dict = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    @property
    def box_elements(self) -> int:
        """Elements in one box."""
        n = 1
        for b in self.box_dims:
            n *= b
        return n

    @property
    def box_bytes(self) -> int:
        """Bytes in one box."""
        return self.box_elements * self.dtype.width // 8

    @property
    def tile_bytes(self) -> int:
        """Bytes of the whole tile: the transaction count each receiving CTA's mbarrier expects."""
        n = 1
        for t in self.tile_shape:
            n *= t
        return n * self.dtype.width // 8

    @property
    def boxes_per_cta(self) -> int:
        """Boxes each CTA issues per tile."""
        return len(self.boxes) // self.num_multicast

    def bind(self, global_shape: tuple[int, ...], global_stride: tuple[int, ...], base_alignment: int = 16) -> TmaPlan:
        """The plan for a global tensor (extents, element strides, tensor-mode order): TMA's rules checked.

        `base_alignment` is the alignment in bytes guaranteed for the tensor's base address. Results are
        cached per geometry (the most recent 64).
        """
        key = (tuple(global_shape), tuple(global_stride), base_alignment)
        plan = self._bound.get(key)
        if plan is None:
            plan = _bind(self, key[0], key[1], base_alignment, "TmaTilePlan.bind")
            if len(self._bound) >= _BIND_CACHE:
                self._bound.pop(next(iter(self._bound)))
            self._bound[key] = plan
        return plan

    def boxes_for(self, multicast_rank: int = 0) -> tuple[TmaBox, ...]:
        """The boxes one CTA of the multicast group issues."""
        if not 0 <= multicast_rank < self.num_multicast:
            raise ValueError(f"TmaPlan.boxes_for: multicast_rank must be in 0..{self.num_multicast - 1}")
        return tuple(b for b in self.boxes if b.multicast_rank == multicast_rank)

    def multicast_rank_of(self, cta_rank: int) -> int:
        """The multicast rank (slice index) of the CTA with this rank in the cluster."""
        if self.multicast_axis is None:
            return 0
        return _cluster_coord(self.cluster_shape, cta_rank)[self.multicast_axis]

    def multicast_mask(self, cta_rank: int) -> int:
        """The 16-bit CTA mask a CTA's multicast loads write to (itself only without multicast)."""
        if self.multicast_axis is None:
            _cluster_coord(self.cluster_shape, cta_rank)
            return 1 << cta_rank
        return cluster_multicast_mask(self.cluster_shape, cta_rank, self.multicast_axis)

    def tile_origin(self, tile_coord: tuple[int, ...]) -> tuple[int, ...]:
        """Tensor-map coordinates of a tile's origin from its tile index per tensor mode."""
        if len(tile_coord) != len(self.tile_shape):
            raise ValueError(
                f"TmaPlan.tile_origin: tile_coord needs {len(self.tile_shape)} modes, got {tile_coord!r}"
            )
        return tuple(tile_coord[m] * self.tile_shape[m] for m in self.dim_order)

    def box_coordinates(
        self, tile_coord: tuple[int, ...], multicast_rank: int = 0
    ) -> tuple[tuple[int, ...], ...]:
        """Absolute tensor-map coordinates of every box one CTA issues for the tile `tile_coord`."""
        origin = self.tile_origin(tile_coord)
        boxes = self.boxes_for(multicast_rank)
        return tuple(tuple(o + c for o, c in zip(origin, b.coords, strict=True)) for b in boxes)


@dataclass(frozen=True)
class TmaPlan(TmaTilePlan):
    """A tile plan bound to a global tensor (`TmaTilePlan.bind`): everything `cuTensorMapEncodeTiled` takes.

    Fields (besides the tile plan's): global_dims: extents in tensor-map order; global_strides: bytes,
    dims 1..rank-1.
    """

    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]

    @property
    def tensor_map_args(self) -> tuple:
        """(data type, rank, global dims, global strides, box dims, element strides, interleave, swizzle,
        L2 promotion, OOB fill): `cuTensorMapEncodeTiled`'s arguments without the global address."""
        return (
            self.data_type,
            self.rank,
            self.global_dims,
            self.global_strides,
            self.box_dims,
            self.element_strides,
            self.interleave,
            self.swizzle,
            self.l2_promotion,
            self.oob_fill,
        )

    def encode_args(self, global_address: int) -> tuple:
        """The full `cuTensorMapEncodeTiled` argument tuple, global address third (checked for alignment)."""
        self.check_global_address(global_address)
        args = self.tensor_map_args
        return args[:2] + (global_address,) + args[2:]

    def with_box_extent(self, dim: int, extent: int) -> TmaPlan:
        """This plan with its one box cut to the first `extent` elements along tensor-map dimension `dim` (>= 1):
        a tile of which only a leading part lies inside the tensor loads that part into the same shared-memory
        places (TMA fills a box's out-of-bound elements element by element); the rest of the tile's shared
        memory is the caller's to fill. The box stays whole swizzle atoms: `extent` a multiple of 8 or the box."""
        func = "TmaPlan.with_box_extent"
        if not isinstance(dim, int) or not 1 <= dim < self.rank:
            raise ValueError(f"{func}: dim must be a tensor-map dimension in 1..{self.rank - 1}, got {dim!r}")
        if self.num_multicast != 1 or len(self.boxes) != 1:
            raise ValueError(f"{func}: needs a plan of one box without multicast, got {len(self.boxes)} boxes")
        full = self.box_dims[dim]
        if not isinstance(extent, int) or not 1 <= extent <= full or (extent % 8 and extent != full):
            raise ValueError(f"{func}: extent must be a multiple of 8 in 8..{full} (or {full}), got {extent!r}")
        box = tuple(extent if j == dim else b for j, b in enumerate(self.box_dims))
        return dataclasses.replace(self, box_dims=box)

    def check_global_address(self, global_address: int) -> None:
        """Raise ValueError unless the address is a 16-byte aligned global address."""
        if not isinstance(global_address, int) or isinstance(global_address, bool):
            raise TypeError(f"TmaPlan: global_address must be an int, got {type(global_address).__name__}")
        if global_address % 16:
            raise ValueError(
                f"TmaPlan: global address {global_address:#x} is misaligned; TMA needs 16-byte alignment"
            )


def _cluster_coord(cluster_shape: tuple[int, int, int], cta_rank: int) -> tuple[int, int, int]:
    cx, cy, cz = cluster_shape
    if not isinstance(cta_rank, int) or not 0 <= cta_rank < cx * cy * cz:
        raise ValueError(
            f"cta_rank must be in 0..{cx * cy * cz - 1} for cluster {cluster_shape}, got {cta_rank!r}"
        )
    return (cta_rank % cx, (cta_rank // cx) % cy, cta_rank // (cx * cy))


def cluster_multicast_mask(cluster_shape: tuple[int, ...], cta_rank: int, axis: int) -> int:
    """Mask of the CTAs sharing `cta_rank`'s coordinates except along `axis` (rank = x + cx*(y + cy*z))."""
    shape = _cluster_shape(cluster_shape, "cluster_multicast_mask")
    if axis not in (0, 1, 2):
        raise ValueError(f"cluster_multicast_mask: axis must be 0, 1 or 2, got {axis!r}")
    c = list(_cluster_coord(shape, cta_rank))
    mask = 0
    for i in range(shape[axis]):
        c[axis] = i
        mask |= 1 << (c[0] + shape[0] * (c[1] + shape[1] * c[2]))
    return mask


def _cluster_shape(cluster_shape: tuple[int, ...], func: str) -> tuple[int, int, int]:
    shape = tuple(cluster_shape)
    if not 1 <= len(shape) <= 3 or not all(
        isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in shape
    ):
        raise ValueError(f"{func}: cluster_shape must be 1 to 3 positive ints, got {cluster_shape!r}")
    shape = shape + (1,) * (3 - len(shape))
    if shape[0] * shape[1] * shape[2] > 16:
        raise ValueError(f"{func}: a cluster has at most 16 CTAs, got {cluster_shape!r}")
    return shape  # type: ignore[return-value]


def _tma_swizzle(sw: object, dtype: NumericType) -> int:
    if sw is None or sw.bits == 0:  # type: ignore[attr-defined]
        return TmaSwizzle.NONE
    bits, base, shift = sw.bits, sw.base, sw.shift  # type: ignore[attr-defined]
    want_base = (128 // dtype.width).bit_length() - 1 if dtype.width <= 128 else -1
    if shift != 3 or base != want_base or bits not in (1, 2, 3):
        raise ValueError(
            f"make_tma_plan: the shared-memory swizzle {sw} is not a TMA swizzle for {dtype} "
            f"(expected S<1|2|3,{want_base},3>: 32/64/128-byte swizzle over 16-byte units)"
        )
    return {1: TmaSwizzle.B32, 2: TmaSwizzle.B64, 3: TmaSwizzle.B128}[bits]


def _coalesced_leaves(mode: Layout) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, d in flat_modes(mode):
        if s == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d:
            out[-1] = (out[-1][0] * s, out[-1][1])
        else:
            out.append((s, d))
    return out


def _multicast_split(box: list[int], n_boxes: int, num_mc: int, func: str) -> tuple[int, int]:
    """(dimension, parts): split each of the tile's `n_boxes` boxes into `parts` along that tensor-map dimension.

    The policy: the fewest, largest copies. Whole boxes are shared out when their count divides among the
    `num_mc` CTAs (parts 1); otherwise the slowest box dimension of extent > 1 is split into the fewest
    parts that make the count divide (num_mc / gcd(n_boxes, num_mc)). A split along the slowest dimension
    keeps every sub-box dense in shared memory.
    """
    parts = num_mc // math.gcd(n_boxes, num_mc)
    if parts == 1:
        return 0, 1
    dims = [j for j, b in enumerate(box) if b > 1]
    have = box[dims[-1]] if dims else 1
    if not dims or have % parts:
        raise ValueError(
            f"{func}: multicast over {num_mc} CTAs: the tile's {n_boxes} box(es) do not divide among them, "
            f"and the slowest box dimension's extent {have} is not divisible by {parts}"
        )
    return dims[-1], parts


def _check_ints(name: str, values: tuple, lo: int, func: str) -> tuple[int, ...]:
    vals = tuple(values)
    for v in vals:
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise ValueError(f"{func}: {name} must be ints >= {lo}, got {values!r}")
    return vals


def _check_base_alignment(base_alignment: object, func: str) -> None:
    if not isinstance(base_alignment, int) or base_alignment <= 0 or base_alignment % 16:
        raise ValueError(
            f"{func}: the base pointer is misaligned: TMA needs a 16-byte aligned global address, "
            f"base_alignment={base_alignment!r}"
        )


def make_tma_plan(
    global_shape: tuple[int, ...],
    global_stride: tuple[int, ...],
    dtype: NumericType | str,
    smem_layout: LayoutLike,
    *,
    base_alignment: int = 16,
    cluster_shape: tuple[int, ...] = (1, 1, 1),
    multicast_axis: int | None = None,
    l2_promotion: int = TmaL2Promotion.B128,
    oob_fill: int = TmaOobFill.NONE,
    box_shape: tuple[int, ...] | None = None,
) -> TmaPlan:
    """Plan the TMA boxes of one shared-memory tile and bind them to a global tensor in one step.

    The contiguous mode is the global mode of stride 1; the rest is `make_tma_tile_plan` then
    `TmaTilePlan.bind` (see the module docstring).
    """
    func = "make_tma_plan"
    shape = _check_ints("global_shape", tuple(global_shape), 1, func)
    stride = _check_ints("global_stride", tuple(global_stride), 0, func)
    if len(shape) != len(stride):
        raise ValueError(f"{func}: global_shape {shape} and global_stride {stride} have different ranks")
    rank = len(shape)
    if not 1 <= rank <= TMA_MAX_RANK:
        raise ValueError(f"{func}: TMA tensors have 1 to {TMA_MAX_RANK} dims, the global tensor has {rank}")
    _check_base_alignment(base_alignment, func)
    # Tensor-map dimension 0: the global mode of stride 1.
    unit = [i for i in range(rank) if stride[i] == 1 and shape[i] > 1] or [
        i for i in range(rank) if stride[i] == 1
    ]
    if not unit:
        raise ValueError(
            f"{func}: TMA needs a global mode of stride 1 (the contiguous dimension); strides are {stride}"
        )
    tile = _tile_plan(
        func, dtype, smem_layout, rank, unit[0], cluster_shape, multicast_axis, l2_promotion, oob_fill, box_shape
    )
    return _bind(tile, shape, stride, base_alignment, func)


def make_tma_tile_plan(
    dtype: NumericType | str,
    smem_layout: LayoutLike,
    *,
    rank: int | None = None,
    contiguous_mode: int = 0,
    cluster_shape: tuple[int, ...] = (1, 1, 1),
    multicast_axis: int | None = None,
    l2_promotion: int = TmaL2Promotion.B128,
    oob_fill: int = TmaOobFill.NONE,
    box_shape: tuple[int, ...] | None = None,
) -> TmaTilePlan:
    """Plan the TMA boxes that fill one shared-memory tile of a rank-`rank` global tensor whose mode
    `contiguous_mode` has stride 1 (see the module docstring); no extents needed.

    `rank` defaults to the tile's. `box_shape` (tensor-mode order) asks for a smaller box than the largest
    one the layout allows; it is checked against the same rules.
    """
    func = "make_tma_tile_plan"
    if rank is None:
        _, _, S = split_swizzle(smem_layout, func)
        rank = len(modes_of(S))
    if not isinstance(rank, int) or isinstance(rank, bool) or not 1 <= rank <= TMA_MAX_RANK:
        raise ValueError(f"{func}: TMA tensors have 1 to {TMA_MAX_RANK} dims, got rank={rank!r}")
    if not isinstance(contiguous_mode, int) or isinstance(contiguous_mode, bool) or not 0 <= contiguous_mode < rank:
        raise ValueError(f"{func}: contiguous_mode must be a mode 0..{rank - 1}, got {contiguous_mode!r}")
    return _tile_plan(
        func, dtype, smem_layout, rank, contiguous_mode, cluster_shape, multicast_axis, l2_promotion, oob_fill,
        box_shape,
    )


def _tile_plan(
    func: str,
    dtype: NumericType | str,
    smem_layout: LayoutLike,
    rank: int,
    d0: int,
    cluster_shape: tuple[int, ...],
    multicast_axis: int | None,
    l2_promotion: int,
    oob_fill: int,
    box_shape: tuple[int, ...] | None,
) -> TmaTilePlan:
    """The tile plan of `smem_layout` for a rank-`rank` tensor whose mode `d0` is contiguous."""
    dtype = numeric_type(dtype)
    if dtype.width % 8:
        raise ValueError(f"{func}: TMA moves whole bytes; {dtype} is {dtype.width}-bit")
    nbytes = dtype.width // 8
    cshape = _cluster_shape(cluster_shape, func)
    if multicast_axis is not None and multicast_axis not in (0, 1, 2):
        raise ValueError(f"{func}: multicast_axis must be None, 0, 1 or 2, got {multicast_axis!r}")
    num_mc = 1 if multicast_axis is None else cshape[multicast_axis]
    if l2_promotion not in (0, 1, 2, 3):
        raise ValueError(
            f"{func}: l2_promotion must be a CUtensorMapL2promotion value 0..3, got {l2_promotion!r}"
        )
    if oob_fill not in (0, 1):
        raise ValueError(f"{func}: oob_fill must be a CUtensorMapFloatOOBfill value 0 or 1, got {oob_fill!r}")
    if oob_fill == TmaOobFill.NAN_REQUEST_ZERO_FMA and not dtype.is_float:
        raise ValueError(f"{func}: the NaN OOB fill needs a floating-point type, got {dtype}")

    sw, off, S = split_swizzle(smem_layout, func)
    if off:
        raise ValueError(f"{func}: the shared-memory layout's offset must be 0, got {off}")
    swizzle = _tma_swizzle(sw, dtype)
    span = _SWIZZLE_BYTES[swizzle] // nbytes if swizzle else TMA_MAX_BOX
    tile_modes = modes_of(S)
    tile_rank = len(tile_modes)
    if tile_rank > rank:
        raise ValueError(f"{func}: the tile has {tile_rank} modes but the global tensor only {rank}")
    tile_shape = tuple(size_of(m) for m in tile_modes) + (1,) * (rank - tile_rank)
    if d0 >= tile_rank:
        raise ValueError(f"{func}: the contiguous global mode {d0} is not a mode of the shared-memory tile")
    leaves = [_coalesced_leaves(m) for m in tile_modes]

    def order_key(i: int) -> tuple[int, int]:
        lv = leaves[i]
        return (0, abs(lv[0][1])) if lv else (1, i)

    others = sorted((i for i in range(tile_rank) if i != d0), key=order_key)
    dim_order = (d0, *others, *range(tile_rank, rank))

    if box_shape is not None:
        want = _check_ints("box_shape", tuple(box_shape), 1, func)
        if len(want) != rank:
            raise ValueError(f"{func}: box_shape {want} must have one extent per global mode ({rank})")
        for i, (b, t) in enumerate(zip(want, tile_shape, strict=True)):
            if t % b:
                raise ValueError(f"{func}: box extent {b} of mode {i} does not divide the tile extent {t}")
            if b > TMA_MAX_BOX:
                raise ValueError(f"{func}: box extent {b} of mode {i} exceeds {TMA_MAX_BOX}")
        if swizzle and want[d0] * nbytes > _SWIZZLE_BYTES[swizzle]:
            raise ValueError(
                f"{func}: the box inner extent ({want[d0]} x {nbytes} = {want[d0] * nbytes} bytes) "
                f"is larger than "
                f"the swizzle span ({_SWIZZLE_BYTES[swizzle]} bytes)"
            )

    box: list[int] = []
    packed: list[int] = []  # the shared-memory element stride of each box dimension
    expected = 1
    for j, i in enumerate(dim_order):
        cap = min(TMA_MAX_BOX, span) if j == 0 else TMA_MAX_BOX
        asked = None if box_shape is None else want[i]
        if i >= tile_rank or not leaves[i] or asked == 1:
            box.append(1)
            packed.append(expected)
            continue
        s, d = leaves[i][0]
        if d != expected:
            if j == 0 or asked is not None:
                raise ValueError(
                    f"{func}: the tile's shared-memory layout is not packed in box order along mode {i} "
                    f"({tile_modes[i]}: stride {d}, a box needs {expected}); TMA writes a box densely, "
                    f"dimension 0 fastest"
                )
            box.append(1)
            packed.append(expected)
            continue
        if asked is not None:
            if s % asked:
                raise ValueError(
                    f"{func}: box extent {asked} of mode {i} does not divide the mode's contiguous run "
                    f"{s} in "
                    f"shared memory ({tile_modes[i]})"
                )
            b = asked
        else:
            b = min(s, cap)
            while s % b:
                b -= 1
        box.append(b)
        packed.append(expected)
        expected *= b
    inner_bytes = box[0] * nbytes
    if inner_bytes % 16:
        raise ValueError(
            f"{func}: the box's inner extent is {box[0]} x {nbytes} = {inner_bytes} bytes, "
            f"not a multiple of 16 bytes"
        )
    if swizzle and inner_bytes > _SWIZZLE_BYTES[swizzle]:
        raise ValueError(
            f"{func}: the box inner extent ({inner_bytes} bytes) is larger than the swizzle span "
            f"({_SWIZZLE_BYTES[swizzle]} bytes)"
        )

    # Multicast: the tile's boxes are shared out among the CTAs sharing the tile (see _multicast_split).
    tile_t = [tile_shape[i] for i in dim_order]
    n_whole = 1
    for t, b in zip(tile_t, box, strict=True):
        n_whole *= t // b
    split_dim, parts = _multicast_split(box, n_whole, num_mc, func)
    full = list(box)  # the extents of one unsplit box
    if parts > 1:
        box[split_dim] //= parts

    # Enumerate the boxes of the tile (each unsplit box as `parts` sub-boxes along split_dim).
    counts = [t // b for t, b in zip(tile_t, full, strict=True)]
    boxes: list[TmaBox] = []
    for q in itertools.product(*(range(c) for c in counts)):
        origin_t = [qj * bj for qj, bj in zip(q, full, strict=True)]
        crd = [0] * tile_rank
        for j, i in enumerate(dim_order):
            if i < tile_rank:
                crd[i] = origin_t[j]
        base = S(tuple(crd)) if tile_rank > 1 else S(crd[0])
        for p in range(parts):
            coords = list(origin_t)
            off_el = base
            if p:
                coords[split_dim] += p * box[split_dim]
                off_el += p * box[split_dim] * packed[split_dim]
            boxes.append(TmaBox(tuple(coords), off_el * nbytes, 0))
    # CTA r of the multicast group issues the r-th of num_mc equal runs of boxes in shared-memory order
    boxes.sort(key=lambda b: b.smem_offset)
    share = len(boxes) // num_mc
    boxes = [TmaBox(b.coords, b.smem_offset, k // share) for k, b in enumerate(boxes)]
    box_elems = 1
    for b in box:
        box_elems *= b
    tile_elems = 1
    for t in tile_shape:
        tile_elems *= t
    if len(boxes) * box_elems != tile_elems:
        raise ValueError(
            f"{func}: internal error: {len(boxes)} boxes of {box_elems} do not cover {tile_elems}"
        )
    align = 8 * _SWIZZLE_BYTES[swizzle] if swizzle else 128
    for b in boxes:
        if b.smem_offset % align:
            raise ValueError(
                f"{func}: a box starts at shared-memory byte offset {b.smem_offset}, "
                f"not a multiple of {align} "
                f"({'the swizzle pattern' if swizzle else 'TMA needs 128-byte aligned shared memory'})"
            )
    offsets = sorted(b.smem_offset for b in boxes)
    if len(set(offsets)) != len(offsets):
        raise ValueError(f"{func}: the shared-memory layout {S} maps two boxes to one place")

    smem_plain = concat(*[coalesce(m) for m in tile_modes])  # one top-level mode per tile mode
    return TmaTilePlan(
        dtype=dtype,
        data_type=dtype.tensor_map_data_type,
        rank=rank,
        box_dims=tuple(box),
        element_strides=(1,) * rank,
        interleave=TmaInterleave.NONE,
        swizzle=swizzle,
        l2_promotion=int(l2_promotion),
        oob_fill=int(oob_fill),
        dim_order=tuple(dim_order),
        tile_shape=tile_shape,
        smem_layout=smem_plain,
        swizzled_smem_layout=smem_layout,
        boxes=tuple(boxes),
        cluster_shape=cshape,
        multicast_axis=multicast_axis,
        num_multicast=num_mc,
    )


def _bind(
    tile: TmaTilePlan, global_shape: tuple[int, ...], global_stride: tuple[int, ...], base_alignment: int, func: str
) -> TmaPlan:
    """`tile` bound to a global tensor: global dims and byte strides in tensor-map order, TMA's rules checked."""
    shape = _check_ints("global_shape", tuple(global_shape), 1, func)
    stride = _check_ints("global_stride", tuple(global_stride), 0, func)
    rank = tile.rank
    if len(shape) != rank or len(stride) != rank:
        raise ValueError(
            f"{func}: the tile plan is for a rank-{rank} tensor; global_shape {shape} and global_stride {stride} "
            f"must have {rank} modes"
        )
    _check_base_alignment(base_alignment, func)
    d0 = tile.dim_order[0]
    if stride[d0] != 1 and shape[d0] > 1:
        raise ValueError(
            f"{func}: mode {d0} is the tile plan's contiguous mode (tensor-map dimension 0) and must have "
            f"stride 1; strides are {stride}"
        )
    nbytes = tile.dtype.width // 8
    gdims = tuple(shape[i] for i in tile.dim_order)
    for j, g in enumerate(gdims):
        if g > 1 << 32:
            raise ValueError(f"{func}: global dim {j} = {g} exceeds 2^32")
    gstrides = []
    for i in tile.dim_order[1:]:
        sb = stride[i] * nbytes
        if sb % 16:
            raise ValueError(
                f"{func}: global stride of mode {i} is {stride[i]} x {nbytes} = {sb} bytes, "
                f"not a multiple of 16 bytes"
            )
        if sb >= 1 << 40:
            raise ValueError(f"{func}: global stride of mode {i} ({sb} bytes) is not below 2^40")
        gstrides.append(sb)
    fields = {f: getattr(tile, f) for f in _TILE_FIELDS}
    return TmaPlan(**fields, global_dims=gdims, global_strides=tuple(gstrides))


_TILE_FIELDS = tuple(f.name for f in dataclasses.fields(TmaTilePlan) if f.init)
_BIND_CACHE = 64


def make_tma_copy(plan: TmaPlan, op: str = "load") -> TiledCopy:
    """The TiledCopy of a TMA plan: one thread moves the tile, values in shared-memory order, a box per atom.

    `op` is "load" (SM90_TMA_LOAD, or SM90_TMA_LOAD_MULTICAST when the plan multicasts) or "store".
    """
    if not isinstance(plan, TmaPlan):
        raise TypeError(f"make_tma_copy: plan must be a TmaPlan, got {type(plan).__name__}")
    if op == "load":
        atom = make_tma_load_atom(plan.dtype, plan.box_elements, plan.rank, multicast=plan.num_multicast > 1)
    elif op == "store":
        if plan.num_multicast > 1:
            raise ValueError("make_tma_copy: a TMA store does not multicast; plan without multicast_axis")
        atom = make_tma_store_atom(plan.dtype, plan.box_elements, plan.rank)
    else:
        raise ValueError(f"make_tma_copy: op must be 'load' or 'store', got {op!r}")
    modes = modes_of(plan.smem_layout)
    tile_shape = tuple(size_of(m) for m in modes)
    inv = right_inverse(plan.smem_layout)  # shared-memory offset -> column-major tile index
    if size_of(inv) != size_of(plan.smem_layout):
        raise ValueError(
            f"make_tma_copy: the shared-memory layout {plan.smem_layout} is not compact; TMA fills it densely"
        )
    layout_tv = concat(Layout(1, 0), inv)
    return make_tiled_copy(atom, layout_tv, tile_shape)

"""TMA plans: boxes, shared layout, cuTensorMapEncodeTiled argument tuples, multicast, and the rules."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import cute_nvarch as nv
import pytest
from cute_layout import Layout, size
from cute_nvarch import TmaL2Promotion, TmaSwizzle


def f16_plan(major: str, mn: int, k: int, extent: tuple[int, int] = (4096, 2048), **kw: object) -> nv.TmaPlan:
    smem = nv.make_gmma_smem_layout("f16", major, mn, k)
    m, kk = extent
    stride = (1, m) if major == "mn" else (kk, 1)
    return nv.make_tma_plan((m, kk), stride, nv.Float16, smem, **kw)  # type: ignore[arg-type]


def check_boxes_fill_tile(plan: nv.TmaPlan) -> None:
    """Every tile element lies in exactly one box, at the box's packed position (dimension 0 fastest)."""
    nbytes = plan.dtype.width // 8
    layout = plan.smem_layout
    seen: Counter = Counter()
    for box in plan.boxes:
        for pos, within in enumerate(itertools.product(*(range(b) for b in reversed(plan.box_dims)))):
            within = tuple(reversed(within))  # dimension 0 fastest
            tma = tuple(c + w for c, w in zip(box.coords, within, strict=True))
            crd = [0] * len(plan.tile_shape)
            for j, mode in enumerate(plan.dim_order):
                crd[mode] = tma[j]
            crd = tuple(crd[: len(layout.shape)]) if isinstance(layout.shape, tuple) else crd[0]
            offset = layout(crd)
            assert offset * nbytes == box.smem_offset + pos * nbytes
            seen[crd] += 1
    assert len(seen) == size(layout) and set(seen.values()) == {1}


def test_acceptance_mn_major_128x64() -> None:
    # Oracle (verbatim): TMA for an MN-major 128x64 f16 tile: two 64x64 boxes,
    # shared layout `((64,2),64):((1,4096),64)`.
    plan = f16_plan("mn", 128, 64)
    assert plan.box_dims == (64, 64) and len(plan.boxes) == 2
    assert str(plan.smem_layout) == "((64,2),64):((1,4096),64)"
    assert [b.coords for b in plan.boxes] == [(0, 0), (64, 0)]
    assert [b.smem_offset for b in plan.boxes] == [0, 8192]
    assert plan.swizzle == TmaSwizzle.B128 and plan.box_bytes == 8192 and plan.tile_bytes == 16384
    check_boxes_fill_tile(plan)


def test_k_major_one_box() -> None:
    plan = f16_plan("k", 128, 64)
    assert plan.dim_order == (1, 0) and plan.global_dims == (2048, 4096) and plan.global_strides == (4096,)
    assert plan.box_dims == (64, 128) and len(plan.boxes) == 1
    check_boxes_fill_tile(plan)


def test_tensor_map_args_are_the_encode_tuple() -> None:
    plan = f16_plan("mn", 128, 64)
    assert plan.tensor_map_args == (6, 2, (4096, 2048), (8192,), (64, 64), (1, 1), 0, 3, 2, 0)
    args = plan.encode_args(0x7F0000001000)
    assert args == (6, 2, 0x7F0000001000, (4096, 2048), (8192,), (64, 64), (1, 1), 0, 3, 2, 0)
    assert all(type(a) is int or all(type(x) is int for x in a) for a in args)
    with pytest.raises(ValueError, match="misaligned"):
        plan.encode_args(0x7F0000001008)


def test_enum_values_match_cuda_bindings() -> None:
    d = pytest.importorskip("cuda.bindings.driver")
    assert TmaSwizzle.NONE == int(d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE)
    assert TmaSwizzle.B32 == int(d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B)
    assert TmaSwizzle.B64 == int(d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B)
    assert TmaSwizzle.B128 == int(d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B)
    assert nv.TmaInterleave.NONE == int(d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE)
    assert nv.TmaInterleave.B16 == int(d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_16B)
    assert nv.TmaInterleave.B32 == int(d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_32B)
    P = d.CUtensorMapL2promotion
    assert (TmaL2Promotion.NONE, TmaL2Promotion.B64, TmaL2Promotion.B128, TmaL2Promotion.B256) == (
        int(P.CU_TENSOR_MAP_L2_PROMOTION_NONE),
        int(P.CU_TENSOR_MAP_L2_PROMOTION_L2_64B),
        int(P.CU_TENSOR_MAP_L2_PROMOTION_L2_128B),
        int(P.CU_TENSOR_MAP_L2_PROMOTION_L2_256B),
    )
    F = d.CUtensorMapFloatOOBfill
    assert nv.TmaOobFill.NONE == int(F.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert nv.TmaOobFill.NAN_REQUEST_ZERO_FMA == int(F.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)


@pytest.mark.parametrize(
    "dtype,mn,k",
    [
        ("s8", 64, 128),
        ("e5m2", 128, 64),
        ("bf16", 128, 128),
        ("bf16", 64, 32),
        ("tf32", 256, 64),
        ("f32", 64, 16),
    ],
)
@pytest.mark.parametrize("major", ["k", "mn"])
def test_boxes_fill_gmma_tiles(dtype: str, major: str, mn: int, k: int) -> None:
    t = nv.numeric_type(dtype)
    smem = nv.make_gmma_smem_layout(t, major, mn, k)
    shape = (1000, 4000)
    stride = (1, 1008) if major == "mn" else (4032, 1)  # padded leading dimensions
    plan = nv.make_tma_plan(shape, stride, t, smem)
    assert plan.box_dims[0] * t.bytes <= 128 and all(b <= 256 for b in plan.box_dims)
    check_boxes_fill_tile(plan)


def test_batched_tensor_and_untiled_modes() -> None:
    smem = nv.make_gmma_smem_layout("bf16", "k", 128, 64)
    plan = nv.make_tma_plan((512, 256, 3), (256, 1, 512 * 256), "bf16", smem)
    assert plan.rank == 3 and plan.dim_order == (1, 0, 2)
    assert plan.global_dims == (256, 512, 3) and plan.global_strides == (512, 512 * 256 * 2)
    assert plan.box_dims == (64, 128, 1) and plan.tile_shape == (128, 64, 1)
    assert plan.tile_origin((2, 1, 2)) == (64, 256, 2)
    assert plan.box_coordinates((2, 1, 2)) == ((64, 256, 2),)


def test_plain_row_major_tile_and_explicit_box() -> None:
    # An epilogue tile (64, 256) f32, N contiguous, no swizzle: boxes of at most 256 along N.
    smem = Layout((64, 256), (256, 1))
    plan = nv.make_tma_plan((1024, 1024), (1024, 1), "f32", smem)
    assert plan.box_dims == (256, 64) and plan.swizzle == TmaSwizzle.NONE and len(plan.boxes) == 1
    small = nv.make_tma_plan((1024, 1024), (1024, 1), "f32", smem, box_shape=(1, 32))
    assert small.box_dims == (32, 1) and len(small.boxes) == 8 * 64
    check_boxes_fill_tile(small)
    with pytest.raises(ValueError, match="not packed in box order along mode 0"):
        nv.make_tma_plan((1024, 1024), (1024, 1), "f32", smem, box_shape=(64, 32))  # rows 256 apart, box 32
    wide = nv.make_tma_plan((1024, 1024), (1024, 1), "f32", Layout((64, 32), (32, 1)), box_shape=(16, 32))
    assert wide.box_dims == (32, 16) and len(wide.boxes) == 4
    check_boxes_fill_tile(wide)


def test_multicast_split_masks_and_copy() -> None:
    # A tile shared along the cluster's N axis (cluster 2x2): each CTA loads half of each box and multicasts.
    plan = f16_plan("k", 128, 64, cluster_shape=(2, 2), multicast_axis=1)
    assert plan.num_multicast == 2 and plan.box_dims == (64, 64) and plan.boxes_per_cta == 1
    assert [b.coords for b in plan.boxes_for(0)] == [(0, 0)] and [b.coords for b in plan.boxes_for(1)] == [
        (0, 64)
    ]
    assert plan.boxes_for(1)[0].smem_offset == 8192 and plan.tile_bytes == 16384
    # rank = x + 2*y; CTAs with the same x (M coordinate) share A.
    assert [plan.multicast_mask(r) for r in range(4)] == [0b0101, 0b1010, 0b0101, 0b1010]
    assert [plan.multicast_rank_of(r) for r in range(4)] == [0, 0, 1, 1]
    b = f16_plan("mn", 128, 64, cluster_shape=(2, 2), multicast_axis=0)
    assert [b.multicast_mask(r) for r in range(4)] == [0b0011, 0b0011, 0b1100, 0b1100]
    # two whole (64, 64) boxes already divide between the two CTAs: one each, none split
    assert b.box_dims == (64, 64) and len(b.boxes) == 2 and b.boxes_per_cta == 1
    assert [(x.coords, x.smem_offset, x.multicast_rank) for x in b.boxes] == [((0, 0), 0, 0), ((64, 0), 8192, 1)]
    check_boxes_fill_tile(b)
    assert nv.cluster_multicast_mask((4, 2, 1), 5, 0) == 0b11110000
    single = f16_plan("k", 64, 64)
    assert single.multicast_mask(0) == 1 and single.multicast_rank_of(0) == 0


def tma_moved_once(tc: nv.TiledCopy, smem: object) -> None:
    counts: Counter = Counter()
    part, off = tc.get_slice(0).partition_D_and_offset(Layout(tc.tiler_mn))
    counts.update(off + part(i) for i in range(size(part)))
    assert counts == Counter(range(size(Layout(tc.tiler_mn))))


@pytest.mark.parametrize("major,mc", [("mn", None), ("k", 1)])
def test_tma_tiled_copy(major: str, mc: int | None) -> None:
    plan = f16_plan(major, 128, 64, cluster_shape=(2, 2), multicast_axis=mc)
    tc = nv.make_tma_copy(plan, "load")
    assert tc.atom.name == ("SM90_TMA_LOAD" if mc is None else "SM90_TMA_LOAD_MULTICAST")
    assert tc.num_threads == 1 and tc.atom.num_values == plan.box_elements
    tma_moved_once(tc, plan.smem_layout)
    # The destination partition is the shared memory in box order: (box values, boxes) contiguous.
    d, off = tc.get_slice(0).partition_D_and_offset(plan.smem_layout)
    assert off == 0 and [d(i) for i in range(size(d))] == list(range(size(d)))
    store = nv.make_tma_copy(f16_plan(major, 128, 64), "store")
    assert store.atom.name == "SM90_TMA_STORE"
    tma_moved_once(store, plan.smem_layout)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (
            {"global_stride": (4000 + 4, 1)},
            "global stride of mode 0 is 4004 x 2 = 8008 bytes, not a multiple of 16",
        ),
        ({"base_alignment": 8}, "base pointer is misaligned"),
        ({"global_shape": (2,) * 6, "global_stride": (1, 2, 4, 8, 16, 32)}, "1 to 5 dims"),
        ({"global_stride": (4096, 2)}, "needs a global mode of stride 1"),
        ({"box_shape": (64, 48)}, "box extent 48 of mode 1 does not divide the tile extent 64"),
        ({"cluster_shape": (1, 3), "multicast_axis": 1}, "extent 64 is not divisible by 3"),
        ({"cluster_shape": (4, 8)}, "at most 16 CTAs"),
        ({"oob_fill": 1, "dtype": "s8"}, "NaN OOB fill needs a floating-point type"),
        ({"l2_promotion": 7}, "l2_promotion"),
        ({"global_shape": (64, 0)}, "global_shape must be ints >= 1"),
    ],
)
def test_plan_errors(kwargs: dict, match: str) -> None:
    args = {
        "global_shape": (4000, 4000),
        "global_stride": (4000, 1),
        "dtype": "f16",
        "smem_layout": nv.make_gmma_smem_layout("f16", "k", 64, 64),
    }
    args.update(kwargs)
    if kwargs.get("dtype") == "s8":
        args["smem_layout"] = nv.make_gmma_smem_layout("s8", "k", 64, 64)
    with pytest.raises(ValueError, match=match):
        nv.make_tma_plan(
            args.pop("global_shape"),
            args.pop("global_stride"),
            args.pop("dtype"),
            args.pop("smem_layout"),
            **args,
        )


def test_plan_layout_errors() -> None:
    wide = nv.make_gmma_smem_layout("f16", "k", 64, 128)
    with pytest.raises(
        ValueError, match=r"box inner extent \(128 x 2 = 256 bytes\) is larger than the swizzle span"
    ):
        nv.make_tma_plan((4096, 4096), (4096, 1), "f16", wide, box_shape=(64, 128))
    swizzled = nv.make_gmma_smem_layout("f16", "k", 64, 64)
    with pytest.raises(ValueError, match="not a TMA swizzle for Float32"):
        nv.make_tma_plan((64, 64), (64, 1), "f32", swizzled)
    with pytest.raises(ValueError, match="not packed in box order along mode 1"):
        nv.make_tma_plan((64, 64), (64, 1), "f16", Layout((64, 64), (1, 64)))
    with pytest.raises(ValueError, match="not a multiple of 16 bytes"):
        nv.make_tma_plan((64, 64), (64, 1), "f16", Layout((64, 4), (4, 1)))
    with pytest.raises(ValueError, match="not a multiple of 128"):
        nv.make_tma_plan((64, 64), (64, 1), "f16", Layout((64, 8), (16, 1)))
    with pytest.raises(ValueError, match="the tile has 3 modes but the global tensor only 2"):
        nv.make_tma_plan((64, 64), (64, 1), "f16", Layout((8, 8, 2)))
    with pytest.raises(ValueError, match="a TMA store does not multicast"):
        nv.make_tma_copy(f16_plan("k", 128, 64, cluster_shape=(1, 2), multicast_axis=1), "store")


def check_multicast_shares(plan: nv.TmaPlan) -> None:
    """Every multicast rank issues an equal share: a contiguous run of the tile's shared memory."""
    shares = [plan.boxes_for(r) for r in range(plan.num_multicast)]
    assert {len(x) for x in shares} == {plan.boxes_per_cta} and plan.boxes_per_cta >= 1
    run = plan.tile_bytes // plan.num_multicast
    for r, share in enumerate(shares):
        assert sorted(b.smem_offset for b in share) == list(range(r * run, (r + 1) * run, plan.box_bytes))


# (major, tile_mn, tile_k, CTAs sharing the tile) -> (box extents, boxes in all), f16 SW128 buffers: the
# fewest, largest copies (whole boxes when they divide among the CTAs, else the slowest box dimension split)
SPLITS = {
    ("k", 128, 64, 2): ((64, 64), 2),  # one (64, 128) box: its rows split
    ("k", 256, 64, 2): ((64, 128), 2),
    ("k", 64, 64, 4): ((64, 16), 4),
    ("mn", 64, 64, 2): ((64, 32), 2),  # one (64, 64) box: its K rows split
    ("mn", 128, 64, 2): ((64, 64), 2),  # two whole boxes, one per CTA (not four (64, 32) ones)
    ("mn", 256, 64, 2): ((64, 64), 4),  # two whole boxes per CTA
    ("mn", 128, 64, 4): ((64, 32), 4),  # two boxes over four CTAs: each split in two
    ("mn", 192, 64, 2): ((64, 32), 6),  # three boxes over two CTAs: each split in two, three per CTA
    ("mn", 128, 64, 1): ((64, 64), 2),
}


@pytest.mark.parametrize("case", list(SPLITS), ids=lambda c: "-".join(map(str, c)))
def test_multicast_split_policy_fewest_largest_copies(case: tuple) -> None:
    major, mn, k, mc = case
    kw = {"cluster_shape": (1, mc), "multicast_axis": 1} if mc > 1 else {}
    plan = f16_plan(major, mn, k, **kw)
    assert (plan.box_dims, len(plan.boxes)) == SPLITS[case]
    whole = f16_plan(major, mn, k)
    n = len(whole.boxes)
    assert len(plan.boxes) == n * mc // math.gcd(n, mc)  # the least multiple of both counts
    check_boxes_fill_tile(plan)
    check_multicast_shares(plan)


def test_multicast_shares_of_every_gmma_buffer() -> None:
    for dtype, major, mn, k, mc in itertools.product(
        ("f16", "tf32"), ("k", "mn"), (64, 128, 256), (32, 64), (1, 2, 4)
    ):
        if dtype == "tf32" and major == "mn":
            continue
        smem = nv.make_gmma_smem_layout(dtype, major, mn, k)
        stride = (1, 4096) if major == "mn" else (2048, 1)
        plan = nv.make_tma_plan((4096, 2048), stride, dtype, smem, cluster_shape=(mc, 1), multicast_axis=0)
        check_boxes_fill_tile(plan)
        check_multicast_shares(plan)


@pytest.mark.parametrize("major", ["k", "mn"])
@pytest.mark.parametrize("mc", [None, 0, 1])
def test_tile_plan_then_bind_is_make_tma_plan(major: str, mc: int | None) -> None:
    # The static tile plan needs no extents; binding it to a tensor gives make_tma_plan's plan.
    smem = nv.make_gmma_smem_layout("f16", major, 128, 64)
    contiguous = 0 if major == "mn" else 1
    kw = {"cluster_shape": (2, 2, 1), "multicast_axis": mc}
    tile = nv.make_tma_tile_plan("f16", smem, rank=3, contiguous_mode=contiguous, **kw)
    assert not hasattr(tile, "global_dims") and tile.rank == 3 and tile.dim_order[0] == contiguous
    for shape in ((300, 136, 2), (4096, 4096, 1)):
        m, k, _ = shape
        ld = -(-(m if major == "mn" else k) // 8) * 8  # the leading dimension padded to 16 bytes
        stride = (1, ld, ld * k) if major == "mn" else (ld, 1, ld * m)
        bound = tile.bind(shape, stride)
        assert tile.bind(list(shape), list(stride)) is bound  # cached per geometry: no re-planning per launch
        whole = nv.make_tma_plan(shape, stride, "f16", smem, **kw)
        assert bound.tensor_map_args == whole.tensor_map_args and bound.boxes == whole.boxes
        assert isinstance(bound, nv.TmaTilePlan) and bound.box_coordinates((1, 1, 0)) == whole.box_coordinates(
            (1, 1, 0)
        )


def test_bind_rules() -> None:
    tile = nv.make_tma_tile_plan("f16", nv.make_gmma_smem_layout("f16", "k", 64, 64), rank=3, contiguous_mode=1)
    with pytest.raises(ValueError, match="rank-3 tensor"):
        tile.bind((64, 64), (64, 1))
    with pytest.raises(ValueError, match="mode 1 is the tile plan's contiguous mode"):
        tile.bind((64, 64, 1), (1, 64, 4096))
    with pytest.raises(ValueError, match="not a multiple of 16 bytes"):
        tile.bind((64, 64, 2), (68, 1, 4))
    with pytest.raises(ValueError, match="base pointer is misaligned"):
        tile.bind((64, 64, 1), (64, 1, 4096), base_alignment=8)
    with pytest.raises(ValueError, match="contiguous_mode must be a mode 0..2"):
        nv.make_tma_tile_plan("f16", nv.make_gmma_smem_layout("f16", "k", 64, 64), rank=3, contiguous_mode=3)
    with pytest.raises(ValueError, match="contiguous global mode 2 is not a mode of the shared-memory tile"):
        nv.make_tma_tile_plan("f16", nv.make_gmma_smem_layout("f16", "k", 64, 64), rank=3, contiguous_mode=2)


def test_with_box_extent_cuts_one_box_to_its_leading_rows() -> None:
    plan = f16_plan("k", 128, 64)  # one (64 K, 128 MN) box
    short = plan.with_box_extent(1, 8)
    assert short.box_dims == (64, 8) and short.boxes == plan.boxes and short.global_dims == plan.global_dims
    assert short.tensor_map_args[4] == (64, 8) and plan.box_dims == (64, 128)
    assert plan.with_box_extent(1, 128) == plan
    for dim, extent, rule in ((0, 8, "dim must be"), (1, 12, "multiple of 8"), (1, 136, "multiple of 8"),
                              (1, 0, "multiple of 8")):
        with pytest.raises(ValueError, match=rule):
            plan.with_box_extent(dim, extent)
    with pytest.raises(ValueError, match="one box without multicast"):
        f16_plan("mn", 128, 64).with_box_extent(1, 8)  # two boxes

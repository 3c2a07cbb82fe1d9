"""Host side of gemm(): majors from strides, TMA's 16-byte rule, descriptor arguments, launch shape."""

from __future__ import annotations

import pytest
import torch
from cute_examples.dense_gemm import host
from cute_examples.dense_gemm.spec import GemmConfig


class FakeCuda:
    """A stand-in for a CUDA tensor (shape, strides, dtype, address) so the rules run on a CPU-only host."""

    is_cuda = True

    def __init__(self, shape, stride, dtype=torch.float16, address=1 << 20):
        self.shape = tuple(shape)
        self._stride = tuple(stride)
        self.dtype = dtype
        self._address = address

    def dim(self):
        return len(self.shape)

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._address


def _row(m, n, ld=None, dtype=torch.float16, address=1 << 20):
    return FakeCuda((m, n), (ld or n, 1), dtype, address)


def _col(m, n, ld=None, dtype=torch.float16, address=1 << 20):
    return FakeCuda((m, n), (1, ld or m), dtype, address)


def test_majors_come_from_strides():
    p = host.problem_of(_row(128, 64), _row(64, 256), _row(128, 256))
    assert (p.m, p.n, p.k, p.l, p.a_major, p.b_major, p.c_major) == (128, 256, 64, 1, "k", "n", "n")
    p = host.problem_of(_col(128, 64), _col(64, 256), _col(128, 256, dtype=torch.float32))
    assert (p.a_major, p.b_major, p.c_major, p.c_dtype) == ("m", "k", "m", "float32")


def test_odd_extents_with_padded_leading_dimensions_are_accepted():
    # 127 x 255 x 72 with every leading dimension padded to 16 bytes
    p = host.problem_of(_row(127, 72), _row(72, 255, ld=256), _row(127, 255, ld=256))
    assert (p.m, p.n, p.k) == (127, 255, 72)
    host.problem_of(_row(1, 8), _col(8, 1, ld=8), _row(1, 1, ld=8))  # 1 x 1 x 8


@pytest.mark.parametrize(
    ("a", "b", "out", "match"),
    [
        (_row(128, 60), _row(60, 64), _row(128, 64), r"a: stride 60 of dim -2 is 120 bytes"),
        (_row(128, 64), _row(64, 100), _row(128, 100, ld=104), r"b: stride 100 of dim -2 is 200 bytes"),
        (_row(128, 64), _row(64, 64), _col(128, 64, ld=130), r"out: stride 130 of dim -1 is 260 bytes"),
        (
            _row(128, 64, address=(1 << 20) + 8),
            _row(64, 64),
            _row(128, 64),
            r"a: base address .* 16-byte aligned",
        ),
        (FakeCuda((128, 64), (64, 2)), _row(64, 64), _row(128, 64), "unit stride"),
        (_row(128, 64), _row(32, 64), _row(128, 64), "b has 32 rows"),
        (_row(128, 64), _row(64, 64), _row(128, 32), r"out must be \(128, 64\)"),
        (_row(128, 64), _row(64, 64, dtype=torch.bfloat16), _row(128, 64), "same dtype"),
        (
            _row(128, 64, dtype=torch.float32),
            _row(64, 64, dtype=torch.float32),
            _row(128, 64),
            "float16 or bfloat16",
        ),
    ],
)
def test_broken_rules_raise_value_errors_naming_the_tensor(a, b, out, match):
    with pytest.raises(ValueError, match=match):
        host.problem_of(a, b, out)


def test_batched_strides_and_cpu_tensors():
    a = FakeCuda((3, 128, 64), (128 * 64, 64, 1))
    b = FakeCuda((3, 64, 64), (64 * 64, 64, 1))
    c = FakeCuda((3, 128, 64), (128 * 64, 64, 1))
    assert host.problem_of(a, b, c).l == 3
    bad = FakeCuda((3, 128, 64), (128 * 64 + 4, 64, 1))
    with pytest.raises(ValueError, match="a: batch stride"):
        host.problem_of(bad, b, c)
    with pytest.raises(ValueError, match="CUDA tensor"):
        host.problem_of(torch.zeros(8, 8, dtype=torch.float16), b, c)


def test_config_choice_and_persistent_grid():
    # 1000^3: 16 x 8 tiles of 64x128 fill 128 of 132 SMs once, better than 32 tiles of 128x256; the one-warpgroup
    # tile is load-bound, where the 2x1 cluster's multicast of B pays
    p = host.problem_of(_row(1000, 1000), _row(1000, 1000), _row(1000, 1000, ld=1000))
    cfg = host.choose_config(p)
    assert (cfg.tile_m, cfg.tile_n, cfg.cluster_m, cfg.cluster_n) == (64, 128, 2, 1)
    assert cfg.variant == "fast" and cfg.num_stages == cfg.max_stages()
    grid, raster_n, swz = host.schedule(p, cfg, 132)
    assert grid == (128, 1, 1) and raster_n in (0, 1) and 0 <= swz <= 3  # 8 x 8 units of 2x1 CTAs
    big = host.problem_of(_row(8192, 8192), _row(8192, 8192), _row(8192, 8192))
    cfg = host.choose_config(big)
    # 128x192 with two 64x192 consumer warpgroups, no cluster (measured on an H200: 2-6% faster than 2x1 multicast
    # on compute-bound shapes, `choice.CLUSTER_COST`)
    assert (cfg.tile_m, cfg.tile_n, cfg.cluster_m, cfg.cluster_n, cfg.num_stages) == (128, 192, 1, 1, 4)
    grid, _, _ = host.schedule(big, cfg, 132)
    assert grid == (132, 1, 1)
    assert host.choose_config(big, variant="base").variant == "base"
    small = host.problem_of(_row(1, 8), _row(8, 8), _row(1, 8))
    assert host.choose_config(small).tile_m == 64
    grid, _, _ = host.schedule(small, GemmConfig(tile_m=64, tile_n=64, cluster_m=2, cluster_n=2), 132)
    assert grid == (2, 2, 1)
    # a given tile gets the best cluster for it, a given cluster the best tile
    cfg = host.choose_config(big, tile_shape_mnk=(64, 128, 64))
    assert (cfg.tile_n, cfg.cluster_m, cfg.cluster_n) == (128, 2, 1)
    cfg = host.choose_config(big, cluster_shape_mn=(2, 1))
    assert (cfg.tile_m, cfg.tile_n, cfg.cluster_size) == (128, 192, 2)


def test_schedule_overrides():
    big = host.problem_of(_row(8192, 8192), _row(8192, 8192), _row(8192, 8192))
    cfg = host.choose_config(big)
    assert host.schedule(big, cfg, 132, 1, 0)[1:] == (1, 0)
    with pytest.raises(ValueError, match="raster_along_n"):
        host.schedule(big, cfg, 132, 2, None)
    with pytest.raises(ValueError, match="swizzle_log"):
        host.schedule(big, cfg, 132, None, 5)


def test_tensor_map_arguments(monkeypatch):
    """cuTensorMapEncodeTiled's arguments per operand: dims innermost first, byte strides, boxes, swizzle."""
    calls = []
    monkeypatch.setattr("cute_runtime.tma.encode_tiled", lambda *args, owner=None: calls.append(args) or args)
    p = host.problem_of(_col(127, 72, ld=128), _row(72, 255, ld=256), _row(127, 255, ld=256))
    cfg = GemmConfig(a_major="m", b_major="n", tile_m=128, tile_n=128)
    host.tensor_maps(p, cfg)
    a, b, c = calls
    assert a[0] == 6 and a[1] == 3
    assert a[3:6] == ((127, 72, 1), (256, 256 * 72), (64, 64, 1))  # A m-major: (M, K, L), 64x64 boxes
    assert b[3:6] == ((255, 72, 1), (512, 512 * 72), (64, 64, 1))  # B n-major: (N, K, L)
    assert c[3:6] == ((255, 127, 1), (512, 512 * 127), (64, 64, 1))  # C n-major: (N, M, L)
    assert a[8] == b[8] == c[8] == 3  # 128-byte swizzle
    assert all(x[6] == (1, 1, 1) and x[9] == 2 and x[10] == 0 for x in calls)


@pytest.mark.parametrize(
    ("a_major", "b_major", "c_major", "c_dtype"),
    [("k", "k", "n", torch.float16), ("m", "n", "m", torch.bfloat16), ("k", "n", "m", torch.float32)],
)
def test_tensor_map_arguments_equal_cute_nvarch_plans(monkeypatch, a_major, b_major, c_major, c_dtype):
    """The host's cuTensorMapEncodeTiled arguments equal cute-nvarch's TMA plan for that tensor and tile."""
    from cute_examples.dense_gemm.plan import make_plan
    from cute_nvarch.gmma_desc import GmmaLayoutType
    from cute_nvarch.gmma_smem import make_gmma_smem_layout
    from cute_nvarch.tma import make_tma_plan

    calls = []
    monkeypatch.setattr("cute_runtime.tma.encode_tiled", lambda *args, owner=None: calls.append(args) or args)
    m, n, k = 300, 200, 136
    ab = torch.bfloat16 if c_dtype is torch.bfloat16 else torch.float16
    a = _row(m, k, dtype=ab) if a_major == "k" else _col(m, k, ld=304, dtype=ab)
    b = _row(k, n, dtype=ab) if b_major == "n" else _col(k, n, dtype=ab)
    c = _row(m, n, dtype=c_dtype) if c_major == "n" else _col(m, n, ld=304, dtype=c_dtype)
    p = host.problem_of(a, b, c)
    cfg = host.choose_config(p, tile_shape_mnk=(128, 128, 64), cluster_shape_mn=(1, 1))
    host.tensor_maps(p, cfg)
    plan = make_plan(cfg)
    name = {torch.float16: "Float16", torch.bfloat16: "BFloat16", torch.float32: "Float32"}
    # (rows, cols) tensor modes as (MN, K[, L]) with their element strides; tile layouts of one stage
    cases = [
        (
            (m, k, 1),
            (a.stride()[0], a.stride()[1], m * k),
            name[ab],
            "K" if a_major == "k" else "MN",
            128,
            64,
        ),
        (
            (n, k, 1),
            (b.stride()[1], b.stride()[0], n * k),
            name[ab],
            "K" if b_major == "k" else "MN",
            128,
            64,
        ),
    ]
    for (shape, stride, dt, major, tmn, tk), args in zip(cases, calls[:2], strict=True):
        lay = make_gmma_smem_layout(dt, major, tmn, tk)
        want = make_tma_plan(shape, stride, dt, lay).tensor_map_args
        got = args[:2] + args[3:]
        assert got[0:2] == want[0:2] and tuple(got[2][:2]) == want[2][:2]
        assert tuple(got[3][:1]) == want[3][:1] and tuple(got[4]) == want[4] and got[6:] == want[6:]
    lay = make_gmma_smem_layout(
        name[c_dtype], "K" if c_major == "n" else "MN", 64, cfg.epi_n, layout_type=GmmaLayoutType.B128
    )
    want = make_tma_plan((m, n, 1), (c.stride()[0], c.stride()[1], m * n), name[c_dtype], lay).tensor_map_args
    got = calls[2][:2] + calls[2][3:]
    assert tuple(got[2][:2]) == want[2][:2] and tuple(got[4]) == want[4] and got[6:] == want[6:]
    assert plan.epi.box_dims == tuple(want[4][:2])


def test_a_box_covers_the_rows_m_has(monkeypatch):
    """A decode row's A box is M rounded up to 8 rows (the kernel expects those bytes); with A multicast (cluster
    N > 1) or M >= tile M, the tile's. An N-major C's store box likewise."""
    cfg = GemmConfig(tile_m=64, tile_n=128)
    assert cfg.short_a_box and [cfg.a_box_rows(m) for m in (1, 8, 9, 63, 64, 1000)] == [8, 8, 16, 64, 64, 64]
    assert not GemmConfig(cluster_n=2).short_a_box and GemmConfig(cluster_n=2).a_box_rows(1) == 128
    assert not GemmConfig(a_major="m").short_a_box
    calls = []
    monkeypatch.setattr("cute_runtime.tma.encode_tiled", lambda *args, owner=None: calls.append(args) or args)
    for m, rows in ((1, 8), (20, 24), (300, 64)):
        p = host.problem_of(_row(m, 256), _col(256, 512), _row(m, 512))
        host.tensor_maps(p, cfg)
        assert calls[-3][5] == (64, rows, 1), (m, calls[-3][5])  # A (K, M, L) box
        assert calls[-2][5] == (64, 128, 1)  # B unchanged
        assert calls[-1][5] == (64, min(rows, 64), 1)  # C's store box: one 64-row slab, M's rows only

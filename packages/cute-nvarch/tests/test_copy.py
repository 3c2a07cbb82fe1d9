"""Copy atoms and TiledCopy: CuTe's layouts, the PTX ldmatrix semantics, partitions and retiling."""

from __future__ import annotations

from collections import Counter

import cute_nvarch as nv
import pytest
from cute_layout import Layout, size


def injective(layout: Layout) -> bool:
    return len({layout(i) for i in range(size(layout))}) == size(layout)


def side_counts(tc: nv.TiledCopy, side: str) -> Counter:
    """How often each tile element is touched by the threads' partitions on one side."""
    counts: Counter = Counter()
    for tid in range(tc.num_threads):
        thr = tc.get_slice(tid)
        part, off = (thr.partition_S_and_offset if side == "S" else thr.partition_D_and_offset)(
            Layout(tc.tiler_mn)
        )
        counts.update(off + part(i) for i in range(size(part)))
    return counts


def assert_moved_once(tc: nv.TiledCopy, replicas: int = 1) -> None:
    """Property (acceptance): each element of the tile is moved exactly once (on every non-broadcast side).

    A copy made from a TiledMma whose operand is shared by `replicas` thread groups (A across the N-warps)
    moves each element once into each group: every element is then moved exactly `replicas` times.
    """
    n = size(Layout(tc.tiler_mn))
    sides = [s for s, lay in (("S", tc.atom.layout_src_tv), ("D", tc.atom.layout_dst_tv)) if injective(lay)]
    assert sides, "an atom has at least one side without broadcast"
    expected = Counter({e: replicas for e in range(n)})
    for side in sides:
        assert side_counts(tc, side) == expected, side
    ref = tc.layout_tv
    assert Counter(ref(i) for i in range(size(ref))) == expected


# -- atom layouts ------------------------------------------------------------------------------------------


def test_ldmatrix_layouts_in_elements() -> None:
    # CuTe: Copy_Atom<SM75_U32x4_LDSM_N, half_t> recasts the bit layouts by 16.
    x4 = nv.make_ldmatrix_atom("f16", 4)
    assert str(x4.src_bits) == "(32,128):(128,1)" and str(x4.dst_bits) == "(32,(32,4)):(32,(1,1024))"
    assert str(x4.layout_src_tv) == "(32,8):(8,1)"
    assert str(x4.layout_dst_tv) == "(32,(2,4)):(2,(1,64))"
    assert x4.name == "SM75_U32x4_LDSM_N" and x4.ptx == "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
    x1 = nv.make_ldmatrix_atom("bf16", 1)
    assert str(x1.layout_src_tv) == "((8,4),8):((8,0),1)" and str(x1.layout_dst_tv) == "(32,2):(2,1)"
    t = nv.make_ldmatrix_atom("f16", 2, transpose=True)
    assert t.name == "SM75_U16x4_LDSM_T" and t.ptx == "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"
    i8 = nv.make_ldmatrix_atom("s8", 4)
    assert str(i8.layout_src_tv) == "(32,16):(16,1)" and i8.num_values == 16


def test_stmatrix_is_ldmatrix_reversed() -> None:
    for num in (1, 2, 4):
        for trans in (False, True):
            ld, st = nv.make_ldmatrix_atom("f16", num, trans), nv.make_stmatrix_atom("f16", num, trans)
            assert st.src_bits == ld.dst_bits and st.dst_bits == ld.src_bits and st.ref_bits == st.src_bits
            assert (st.src_space, st.dst_space) == ("rmem", "smem") and st.arch == "sm_90a"
    st = nv.make_stmatrix_atom("f16", 4, True)
    assert st.name == "SM90_U16x8_STSM_T" and st.ptx == "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_matches_ptx(num: int, trans: bool) -> None:
    # PTX ISA ldmatrix: threads 8q..8q+7 give the row addresses of matrix q; without .trans thread t receives
    # row t/4, columns 2(t%4), 2(t%4)+1 of each matrix; with .trans, rows 2(t%4), 2(t%4)+1 of column t/4.
    # Reference element of matrix q, row r, column c: 64 q + 8 r + c.
    atom = nv.make_ldmatrix_atom("f16", num, trans)
    for t in range(32):
        for q in range(num):
            for e in range(2):
                r, c = (2 * (t % 4) + e, t // 4) if trans else (t // 4, 2 * (t % 4) + e)
                assert atom.layout_dst_tv((t, e + 2 * q)) == 64 * q + 8 * r + c
        src = t % (8 * num)
        for c in range(8):
            assert atom.layout_src_tv((t, c)) == 64 * (src // 8) + 8 * (src % 8) + c


def test_universal_and_cp_async_atoms() -> None:
    u = nv.make_universal_copy_atom("f32", 128)
    assert u.name == "UniversalCopy<uint128_t>" and u.ptx is None and str(u.layout_src_tv) == "(1,4):(0,1)"
    assert nv.make_universal_copy_atom("f16").bits == 16
    c = nv.make_cp_async_atom("f16", 16, "global")
    assert c.name == "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>" and c.ptx == "cp.async.cg.shared.global"
    assert str(c.layout_dst_tv) == "(1,8):(0,1)" and (c.src_space, c.dst_space) == ("gmem", "smem")
    c4 = nv.make_cp_async_atom("s8", 4)
    assert c4.ptx == "cp.async.ca.shared.global" and c4.num_values == 4


def test_tma_atoms() -> None:
    ld = nv.make_tma_load_atom("f16", 4096, rank=2)
    assert ld.num_threads == 1 and str(ld.layout_src_tv) == "(1,4096):(0,1)"
    assert ld.ptx == "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    mc = nv.make_tma_load_atom("bf16", 2048, rank=3, multicast=True)
    assert mc.name == "SM90_TMA_LOAD_MULTICAST" and mc.ptx.endswith(".multicast::cluster") and "3d" in mc.ptx
    st = nv.make_tma_store_atom("f32", 1024, rank=4)
    assert st.ptx == "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group" and st.bits == 1024 * 32


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: nv.make_universal_copy_atom("f16", 256), "bits must be 8, 16, 32, 64 or 128"),
        (lambda: nv.make_universal_copy_atom("f32", 16), "do not hold whole Float32"),
        (lambda: nv.make_cp_async_atom("f16", 12), "4, 8 or 16 bytes"),
        (lambda: nv.make_cp_async_atom("f16", 8, "global"), "cp.async.cg copies 16 bytes only"),
        (lambda: nv.make_cp_async_atom("f16", 16, "none"), "cache must be"),
        (lambda: nv.make_ldmatrix_atom("f32", 4, True), ".trans moves 16-bit elements"),
        (lambda: nv.make_ldmatrix_atom("f16", 3), "num_matrices must be 1, 2 or 4"),
        (lambda: nv.make_stmatrix_atom("s64", 4), "does not pack into the 32-bit registers"),
        (lambda: nv.make_tma_load_atom("f16", 0), "box_elements must be a positive int"),
        (lambda: nv.make_tma_store_atom("f16", 64, rank=6), "1 to 5 dims"),
        (lambda: nv.make_universal_copy_atom("f16", 16, src="tmem"), "src must be one of"),
    ],
)
def test_copy_atom_errors(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


# -- tiled copies ------------------------------------------------------------------------------------------


def test_elementwise_add_tiled_copy() -> None:
    # The elementwise-add walkthrough: thr (4,32):(32,1), val (4, 128/32):(4,1), 128-bit universal copies.
    atom = nv.make_universal_copy_atom("f32", 128)
    tc = nv.make_tiled_copy_tv(atom, Layout((4, 32), (32, 1)), Layout((4, 4), (4, 1)))
    assert tc.tiler_mn == (16, 128) and str(tc.layout_tv) == "((32,4),(4,4)):((64,4),(16,1))"
    assert tc.num_threads == 128 and tc.num_values == 16
    gmem = Layout((16, 128), (128, 1))  # a row-major tile of a larger tensor would only change the strides
    part, off = tc.get_slice(5).partition_S_and_offset(gmem)
    assert str(part) == "((4,4),1,1):((1,128),0,0)"  # 4 contiguous floats (one 128-bit access) per row
    assert off == 5 * 4  # thread 5 starts 20 floats into row 0
    big = tc.get_slice(5).partition_D(Layout((64, 256), (256, 1)))
    assert big.shape[1:] == (4, 2)
    assert_moved_once(tc)


TILED = [
    (
        "universal f16 64b",
        lambda: nv.make_tiled_copy_tv(
            nv.make_universal_copy_atom("f16", 64), Layout((8, 16), (16, 1)), Layout((1, 4))
        ),
    ),
    (
        "cp.async 16B",
        lambda: nv.make_tiled_copy_tv(
            nv.make_cp_async_atom("bf16", 16), Layout((16, 8), (8, 1)), Layout((1, 8))
        ),
    ),
    (
        "ldmatrix x4 A",
        lambda: nv.make_tiled_copy_A(
            nv.make_ldmatrix_atom("f16", 4),
            nv.make_tiled_mma(nv.make_mma_sync_atom("f16", "f16", "f32"), (2, 1, 1)),
        ),
    ),
    (
        "ldmatrix x2 B",
        lambda: nv.make_tiled_copy_B(
            nv.make_ldmatrix_atom("f16", 2),
            nv.make_tiled_mma(nv.make_mma_sync_atom("f16", "f16", "f32"), (1, 2, 1)),
        ),
    ),
    (
        "ldmatrix x2.trans B",
        lambda: nv.make_tiled_copy_B(
            nv.make_ldmatrix_atom("bf16", 2, True),
            nv.make_tiled_mma(nv.make_mma_sync_atom("bf16", "bf16", "f32"), (1, 1, 1)),
        ),
    ),
    (
        "stmatrix x4 C",
        lambda: nv.make_tiled_copy_C(
            nv.make_stmatrix_atom("f16", 4), nv.make_tiled_mma(nv.make_wgmma_atom("f16", "f16", "f32", 64))
        ),
    ),
    (
        "stmatrix x1 C",
        lambda: nv.make_tiled_copy_C(
            nv.make_stmatrix_atom("f16", 1), nv.make_tiled_mma(nv.make_mma_sync_atom("f16", "f16", "f16"))
        ),
    ),
    (
        "ldmatrix x4 wgmma A",
        lambda: nv.make_tiled_copy_A(
            nv.make_ldmatrix_atom("f16", 4),
            nv.make_tiled_mma(nv.make_wgmma_atom("f16", "f16", "f32", 64, a_source="rmem")),
        ),
    ),
]


@pytest.mark.parametrize("name,make", TILED, ids=[t[0] for t in TILED])
def test_each_element_moved_once(name: str, make: object) -> None:
    assert_moved_once(make())  # type: ignore[operator]


def mma_pairs() -> list[tuple[str, nv.TiledMma, nv.CopyAtom, str]]:
    sm80 = nv.make_tiled_mma(nv.make_mma_sync_atom("f16", "f16", "f32"), (2, 2, 1))
    rs = nv.make_tiled_mma(nv.make_wgmma_atom("f16", "f16", "f32", 64, a_source="rmem"))
    h = nv.make_tiled_mma(nv.make_wgmma_atom("f16", "f16", "f16", 128), (2, 1, 1))
    return [
        ("A", sm80, nv.make_ldmatrix_atom("f16", 4), "D"),
        ("B", sm80, nv.make_ldmatrix_atom("f16", 2), "D"),
        ("A", rs, nv.make_ldmatrix_atom("f16", 4), "D"),
        ("C", h, nv.make_stmatrix_atom("f16", 4), "S"),
        ("C", sm80, nv.make_stmatrix_atom("f16", 2), "S"),
    ]


@pytest.mark.parametrize("case", range(5))
@pytest.mark.parametrize("scale", [1, 2])
def test_retile_matches_mma_fragment(case: int, scale: int) -> None:
    # The register side of a copy built from a TiledMma, retiled from the MMA's fragment, must name the same
    # tile element for every value: what ldmatrix delivers is what the mma reads; what stmatrix stores is what
    # the mma accumulated.
    operand, tm, atom, side = mma_pairs()[case]
    make = {"A": nv.make_tiled_copy_A, "B": nv.make_tiled_copy_B, "C": nv.make_tiled_copy_C}[operand]
    tc = make(atom, tm)
    _, tm_m, tm_n, _ = tm.thr_shape_vmnk
    assert_moved_once(tc, {"A": tm_n, "B": tm_m, "C": 1}[operand])
    m, n, k = tm.tile_shape_mnk
    tile = {"A": (m * scale, k * scale), "B": (n * scale, k * scale), "C": (m * scale, n * scale)}[operand]
    frag = Layout(tile)
    for tid in range(0, tm.num_threads, 7):
        thr_mma = tm.get_slice(tid)
        mma_part, mma_off = getattr(thr_mma, f"partition_{operand}_and_offset")(frag)
        regs = Layout(mma_part.shape)  # the compact register fragment
        thr_copy = tc.get_slice(tid)
        cp_part, cp_off = (
            thr_copy.partition_D_and_offset if side == "D" else thr_copy.partition_S_and_offset
        )(frag)
        retiled = thr_copy.retile_D(regs) if side == "D" else thr_copy.retile_S(regs)
        assert size(retiled) == size(cp_part)
        for i in range(size(cp_part)):
            assert cp_off + cp_part(i) == mma_off + mma_part(retiled(i))


def test_ldmatrix_reads_16_contiguous_bytes() -> None:
    tm = nv.make_tiled_mma(nv.make_mma_sync_atom("f16", "f16", "f32"), (2, 2, 1))
    tc = nv.make_tiled_copy_A(nv.make_ldmatrix_atom("f16", 4), tm)
    smem = Layout((32, 16), (16, 1))  # K-major (row-major) A tile
    for tid in range(128):
        part, off = tc.get_slice(tid).partition_S_and_offset(smem)
        first = [off + part(i) for i in range(8)]
        assert first == list(range(first[0], first[0] + 8)) and first[0] % 8 == 0


def test_swizzled_partition_keeps_offset_inside() -> None:
    atom = nv.make_universal_copy_atom("f16", 128, src="smem", dst="rmem")
    tc = nv.make_tiled_copy_tv(atom, Layout((16, 8), (8, 1)), Layout((1, 8)))
    smem = nv.make_gmma_smem_layout("f16", "k", 16, 64)
    part, zero = tc.get_slice(9).partition_S_and_offset(smem)
    plain, off = tc.get_slice(9).partition_S_and_offset(smem.inner)
    assert zero == 0 and part.offset == off and part.outer == smem.outer
    assert [part(i) for i in range(size(part))] == [smem.outer(off + plain(i)) for i in range(size(plain))]


def test_tiled_copy_errors() -> None:
    ld = nv.make_ldmatrix_atom("f16", 4)
    with pytest.raises(ValueError, match="16 threads are not a multiple of the atom's 32"):
        nv.make_tiled_copy(ld, Layout((16, 8)), (16, 8))
    with pytest.raises(ValueError, match="4 values per thread are not a multiple of the atom's 8"):
        nv.make_tiled_copy(ld, Layout((32, 4)), (32, 4))
    with pytest.raises(ValueError, match="maps outside the tile"):
        nv.make_tiled_copy(ld, Layout((32, 8)), (16, 8))
    tc = nv.make_tiled_copy(ld, Layout((32, 8)), (32, 8))
    with pytest.raises(ValueError, match="not in 0..31"):
        tc.get_slice(32)
    with pytest.raises(ValueError, match="extent 20 is not divisible by 32"):
        tc.get_slice(0).partition_S(Layout((20, 8)))
    with pytest.raises(TypeError):
        nv.make_tiled_copy_tv(ld, (32, 1), Layout(8))  # type: ignore[arg-type]

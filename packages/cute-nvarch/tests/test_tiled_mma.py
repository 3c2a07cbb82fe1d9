"""TiledMma: thread layouts, partitions, atom counts and GMMA descriptor advances."""

from __future__ import annotations

from collections import Counter

import cute_nvarch as nv
import pytest
from cute_layout import Layout, size
from cute_nvarch import Major


def wgmma(n: int = 128, a_major: str = "k", b_major: str = "k", a_source: str = "smem") -> nv.MmaAtom:
    return nv.make_wgmma_atom("f16", "f16", "f32", n, a_major, b_major, a_source)


def test_acceptance_64x128x64() -> None:
    # Oracle (verbatim): CTA 64x128x64 with wgmma 64x128x16, A K-major, B MN-major: atom counts (1,1,4),
    # A advances 32 bytes and B 2048 bytes per K-block.
    tm = nv.make_tiled_mma(wgmma(128, "k", "mn"))
    assert tm.atom_counts((64, 128, 64)) == (1, 1, 4)
    a = tm.smem_desc_A(nv.make_gmma_smem_layout("f16", Major.K, 64, 64))
    b = tm.smem_desc_B(nv.make_gmma_smem_layout("f16", Major.MN, 128, 64))
    assert a.k_block_advance == 32 and a.k_block_offsets == (0, 32, 64, 96)
    assert b.k_block_advance == 2048 and b.k_blocks == 4
    assert a.desc.value == 0x4000004000010000 and b.desc.value == 0x4000004002000000


def test_acceptance_128x128x64_m_atom_advance() -> None:
    # Oracle (verbatim): CTA 128x128x64: A advances 8192 bytes per M-atom.
    tm = nv.make_tiled_mma(wgmma(128, "k", "mn"))
    assert tm.atom_counts((128, 128, 64)) == (2, 1, 4)
    a = tm.smem_desc_A(nv.make_gmma_smem_layout("f16", Major.K, 128, 64))
    assert a.mn_atom_advance == 8192 and a.mn_atoms == 2
    assert a.desc_at(1, 2).start_address == 8192 + 64


def test_two_consumer_warpgroups() -> None:
    tm = nv.make_tiled_mma(wgmma(128), (2, 1, 1))
    assert tm.num_threads == 256 and tm.tile_shape_mnk == (128, 128, 16)
    assert str(tm.thr_layout_vmnk) == "(128,2,1,1):(1,128,0,0)"
    assert tm.atom_counts((128, 128, 64)) == (1, 1, 4)
    smem = nv.make_gmma_smem_layout("f16", Major.K, 128, 64, stages=4)
    wg0, wg1 = tm.smem_desc_A(smem, 0, 0), tm.smem_desc_A(smem, 0, 200)
    assert wg0.desc.start_address == 0 and wg1.desc.start_address == 8192
    assert wg1.stage_advance == 128 * 64 * 2 and len(wg1.stage_offsets) == 4
    assert tm.get_slice(200).thr_vmnk == (72, 1, 0, 0)


def test_n_atom_advance_of_b() -> None:
    tm = nv.make_tiled_mma(wgmma(128, "k", "mn"))
    b_mn = tm.smem_desc_B(nv.make_gmma_smem_layout("f16", Major.MN, 256, 64))
    assert b_mn.mn_atom_advance == 2 * 64 * 64 * 2  # two MN-major 64x64 SW128 blocks per 128 N
    tk = nv.make_tiled_mma(wgmma(128))
    b_k = tk.smem_desc_B(nv.make_gmma_smem_layout("f16", Major.K, 256, 64))
    assert b_k.mn_atom_advance == 128 * 128  # 128 rows of 128 bytes


def test_non_uniform_k_blocks_are_listed() -> None:
    tm = nv.make_tiled_mma(wgmma(64))
    a = tm.smem_desc_A(nv.make_gmma_smem_layout("f16", Major.K, 64, 128))
    assert a.k_block_offsets == (0, 32, 64, 96, 8192, 8224, 8256, 8288)
    with pytest.raises(ValueError, match="K-block advance is not uniform"):
        a.k_block_advance  # noqa: B018


def c_owners(tm: nv.TiledMma, m: int, n: int) -> Counter:
    counts: Counter = Counter()
    for tid in range(tm.num_threads):
        part, off = tm.get_slice(tid).partition_C_and_offset(Layout((m, n)))
        counts.update(off + part(i) for i in range(size(part)))
    return counts


TILED = [
    ("wgmma n256", lambda: nv.make_tiled_mma(wgmma(256)), (64, 256)),
    ("wgmma 2x1 n128", lambda: nv.make_tiled_mma(wgmma(128), (2, 1, 1)), (256, 128)),
    ("wgmma 1x2 n64 rs", lambda: nv.make_tiled_mma(wgmma(64, a_source="rmem"), (1, 2, 1)), (64, 256)),
    ("wgmma int8 n24", lambda: nv.make_tiled_mma(nv.make_wgmma_atom("s8", "s8", "s32", 24)), (128, 48)),
    (
        "sm80 2x2 perm",
        lambda: nv.make_tiled_mma(nv.make_mma_sync_atom("f16", "f16", "f32"), (2, 2, 1), (None, 32, None)),
        (64, 64),
    ),
    (
        "sm80 tf32 1x4",
        lambda: nv.make_tiled_mma(nv.make_mma_sync_atom("tf32", "tf32", "f32"), (1, 4, 1)),
        (32, 32),
    ),
    (
        "sm80 s8 perm layout",
        lambda: nv.make_tiled_mma(
            nv.make_mma_sync_atom("s8", "s8", "s32"), (2, 1, 1), (Layout((2, 16), (16, 1)), None, None)
        ),
        (32, 16),
    ),
]


@pytest.mark.parametrize("name,make,tile", TILED, ids=[t[0] for t in TILED])
def test_each_c_element_owned_once(name: str, make: object, tile: tuple[int, int]) -> None:
    # Property (acceptance): each element of C is owned by exactly one (thread, value).
    tm = make()  # type: ignore[operator]
    m, n = tile
    assert c_owners(tm, m, n) == Counter(range(m * n))
    tv = tm.get_layoutC_TV()
    tm_, tn_, _ = tm.tile_shape_mnk
    assert sorted(tv(i) for i in range(size(tv))) == list(range(tm_ * tn_))


def test_permutation_moves_ownership() -> None:
    atom = nv.make_mma_sync_atom("f16", "f16", "f32")
    plain = nv.make_tiled_mma(atom, (2, 2, 1))
    sized = nv.make_tiled_mma(atom, (2, 2, 1), (None, 32, None))
    perm = nv.make_tiled_mma(atom, (2, 2, 1), (None, Layout((8, 2, 2), (1, 16, 8)), None))
    assert plain.tile_shape_mnk == (32, 16, 16) and sized.tile_shape_mnk == perm.tile_shape_mnk == (
        32,
        32,
        16,
    )

    def columns(tm: nv.TiledMma, tid: int) -> set[int]:
        p, off = tm.get_slice(tid).partition_C_and_offset(Layout((32, 32)))
        return {(off + p(i)) // 32 for i in range(size(p))}

    # Thread 64 is in the second warp along N: its first N-atom covers columns 8..15 without a permutation,
    # and 16..23 under CUTLASS's interleaving permutation (8,2,2):(1,16,8).
    assert min(columns(plain, 64)) == 8 and min(columns(sized, 64)) == 8
    assert min(columns(perm, 64)) == 16
    assert c_owners(perm, 32, 32) == Counter(range(32 * 32))


def test_single_atom_layout_tv_is_the_atom() -> None:
    atom = wgmma(96)
    tm = nv.make_tiled_mma(atom)
    c = tm.get_layoutC_TV()
    assert all(c((t, v)) == atom.layout_c_tv((t, v)) for t in range(128) for v in range(48))
    sm80 = nv.make_mma_sync_atom("f16", "f16", "f32")
    a = nv.make_tiled_mma(sm80).get_layoutA_TV()
    assert all(a((t, v)) == sm80.layout_a_tv((t, v)) for t in range(32) for v in range(8))


def test_partitions_and_fragments() -> None:
    tm = nv.make_tiled_mma(wgmma(128, a_source="rmem"))
    part = tm.get_slice(0).partition_C(Layout((128, 256)))
    assert part.shape[1:] == (2, 2) and size(part[0]) == 64
    assert str(tm.fragment_C((128, 256))) == "((2,2,16),2,2):((1,2,4),64,128)"
    assert str(tm.fragment_A((128, 64))) == "((2,2,2),2,4):((1,2,4),8,16)"
    assert tm.get_slice(1).partition_fragment_C((64, 128)) == tm.fragment_C((64, 128))
    a, off = tm.get_slice(37).partition_A_and_offset(Layout((64, 16)))
    # thread 37 = warp 1, lane 5: groupID 1, threadID_in_group 1 -> its first value is (m, k) = (16 + 1, 2)
    assert off == (16 + 1) + 64 * 2
    assert size(a) == 8


def test_tiled_mma_errors() -> None:
    tm = nv.make_tiled_mma(wgmma(128))
    with pytest.raises(ValueError, match="not divisible by 128"):
        tm.atom_counts((64, 120, 64))
    with pytest.raises(ValueError, match="not divisible by 16"):
        tm.atom_counts((64, 128, 40))
    with pytest.raises(ValueError, match="reads A from shared memory"):
        tm.fragment_A((64, 16))
    with pytest.raises(ValueError, match="does not read A through a descriptor"):
        nv.make_tiled_mma(wgmma(64, a_source="rmem")).smem_desc_A(
            nv.make_gmma_smem_layout("f16", "k", 64, 64)
        )
    with pytest.raises(ValueError, match="thr_idx=128 is not a thread"):
        tm.get_slice(128)
    with pytest.raises(ValueError, match="rank 3"):
        nv.make_tiled_mma(wgmma(128), Layout((2, 1)))
    with pytest.raises(ValueError, match="maps two atoms to one thread"):
        nv.make_tiled_mma(wgmma(128), Layout((2, 1, 1), (0, 0, 0)))
    with pytest.raises(TypeError, match="permutation_mnk"):
        nv.make_tiled_mma(wgmma(128), (1, 1, 1), ("x", None, None))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="K-major INTERLEAVE.*MN rows must be 1 x 16 bytes apart"):
        tm.smem_desc_A(Layout((64, 64), (64, 1)))  # a K-major tile without its SW128 swizzle

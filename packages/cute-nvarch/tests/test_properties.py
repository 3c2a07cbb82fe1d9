"""Hypothesis: random TiledMmas own C exactly once; random TiledCopies move each element exactly once."""

from __future__ import annotations

from collections import Counter

import cute_nvarch as nv
from cute_layout import Layout, size
from hypothesis import given, settings
from hypothesis import strategies as st

ATOMS = [
    lambda n: nv.make_wgmma_atom("f16", "f16", "f32", n),
    lambda n: nv.make_wgmma_atom("bf16", "bf16", "f32", n, a_source="rmem"),
    lambda n: nv.make_wgmma_atom("e4m3", "e5m2", "f16", n),
    lambda n: nv.make_mma_sync_atom("f16", "f16", "f32"),
    lambda n: nv.make_mma_sync_atom("tf32", "tf32", "f32"),
    lambda n: nv.make_mma_sync_atom("s8", "u8", "s32"),
]


@settings(max_examples=25, deadline=None)
@given(
    atom=st.sampled_from(range(len(ATOMS))),
    n=st.sampled_from([8, 16, 40, 64]),
    am=st.sampled_from([1, 2]),
    an=st.sampled_from([1, 2, 4]),
    rm=st.sampled_from([1, 2]),
    rn=st.sampled_from([1, 3]),
)
def test_random_tiled_mma_owns_c_once(atom: int, n: int, am: int, an: int, rm: int, rn: int) -> None:
    if am * an > 4 and atom < 3:
        an = 1  # keep warpgroup MMAs at <= 512 threads
    tm = nv.make_tiled_mma(ATOMS[atom](n), (am, an, 1))
    m_tile, n_tile, _ = tm.tile_shape_mnk
    m, nn = m_tile * rm, n_tile * rn  # a CTA tile of several tiled-MMA steps
    counts: Counter = Counter()
    for tid in range(tm.num_threads):
        part, off = tm.get_slice(tid).partition_C_and_offset(Layout((m, nn)))
        assert size(part) == tm.atom.num_c_values * rm * rn
        counts.update(off + part(i) for i in range(size(part)))
    assert counts == Counter(range(m * nn))


@settings(max_examples=30, deadline=None)
@given(
    dtype=st.sampled_from(["s8", "f16", "f32"]),
    thr=st.sampled_from([(4, 8), (8, 4), (2, 16), (32, 1), (1, 32), (4, 16)]),
    thr_row_major=st.booleans(),
    val=st.sampled_from([(1, 4), (4, 1), (2, 2), (1, 8), (2, 4)]),
    reps=st.sampled_from([(1, 1), (2, 1), (1, 3)]),
)
def test_random_tiled_copy_moves_once(
    dtype: str, thr: tuple[int, int], thr_row_major: bool, val: tuple[int, int], reps: tuple[int, int]
) -> None:
    t = nv.numeric_type(dtype)
    bits = min(128, t.width * val[0] * val[1])
    # Vector width: the values a thread holds contiguously along the tile's fastest-moving mode.
    while bits > t.width and (val[0] * val[1] * t.width) % bits:
        bits //= 2
    atom = nv.make_universal_copy_atom(t, bits)
    thr_layout = Layout(thr, (thr[1], 1)) if thr_row_major else Layout(thr)
    tc = nv.make_tiled_copy_tv(atom, thr_layout, Layout(val))
    m, n = tc.tiler_mn
    tile = Layout((m * reps[0], n * reps[1]))
    for side in ("S", "D"):
        counts: Counter = Counter()
        for tid in range(tc.num_threads):
            thr_copy = tc.get_slice(tid)
            part, off = (thr_copy.partition_S_and_offset if side == "S" else thr_copy.partition_D_and_offset)(
                tile
            )
            counts.update(off + part(i) for i in range(size(part)))
        assert counts == Counter(range(size(tile)))

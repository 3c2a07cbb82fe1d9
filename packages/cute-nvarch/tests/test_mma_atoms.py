"""MMA atoms: CuTe's thread-value layouts, checked verbatim and against the PTX ISA fragment formulas."""

from __future__ import annotations

import cute_nvarch as nv
import pytest
from cute_layout import Layout, size
from cute_nvarch import Major, OperandSource


def tv(layout: Layout, t: int, v: int) -> int:
    """layout((t, v)) with t and v 1-D indices into the thread and value modes."""
    return layout((t, v))


# -- verbatim layouts (acceptance) -----------------------------------------------------------------------


@pytest.mark.parametrize("n", nv.WGMMA_N_DENSE)
def test_wgmma_c_layout_every_n(n: int) -> None:
    # Oracle (verbatim): wgmma C ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) for every N.
    atom = nv.make_wgmma_atom(nv.Float16, nv.Float16, nv.Float32, n)
    assert str(atom.layout_c_tv) == f"((4,8,4),(2,2,{n // 8})):((128,1,16),(64,8,512))"
    # shared-memory A/B (verbatim): (128,(M,K)):(0,(1,M))
    assert str(atom.layout_a_tv) == "(128,(64,16)):(0,(1,64))"
    assert str(atom.layout_b_tv) == f"(128,({n},16)):(0,(1,{n}))"


@pytest.mark.parametrize("n", nv.WGMMA_N_INTEGER)
def test_wgmma_c_layout_every_integer_n(n: int) -> None:
    atom = nv.make_wgmma_atom(nv.Int8, nv.Uint8, nv.Int32, n)
    assert str(atom.layout_c_tv) == f"((4,8,4),(2,2,{n // 8})):((128,1,16),(64,8,512))"
    assert str(atom.layout_b_tv) == f"(128,({n},32)):(0,(1,{n}))"


def test_wgmma_register_a_16bit() -> None:
    # Oracle (verbatim): 16-bit register A ((4,8,4),(2,2,2)):((128,1,16),(64,8,512)).
    for t in (nv.Float16, nv.BFloat16):
        atom = nv.make_wgmma_atom(t, t, nv.Float32, 64, a_source="rmem")
        assert str(atom.layout_a_tv) == "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"
        assert atom.a_source is OperandSource.RMEM and atom.name.endswith("_RS")


def test_sm80_layouts() -> None:
    # Oracle (verbatim): SM80 m16n8k16 A ((4,8),(2,2,2)):((32,1),(16,8,128)), B ((4,8),(2,2)):((16,1),(8,64)),
    # C ((4,8),(2,2)):((32,1),(16,8)).
    atom = nv.make_mma_sync_atom(nv.Float16, nv.Float16, nv.Float32)
    assert str(atom.layout_a_tv) == "((4,8),(2,2,2)):((32,1),(16,8,128))"
    assert str(atom.layout_b_tv) == "((4,8),(2,2)):((16,1),(8,64))"
    assert str(atom.layout_c_tv) == "((4,8),(2,2)):((32,1),(16,8))"


# -- the PTX ISA fragment formulas as an independent oracle ----------------------------------------------


def _ptx_wgmma_d(tid: int, i: int) -> tuple[int, int]:
    w, lane = divmod(tid, 32)
    g, q = divmod(lane, 4)
    return 16 * w + g + 8 * ((i >> 1) & 1), 2 * q + (i & 1) + 8 * (i >> 2)


def _ptx_wgmma_a(tid: int, i: int, k: int) -> tuple[int, int]:
    w, lane = divmod(tid, 32)
    g, q = divmod(lane, 4)
    if k == 16:
        return 16 * w + g + 8 * ((i >> 1) & 1), 2 * q + (i & 1) + 8 * (i >> 2)
    if k == 32:
        return 16 * w + g + 8 * ((i >> 2) & 1), 4 * q + (i & 3) + 16 * (i >> 3)
    return 16 * w + g + 8 * (i & 1), q + 4 * (i >> 1)  # k == 8 (tf32)


@pytest.mark.parametrize("n", [8, 24, 64, 136, 256])
def test_wgmma_c_matches_ptx_fragments(n: int) -> None:
    c = nv.make_wgmma_atom("f16", "f16", "f16", n).layout_c_tv
    for tid in range(128):
        for i in range(n // 2):
            m, col = _ptx_wgmma_d(tid, i)
            assert tv(c, tid, i) == m + 64 * col


@pytest.mark.parametrize("a,k", [("f16", 16), ("bf16", 16), ("tf32", 8), ("e4m3", 32), ("s8", 32)])
def test_wgmma_register_a_matches_ptx_fragments(a: str, k: int) -> None:
    acc = {"s8": "s32"}.get(a, "f32")
    b = a
    atom = nv.make_wgmma_atom(a, b, acc, 64, a_source="rmem")
    assert atom.shape_mnk == (64, 64, k)
    for tid in range(128):
        for i in range(64 * k // 128):
            m, kk = _ptx_wgmma_a(tid, i, k)
            assert tv(atom.layout_a_tv, tid, i) == m + 64 * kk


def _ptx_sm80(kind: str, k: int, lane: int, i: int) -> tuple[int, int]:
    g, q = divmod(lane, 4)
    if kind == "C":
        return g + 8 * (i >> 1), 2 * q + (i & 1)
    if kind == "A":
        if k == 16:
            return g + 8 * ((i >> 1) & 1), 2 * q + (i & 1) + 8 * (i >> 2)
        if k == 8:
            return g + 8 * (i & 1), q + 4 * (i >> 1)
        return g + 8 * ((i >> 2) & 1), 4 * q + (i & 3) + 16 * (i >> 3)
    # B: returns (n, k)
    if k == 16:
        return g, 2 * q + (i & 1) + 8 * (i >> 1)
    if k == 8:
        return g, q + 4 * i
    return g, 4 * q + (i & 3) + 16 * (i >> 2)


@pytest.mark.parametrize(
    "a,acc,k",
    [
        ("f16", "f32", 16),
        ("f16", "f16", 16),
        ("bf16", "f32", 16),
        ("tf32", "f32", 8),
        ("s8", "s32", 32),
        ("u8", "s32", 32),
    ],
)
def test_sm80_matches_ptx_fragments(a: str, acc: str, k: int) -> None:
    atom = nv.make_mma_sync_atom(a, a, acc)
    assert atom.shape_mnk == (16, 8, k)
    for lane in range(32):
        for i in range(4):
            m, n = _ptx_sm80("C", k, lane, i)
            assert tv(atom.layout_c_tv, lane, i) == m + 16 * n
        for i in range(16 * k // 32):
            m, kk = _ptx_sm80("A", k, lane, i)
            assert tv(atom.layout_a_tv, lane, i) == m + 16 * kk
        for i in range(8 * k // 32):
            n, kk = _ptx_sm80("B", k, lane, i)
            assert tv(atom.layout_b_tv, lane, i) == n + 8 * kk


def _is_bijection_onto(layout: Layout, n: int) -> bool:
    return sorted(layout(i) for i in range(size(layout))) == list(range(n))


@pytest.mark.parametrize("n", [8, 16, 24, 48, 128, 256])
def test_register_layouts_are_bijections(n: int) -> None:
    for a, acc in (("f16", "f32"), ("tf32", "f32"), ("e5m2", "f16"), ("s8", "s32")):
        if n not in nv.wgmma_allowed_n(a):
            continue
        atom = nv.make_wgmma_atom(a, a, acc, n, a_source="rmem")
        m, nn, k = atom.shape_mnk
        assert _is_bijection_onto(atom.layout_c_tv, m * nn)
        assert _is_bijection_onto(atom.layout_a_tv, m * k)


# -- mnemonics, names, registers ---------------------------------------------------------------------------


def test_wgmma_names_and_ptx() -> None:
    a = nv.make_wgmma_atom("f16", "f16", "f32", 128, Major.K, Major.MN)
    assert a.name == "SM90_64x128x16_F32F16F16_SS"
    assert a.ptx == "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"
    assert (a.a_major, a.b_major) == (Major.K, Major.MN) and int(a.b_major) == 1  # imm-trans-b
    assert (a.a_layout, a.b_layout) == ("row", "row")  # PTX/NVVM names: A K-major = row, B N-major = row
    assert a.arch == "sm_90a" and a.num_threads == 128 and a.is_wgmma
    assert (a.c_registers, a.a_registers, a.b_registers) == (64, 2, 2)
    h = nv.make_wgmma_atom("f16", "f16", "f16", 256)
    assert h.c_registers == 64
    f8 = nv.make_wgmma_atom("e4m3", "e5m2", "f32", 256)
    assert f8.name == "SM90_64x256x32_F32E4M3E5M2_SS_TN"
    assert f8.ptx == "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2"
    i8 = nv.make_wgmma_atom("u8", "s8", "s32", 24, a_source="rmem")
    assert i8.name == "SM90_64x24x32_S32U8S8_RS_TN" and i8.ptx.endswith("m64n24k32.s32.u8.s8")
    assert i8.a_registers == 4
    tf = nv.make_wgmma_atom("tf32", "tf32", "f32", 8)
    assert (
        tf.ptx == "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32"
        and tf.name == "SM90_64x8x8_F32TF32TF32_SS_TN"
    )


def test_sm80_names_and_ptx() -> None:
    a = nv.make_mma_sync_atom("bf16", "bf16", "f32")
    assert a.name == "SM80_16x8x16_F32BF16BF16F32_TN"
    assert a.ptx == "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    assert a.num_threads == 32 and a.arch == "sm_80" and not a.is_wgmma
    assert (a.a_layout, a.b_layout) == ("row", "col")  # mma.sync ... .row.col
    assert (a.a_registers, a.b_registers, a.c_registers) == (4, 2, 4)
    t = nv.make_mma_sync_atom("tf32", "tf32", "f32", (16, 8, 8))
    assert t.ptx == "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    s = nv.make_mma_sync_atom("s8", "s8", "s32")
    assert (
        s.ptx == "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" and s.name == "SM80_16x8x32_S32S8S8S32_TN"
    )


def test_allowed_n_sets() -> None:
    # Oracle: PTX ISA wgmma shapes: N = 8..256 step 8 for f16/bf16/tf32/fp8; 8,16,24,32,48,...,256 for s8/u8.
    assert nv.WGMMA_N_DENSE == tuple(range(8, 257, 8))
    assert nv.WGMMA_N_INTEGER == (
        8,
        16,
        24,
        32,
        48,
        64,
        80,
        96,
        112,
        128,
        144,
        160,
        176,
        192,
        208,
        224,
        240,
        256,
    )
    assert nv.wgmma_k("f16") == 16 and nv.wgmma_k("tf32") == 8 and nv.wgmma_k("e4m3") == 32


# -- invalid combinations ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        (("f16", "f16", "f32", 12), {}, "N=12 is not allowed"),
        (("f16", "f16", "f32", 264), {}, "N=264 is not allowed"),
        (("s8", "s8", "s32", 40), {}, "N=40 is not allowed"),
        (("e4m3", "e4m3", "f32", 64), {"a_major": "mn"}, "A is MN-major but Float8E4M3FN"),
        (("e4m3", "e4m3", "f32", 64), {"b_major": "mn"}, "B is MN-major but Float8E4M3FN"),
        (("tf32", "tf32", "f32", 64), {"b_major": "mn"}, "K-major only"),
        (("s8", "u8", "s32", 64), {"a_major": "mn"}, "K-major only"),
        (("bf16", "bf16", "f16", 64), {}, "accumulates in Float32, not Float16"),
        (("f16", "bf16", "f32", 64), {}, "no wgmma multiplies Float16 by BFloat16"),
        (("f32", "f32", "f32", 64), {}, "no wgmma multiplies"),
        (("e4m3", "s8", "f32", 64), {}, "no wgmma multiplies"),
        (("s8", "s8", "f32", 64), {}, "accumulates in Int32"),
        (("f16", "f16", "f32", 64), {"a_major": "mn", "a_source": "rmem"}, "A from registers is K-major"),
        (("f16", "f16", "f32", 64), {"a_major": "q"}, "major must be"),
    ],
)
def test_wgmma_invalid(args: tuple, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        nv.make_wgmma_atom(*args, **kwargs)


def test_wgmma_mn_major_allowed_for_16_bit() -> None:
    for t in ("f16", "bf16"):
        atom = nv.make_wgmma_atom(t, t, "f32", 64, "mn", "mn")
        assert (atom.a_major, atom.b_major) == (Major.MN, Major.MN)
    with pytest.raises(TypeError):
        nv.make_wgmma_atom("f16", "f16", "f32", 64.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args,match",
    [
        (("f16", "f16", "s32"), "accumulates in Float16 or Float32"),
        (("bf16", "bf16", "f16"), "accumulates in Float32"),
        (("e4m3", "e4m3", "f32"), "no SM80 mma.sync multiplies"),
        (("f16", "f16", "f32", (16, 8, 8)), r"has shape \(16, 8, 16\)"),
    ],
)
def test_sm80_invalid(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        nv.make_mma_sync_atom(*args)

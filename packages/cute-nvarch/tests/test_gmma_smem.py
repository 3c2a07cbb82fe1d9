"""GMMA shared-memory layout atoms, the widest-swizzle rule, and staged buffers."""

from __future__ import annotations

import cute_nvarch as nv
import pytest
from cute_layout import size
from cute_nvarch import GmmaLayoutType as LT
from cute_nvarch import Major

TYPES = [nv.Int8, nv.Float8E4M3FN, nv.Float16, nv.BFloat16, nv.Float32, nv.TFloat32]
SWIZZLE_BITS = {LT.INTERLEAVE: 0, LT.B32: 1, LT.B64: 2, LT.B128: 3}


def hardware_swizzle(byte: int, layout_type: LT) -> int:
    """SW128: bits [4,7) ^= bits [7,10); SW64: bits [4,6) ^= bits [7,9); SW32: bit 4 ^= bit 7."""
    mask = (1 << SWIZZLE_BITS[layout_type]) - 1
    return byte ^ (((byte >> 7) & mask) << 4)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("major", [Major.K, Major.MN])
@pytest.mark.parametrize("layout_type", list(LT))
def test_atom_reproduces_hardware_swizzle(dtype: nv.NumericType, major: Major, layout_type: LT) -> None:
    # Oracle (verbatim): the byte offset of an element equals its unswizzled byte offset with bits [4,7) XORed
    # by bits [7,10) (SW128), and the SW64/SW32 analogues, for every element of the atom.
    atom = nv.gmma_smem_atom(dtype, major, layout_type)
    nbytes = dtype.width // 8
    n = size(atom)
    assert n * nbytes == 8 * layout_type.swizzle_bytes  # 8 rows of one swizzle span
    for i in range(n):
        unswizzled = atom.inner(i) * nbytes
        assert atom(i) * nbytes == hardware_swizzle(unswizzled, layout_type)
    assert sorted(atom(i) for i in range(n)) == list(range(n))


def test_atom_shapes_f16() -> None:
    # CuTe's GMMA::Layout_*_Atom<half_t>, upcast from the _Bits atoms.
    assert str(nv.gmma_smem_atom("f16", "k", LT.B128).inner) == "(8,64):(64,1)"
    assert str(nv.gmma_smem_atom("f16", "k", LT.B64).inner) == "(8,32):(32,1)"
    assert str(nv.gmma_smem_atom("f16", "k", LT.B32).inner) == "(8,16):(16,1)"
    assert str(nv.gmma_smem_atom("f16", "k", LT.INTERLEAVE).inner) == "(8,8):(8,1)"
    assert str(nv.gmma_smem_atom("f16", "mn", LT.B128).inner) == "(64,8):(1,64)"
    assert str(nv.gmma_smem_atom("f16", "mn", LT.INTERLEAVE).inner) == "(8,8):(1,8)"
    assert str(nv.gmma_smem_atom("f16", "k", LT.B128)) == "S<3,3,3> o 0 o (8,64):(64,1)"
    assert str(nv.gmma_smem_atom("e4m3", "k", LT.B128)) == "S<3,4,3> o 0 o (8,128):(128,1)"
    assert str(nv.gmma_smem_atom("tf32", "k", LT.B64)) == "S<2,2,3> o 0 o (8,16):(16,1)"


@pytest.mark.parametrize(
    "dtype,major,mn,k,expected",
    [
        ("f16", "k", 128, 64, LT.B128),
        ("f16", "k", 128, 32, LT.B64),
        ("f16", "k", 128, 16, LT.B32),
        ("f16", "k", 128, 8, LT.INTERLEAVE),
        ("f16", "k", 128, 24, LT.INTERLEAVE),
        ("f16", "k", 128, 192, LT.B128),
        ("f16", "mn", 64, 8, LT.B128),
        ("f16", "mn", 32, 64, LT.B64),
        ("f16", "mn", 48, 64, LT.B32),
        ("f16", "mn", 8, 64, LT.INTERLEAVE),
        ("e4m3", "k", 64, 128, LT.B128),
        ("e4m3", "k", 64, 64, LT.B64),
        ("tf32", "k", 64, 32, LT.B128),
        ("tf32", "k", 64, 8, LT.B32),
    ],
)
def test_widest_swizzle_rule(dtype: str, major: str, mn: int, k: int, expected: LT) -> None:
    assert nv.select_gmma_layout_type(dtype, major, mn, k) == expected
    assert nv.make_gmma_smem_layout(dtype, major, mn, k).outer == nv.gmma_swizzle(dtype, expected)


def test_k_major_buffers_are_m_first() -> None:
    # CUTLASS SM90 mainloops: tile_to_shape(atom, (M, K, stages), Step<_1,_2,_3>) for K-major.
    buf = nv.make_gmma_smem_layout("f16", "k", 128, 128, stages=3)
    atom = 8 * 64
    assert buf.inner((8, 0, 0)) == atom  # the next atom along M comes first
    assert buf.inner((0, 64, 0)) == atom * 16  # then along K, after all 16 M-atoms
    assert buf.inner((0, 0, 1)) == 128 * 128  # then the next stage
    assert str(buf) == "S<3,3,3> o 0 o (128,(64,2),3):(64,(1,8192),16384)"


def test_mn_major_buffers_are_k_first() -> None:
    # tile_to_shape(atom, (MN, K, stages), Step<_2,_1,_3>) for MN-major.
    buf = nv.make_gmma_smem_layout("f16", "mn", 128, 64, stages=2)
    assert buf.inner((0, 8, 0)) == 512  # the next atom along K comes first
    assert buf.inner((64, 0, 0)) == 512 * 8  # then along MN
    assert str(buf) == "S<3,3,3> o 0 o ((64,2),64,2):((1,4096),64,8192)"


@pytest.mark.parametrize("dtype", ["s8", "bf16", "f32"])
@pytest.mark.parametrize("major", ["k", "mn"])
def test_whole_buffer_swizzle_is_hardware_swizzle(dtype: str, major: str) -> None:
    t = nv.numeric_type(dtype)
    buf = nv.make_gmma_smem_layout(t, major, 64, 64, stages=2)
    lt = nv.select_gmma_layout_type(t, major, 64, 64)
    n = size(buf)
    seen = set()
    for i in range(n):
        b = buf(i) * t.bytes
        assert b == hardware_swizzle(buf.inner(i) * t.bytes, lt)
        seen.add(buf(i))
    assert seen == set(range(n))


def test_smem_errors() -> None:
    with pytest.raises(ValueError, match="tile_k=20 must be a multiple of 8"):
        nv.select_gmma_layout_type("f16", "k", 64, 20)
    with pytest.raises(ValueError, match="tile_mn=12 must be a multiple of 8"):
        nv.make_gmma_smem_layout("f16", "mn", 12, 64)
    with pytest.raises(ValueError, match="8-, 16- or 32-bit"):
        nv.gmma_smem_atom("s64", "k", LT.B128)
    with pytest.raises(ValueError, match="not divisible by the K-major B128 atom"):
        nv.make_gmma_smem_layout("f16", "k", 64, 32, layout_type=LT.B128)
    with pytest.raises(ValueError, match="stages must be a positive int"):
        nv.make_gmma_smem_layout("f16", "k", 64, 64, stages=0)
    with pytest.raises(ValueError, match="tile_k=24 of a K-major Int8 tile is not a multiple of 16 elements"):
        nv.select_gmma_layout_type("s8", "k", 64, 24)

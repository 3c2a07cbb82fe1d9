"""GMMA descriptors: the acceptance values, bit packing, and canonical-layout checks."""

from __future__ import annotations

import cute_nvarch as nv
import pytest
from cute_layout import ComposedLayout, Layout, Swizzle, composition
from cute_nvarch import GmmaDescriptor, GmmaLayoutType, Major


def operand_tile(buffer: object, mn: int, k: int) -> object:
    """The first (mn, k) instruction tile of a GMMA buffer."""
    return composition(buffer, (Layout(mn), Layout(k)))


@pytest.mark.parametrize(
    "major,mn,k,mn_atom,expected",
    [
        # Oracle (verbatim): descriptors for f16 at start address 0.
        ("k", 64, 64, 64, 0x4000004000010000),
        ("k", 128, 64, 128, 0x4000004000010000),
        ("mn", 128, 64, 128, 0x4000004002000000),
        ("mn", 128, 32, 128, 0x4000004001000000),
        ("k", 64, 32, 64, 0x8000002000010000),
    ],
)
def test_acceptance_descriptors(major: str, mn: int, k: int, mn_atom: int, expected: int) -> None:
    buf = nv.make_gmma_smem_layout(nv.Float16, major, mn, k)
    desc = nv.make_gmma_desc(major, operand_tile(buf, mn_atom, 16), nv.Float16)
    assert desc.value == expected, hex(desc.value)
    assert desc.halves == (expected & 0xFFFFFFFF, expected >> 32)


def test_k_major_64x32_is_sw64() -> None:
    buf = nv.make_gmma_smem_layout(nv.Float16, "k", 64, 32)
    desc = nv.make_gmma_desc("k", operand_tile(buf, 64, 16), nv.Float16)
    assert desc.layout_type == GmmaLayoutType.B64
    assert (desc.leading_byte_offset, desc.stride_byte_offset) == (16, 512)


@pytest.mark.parametrize("dtype,k", [("tf32", 8), ("e4m3", 32), ("s8", 32), ("bf16", 16)])
def test_k_major_sw128_any_type(dtype: str, k: int) -> None:
    # Eight 128-byte rows per swizzle atom: SBO = 1024 bytes, LBO unused (1) for every element width.
    buf = nv.make_gmma_smem_layout(dtype, "k", 64, 1024 // nv.numeric_type(dtype).width)
    desc = nv.make_gmma_desc("k", operand_tile(buf, 64, k), nv.numeric_type(dtype))
    assert desc.value == 0x4000004000010000


def test_interleave_descriptors() -> None:
    # PTX canonical no-swizzle layouts: 8x16-byte core matrices stored contiguously (128 bytes).
    # K-major: core matrices along M are 128 B apart (SBO), along K 8 x 128 B apart (LBO) in an M-first tile.
    buf = nv.make_gmma_smem_layout("f16", "k", 64, 16, layout_type=GmmaLayoutType.INTERLEAVE)
    d = nv.make_gmma_desc("k", operand_tile(buf, 64, 16), nv.Float16)
    assert (d.layout_type, d.stride_byte_offset, d.leading_byte_offset) == (
        GmmaLayoutType.INTERLEAVE,
        128,
        1024,
    )
    # MN-major: core matrices along K are 128 B apart (LBO), along MN 2 x 128 B apart (SBO) in a K-first tile.
    buf = nv.make_gmma_smem_layout("f16", "mn", 64, 16, layout_type=GmmaLayoutType.INTERLEAVE)
    d = nv.make_gmma_desc("mn", operand_tile(buf, 64, 16), nv.Float16)
    assert (d.stride_byte_offset, d.leading_byte_offset) == (256, 128)
    assert d.value >> 62 == 0


def test_mn_major_sw32_and_sw64() -> None:
    # SW64 MN-major f16 atom (32,8):(1,32) is 512 B; K-first over (64, 16): the next 8 K-rows are one atom
    # further (SBO = 512 B), the next 32 MN two atoms further (LBO = 1024 B).
    buf = nv.make_gmma_smem_layout("f16", "mn", 64, 16, layout_type=GmmaLayoutType.B64)
    d = nv.make_gmma_desc("mn", operand_tile(buf, 64, 16), nv.Float16)
    assert (d.layout_type, d.leading_byte_offset, d.stride_byte_offset) == (GmmaLayoutType.B64, 1024, 512)
    # SW32 MN-major bf16 atom (16,8):(1,16) is 256 B: SBO = 256 B, LBO = 2 atoms = 512 B.
    buf = nv.make_gmma_smem_layout("bf16", "mn", 64, 16, layout_type=GmmaLayoutType.B32)
    d = nv.make_gmma_desc("mn", operand_tile(buf, 64, 16), nv.BFloat16)
    assert (d.layout_type, d.leading_byte_offset, d.stride_byte_offset) == (GmmaLayoutType.B32, 512, 256)


def test_bit_packing_round_trip() -> None:
    d = GmmaDescriptor(
        start_address=0x3FFF0,
        leading_byte_offset=16,
        stride_byte_offset=1024,
        base_offset=5,
        layout_type=GmmaLayoutType.B64,
    )
    v = d.value
    assert v == (0x3FFF | 1 << 16 | 64 << 32 | 5 << 49 | 2 << 62)
    assert GmmaDescriptor.from_value(v) == d
    assert d.value_i64 == v - (1 << 64) and GmmaDescriptor.from_value(d.value_i64) == d
    assert (d.hi << 32 | d.lo) == v
    assert "B64" in str(d)
    a = nv.make_gmma_desc("k", operand_tile(nv.make_gmma_smem_layout("f16", "k", 64, 64), 64, 16), nv.Float16)
    assert a.advance(32).value == a.value + 2  # + (32 >> 4) in the start-address field
    assert a.value_i64 == a.value  # bit 63 clear for B128


def test_base_offset_and_start_address() -> None:
    tile = operand_tile(nv.make_gmma_smem_layout("f16", "k", 64, 64), 64, 16)
    assert nv.make_gmma_desc("k", tile, nv.Float16, start_address=1024).base_offset == 0
    d = nv.make_gmma_desc("k", tile, nv.Float16, start_address=1024 + 384)
    assert d.base_offset == 3 and d.start_address == 1408  # PTX: (addr >> 7) & 7
    with pytest.raises(ValueError, match="multiple of 16 bytes"):
        nv.make_gmma_desc("k", tile, nv.Float16, start_address=8)
    with pytest.raises(ValueError, match="14-bit field"):
        nv.make_gmma_desc("k", tile, nv.Float16, start_address=1 << 18)


def test_descriptor_field_errors() -> None:
    with pytest.raises(ValueError, match="base_offset"):
        GmmaDescriptor(0, 16, 16, 8, GmmaLayoutType.B128)
    with pytest.raises(ValueError, match="reserved bits"):
        GmmaDescriptor.from_value(1 << 14)
    with pytest.raises(TypeError):
        GmmaDescriptor(0.0, 16, 16, 0, GmmaLayoutType.B128)  # type: ignore[arg-type]


def test_non_canonical_layouts_raise() -> None:
    with pytest.raises(ValueError, match="MN rows must be 1 x 16 bytes apart"):
        nv.make_gmma_desc("k", Layout((64, 16), (16, 1)), nv.Float16)
    buf = nv.make_gmma_smem_layout("f16", "k", 64, 64)
    with pytest.raises(ValueError, match="K = 16 .32 bytes., got K = 32"):
        nv.make_gmma_desc("k", operand_tile(buf, 64, 32), nv.Float16)
    with pytest.raises(ValueError, match="not a GMMA swizzle for Float16"):
        nv.make_gmma_desc("k", ComposedLayout(Swizzle(3, 4, 3), 0, Layout((64, 16), (64, 1))), nv.Float16)
    with pytest.raises(ValueError, match="K rows must be 8 x 16 bytes apart"):
        nv.make_gmma_desc(
            Major.MN,
            ComposedLayout(nv.gmma_swizzle("f16", GmmaLayoutType.B128), 0, Layout((64, 16), (1, 128))),
            nv.Float16,
        )
    with pytest.raises(ValueError, match="not evenly strided"):
        nv.make_gmma_desc("k", Layout(((8, 2, 2), (8, 2)), ((8, 64, 1024), (1, 128))), nv.Float16)
    with pytest.raises(ValueError, match="rank 2"):
        nv.make_gmma_desc("k", Layout(64), nv.Float16)
    with pytest.raises(ValueError, match="8, 16 or 32 bits"):
        nv.make_gmma_desc("k", Layout((8, 2), (2, 1)), nv.Int64)

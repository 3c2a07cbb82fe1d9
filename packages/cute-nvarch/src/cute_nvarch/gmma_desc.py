"""The 64-bit GMMA (wgmma) shared-memory matrix descriptor: bit packing and derivation from a layout.

Bit fields (PTX ISA "Matrix Descriptor Format", CuTe's `GmmaDescriptor` union):

  bits  0-13  start address >> 4
  bits 16-29  leading dimension byte offset >> 4 (LBO)
  bits 32-45  stride dimension byte offset >> 4 (SBO)
  bits 49-51  base offset (swizzle pattern phase of a buffer not aligned to the pattern)
  bits 62-63  layout type: INTERLEAVE=0, B128=1, B64=2, B32=3

`make_gmma_desc(major, layout, dtype)` reads LBO, SBO and the layout type off the shared-memory layout
of one instruction's operand tile, (MN, K) in elements, exactly as CuTe's `make_gmma_desc` does: the
layout (without its swizzle, which must be the GMMA one) is recast to 16-byte units and must be one of

  K-major   ((8,m),(T,2)):((1T,SBO),(1,LBO))  INTERLEAVE (T=1)
            ((8,m),(T,2)):((xT,SBO),(1,T))    SW32/SW64/SW128 (x = 2/4/8 = T)
  MN-major  ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))  INTERLEAVE
            ((T,x,m),(8,k)):((1,T,LBO),(xT,SBO))  SW32/SW64/SW128

The descriptor of the K-block (or M/N-atom) at byte offset `d` from the first is the first one with
`d` added to its start address (`GmmaDescriptor.advance`); in the 64-bit value that is `+ (d >> 4)`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum

from cute_nvarch._layouts import (
    LayoutLike,
    flat_modes,
    layout_shape_tuple,
    recast_to_bits,
    split_swizzle,
    swizzle_of,
)
from cute_nvarch.numeric import NumericType

__all__ = [
    "GmmaLayoutType",
    "Major",
    "GmmaDescriptor",
    "make_gmma_desc",
    "gmma_layout_type_of",
    "as_major",
]


class Major(IntEnum):
    """Which mode of an (MN, K) operand is contiguous in memory; the value is wgmma's transpose bit."""

    K = 0
    MN = 1


class GmmaLayoutType(IntEnum):
    """The descriptor's layout type (bits 62-63): the shared-memory swizzle mode."""

    INTERLEAVE = 0
    B128 = 1
    B64 = 2
    B32 = 3

    @property
    def swizzle_bytes(self) -> int:
        """Width of the swizzle span in bytes (16 for INTERLEAVE, the core-matrix row)."""
        return {0: 16, 1: 128, 2: 64, 3: 32}[int(self)]

    @property
    def swizzle_bits(self) -> int:
        """CuTe's Swizzle<B,4,3> B for this mode (0, 1, 2, 3 for INTERLEAVE, B32, B64, B128)."""
        return {0: 0, 1: 3, 2: 2, 3: 1}[int(self)]

    @property
    def pattern_bytes(self) -> int:
        """Bytes after which the swizzle pattern repeats (8 rows of the span)."""
        return 8 * self.swizzle_bytes


_FIELD = (1 << 14) - 1


def _check_field(name: str, nbytes: int) -> int:
    if not isinstance(nbytes, int) or isinstance(nbytes, bool):
        raise TypeError(f"GmmaDescriptor: {name} must be an int of bytes, got {type(nbytes).__name__}")
    if nbytes < 0 or nbytes % 16:
        raise ValueError(f"GmmaDescriptor: {name}={nbytes} must be a non-negative multiple of 16 bytes")
    if (nbytes >> 4) > _FIELD:
        raise ValueError(
            f"GmmaDescriptor: {name}={nbytes} does not fit the 14-bit field (max {_FIELD << 4} bytes)"
        )
    return nbytes >> 4


@dataclass(frozen=True)
class GmmaDescriptor:
    """A wgmma matrix descriptor; every field in bytes except `base_offset` and `layout_type`.

    Fields:
      start_address: shared-memory byte address of the operand tile (16-byte aligned, < 256 KiB).
      leading_byte_offset: LBO in bytes (16 for swizzled K-major layouts, where the hardware ignores it).
      stride_byte_offset: SBO in bytes.
      base_offset: 3-bit pattern phase (0 for buffers aligned to `layout_type.pattern_bytes`).
      layout_type: the swizzle mode.
    `value` is the unsigned 64-bit descriptor, `lo`/`hi` its 32-bit halves, `value_i64` the same
    bits as a signed 64-bit int (what an MLIR i64 IntegerAttr accepts).
    """

    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    base_offset: int
    layout_type: GmmaLayoutType

    def __post_init__(self) -> None:
        _check_field("start_address", self.start_address)
        _check_field("leading_byte_offset", self.leading_byte_offset)
        _check_field("stride_byte_offset", self.stride_byte_offset)
        if not isinstance(self.base_offset, int) or not 0 <= self.base_offset < 8:
            raise ValueError(f"GmmaDescriptor: base_offset={self.base_offset!r} must be an int in [0, 8)")
        object.__setattr__(self, "layout_type", GmmaLayoutType(self.layout_type))

    @property
    def value(self) -> int:
        """The descriptor as an unsigned 64-bit int."""
        return (
            (self.start_address >> 4)
            | (self.leading_byte_offset >> 4) << 16
            | (self.stride_byte_offset >> 4) << 32
            | self.base_offset << 49
            | int(self.layout_type) << 62
        )

    @property
    def lo(self) -> int:
        """Bits 0-31 of the descriptor (start address and LBO)."""
        return self.value & 0xFFFFFFFF

    @property
    def hi(self) -> int:
        """Bits 32-63 of the descriptor (SBO, base offset, layout type)."""
        return self.value >> 32

    @property
    def halves(self) -> tuple[int, int]:
        """(lo, hi) 32-bit halves, low word first as the 64-bit register pair holds them."""
        return (self.lo, self.hi)

    @property
    def value_i64(self) -> int:
        """The descriptor bits read as a signed 64-bit int."""
        v = self.value
        return v - (1 << 64) if v >> 63 else v

    def advance(self, nbytes: int) -> GmmaDescriptor:
        """The descriptor of the tile `nbytes` further in shared memory (start address moved)."""
        return replace(self, start_address=self.start_address + nbytes)

    @classmethod
    def from_value(cls, value: int) -> GmmaDescriptor:
        """Decode a 64-bit descriptor value (the reserved bits must be zero)."""
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"GmmaDescriptor.from_value: value must be an int, got {type(value).__name__}")
        if value < 0:
            value += 1 << 64
        if not 0 <= value < 1 << 64:
            raise ValueError(f"GmmaDescriptor.from_value: {value:#x} is not a 64-bit value")
        reserved = value & ~(_FIELD | _FIELD << 16 | _FIELD << 32 | 7 << 49 | 3 << 62)
        if reserved:
            raise ValueError(f"GmmaDescriptor.from_value: reserved bits {reserved:#x} are set in {value:#x}")
        return cls(
            start_address=(value & _FIELD) << 4,
            leading_byte_offset=(value >> 16 & _FIELD) << 4,
            stride_byte_offset=(value >> 32 & _FIELD) << 4,
            base_offset=value >> 49 & 7,
            layout_type=GmmaLayoutType(value >> 62),
        )

    def __str__(self) -> str:
        return (
            f"GmmaDescriptor({self.value:#018x}: start={self.start_address}, lbo={self.leading_byte_offset}, "
            f"sbo={self.stride_byte_offset}, base={self.base_offset}, {self.layout_type.name})"
        )


def gmma_layout_type_of(layout: LayoutLike, dtype: NumericType) -> GmmaLayoutType:
    """The GMMA layout type whose swizzle a shared-memory layout of `dtype` elements carries."""
    sw = swizzle_of(layout)
    # The GMMA swizzles in element units: Swizzle<B, 4 - log2(bytes), 3>; identity for INTERLEAVE.
    if sw is None or sw[0] == 0:
        return GmmaLayoutType.INTERLEAVE
    bits, base, shift = sw
    want_base = _log2(128 // dtype.width)
    if shift != 3 or base != want_base or bits not in (1, 2, 3):
        raise ValueError(
            f"make_gmma_desc: swizzle Sw<{bits},{base},{shift}> is not a GMMA swizzle for {dtype} "
            f"(expected Sw<1|2|3,{want_base},3>)"
        )
    return {1: GmmaLayoutType.B32, 2: GmmaLayoutType.B64, 3: GmmaLayoutType.B128}[bits]


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"make_gmma_desc: {n} is not a power of two")
    return n.bit_length() - 1


_W = {GmmaLayoutType.INTERLEAVE: 1, GmmaLayoutType.B32: 2, GmmaLayoutType.B64: 4, GmmaLayoutType.B128: 8}


def as_major(major: Major | str, func: str = "cute_nvarch") -> Major:
    """A Major from `Major.K`, `"K"`, `"k"`, `"MN"`, `"m"`, `"n"`."""
    if isinstance(major, Major):
        return major
    if isinstance(major, str):
        key = major.strip().upper()
        if key in ("K",):
            return Major.K
        if key in ("MN", "M", "N"):
            return Major.MN
    raise ValueError(f"{func}: major must be Major.K or Major.MN (or 'k', 'mn', 'm', 'n'), got {major!r}")


def _coalesced(modes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, d in modes:
        if s == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d:
            out[-1] = (out[-1][0] * s, out[-1][1])
        else:
            out.append((s, d))
    return out


def _divide(modes: list[tuple[int, int]], n: int, what: str, where: str) -> tuple[int | None, int | None]:
    """Split a flat mode list into its first `n` units and the rest: (inner stride, rest stride)."""
    modes = _coalesced(modes)
    if n == 1:
        inner, rest = None, modes
    else:
        if not modes or modes[0][0] % n:
            have = modes[0][0] if modes else 1
            raise ValueError(
                f"make_gmma_desc: not a canonical GMMA layout ({where}): the {what} mode must start with "
                f"{n} evenly strided 16-byte units, it starts with {have}"
            )
        s, d = modes[0]
        inner = d
        rest = ([(s // n, d * n)] if s > n else []) + modes[1:]
        rest = _coalesced(rest)
    if len(rest) > 1:
        raise ValueError(
            f"make_gmma_desc: not a canonical GMMA layout ({where}): the {what} mode's core matrices are not "
            f"evenly strided ({rest} in 16-byte units)"
        )
    return inner, (rest[0][1] if rest else None)


def make_gmma_desc(
    major: Major | str,
    layout: LayoutLike,
    dtype: NumericType,
    start_address: int = 0,
) -> GmmaDescriptor:
    """The descriptor of one wgmma operand tile whose layout maps (MN, K) element coords to smem elements.

    `layout` is the operand's tile of one instruction (MN x 32 bytes of K), swizzled with a GMMA swizzle
    (or plain for INTERLEAVE). `start_address` is the byte address of the layout's origin; `base_offset`
    is derived from it when it is not aligned to the swizzle pattern (PTX: `(addr >> 7) & 7`).
    """
    major = as_major(major, "make_gmma_desc")
    if not isinstance(dtype, NumericType):
        raise TypeError(f"make_gmma_desc: dtype must be a NumericType, got {type(dtype).__name__}")
    if dtype.width not in (8, 16, 32):
        raise ValueError(
            f"make_gmma_desc: wgmma operands are 8, 16 or 32 bits wide, got {dtype} ({dtype.width})"
        )
    ltype = gmma_layout_type_of(layout, dtype)
    _, off, inner = split_swizzle(layout, "make_gmma_desc")
    if off:
        raise ValueError(
            f"make_gmma_desc: the layout's offset must be 0 (pass start_address instead), got {off}"
        )
    if len(layout_shape_tuple(inner)) != 2:
        raise ValueError(f"make_gmma_desc: layout {inner} must have rank 2 (MN, K)")
    u128 = recast_to_bits(inner, dtype.width, 128, "make_gmma_desc")
    mn = flat_modes(u128, 0)
    k = flat_modes(u128, 1)
    w = _W[ltype]
    where = f"{major.name}-major {ltype.name}, {dtype}, {inner}"
    k_size = 1
    for s, _ in k:
        k_size *= s
    if major is Major.MN:
        want_k = 256 // dtype.width
        if k_size != want_k:
            raise ValueError(
                f"make_gmma_desc: an MN-major {dtype} operand tile has K = {want_k} (32 bytes), "
                f"got K = {k_size}"
            )
        s00, s01 = _divide(mn, w, "MN", where)
        s10, s11 = _divide(k, 8, "K", where)
        if w > 1 and s00 != 1:
            raise ValueError(f"make_gmma_desc: not a canonical GMMA layout ({where}): MN must be contiguous")
        if s10 != w:
            raise ValueError(
                f"make_gmma_desc: not a canonical GMMA layout ({where}): "
                f"K rows must be {w} x 16 bytes apart, "
                f"got {s10} x 16 bytes"
            )
        sbo, lbo = (s01, s11) if ltype is GmmaLayoutType.INTERLEAVE else (s11, s01)
    else:
        if k_size != 2:
            raise ValueError(
                f"make_gmma_desc: a K-major {dtype} operand tile has K = {256 // dtype.width} (32 bytes), "
                f"got "
                f"K = {k_size * 128 // dtype.width}"
            )
        mn_size = 1
        for s, _ in mn:
            mn_size *= s
        if mn_size % 8:
            raise ValueError(f"make_gmma_desc: a K-major operand tile has MN a multiple of 8, got {mn_size}")
        s00, s01 = _divide(mn, 8, "MN", where)
        s10, _ = _divide(k, 2, "K", where)
        if s00 != w:
            raise ValueError(
                f"make_gmma_desc: not a canonical GMMA layout ({where}): "
                f"MN rows must be {w} x 16 bytes apart, "
                f"got {s00} x 16 bytes"
            )
        if ltype is GmmaLayoutType.INTERLEAVE:
            lbo = s10
        else:
            if s10 != 1:
                raise ValueError(
                    f"make_gmma_desc: not a canonical GMMA layout ({where}): K must be contiguous"
                )
            lbo = 1
        sbo = s01
    for name, v in (("LBO", lbo), ("SBO", sbo)):
        if v is not None and v < 0:
            raise ValueError(f"make_gmma_desc: {name} of {where} is negative ({v} x 16 bytes)")
    base = 0
    if ltype is not GmmaLayoutType.INTERLEAVE and start_address % ltype.pattern_bytes:
        base = (start_address >> 7) & 7
    return GmmaDescriptor(
        start_address=start_address,
        leading_byte_offset=(lbo or 0) * 16,
        stride_byte_offset=(sbo or 0) * 16,
        base_offset=base,
        layout_type=ltype,
    )

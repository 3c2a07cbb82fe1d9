"""GMMA shared-memory layout atoms, the widest-swizzle rule, and staged operand buffers.

CuTe defines the atoms in bits (`GMMA::Layout_K_SW128_Atom_Bits = Sw<3,4,3> o (8,1024):(1024,1)`) and
upcasts them per element type; here they are built directly in elements: a `ComposedLayout`
`Swizzle(B, 4 - log2(bytes), 3) o 0 o Layout` whose swizzle acts on element offsets, which equals the
hardware's byte-address swizzle (bits [4,7) ^= bits [7,10) for SW128) on a buffer aligned to the
1024-byte pattern. For f16:

  K-major   INTERLEAVE (8,8):(8,1)    SW32 (8,16):(16,1)   SW64 (8,32):(32,1)   SW128 (8,64):(64,1)
  MN-major  INTERLEAVE (8,8):(1,8)    SW32 (16,8):(1,16)   SW64 (32,8):(1,32)   SW128 (64,8):(1,64)

`make_gmma_smem_layout` tiles an atom to (tile_mn, tile_k[, stages]) as CUTLASS's SM90 mainloops do:
K-major buffers repeat the atom along MN first (`Step<_1,_2,_3>`), MN-major buffers along K first
(`Step<_2,_1,_3>`).
"""

from __future__ import annotations

from cute_layout import ComposedLayout, Layout, Swizzle, coalesce, tile_to_shape

from cute_nvarch.gmma_desc import GmmaLayoutType, Major, as_major
from cute_nvarch.numeric import NumericType, numeric_type

__all__ = [
    "gmma_swizzle",
    "gmma_smem_atom",
    "select_gmma_layout_type",
    "make_gmma_smem_layout",
    "GMMA_LAYOUT_TYPES_WIDEST_FIRST",
]

GMMA_LAYOUT_TYPES_WIDEST_FIRST = (
    GmmaLayoutType.B128,
    GmmaLayoutType.B64,
    GmmaLayoutType.B32,
    GmmaLayoutType.INTERLEAVE,
)


def _check_dtype(dtype: NumericType | str, func: str) -> NumericType:
    dtype = numeric_type(dtype)
    if dtype.width not in (8, 16, 32):
        raise ValueError(f"{func}: GMMA shared-memory layouts hold 8-, 16- or 32-bit elements, got {dtype}")
    return dtype


def gmma_swizzle(dtype: NumericType | str, layout_type: GmmaLayoutType) -> Swizzle:
    """The element-unit swizzle of a GMMA layout type for `dtype` (Swizzle(B, 4 - log2(bytes), 3))."""
    dtype = _check_dtype(dtype, "gmma_swizzle")
    base = (128 // dtype.width).bit_length() - 1
    return Swizzle(GmmaLayoutType(layout_type).swizzle_bits, base, 3)


def gmma_smem_atom(
    dtype: NumericType | str, major: Major | str, layout_type: GmmaLayoutType
) -> ComposedLayout:
    """CuTe's `GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>` as a ComposedLayout in elements."""
    dtype = _check_dtype(dtype, "gmma_smem_atom")
    major = as_major(major, "gmma_smem_atom")
    layout_type = GmmaLayoutType(layout_type)
    span = layout_type.swizzle_bytes * 8 // dtype.width  # elements in one swizzle row
    if major is Major.K:
        inner = Layout((8, span), (span, 1))
    else:
        inner = Layout((span, 8), (1, span))
    return ComposedLayout(gmma_swizzle(dtype, layout_type), 0, inner)


def select_gmma_layout_type(
    dtype: NumericType | str, major: Major | str, tile_mn: int, tile_k: int
) -> GmmaLayoutType:
    """The widest GMMA swizzle whose atom divides the tile (CUTLASS's `ss_smem_selector`).

    MN-major: the atom's MN extent must divide `tile_mn`; K-major: the atom's K extent must divide `tile_k`.
    """
    dtype = _check_dtype(dtype, "select_gmma_layout_type")
    major = as_major(major, "select_gmma_layout_type")
    for name, v in (("tile_mn", tile_mn), ("tile_k", tile_k)):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"select_gmma_layout_type: {name} must be a positive int, got {v!r}")
    if tile_mn % 8:
        raise ValueError(f"select_gmma_layout_type: tile_mn={tile_mn} must be a multiple of 8")
    if tile_k % 8:
        raise ValueError(f"select_gmma_layout_type: tile_k={tile_k} must be a multiple of 8")
    extent = tile_mn if major is Major.MN else tile_k
    for lt in GMMA_LAYOUT_TYPES_WIDEST_FIRST:
        span = lt.swizzle_bytes * 8 // dtype.width
        if extent % span == 0:
            return lt
    which = "tile_mn" if major is Major.MN else "tile_k"
    raise ValueError(
        f"select_gmma_layout_type: {which}={extent} of a {major.name}-major {dtype} tile "
        f"is not a multiple of "
        f"{16 * 8 // dtype.width} elements (16 bytes, the INTERLEAVE atom)"
    )


def make_gmma_smem_layout(
    dtype: NumericType | str,
    major: Major | str,
    tile_mn: int,
    tile_k: int,
    stages: int | None = None,
    layout_type: GmmaLayoutType | None = None,
) -> ComposedLayout:
    """A (tile_mn, tile_k[, stages]) shared-memory buffer of GMMA atoms, swizzle picked by the widest rule.

    K-major buffers order the atoms MN-first, MN-major buffers K-first, stages last (CUTLASS's SM90 order).
    """
    dtype = _check_dtype(dtype, "make_gmma_smem_layout")
    major = as_major(major, "make_gmma_smem_layout")
    chosen = select_gmma_layout_type(dtype, major, tile_mn, tile_k)
    if layout_type is None:
        layout_type = chosen
    layout_type = GmmaLayoutType(layout_type)
    atom = gmma_smem_atom(dtype, major, layout_type)
    a_mn, a_k = atom.inner.shape
    if tile_mn % a_mn or tile_k % a_k:
        raise ValueError(
            f"make_gmma_smem_layout: tile ({tile_mn},{tile_k}) is not divisible by the {major.name}-major "
            f"{layout_type.name} atom ({a_mn},{a_k}) of {dtype}"
        )
    if stages is None:
        shape: tuple[int, ...] = (tile_mn, tile_k)
        order: tuple[int, ...] = (1, 2) if major is Major.K else (2, 1)
    else:
        if not isinstance(stages, int) or isinstance(stages, bool) or stages <= 0:
            raise ValueError(f"make_gmma_smem_layout: stages must be a positive int, got {stages!r}")
        shape = (tile_mn, tile_k, stages)
        order = (1, 2, 3) if major is Major.K else (2, 1, 3)
    # CuTe's tile_to_shape: coalesce(blocked_product(atom, make_ordered_layout(reps, order)), reps).
    inner = coalesce(tile_to_shape(atom.inner, shape, order), (1,) * len(shape))
    return ComposedLayout(atom.outer, 0, inner)

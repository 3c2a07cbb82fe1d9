"""Copy atoms: one copy instruction as data (CuTe's `Copy_Traits` + `Copy_Atom`).

CuTe writes a copy's thread-value layouts in bits: `src_bits` maps (source thread, source value) to
the bit index into the atom's reference tile, `dst_bits` likewise for the destination, and `ref_bits`
is the one TiledCopy layouts are written against (the destination for `ldmatrix`, the source for
`stmatrix`). `layout_src_tv`, `layout_dst_tv` and `layout_ref_tv` are the same layouts in elements of
the atom's value type (CuTe's `recast_layout<uint1_t, T>`, an `upcast` by the element width).

Constructors, named after CuTe's operations:
  make_universal_copy_atom(dtype, bits)          UniversalCopy<uintN_t>, N in 8..128
  make_cp_async_atom(dtype, nbytes, cache)       SM80_CP_ASYNC_CACHE{ALWAYS,GLOBAL}<uintN_t>, 4/8/16 bytes
  make_ldmatrix_atom(dtype, num_matrices, trans) SM75_U32x{1,2,4}_LDSM_N, SM75_U16x{2,4,8}_LDSM_T
  make_stmatrix_atom(dtype, num_matrices, trans) SM90_U32x{1,2,4}_STSM_N, SM90_U16x{2,4,8}_STSM_T
  make_tma_load_atom(dtype, box_elements, rank, multicast)   SM90_TMA_LOAD[_MULTICAST]
  make_tma_store_atom(dtype, box_elements, rank)             SM90_TMA_STORE
"""

from __future__ import annotations

from dataclasses import dataclass

from cute_layout import Layout

from cute_nvarch._layouts import recast_bits_to_elements, size_of
from cute_nvarch.numeric import NumericType, numeric_type

__all__ = [
    "CopyAtom",
    "make_universal_copy_atom",
    "make_cp_async_atom",
    "make_ldmatrix_atom",
    "make_stmatrix_atom",
    "make_tma_load_atom",
    "make_tma_store_atom",
]


@dataclass(frozen=True)
class CopyAtom:
    """One copy instruction.

    Fields:
      name: CuTe's operation name (`"SM75_U32x4_LDSM_N"`).
      ptx: the PTX mnemonic without operands, or None for a universal copy (plain loads and stores).
      arch: lowest target that has it.
      dtype: the value type the layouts count in.
      src_space, dst_space: "gmem", "smem" or "rmem".
      thr_id: logical thread -> thread index within the atom (Layout(32) for a warp, Layout(1)).
      src_bits, dst_bits, ref_bits: (thread, value) -> bit index of the reference tile (CuTe's traits).
      layout_src_tv, layout_dst_tv, layout_ref_tv: the same in elements of `dtype`.
      bits: bits one thread moves per instruction on its source side (the vector width).
    """

    name: str
    ptx: str | None
    arch: str
    dtype: NumericType
    src_space: str
    dst_space: str
    thr_id: Layout
    src_bits: Layout
    dst_bits: Layout
    ref_bits: Layout
    layout_src_tv: Layout
    layout_dst_tv: Layout
    layout_ref_tv: Layout
    bits: int

    @property
    def num_threads(self) -> int:
        """Threads that execute one instruction together."""
        return size_of(self.thr_id)

    @property
    def num_values(self) -> int:
        """Values of `dtype` each thread holds in the reference layout."""
        return size_of(self.layout_ref_tv[1])

    def __str__(self) -> str:
        return f"Copy_Atom<{self.name}, {self.dtype}>"


def _atom(
    name: str,
    ptx: str | None,
    arch: str,
    dtype: NumericType,
    spaces: tuple[str, str],
    thr_id: Layout,
    src: Layout,
    dst: Layout,
    ref: Layout,
    bits: int,
) -> CopyAtom:
    w = dtype.width
    return CopyAtom(
        name=name,
        ptx=ptx,
        arch=arch,
        dtype=dtype,
        src_space=spaces[0],
        dst_space=spaces[1],
        thr_id=thr_id,
        src_bits=src,
        dst_bits=dst,
        ref_bits=ref,
        layout_src_tv=recast_bits_to_elements(src, w, name),
        layout_dst_tv=recast_bits_to_elements(dst, w, name),
        layout_ref_tv=recast_bits_to_elements(ref, w, name),
        bits=bits,
    )


_SPACES = ("gmem", "smem", "rmem")


def _spaces(src: str, dst: str, func: str) -> tuple[str, str]:
    for name, v in (("src", src), ("dst", dst)):
        if v not in _SPACES:
            raise ValueError(f"{func}: {name} must be one of {_SPACES}, got {v!r}")
    return src, dst


def make_universal_copy_atom(
    dtype: NumericType | str, bits: int | None = None, src: str = "gmem", dst: str = "rmem"
) -> CopyAtom:
    """CuTe's `UniversalCopy<uint{bits}_t>`: one thread copies `bits` bits (a vector of `dtype`)."""
    dtype = numeric_type(dtype)
    bits = dtype.width if bits is None else bits
    if bits not in (8, 16, 32, 64, 128):
        raise ValueError(f"make_universal_copy_atom: bits must be 8, 16, 32, 64 or 128, got {bits!r}")
    if bits % dtype.width:
        raise ValueError(
            f"make_universal_copy_atom: {bits} bits do not hold whole {dtype} ({dtype.width}-bit) values"
        )
    layout = Layout((1, bits))
    return _atom(
        f"UniversalCopy<uint{bits}_t>",
        None,
        "sm_80",
        dtype,
        _spaces(src, dst, "make_universal_copy_atom"),
        Layout(1),
        layout,
        layout,
        layout,
        bits,
    )


def make_cp_async_atom(dtype: NumericType | str, nbytes: int = 16, cache: str = "always") -> CopyAtom:
    """CuTe's `SM80_CP_ASYNC_CACHE{ALWAYS,GLOBAL}<uintN_t>`: global -> shared, 4, 8 or 16 bytes per thread."""
    dtype = numeric_type(dtype)
    if nbytes not in (4, 8, 16):
        raise ValueError(f"make_cp_async_atom: cp.async copies 4, 8 or 16 bytes, got {nbytes!r}")
    if cache not in ("always", "global"):
        raise ValueError(f"make_cp_async_atom: cache must be 'always' (.ca) or 'global' (.cg), got {cache!r}")
    if cache == "global" and nbytes != 16:
        raise ValueError(f"make_cp_async_atom: cp.async.cg copies 16 bytes only, got {nbytes}")
    bits = nbytes * 8
    if bits % dtype.width:
        raise ValueError(f"make_cp_async_atom: {nbytes} bytes do not hold whole {dtype} values")
    layout = Layout((1, bits))
    tag = "CACHEALWAYS" if cache == "always" else "CACHEGLOBAL"
    ptx = f"cp.async.{'ca' if cache == 'always' else 'cg'}.shared.global"
    return _atom(
        f"SM80_CP_ASYNC_{tag}<uint{bits}_t>",
        ptx,
        "sm_80",
        dtype,
        ("gmem", "smem"),
        Layout(1),
        layout,
        layout,
        layout,
        bits,
    )


def _ldsm_layouts(num: int, trans: bool) -> tuple[Layout, Layout]:
    """(shared-memory side, register side) bit layouts of ldmatrix with `num` 8x8 b16 matrices."""
    if not trans:
        if num == 1:
            smem = Layout(((8, 4), 128), ((128, 0), 1))
            regs = Layout((32, 32), (32, 1))
        elif num == 2:
            smem = Layout(((16, 2), 128), ((128, 0), 1))
            regs = Layout((32, (32, 2)), (32, (1, 1024)))
        else:
            smem = Layout((32, 128), (128, 1))
            regs = Layout((32, (32, 4)), (32, (1, 1024)))
    else:
        if num == 1:
            smem = Layout(((8, 4), 128), ((128, 0), 1))
            regs = Layout(((4, 8), (16, 2)), ((256, 16), (1, 128)))
        elif num == 2:
            smem = Layout(((16, 2), 128), ((128, 0), 1))
            regs = Layout(((4, 8), (16, 2, 2)), ((256, 16), (1, 128, 1024)))
        else:
            smem = Layout((32, 128), (128, 1))
            regs = Layout(((4, 8), (16, 2, 4)), ((256, 16), (1, 128, 1024)))
    return smem, regs


def _check_matrix_args(func: str, dtype: NumericType, num_matrices: int, trans: bool) -> None:
    if num_matrices not in (1, 2, 4):
        raise ValueError(f"{func}: num_matrices must be 1, 2 or 4 (.x1/.x2/.x4), got {num_matrices!r}")
    if trans and dtype.width != 16:
        raise ValueError(f"{func}: .trans moves 16-bit elements; {dtype} is {dtype.width}-bit")
    if not trans and (dtype.width > 32 or 32 % dtype.width):
        raise ValueError(
            f"{func}: {dtype} ({dtype.width}-bit) does not pack into the 32-bit registers of .b16 matrices"
        )


def make_ldmatrix_atom(dtype: NumericType | str, num_matrices: int = 4, transpose: bool = False) -> CopyAtom:
    """`ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` (SM75_U32xN_LDSM_N, SM75_U16xN_LDSM_T)."""
    dtype = numeric_type(dtype)
    _check_matrix_args("make_ldmatrix_atom", dtype, num_matrices, transpose)
    smem, regs = _ldsm_layouts(num_matrices, transpose)
    name = f"SM75_U16x{2 * num_matrices}_LDSM_T" if transpose else f"SM75_U32x{num_matrices}_LDSM_N"
    ptx = f"ldmatrix.sync.aligned.m8n8.x{num_matrices}{'.trans' if transpose else ''}.shared.b16"
    return _atom(name, ptx, "sm_80", dtype, ("smem", "rmem"), Layout(32), smem, regs, regs, 128)


def make_stmatrix_atom(dtype: NumericType | str, num_matrices: int = 4, transpose: bool = False) -> CopyAtom:
    """`stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` (SM90_U32xN_STSM_N, SM90_U16xN_STSM_T)."""
    dtype = numeric_type(dtype)
    _check_matrix_args("make_stmatrix_atom", dtype, num_matrices, transpose)
    smem, regs = _ldsm_layouts(num_matrices, transpose)
    name = f"SM90_U16x{2 * num_matrices}_STSM_T" if transpose else f"SM90_U32x{num_matrices}_STSM_N"
    ptx = f"stmatrix.sync.aligned.m8n8.x{num_matrices}{'.trans' if transpose else ''}.shared.b16"
    return _atom(
        name, ptx, "sm_90a", dtype, ("rmem", "smem"), Layout(32), regs, smem, regs, 32 * num_matrices
    )


def _check_tma(func: str, box_elements: int, rank: int) -> None:
    if not isinstance(box_elements, int) or isinstance(box_elements, bool) or box_elements <= 0:
        raise ValueError(f"{func}: box_elements must be a positive int, got {box_elements!r}")
    if not isinstance(rank, int) or not 1 <= rank <= 5:
        raise ValueError(f"{func}: TMA tensors have 1 to 5 dims, got rank {rank!r}")


def make_tma_load_atom(
    dtype: NumericType | str, box_elements: int, rank: int = 2, multicast: bool = False
) -> CopyAtom:
    """CuTe's `SM90_TMA_LOAD` (`SM90_TMA_LOAD_MULTICAST`): one thread moves a box of `box_elements`."""
    dtype = numeric_type(dtype)
    _check_tma("make_tma_load_atom", box_elements, rank)
    layout = Layout((1, box_elements * dtype.width))
    name = "SM90_TMA_LOAD_MULTICAST" if multicast else "SM90_TMA_LOAD"
    ptx = f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes"
    if multicast:
        ptx += ".multicast::cluster"
    return _atom(
        name,
        ptx,
        "sm_90a",
        dtype,
        ("gmem", "smem"),
        Layout(1),
        layout,
        layout,
        layout,
        box_elements * dtype.width,
    )


def make_tma_store_atom(dtype: NumericType | str, box_elements: int, rank: int = 2) -> CopyAtom:
    """CuTe's `SM90_TMA_STORE`: one thread stores a box of `box_elements` from shared to global memory."""
    dtype = numeric_type(dtype)
    _check_tma("make_tma_store_atom", box_elements, rank)
    layout = Layout((1, box_elements * dtype.width))
    ptx = f"cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group"
    return _atom(
        "SM90_TMA_STORE",
        ptx,
        "sm_90a",
        dtype,
        ("smem", "gmem"),
        Layout(1),
        layout,
        layout,
        layout,
        box_elements * dtype.width,
    )

"""TiledMma: an MMA atom tiled over threads (CuTe's `TiledMMA`), and one thread's slice (`ThrMMA`).

`make_tiled_mma(atom, atom_layout_mnk, permutation_mnk)` repeats the atom over `atom_layout_mnk`
(e.g. `(2,1,1)`: two warpgroups along M) and optionally permutes the tile (`permutation_mnk`, each mode
None, an int tile size or a Layout). Its thread layout `thr_layout_vmnk` maps (ThrV, ThrM, ThrN, ThrK)
to the thread index, exactly `tiled_product(atom.thr_id, atom_layout_mnk)`.

Partitioning works on layouts: `thrfrg_C(tile)` turns a (M, N, ...) tile layout into
`((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...)))`, and `get_slice(tid).partition_C(tile)` returns the
thread's `(FrgV, RestM, RestN, ...)` layout. A plain Layout partition drops the thread's offset into
the tile; `partition_C_and_offset` returns it too. A swizzled `ComposedLayout` keeps the offset inside
(its swizzle acts on the absolute offset), as CuTe's tensors do.

`smem_desc_A/B(smem_layout)` turn a GMMA shared-memory buffer into descriptors: the first K-block's
descriptor of a thread's slice and the byte offsets of every K-block, M/N-atom (and stage).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cute_layout import Layout, complement, composition, make_layout, right_inverse

from cute_nvarch._layouts import (
    LayoutLike,
    concat,
    flat_modes,
    layout_shape_tuple,
    modes_of,
    rewrap,
    size_of,
    split_swizzle,
)
from cute_nvarch.gmma_desc import GmmaDescriptor, make_gmma_desc
from cute_nvarch.mma_atom import MmaAtom, OperandSource

__all__ = ["TiledMma", "ThrMma", "GmmaOperandDesc", "make_tiled_mma"]

PermutationMode = Layout | int | None


def _divide(mode: Layout, tile: Layout, func: str, what: str) -> Layout:
    """logical_divide of one mode by a tile layout: (tile, rest), requiring exact divisibility."""
    n = size_of(mode)
    t = size_of(tile)
    if n % t:
        raise ValueError(f"{func}: the tile's {what} extent {n} is not divisible by {t}")
    return composition(mode, make_layout(tile, complement(tile, n)))


def _as_perm(p: PermutationMode, i: int) -> Layout | None:
    if p is None:
        return None
    if isinstance(p, bool):
        raise TypeError(f"make_tiled_mma: permutation_mnk[{i}] must be None, an int or a Layout, got {p!r}")
    if isinstance(p, int):
        if p <= 0:
            raise ValueError(f"make_tiled_mma: permutation_mnk[{i}] must be positive, got {p}")
        return Layout(p)
    if isinstance(p, Layout):
        return p
    raise TypeError(f"make_tiled_mma: permutation_mnk[{i}] must be None, an int or a Layout, got {p!r}")


def _progression(offsets: tuple[int, ...], what: str) -> int:
    if len(offsets) <= 1:
        return 0
    step = offsets[1] - offsets[0]
    if any(offsets[i + 1] - offsets[i] != step for i in range(len(offsets) - 1)):
        raise ValueError(f"{what} is not uniform: byte offsets {offsets}; use the per-block offsets")
    return step


@dataclass(frozen=True)
class GmmaOperandDesc:
    """The GMMA descriptors of one thread's A or B operand in a shared-memory buffer.

    Fields:
      operand: "A" or "B".
      desc: descriptor of the first MN-atom's first K-block of this thread's slice.
      layout: (MN-atoms, K-blocks[, stages]) -> byte offset from `desc.start_address`.
      mn_atom_offsets, k_block_offsets, stage_offsets: the same offsets as tuples (bytes).
    The descriptor of atom (i, k) is `desc.advance(mn_atom_offsets[i] + k_block_offsets[k])`; in the 64-bit
    value that adds `offset >> 4`.
    """

    operand: str
    desc: GmmaDescriptor
    layout: Layout
    mn_atom_offsets: tuple[int, ...]
    k_block_offsets: tuple[int, ...]
    stage_offsets: tuple[int, ...]

    @property
    def mn_atoms(self) -> int:
        """Number of M (for A) or N (for B) atoms of this thread."""
        return len(self.mn_atom_offsets)

    @property
    def k_blocks(self) -> int:
        """Number of K-blocks of the tile."""
        return len(self.k_block_offsets)

    @property
    def k_block_advance(self) -> int:
        """Bytes between consecutive K-blocks (ValueError where they are not evenly spaced)."""
        return _progression(self.k_block_offsets, f"the {self.operand} descriptor's K-block advance")

    @property
    def mn_atom_advance(self) -> int:
        """Bytes between consecutive M (A) or N (B) atoms (ValueError where not evenly spaced)."""
        return _progression(self.mn_atom_offsets, f"the {self.operand} descriptor's MN-atom advance")

    @property
    def stage_advance(self) -> int:
        """Bytes between consecutive pipeline stages (0 with one stage)."""
        return _progression(self.stage_offsets, f"the {self.operand} descriptor's stage advance")

    def desc_at(self, mn_atom: int = 0, k_block: int = 0, stage: int = 0) -> GmmaDescriptor:
        """The descriptor of one (MN-atom, K-block, stage)."""
        return self.desc.advance(
            self.mn_atom_offsets[mn_atom] + self.k_block_offsets[k_block] + self.stage_offsets[stage]
        )


@dataclass(frozen=True)
class TiledMma:
    """An MMA atom tiled over threads; see the module docstring. Build with `make_tiled_mma`."""

    atom: MmaAtom
    atom_layout_mnk: Layout
    permutation_mnk: tuple[Layout | None, Layout | None, Layout | None]
    thr_layout_vmnk: Layout
    _thr_coords: dict[int, tuple[int, int, int, int]] = field(repr=False, compare=False, hash=False)

    # -- sizes ----------------------------------------------------------------------------------------
    @property
    def num_threads(self) -> int:
        """Threads of the tiled MMA."""
        return size_of(self.thr_layout_vmnk)

    @property
    def thr_shape_vmnk(self) -> tuple[int, int, int, int]:
        """Sizes of the (ThrV, ThrM, ThrN, ThrK) modes."""
        return tuple(size_of(m) for m in modes_of(self.thr_layout_vmnk))  # type: ignore[return-value]

    def tile_size_mnk(self, i: int) -> int:
        """Extent of the tiled MMA along M (0), N (1) or K (2)."""
        core = self.atom.shape_mnk[i] * self.thr_shape_vmnk[i + 1]
        perm = self.permutation_mnk[i]
        return core if perm is None else max(core, size_of(perm))

    @property
    def tile_shape_mnk(self) -> tuple[int, int, int]:
        """(M, N, K) covered by one step of every thread."""
        return (self.tile_size_mnk(0), self.tile_size_mnk(1), self.tile_size_mnk(2))

    # -- partitioning ---------------------------------------------------------------------------------
    def _thrfrg(self, tile: Layout, which: str) -> Layout:
        shape = layout_shape_tuple(tile)
        if len(shape) < 2:
            raise ValueError(f"TiledMma.thrfrg_{which}: the tile layout {tile} must have rank >= 2")
        i0, i1 = {"C": (0, 1), "A": (0, 2), "B": (1, 2)}[which]
        names = "MNK"
        tv = {"C": self.atom.layout_c_tv, "A": self.atom.layout_a_tv, "B": self.atom.layout_b_tv}[which]
        modes = modes_of(tile)
        m0, m1, extra = modes[0], modes[1], modes[2:]
        func = f"TiledMma.thrfrg_{which}"
        p0, p1 = self.permutation_mnk[i0], self.permutation_mnk[i1]
        if p0 is not None:
            m0 = _divide(m0, p0, func, f"{names[i0]} (permutation)")
        if p1 is not None:
            m1 = _divide(m1, p1, func, f"{names[i1]} (permutation)")
        a0, a1 = self.atom.shape_mnk[i0], self.atom.shape_mnk[i1]
        d0 = _divide(m0, Layout(a0), func, f"{names[i0]} (atom {self.atom.name})")
        d1 = _divide(m1, Layout(a1), func, f"{names[i1]} (atom {self.atom.name})")
        atom_tile = concat(d0[0], d1[0])
        thr_frg = composition(atom_tile, tv)  # (ThrV, FrgV)
        t0, t1 = self.thr_shape_vmnk[i0 + 1], self.thr_shape_vmnk[i1 + 1]
        r0 = _divide(d0[1], Layout(t0), func, f"{names[i0]} (threads)")
        r1 = _divide(d1[1], Layout(t1), func, f"{names[i1]} (threads)")
        thr = concat(thr_frg[0], concat(r0[0], r1[0]))
        frg = concat(thr_frg[1], concat(r0[1], r1[1], *extra))
        return concat(thr, frg)

    def thrfrg_C(self, tile: Layout) -> Layout:
        """(M,N,...) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...))) (CuTe's `thrfrg_C`)."""
        return self._thrfrg(tile, "C")

    def thrfrg_A(self, tile: Layout) -> Layout:
        """(M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...))) (CuTe's `thrfrg_A`)."""
        return self._thrfrg(tile, "A")

    def thrfrg_B(self, tile: Layout) -> Layout:
        """(N,K,...) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,...))) (CuTe's `thrfrg_B`)."""
        return self._thrfrg(tile, "B")

    def thr_coord_vmnk(self, thr_idx: int) -> tuple[int, int, int, int]:
        """(v, m, n, k): the thread's coordinate in `thr_layout_vmnk` (CuTe's `get_flat_coord`)."""
        if not isinstance(thr_idx, int) or isinstance(thr_idx, bool):
            raise TypeError(f"TiledMma.get_slice: thr_idx must be an int, got {type(thr_idx).__name__}")
        try:
            return self._thr_coords[thr_idx]
        except KeyError:
            raise ValueError(
                f"TiledMma.get_slice: thr_idx={thr_idx} is not a thread of this TiledMma "
                f"(0..{self.num_threads - 1})"
            ) from None

    def get_slice(self, thr_idx: int) -> ThrMma:
        """The slice of thread `thr_idx` (CuTe's `get_slice` / `get_thread_slice`)."""
        return ThrMma(self, thr_idx, self.thr_coord_vmnk(thr_idx))

    get_thread_slice = get_slice

    # -- thread-value layouts -------------------------------------------------------------------------
    def _layout_tv(self, which: str) -> Layout:
        tm, tn, tk = self.tile_shape_mnk
        ref_shape = {"C": (tm, tn), "A": (tm, tk), "B": (tn, tk)}[which]
        full = self._thrfrg(Layout(ref_shape), which)
        thr = full[0]
        v, mn = thr[0], thr[1]
        tv_, tm_, tn_, tk_ = self.thr_shape_vmnk
        # Broadcast over the thread mode the operand does not use: (ThrV, (ThrM, ThrN, ThrK)).
        if which == "C":
            thr4 = concat(v, concat(mn[0], mn[1], Layout(tk_, 0)))
        elif which == "A":
            thr4 = concat(v, concat(mn[0], Layout(tn_, 0), mn[1]))
        else:
            thr4 = concat(v, concat(Layout(tm_, 0), mn[0], mn[1]))
        thr_idx = composition(thr4, right_inverse(self.thr_layout_vmnk))
        return concat(thr_idx, full[1])

    def get_layoutC_TV(self) -> Layout:  # noqa: N802 (CuTe's name)
        """(thread index, value) -> column-major index into the (M, N) tile."""
        return self._layout_tv("C")

    def get_layoutA_TV(self) -> Layout:  # noqa: N802
        """(thread index, value) -> column-major index into the (M, K) tile."""
        return self._layout_tv("A")

    def get_layoutB_TV(self) -> Layout:  # noqa: N802
        """(thread index, value) -> column-major index into the (N, K) tile."""
        return self._layout_tv("B")

    # -- counts and fragments ---------------------------------------------------------------------------
    def atom_counts(self, cta_tile_mnk: tuple[int, int, int]) -> tuple[int, int, int]:
        """Instructions each thread issues along M, N and K for a CTA tile."""
        if len(cta_tile_mnk) != 3:
            raise ValueError(f"TiledMma.atom_counts: cta_tile_mnk must be (M, N, K), got {cta_tile_mnk!r}")
        m, n, k = cta_tile_mnk
        c = self.get_slice(0).partition_C(Layout((m, n)))
        a = self.get_slice(0).partition_A(Layout((m, k)))
        return (size_of(c[1]), size_of(c[2]), size_of(a[2]))

    def fragment_C(self, shape_mn: tuple[int, int]) -> Layout:  # noqa: N802
        """The accumulator register fragment (FrgV, RestM, RestN), compact (CuTe's `partition_fragment_C`)."""
        return _compact(self.get_slice(0).partition_C(Layout(tuple(shape_mn))))

    def fragment_A(self, shape_mk: tuple[int, int]) -> Layout:  # noqa: N802
        """The register fragment of A (FrgV, RestM, RestK), compact; A must come from registers."""
        if self.atom.a_source is not OperandSource.RMEM:
            raise ValueError(
                f"TiledMma.fragment_A: {self.atom.name} reads A from shared memory; use smem_desc_A"
            )
        return _compact(self.get_slice(0).partition_A(Layout(tuple(shape_mk))))

    def fragment_B(self, shape_nk: tuple[int, int]) -> Layout:  # noqa: N802
        """The register fragment of B (FrgV, RestN, RestK), compact; B must come from registers."""
        if self.atom.b_source is not OperandSource.RMEM:
            raise ValueError(
                f"TiledMma.fragment_B: {self.atom.name} reads B from shared memory; use smem_desc_B"
            )
        return _compact(self.get_slice(0).partition_B(Layout(tuple(shape_nk))))

    # -- GMMA descriptors ---------------------------------------------------------------------------
    def _smem_desc(self, which: str, smem: LayoutLike, start_address: int, thr_idx: int) -> GmmaOperandDesc:
        src = self.atom.a_source if which == "A" else self.atom.b_source
        if not self.atom.is_wgmma or src is not OperandSource.SMEM:
            raise ValueError(
                f"TiledMma.smem_desc_{which}: {self.atom.name} does not read {which} through a descriptor"
            )
        dtype = self.atom.a_dtype if which == "A" else self.atom.b_dtype
        major = self.atom.a_major if which == "A" else self.atom.b_major
        sw, off, inner = split_swizzle(smem, f"TiledMma.smem_desc_{which}")
        if off:
            raise ValueError(f"TiledMma.smem_desc_{which}: the buffer's offset must be 0 (use start_address)")
        thr = self.get_slice(thr_idx)
        part, offset = thr._partition(inner, which)
        bytes_ = dtype.width // 8
        parts = modes_of(part)
        value_tile = parts[0]
        desc = make_gmma_desc(major, rewrap(sw, 0, value_tile), dtype, start_address + offset * bytes_)
        rest = parts[1:]
        if len(rest) not in (2, 3):
            raise ValueError(
                f"TiledMma.smem_desc_{which}: the buffer must be (MN, K) or (MN, K, stages), "
                f"got rank {len(rest)}"
            )
        byte_modes = [_scale(r, bytes_) for r in rest]
        offs = tuple(tuple(_offsets(r)) for r in byte_modes)
        stages = offs[2] if len(offs) == 3 else (0,)
        return GmmaOperandDesc(
            operand=which,
            desc=desc,
            layout=concat(*byte_modes),
            mn_atom_offsets=offs[0],
            k_block_offsets=offs[1],
            stage_offsets=stages,
        )

    def smem_desc_A(
        self, smem_layout: LayoutLike, start_address: int = 0, thr_idx: int = 0
    ) -> GmmaOperandDesc:  # noqa: N802
        """Descriptors of A for thread `thr_idx` in a (M, K[, stages]) GMMA buffer at `start_address`."""
        return self._smem_desc("A", smem_layout, start_address, thr_idx)

    def smem_desc_B(
        self, smem_layout: LayoutLike, start_address: int = 0, thr_idx: int = 0
    ) -> GmmaOperandDesc:  # noqa: N802
        """Descriptors of B for thread `thr_idx` in a (N, K[, stages]) GMMA buffer at `start_address`."""
        return self._smem_desc("B", smem_layout, start_address, thr_idx)

    def __str__(self) -> str:
        perm = ",".join("_" if p is None else str(p) for p in self.permutation_mnk)
        atoms = self.atom_layout_mnk
        return f"TiledMma({self.atom.name}, atoms {atoms}, perm <{perm}>, {self.num_threads} threads)"


@dataclass(frozen=True)
class ThrMma:
    """One thread's slice of a TiledMma (CuTe's `ThrMMA`)."""

    tiled_mma: TiledMma
    thr_idx: int
    thr_vmnk: tuple[int, int, int, int]

    def _partition(self, tile: Layout, which: str) -> tuple[Layout, int]:
        full = self.tiled_mma._thrfrg(tile, which)
        v, m, n, k = self.thr_vmnk
        crd = {"C": (v, (m, n)), "A": (v, (m, k)), "B": (v, (n, k))}[which]
        offset = full[0](crd)
        frg = full[1]
        return concat(frg[0], *modes_of(frg[1])), offset

    def _partition_like(self, layout: LayoutLike, which: str) -> tuple[LayoutLike, int]:
        sw, off, inner = split_swizzle(layout, f"ThrMma.partition_{which}")
        part, offset = self._partition(inner, which)
        if sw is None:
            return part, offset
        return rewrap(sw, off + offset, part), 0

    def partition_C_and_offset(self, layout: LayoutLike) -> tuple[LayoutLike, int]:  # noqa: N802
        """(the thread's (FrgV, RestM, RestN, ...) layout, its offset into `layout`)."""
        return self._partition_like(layout, "C")

    def partition_A_and_offset(self, layout: LayoutLike) -> tuple[LayoutLike, int]:  # noqa: N802
        """(the thread's (FrgV, RestM, RestK, ...) layout, its offset into `layout`)."""
        return self._partition_like(layout, "A")

    def partition_B_and_offset(self, layout: LayoutLike) -> tuple[LayoutLike, int]:  # noqa: N802
        """(the thread's (FrgV, RestN, RestK, ...) layout, its offset into `layout`)."""
        return self._partition_like(layout, "B")

    def partition_C(self, layout: LayoutLike) -> LayoutLike:  # noqa: N802
        """The thread's (FrgV, RestM, RestN, ...) layout of an (M, N, ...) tile (offset dropped)."""
        return self._partition_like(layout, "C")[0]

    def partition_A(self, layout: LayoutLike) -> LayoutLike:  # noqa: N802
        """The thread's (FrgV, RestM, RestK, ...) layout of an (M, K, ...) tile (offset dropped)."""
        return self._partition_like(layout, "A")[0]

    def partition_B(self, layout: LayoutLike) -> LayoutLike:  # noqa: N802
        """The thread's (FrgV, RestN, RestK, ...) layout of an (N, K, ...) tile (offset dropped)."""
        return self._partition_like(layout, "B")[0]

    def partition_fragment_C(self, shape_mn: tuple[int, int]) -> Layout:  # noqa: N802
        """The compact register fragment of C for an (M, N) tile."""
        return self.tiled_mma.fragment_C(shape_mn)


def _compact(layout: Layout) -> Layout:
    """A column-major compact layout with the same (nested) shape."""
    return Layout(layout.shape)


def _scale(layout: Layout, k: int) -> Layout:
    """The layout with every stride multiplied by k."""
    modes = flat_modes(layout)
    if len(modes) == 1 and not isinstance(layout.shape, tuple):
        return Layout(modes[0][0], modes[0][1] * k)
    return Layout(layout.shape, _map_tuple(layout.stride, lambda d: d * k))


def _map_tuple(t: object, f: object) -> object:
    if isinstance(t, tuple):
        return tuple(_map_tuple(x, f) for x in t)
    return f(t)  # type: ignore[operator]


def _offsets(layout: Layout) -> list[int]:
    return [layout(i) for i in range(size_of(layout))]


def make_tiled_mma(
    atom: MmaAtom,
    atom_layout_mnk: Layout | tuple[int, int, int] = (1, 1, 1),
    permutation_mnk: tuple[PermutationMode, PermutationMode, PermutationMode] = (None, None, None),
) -> TiledMma:
    """Tile `atom` over `atom_layout_mnk` (a Layout or a shape, column-major) with an optional permutation."""
    if not isinstance(atom, MmaAtom):
        raise TypeError(f"make_tiled_mma: atom must be an MmaAtom, got {type(atom).__name__}")
    if isinstance(atom_layout_mnk, tuple):
        if len(atom_layout_mnk) != 3 or not all(isinstance(x, int) and x > 0 for x in atom_layout_mnk):
            raise ValueError(
                f"make_tiled_mma: atom_layout_mnk must be three positive ints, got {atom_layout_mnk!r}"
            )
        atom_layout_mnk = Layout(atom_layout_mnk)
    if not isinstance(atom_layout_mnk, Layout):
        raise TypeError(
            f"make_tiled_mma: atom_layout_mnk must be a Layout or a shape, got {atom_layout_mnk!r}"
        )
    if len(layout_shape_tuple(atom_layout_mnk)) != 3:
        raise ValueError(f"make_tiled_mma: atom_layout_mnk {atom_layout_mnk} must have rank 3 (M, N, K)")
    if len(permutation_mnk) != 3:
        raise ValueError(f"make_tiled_mma: permutation_mnk must have three modes, got {permutation_mnk!r}")
    perms = tuple(_as_perm(p, i) for i, p in enumerate(permutation_mnk))
    thr_id = atom.thr_id
    n_thr = size_of(thr_id)
    # tiled_product(thr_id, atom_layout_mnk): (ThrV, ThrM, ThrN, ThrK) -> thread index.
    cos = max(atom_layout_mnk(i) for i in range(size_of(atom_layout_mnk))) + 1
    rest = composition(complement(thr_id, n_thr * cos), atom_layout_mnk)
    thr_layout = concat(thr_id, *modes_of(rest))
    sizes = [size_of(m) for m in modes_of(thr_layout)]
    total = 1
    for s in sizes:
        total *= s
    coords: dict[int, tuple[int, int, int, int]] = {}
    for i in range(total):
        idx = thr_layout(i)
        c, r = [], i
        for s in sizes:
            c.append(r % s)
            r //= s
        if idx in coords:
            raise ValueError(
                f"make_tiled_mma: atom_layout_mnk {atom_layout_mnk} maps two atoms to one thread"
            )
        coords[idx] = tuple(c)  # type: ignore[assignment]
    if sorted(coords) != list(range(total)):
        raise ValueError(
            f"make_tiled_mma: atom_layout_mnk {atom_layout_mnk} does not cover threads 0..{total - 1}"
        )
    return TiledMma(atom, atom_layout_mnk, perms, thr_layout, coords)  # type: ignore[arg-type]

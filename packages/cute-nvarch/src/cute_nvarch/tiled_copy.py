"""TiledCopy: a copy atom tiled over threads and values (CuTe's `TiledCopy`), and one thread's slice.

`layout_tv` maps (thread index, value index) to the column-major index of a tile of shape `tiler_mn`.
`make_tiled_copy(atom, layout_tv, tiler_mn)` takes it as given; `make_tiled_copy_tv(atom, thr_layout,
val_layout)` builds it CuTe's way, from a raked product of a thread layout and a value layout
(`make_layout_tv`); `make_tiled_copy_A/B/C(atom, tiled_mma)` reuse a TiledMma's operand layouts.

Partitioning works on layouts, the same calls cute-ir applies to its tensors: `get_slice(tid)`
`.partition_S(tile)` turns the source tile's layout into the thread's `(CPY_V, RestM, RestN, ...)`
layout (`.partition_D` for the destination); `retile_S/D(fragment)` regroups a register fragment that
another partitioner made into the same (CPY_V, ...) shape. Plain layouts drop the thread's offset
(`partition_S_and_offset` returns it); swizzled ComposedLayouts keep it inside, as CuTe's tensors do.
"""

from __future__ import annotations

from dataclasses import dataclass

from cute_layout import (
    Layout,
    composition,
    logical_product,
    make_layout_tv,
    right_inverse,
    upcast,
)

from cute_nvarch._layouts import (
    LayoutLike,
    concat,
    layout_shape_tuple,
    modes_of,
    rewrap,
    size_of,
    split_swizzle,
)
from cute_nvarch.copy_atom import CopyAtom
from cute_nvarch.tiled_mma import TiledMma, _divide

__all__ = [
    "TiledCopy",
    "ThrCopy",
    "make_tiled_copy",
    "make_tiled_copy_tv",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
]


def _zipped(layout: Layout, tiler: tuple[int, ...], func: str) -> tuple[Layout, list[Layout]]:
    """zipped_divide by a shape tiler, exactly: (tile part over the tiler's modes, list of rest modes)."""
    modes = modes_of(layout)
    if len(modes) < len(tiler):
        raise ValueError(f"{func}: the layout {layout} has rank {len(modes)} < the tiler's rank {len(tiler)}")
    pairs = enumerate(zip(modes, tiler, strict=False))
    divided = [_divide(m, Layout(t), func, f"mode {i}") for i, (m, t) in pairs]
    tile = concat(*[d[0] for d in divided]) if len(divided) > 1 else divided[0][0]
    rest = [d[1] for d in divided] + modes[len(tiler) :]
    return tile, rest


@dataclass(frozen=True)
class TiledCopy:
    """A copy atom tiled over a (thread, value) layout of a tile; build with make_tiled_copy*."""

    atom: CopyAtom
    layout_tv: Layout
    tiler_mn: tuple[int, ...]

    @property
    def num_threads(self) -> int:
        """Threads of the tiled copy."""
        return size_of(self.layout_tv[0])

    @property
    def num_values(self) -> int:
        """Values each thread moves per tile."""
        return size_of(self.layout_tv[1])

    def _ref2trg(self, which: str) -> Layout:
        trg = self.atom.layout_src_tv if which == "S" else self.atom.layout_dst_tv
        return composition(right_inverse(self.atom.layout_ref_tv), trg)

    def _tile2thrfrg(self, tile: Layout, ref2trg: Layout) -> Layout:
        """(Thr, FrgV) layout of the tile part: thread index and value -> tile element."""
        func = "TiledCopy"
        atom_thr = self.atom.num_threads
        atom_val = size_of(self.atom.layout_ref_tv[1])
        t = _divide(self.layout_tv[0], Layout(atom_thr), func, "thread mode (atom threads)")
        v = _divide(self.layout_tv[1], Layout(atom_val), func, "value mode (atom values)")
        trg = composition(concat(t[0], v[0]), ref2trg)  # (trg_tid, trg_val) -> tile index
        thrval = concat(concat(trg[0], t[1]), concat(trg[1], v[1]))
        tv = composition(tile, thrval)
        return concat(tv[0], tv[1])

    def _tidfrg(self, layout: Layout, which: str) -> Layout:
        tile, rest = _zipped(layout, self.tiler_mn, f"TiledCopy.tidfrg_{which}")
        tv = self._tile2thrfrg(tile, self._ref2trg(which))
        return concat(tv[0], tv[1], concat(*rest))

    def tidfrg_S(self, layout: Layout) -> Layout:  # noqa: N802
        """(M,N,...) -> (Thr, FrgV, (RestM,RestN,...)) for the source side (CuTe's `tidfrg_S`)."""
        return self._tidfrg(layout, "S")

    def tidfrg_D(self, layout: Layout) -> Layout:  # noqa: N802
        """(M,N,...) -> (Thr, FrgV, (RestM,RestN,...)) for the destination side (CuTe's `tidfrg_D`)."""
        return self._tidfrg(layout, "D")

    def _layout_tv(self, which: str) -> Layout:
        return self._tile2thrfrg(Layout(self.tiler_mn), self._ref2trg(which))

    def get_layoutS_TV(self) -> Layout:  # noqa: N802
        """(thread index, value) -> column-major tile index of the source side."""
        return self._layout_tv("S")

    def get_layoutD_TV(self) -> Layout:  # noqa: N802
        """(thread index, value) -> column-major tile index of the destination side."""
        return self._layout_tv("D")

    def get_slice(self, thr_idx: int) -> ThrCopy:
        """The slice of thread `thr_idx` (CuTe's `get_slice` / `get_thread_slice`)."""
        if not isinstance(thr_idx, int) or isinstance(thr_idx, bool):
            raise TypeError(f"TiledCopy.get_slice: thr_idx must be an int, got {type(thr_idx).__name__}")
        if not 0 <= thr_idx < self.num_threads:
            raise ValueError(f"TiledCopy.get_slice: thr_idx={thr_idx} is not in 0..{self.num_threads - 1}")
        return ThrCopy(self, thr_idx)

    get_thread_slice = get_slice

    def retile(self, fragment: Layout) -> Layout:
        """Regroup a thread's register fragment (V, RestM, RestN, ...) into (CPY_V, ...) (CuTe's `retile`)."""
        modes = modes_of(fragment)
        rank = len(modes)
        v = size_of(modes[0])
        nthr = self.num_threads
        atom_val = size_of(self.atom.layout_ref_tv[1])
        # (m, n) -> v_idx: the shape and order of the first V values of each thread inside the tiler.
        inv = right_inverse(self.layout_tv)
        inv_mn = _with_shape(inv, self.tiler_mn)
        frg_layout_mn = upcast(inv_mn, nthr * v)
        # (atom_vals, rest_vals) -> (v, m, n)
        prod = logical_product(Layout(v), right_inverse(frg_layout_mn))
        a = _divide(prod, Layout(atom_val), "TiledCopy.retile", "values (atom values)")
        frg_layout_v = concat(a[0], a[1])
        # Tile the fragment by (V, frg_m, frg_n) and take the first tile.
        frg_shape = tuple(size_of(m) for m in modes_of(frg_layout_mn))
        tiler = (v,) + frg_shape
        tile, rest_modes = _zipped(fragment, tiler[:rank], "TiledCopy.retile")
        vt = composition(tile, frg_layout_v)
        # v_tensor(_, (0, _...)): drop the first rest mode (the V tile has exactly one).
        if size_of(rest_modes[0]) != 1:
            raise ValueError(
                f"TiledCopy.retile: the fragment's first mode {modes[0]} is not a whole value tile"
            )
        return concat(vt, *rest_modes[1:]) if len(rest_modes) > 1 else concat(vt)

    def __str__(self) -> str:
        return f"TiledCopy({self.atom}, tiler {self.tiler_mn}, layout_tv {self.layout_tv})"


def _with_shape(layout: Layout, shape: tuple[int, ...]) -> Layout:
    """The layout's function over a new domain shape of the same size (CuTe's `with_shape`)."""
    return composition(layout, Layout(shape))


@dataclass(frozen=True)
class ThrCopy:
    """One thread's slice of a TiledCopy (CuTe's `ThrCopy`)."""

    tiled_copy: TiledCopy
    thr_idx: int

    def _partition(self, layout: LayoutLike, which: str) -> tuple[LayoutLike, int]:
        sw, off, inner = split_swizzle(layout, f"ThrCopy.partition_{which}")
        full = self.tiled_copy._tidfrg(inner, which)
        offset = full[0](self.thr_idx)
        part = concat(full[1], *modes_of(full[2]))
        if sw is None:
            return part, offset
        return rewrap(sw, off + offset, part), 0

    def partition_S_and_offset(self, layout: LayoutLike) -> tuple[LayoutLike, int]:  # noqa: N802
        """(the thread's (CPY_V, RestM, RestN, ...) source layout, its offset into `layout`)."""
        return self._partition(layout, "S")

    def partition_D_and_offset(self, layout: LayoutLike) -> tuple[LayoutLike, int]:  # noqa: N802
        """(the thread's (CPY_V, RestM, RestN, ...) destination layout, its offset into `layout`)."""
        return self._partition(layout, "D")

    def partition_S(self, layout: LayoutLike) -> LayoutLike:  # noqa: N802
        """The thread's (CPY_V, RestM, RestN, ...) layout of a source tile (offset dropped for a Layout)."""
        return self._partition(layout, "S")[0]

    def partition_D(self, layout: LayoutLike) -> LayoutLike:  # noqa: N802
        """The thread's (CPY_V, RestM, RestN, ...) layout of a destination tile (offset dropped)."""
        return self._partition(layout, "D")[0]

    def retile_S(self, fragment: Layout) -> Layout:  # noqa: N802
        """A register fragment regrouped as this copy's source values (CuTe's `retile_S`)."""
        return self.tiled_copy.retile(fragment)

    def retile_D(self, fragment: Layout) -> Layout:  # noqa: N802
        """A register fragment regrouped as this copy's destination values (CuTe's `retile_D`)."""
        return self.tiled_copy.retile(fragment)


def _check_tv(atom: CopyAtom, layout_tv: Layout, tiler_mn: tuple[int, ...], func: str) -> tuple[int, ...]:
    if not isinstance(atom, CopyAtom):
        raise TypeError(f"{func}: atom must be a CopyAtom, got {type(atom).__name__}")
    if not isinstance(layout_tv, Layout) or len(layout_shape_tuple(layout_tv)) != 2:
        raise ValueError(f"{func}: layout_tv must be a rank-2 (thread, value) Layout, got {layout_tv!r}")
    tiler = tuple(tiler_mn) if isinstance(tiler_mn, tuple | list) else (tiler_mn,)
    if not all(isinstance(t, int) and not isinstance(t, bool) and t > 0 for t in tiler):
        raise ValueError(f"{func}: tiler_mn must be positive ints, got {tiler_mn!r}")
    nthr, nval = size_of(layout_tv[0]), size_of(layout_tv[1])
    if nthr % atom.num_threads:
        raise ValueError(
            f"{func}: {nthr} threads are not a multiple of the atom's {atom.num_threads} ({atom.name})"
        )
    atom_vals = size_of(atom.layout_ref_tv[1])
    if nval % atom_vals:
        raise ValueError(
            f"{func}: {nval} values per thread are not a multiple of the atom's {atom_vals} "
            f"({atom.name}, {atom.dtype})"
        )
    tile = 1
    for t in tiler:
        tile *= t
    image = [layout_tv(i) for i in range(nthr * nval)]
    if min(image) < 0 or max(image) >= tile:
        raise ValueError(f"{func}: layout_tv {layout_tv} maps outside the tile {tiler}")
    return tiler


def make_tiled_copy(atom: CopyAtom, layout_tv: Layout, tiler_mn: tuple[int, ...]) -> TiledCopy:
    """A TiledCopy from a (thread, value) -> tile-index layout and the tile shape (CuTeDSL's signature)."""
    tiler = _check_tv(atom, layout_tv, tiler_mn, "make_tiled_copy")
    return TiledCopy(atom, layout_tv, tiler)


def make_tiled_copy_tv(atom: CopyAtom, thr_layout: Layout, val_layout: Layout) -> TiledCopy:
    """A TiledCopy from a thread layout and a value layout over the tile (CuTe C++'s make_tiled_copy)."""
    for name, x in (("thr_layout", thr_layout), ("val_layout", val_layout)):
        if not isinstance(x, Layout):
            raise TypeError(f"make_tiled_copy_tv: {name} must be a Layout, got {type(x).__name__}")
    tiler, layout_tv = make_layout_tv(thr_layout, val_layout)
    return make_tiled_copy(atom, layout_tv, tuple(tiler) if isinstance(tiler, tuple) else (tiler,))


def make_tiled_copy_A(atom: CopyAtom, tiled_mma: TiledMma) -> TiledCopy:  # noqa: N802
    """A TiledCopy whose (thread, value) layout is the TiledMma's A layout over its (M, K) tile."""
    m, _, k = tiled_mma.tile_shape_mnk
    return make_tiled_copy(atom, tiled_mma.get_layoutA_TV(), (m, k))


def make_tiled_copy_B(atom: CopyAtom, tiled_mma: TiledMma) -> TiledCopy:  # noqa: N802
    """A TiledCopy whose (thread, value) layout is the TiledMma's B layout over its (N, K) tile."""
    _, n, k = tiled_mma.tile_shape_mnk
    return make_tiled_copy(atom, tiled_mma.get_layoutB_TV(), (n, k))


def make_tiled_copy_C(atom: CopyAtom, tiled_mma: TiledMma) -> TiledCopy:  # noqa: N802
    """A TiledCopy whose (thread, value) layout is the TiledMma's C layout over its (M, N) tile."""
    m, n, _ = tiled_mma.tile_shape_mnk
    return make_tiled_copy(atom, tiled_mma.get_layoutC_TV(), (m, n))

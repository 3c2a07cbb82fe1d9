"""Tensors in IR: an engine (pointer + element offset, or a coordinate origin) and a cute_layout Layout.

Layout leaves are Python ints or `cute_ir.values.Int` (run-time) values; identity tensors use cute_layout's
`ScaledBasis` strides, so the same algebra yields coordinates instead of offsets (CuTe's identity tensor).

    mA   = make_tensor(a_ptr, Layout((M, N), (sa_m, 1)), "float32", align=16)   # M, N, sa_m: Int
    gA   = zipped_divide(mA, (16, 128))   # ((16,128),(ceil(M/16),ceil(N/128))):((sa_m,1),(16sa_m,128))
    blkA = gA[(None, None), bid]           # the CTA's tile: offset moved, layout (16,128):(sa_m,1)
    cC   = zipped_divide(make_identity_tensor((M, N)), (16, 128))[(None, None), bid]
    tc   = make_tiled_copy_tv(Layout((4, 32), (32, 1)), Layout((4, 4), (4, 1)))
    thr  = tc.get_slice(tid)
    thrA, thrC = thr.partition_S(blkA), thr.partition_S(cC)    # per-thread values (static shape)
    frgA = make_fragment_like(thrA)
    pred = [elem_less(thrC[i], (M, N)) for i in range(thrC.size())]
    copy(thrA, frgA, pred=pred)                           # predicated, vectorized ld.global
    frgC.store(frgA.load() + frgB.load()); copy(frgC, thrC_ptr, pred=pred)

Copies group values that are contiguous in memory (a first flattened mode of static stride 1) into vectors
of up to `vector_bits` (128 by default) when the element offsets are provably aligned: the pointer's `align`
and the offsets' known divisibility (`Int.divby`, set by `assume_divisible` on strides) decide, never a
guess; otherwise they fall back to narrower accesses. Predicated copies keep a vector whole when all its
elements are in bounds (one run-time check per vector) and otherwise go element by element: loads branch-free
(a false element reads the tensor's first element and yields 0), stores each under its own `scf.if`.
"""

from __future__ import annotations

from cute_layout import Layout, crd2idx, flatten, make_basis_like, size, slice_
from cute_nvarch import make_tiled_copy as nv_make_tiled_copy
from cute_nvarch import make_tiled_copy_tv as nv_make_tiled_copy_tv
from cute_nvarch import make_universal_copy_atom
from cute_nvarch.tiled_copy import TiledCopy as NvTiledCopy
from mlir import ir
from mlir.dialects import arith, llvm

from . import dtypes as _dtypes
from .algebra import _plain, elem_less
from .control import if_, if_values
from .values import Bool, Int, _div_of, select

__all__ = [
    "Fragment",
    "Tensor",
    "ThrCopy",
    "TiledCopy",
    "Values",
    "all_in_bounds",
    "copy",
    "elem_less",
    "local_tile",
    "make_fragment_like",
    "make_identity_tensor",
    "make_tensor",
    "make_tiled_copy",
    "make_tiled_copy_tv",
    "zipped_divide",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_DYN = -2147483648  # llvm.getelementptr's marker for a dynamic index


def _is_tuple(x: object) -> bool:
    return isinstance(x, tuple)


def _leaf_sum(a: object, b: object) -> object:
    """a + b for offsets (IntLike) or coordinates (tuples/ArithTuples/ScaledBasis of IntLike), elementwise."""
    if hasattr(a, "to_tuple"):
        a = a.to_tuple()
    if hasattr(b, "to_tuple"):
        b = b.to_tuple()
    if _is_tuple(a) or _is_tuple(b):
        ta = a if _is_tuple(a) else None
        tb = b if _is_tuple(b) else None
        if ta is None:
            if not (type(a) is int and a == 0):
                raise ValueError(f"cannot add offset {a} to coordinate {b}")
            return tb
        if tb is None:
            if not (type(b) is int and b == 0):
                raise ValueError(f"cannot add offset {b} to coordinate {a}")
            return ta
        n = max(len(ta), len(tb))
        return tuple(_leaf_sum(ta[i] if i < len(ta) else 0, tb[i] if i < len(tb) else 0) for i in range(n))
    return a + b


class Tensor:
    """A tensor in IR: `ptr` (!llvm.ptr<as>, None for identity tensors) + `base` + `layout` (+ dtype, align).

    `base` is the element offset from `ptr` (IntLike), or for an identity tensor the coordinate origin.
    `align` is the byte alignment known for `ptr` (guaranteed by the caller, e.g. a Param's `align`).
    """

    __slots__ = ("align", "base", "dtype", "layout", "ptr")

    def __init__(
        self,
        ptr: ir.Value | None,
        layout: Layout,
        dtype: object = None,
        base: object = 0,
        align: int | None = None,
    ) -> None:
        if not isinstance(layout, Layout):
            raise TypeError(f"Tensor: layout must be a cute_layout.Layout, got {type(layout).__name__}")
        if ptr is not None and dtype is None:
            raise TypeError("Tensor: a pointer tensor needs a dtype")
        self.ptr = ptr
        self.layout = layout
        self.dtype = _dtypes.canonical_dtype(dtype) if dtype is not None else None
        self.base = base
        if ptr is not None:
            nbytes = _dtypes.dtype_bits(self.dtype) // 8 or 1
            self.align = nbytes if align is None else align
            if self.align % nbytes and nbytes % self.align:
                raise ValueError(f"Tensor: align {align} is not compatible with {self.dtype} elements")
        else:
            self.align = None

    @property
    def is_identity(self) -> bool:
        """Whether this is a coordinate (identity) tensor."""
        return self.ptr is None

    @property
    def shape(self) -> object:
        """The layout's shape."""
        return self.layout.shape

    @property
    def stride(self) -> object:
        """The layout's stride."""
        return self.layout.stride

    def size(self) -> object:
        """Number of elements (a Python int when the shape is static)."""
        return size(self.layout.shape)

    def __repr__(self) -> str:
        kind = "identity" if self.ptr is None else self.dtype
        return f"Tensor({kind}, {self.layout})"

    def offset_of(self, crd: object) -> object:
        """Element offset (or coordinate, for identity tensors) of `crd`: base + layout(crd)."""
        return _leaf_sum(self.base, crd2idx(crd, self.layout.shape, self.layout.stride))

    def __getitem__(self, crd: object) -> object:
        """Slice with None entries (a Tensor), or for an identity tensor the coordinate at `crd` (a tuple)."""
        if _has_none(crd):
            sub = Layout(slice_(crd, self.layout.shape), slice_(crd, self.layout.stride))
            return Tensor(self.ptr, sub, self.dtype, self.offset_of(crd), self.align)
        if self.ptr is None:
            return _plain(self.offset_of(crd))
        raise TypeError(
            "Tensor[...]: indexing a pointer tensor with a full coordinate is a load; use load()/copy()"
        )

    def num_groups(self) -> int:
        """Number of runs of the first flattened mode (size // extent of that mode); static shapes only."""
        fs = flatten(self.layout.shape) if _is_tuple(self.layout.shape) else (self.layout.shape,)
        if any(type(x) is not int for x in fs):
            raise TypeError("num_groups: the tensor's shape must be static")
        return size(fs) // fs[0]

    def group(self, r: object) -> Tensor:
        """The r-th run of the first flattened mode (r may be an Int): a rank-1 tensor of that mode's extent.

        The rest coordinate r is split over the other modes only, so the run's offset keeps their known
        divisibility (a vector-aligned row stays provably aligned).
        """
        fs = flatten(self.layout.shape) if _is_tuple(self.layout.shape) else (self.layout.shape,)
        fd = flatten(self.layout.stride) if _is_tuple(self.layout.stride) else (self.layout.stride,)
        off: object = 0
        if len(fs) > 1:
            off = crd2idx(r, tuple(fs[1:]), tuple(fd[1:]))
        elif not (type(r) is int and r == 0):
            raise ValueError(f"group: a rank-1 tensor has one run; got r={r!r}")
        return Tensor(self.ptr, Layout(fs[0], fd[0]), self.dtype, _leaf_sum(self.base, off), self.align)

    def load(self, crd: object) -> ir.Value:
        """Load the element at `crd` (scalar, unpredicated)."""
        return _load_scalar(self, self.offset_of(crd))

    def store(self, crd: object, value: ir.Value) -> None:
        """Store `value` at `crd` (scalar, unpredicated)."""
        _store_scalar(self, self.offset_of(crd), value)


def _has_none(crd: object) -> bool:
    if crd is None:
        return True
    if isinstance(crd, tuple):
        return any(_has_none(c) for c in crd)
    return False


def make_tensor(ptr: ir.Value, layout: Layout, dtype: object, *, align: int | None = None) -> Tensor:
    """A pointer tensor: `ptr` (!llvm.ptr<as>) with `layout` over elements of `dtype`."""
    if not isinstance(ptr, ir.Value) or not isinstance(ptr.type, llvm.PointerType):
        raise TypeError(f"make_tensor: ptr must be an !llvm.ptr value, got {ptr!r}")
    return Tensor(ptr, layout, dtype, 0, align)


def make_identity_tensor(shape: object) -> Tensor:
    """The identity tensor of `shape`: element `c` is the coordinate `c` (CuTe's make_identity_tensor)."""
    return Tensor(None, Layout(shape, make_basis_like(shape)), None, 0)


def zipped_divide(t: Tensor, tiler: object) -> Tensor:
    """CuTe's zipped_divide of the tensor's layout (cute_layout's, on run-time extents and strides too):
    ((tile modes),(rest modes)); a by-mode int tiler over a dynamic extent keeps a partial last tile
    (rest = ceil_div(extent, tile)), to be predicated with an identity tensor."""
    from cute_layout import zipped_divide as _zipped_divide

    if isinstance(tiler, list):
        tiler = tuple(tiler)
    return Tensor(t.ptr, _zipped_divide(t.layout, tiler), t.dtype, t.base, t.align)


def local_tile(t: Tensor, tiler: Sequence[int], coord: object) -> Tensor:
    """The tile of `t` at tile coordinate `coord` (an index over the tiles, or a tuple of coordinates)."""
    z = zipped_divide(t, tiler)
    return z[(tuple(None for _ in z.layout.shape[0]), coord)]


# --- tiled copies ----------------------------------------------------------------------------------------


class TiledCopy:
    """cute-nvarch's TiledCopy (atom, thread-value layout, tiler) sliced by run-time thread ids (`Int`s).

    The description and its algebra live in cute_nvarch; this adds only `get_slice(tid)` for a thread id that is an
    SSA value. Partitioning here covers single-element atoms (universal copies); vectorization is `copy`'s job.
    """

    __slots__ = ("copy",)

    def __init__(self, copy: NvTiledCopy) -> None:
        if not isinstance(copy, NvTiledCopy):
            raise TypeError(f"TiledCopy: expected a cute_nvarch TiledCopy, got {type(copy).__name__}")
        atom = copy.atom
        if atom.num_threads != 1 or size(atom.layout_ref_tv) != 1:
            raise ValueError(f"TiledCopy: cute-ir partitions copies of single-element atoms, got {atom.name}")
        self.copy = copy

    @property
    def layout_tv(self) -> Layout:
        """(thread, value) -> tile index."""
        return self.copy.layout_tv

    @property
    def tiler(self) -> tuple[int, ...]:
        """The tile shape the copy covers."""
        return self.copy.tiler_mn

    @property
    def num_threads(self) -> int:
        """Threads the copy is laid out for."""
        return self.copy.num_threads

    @property
    def num_values(self) -> int:
        """Values per thread."""
        return self.copy.num_values

    def get_slice(self, tid: Int | int) -> ThrCopy:
        """This copy as seen by thread `tid` (an Int or a Python int)."""
        return ThrCopy(self, tid)


def _universal_atom(dtype: object) -> object:
    return make_universal_copy_atom(_dtypes.canonical_dtype(dtype))


def make_tiled_copy(layout_tv: Layout, tiler: Sequence[int], dtype: object = "int32") -> TiledCopy:
    """A TiledCopy from a (thread, value) -> tile-index layout and the tile shape (CuTeDSL's make_tiled_copy)."""
    return TiledCopy(nv_make_tiled_copy(_universal_atom(dtype), layout_tv, tuple(tiler)))


def make_tiled_copy_tv(thr_layout: Layout, val_layout: Layout, dtype: object = "int32") -> TiledCopy:
    """A TiledCopy from thread and value layouts (cute_nvarch's make_tiled_copy_tv with a universal copy atom)."""
    return TiledCopy(nv_make_tiled_copy_tv(_universal_atom(dtype), thr_layout, val_layout))


class ThrCopy:
    """One thread's slice of a TiledCopy: partition_S / partition_D of a tile-shaped tensor."""

    __slots__ = ("tid", "tiled")

    def __init__(self, tiled: TiledCopy, tid: Int | int) -> None:
        self.tiled = tiled
        self.tid = tid

    def partition_S(self, t: Tensor) -> Tensor:  # noqa: N802 - CuTe's name
        """The thread's values of the tile tensor `t`: a Tensor over the value modes (static shape)."""
        return self._partition(t)

    def partition_D(self, t: Tensor) -> Tensor:  # noqa: N802 - CuTe's name
        """The thread's values of the destination tile tensor `t` (same partition as partition_S)."""
        return self._partition(t)

    def _partition(self, t: Tensor) -> Tensor:
        from cute_layout import composition

        tv = self.tiled.layout_tv
        if size(t.layout.shape) != size(self.tiled.tiler):
            raise ValueError(f"partition: tensor {t.layout} is not a tile of shape {self.tiled.tiler}")
        # (thr, val) -> offset (or coordinate): the tile's layout composed with the TV layout
        tv_of_tile = composition(t.layout, tv)
        thr, val = tv_of_tile[0], tv_of_tile[1]
        off = crd2idx(self.tid, thr.shape, thr.stride)
        if type(off) is not int and not isinstance(off, Int):
            off = _plain(off)
        return Tensor(t.ptr, val, t.dtype, _leaf_sum(t.base, off), t.align)


# --- register fragments ----------------------------------------------------------------------------------


class _Lane:
    """Element `lane` of the vector SSA value `vec` (extracted only where a scalar is needed)."""

    __slots__ = ("lane", "vec", "width")

    def __init__(self, vec: ir.Value, lane: int, width: int) -> None:
        self.vec = vec
        self.lane = lane
        self.width = width

    def scalar(self) -> ir.Value:
        """The element as a scalar (llvm.extractelement at the current insertion point)."""
        return llvm.extractelement(self.vec, arith.constant(ir.IntegerType.get_signless(32), self.lane))


def _scalar(e: object) -> ir.Value:
    return e.scalar() if isinstance(e, _Lane) else e


def _vector_run(elems: Sequence[object], i: int) -> tuple[ir.Value, int] | None:
    """(vector, width) when elems[i:i+width] are lanes 0..width-1 of one vector value, else None."""
    e = elems[i]
    if not isinstance(e, _Lane) or e.lane != 0 or i + e.width > len(elems):
        return None
    for j in range(1, e.width):
        x = elems[i + j]
        if not isinstance(x, _Lane) or x.vec != e.vec or x.lane != j:
            return None
    return e.vec, e.width


class Values:
    """A register fragment's values (CuTe's TensorSSA); `+ - *` act elementwise, on whole vectors where both
    operands hold the same vector runs (so a 128-bit load feeds vector arithmetic without shuffles)."""

    __slots__ = ("dtype", "values")

    def __init__(self, values: Sequence[object], dtype: object) -> None:
        self.values = list(values)
        self.dtype = _dtypes.canonical_dtype(dtype)

    def __len__(self) -> int:
        return len(self.values)

    def scalars(self) -> list[ir.Value]:
        """Every element as a scalar SSA value."""
        return [_scalar(e) for e in self.values]

    def _binary(self, other: Values, fop: object, iop: object, sym: str) -> Values:
        if not isinstance(other, Values):
            return NotImplemented
        if len(other) != len(self) or other.dtype != self.dtype:
            raise ValueError(
                f"Values {sym}: operands differ ({len(self)} x {self.dtype} vs {len(other)} x {other.dtype})"
            )
        op = fop if _dtypes.is_float(self.dtype) else iop
        a, b = self.values, other.values
        out: list[object] = []
        i = 0
        while i < len(a):
            ra, rb = _vector_run(a, i), _vector_run(b, i)
            if ra is not None and rb is not None and ra[1] == rb[1]:
                v = op(ra[0], rb[0])
                out.extend(_Lane(v, j, ra[1]) for j in range(ra[1]))
                i += ra[1]
            else:
                out.append(op(_scalar(a[i]), _scalar(b[i])))
                i += 1
        return Values(out, self.dtype)

    def __add__(self, other: Values) -> Values:
        return self._binary(other, arith.addf, arith.addi, "+")

    def __sub__(self, other: Values) -> Values:
        return self._binary(other, arith.subf, arith.subi, "-")

    def __mul__(self, other: Values) -> Values:
        return self._binary(other, arith.mulf, arith.muli, "*")


class Fragment:
    """A register fragment of `size` elements of `dtype` (slots hold SSA values once written)."""

    __slots__ = ("dtype", "values")

    def __init__(self, dtype: object, size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"Fragment: size must be a positive static int, got {size!r}")
        self.dtype = _dtypes.canonical_dtype(dtype)
        self.values: list[object] = [None] * size

    def size(self) -> int:
        """Number of elements."""
        return len(self.values)

    def __getitem__(self, i: int) -> ir.Value:
        v = self.values[i]
        if v is None:
            raise ValueError(f"Fragment: element {i} was read before being written")
        return _scalar(v)

    def __setitem__(self, i: int, v: ir.Value) -> None:
        self.values[i] = v

    def load(self) -> Values:
        """All elements as Values (every element must have been written)."""
        for i, v in enumerate(self.values):
            if v is None:
                raise ValueError(f"Fragment: element {i} was read before being written")
        return Values(self.values, self.dtype)

    def store(self, vals: Values) -> None:
        """Overwrite all elements with `vals`."""
        if not isinstance(vals, Values) or len(vals) != len(self.values):
            raise ValueError(f"Fragment.store: expected Values of {len(self.values)} elements, got {vals!r}")
        self.values = list(vals.values)

    def fill(self, value: float | int) -> None:
        """Set every element to the constant `value`."""
        c = _zero(self.dtype, value)
        self.values = [c] * len(self.values)


def make_fragment_like(t: Tensor, dtype: object = None) -> Fragment:
    """A register fragment with one slot per element of `t` (same dtype unless given)."""
    n = size(flatten(t.layout.shape) if _is_tuple(t.layout.shape) else t.layout.shape)
    if type(n) is not int:
        raise TypeError("make_fragment_like: the tensor's shape must be static")
    return Fragment(dtype or t.dtype, n)


# --- predicates ------------------------------------------------------------------------------------------


def all_in_bounds(coords: Tensor, shape: object) -> Bool | bool:
    """Whether every coordinate of the identity tensor `coords` lies inside `shape` (checks its last one)."""
    if not coords.is_identity:
        raise TypeError("all_in_bounds: coords must be an identity (coordinate) tensor")
    n = coords.size()
    if type(n) is not int:
        raise TypeError("all_in_bounds: the coordinate tensor's shape must be static")
    return elem_less(coords[n - 1], shape)


# --- loads and stores ------------------------------------------------------------------------------------


def _elem_type(dtype: str) -> ir.Type:
    return _dtypes.element_type(dtype)


def _zero(dtype: str, value: float | int = 0) -> ir.Value:
    t = _elem_type(dtype)
    if _dtypes.is_float(dtype):
        return arith.constant(t, float(value))
    return arith.constant(t, int(value))


def _gep(t: Tensor, offset: object) -> ir.Value:
    et = _elem_type(t.dtype)
    if type(offset) is int:
        if offset == 0:
            return t.ptr
        return llvm.getelementptr(t.ptr.type, t.ptr, [], [offset], et, llvm.GEPNoWrapFlags.inbounds)
    if not isinstance(offset, Int):
        raise TypeError(f"offset must be an int or Int, got {type(offset).__name__}")
    return llvm.getelementptr(t.ptr.type, t.ptr, [offset.value], [_DYN], et, llvm.GEPNoWrapFlags.inbounds)


def _load_scalar(t: Tensor, offset: object) -> ir.Value:
    nbytes = max(1, _dtypes.dtype_bits(t.dtype) // 8)
    return llvm.load(_elem_type(t.dtype), _gep(t, offset), alignment=nbytes)


def _store_scalar(t: Tensor, offset: object, value: ir.Value) -> None:
    nbytes = max(1, _dtypes.dtype_bits(t.dtype) // 8)
    llvm.store(value, _gep(t, offset), alignment=nbytes)


def _vector_plan(t: Tensor, vector_bits: int) -> tuple[int, list[object]]:
    """(elements per access, offsets of the accesses) for the values of `t` in colex order."""
    if t.ptr is None:
        raise TypeError("copy: an identity tensor holds coordinates, not memory")
    shape, stride = t.layout.shape, t.layout.stride
    fs = flatten(shape) if _is_tuple(shape) else (shape,)
    fd = flatten(stride) if _is_tuple(stride) else (stride,)
    n = size(fs)
    if type(n) is not int:
        raise TypeError(f"copy: the partitioned tensor's shape must be static, got {shape}")
    bits = _dtypes.dtype_bits(t.dtype)
    nbytes = max(1, bits // 8)
    w = 1
    if type(fd[0]) is int and fd[0] == 1 and type(fs[0]) is int:
        w = max(1, min(vector_bits // bits, fs[0] & -fs[0]))
    offsets = _LazyOffsets(t, n)
    while w > 1:
        if (t.align or nbytes) % (w * nbytes) == 0 and all(
            _div_of(offsets[g]) % w == 0 for g in range(0, n, w)
        ):
            break
        w //= 2
    return w, offsets


class _LazyOffsets:
    """Element offsets of a partitioned tensor, computed (and their arith emitted) on first use."""

    __slots__ = ("_cache", "_t", "n")

    def __init__(self, t: Tensor, n: int) -> None:
        self._t = t
        self._cache: dict[int, object] = {}
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> object:
        v = self._cache.get(i)
        if v is None:
            v = self._cache[i] = self._t.offset_of(i)
        return v


def copy(
    src: Tensor | Fragment,
    dst: Tensor | Fragment,
    *,
    pred: Sequence[object] | None = None,
    vector_bits: int = 128,
) -> None:
    """Copy a partitioned memory tensor into a fragment (load) or a fragment into a memory tensor (store).

    `pred` (one Bool/bool per element) guards each element; False elements are not accessed (loads give 0).
    Accesses are vectorized up to `vector_bits` where contiguity and alignment are proven.
    """
    if vector_bits not in (8, 16, 32, 64, 128):
        raise ValueError(f"copy: vector_bits must be one of 8, 16, 32, 64, 128, got {vector_bits!r}")
    if isinstance(src, Tensor) and isinstance(dst, Fragment):
        mem, frag, is_load = src, dst, True
    elif isinstance(src, Fragment) and isinstance(dst, Tensor):
        mem, frag, is_load = dst, src, False
    else:
        raise TypeError(
            f"copy: supports memory Tensor -> Fragment and Fragment -> memory Tensor, got "
            f"{type(src).__name__} -> {type(dst).__name__}"
        )
    w, offsets = _vector_plan(mem, vector_bits)
    n = len(offsets)
    if frag.size() != n:
        raise ValueError(f"copy: fragment has {frag.size()} elements, tensor partition has {n}")
    if pred is not None:
        pred = list(pred)
        if len(pred) != n:
            raise ValueError(f"copy: pred has {len(pred)} entries, expected {n}")
        for p in pred:
            if not (type(p) is bool or isinstance(p, Bool)):
                raise TypeError(f"copy: pred entries must be Bool or bool, got {type(p).__name__}")
    et = _elem_type(mem.dtype)
    nbytes = max(1, _dtypes.dtype_bits(mem.dtype) // 8)
    i32 = ir.IntegerType.get_signless(32)
    groups = []
    for g in range(0, n, w):
        always = pred is None or all(p is True for p in pred[g : g + w])
        never = pred is not None and all(p is False for p in pred[g : g + w])
        groups.append((g, always, never))
    vtype = ir.VectorType.get([w], et) if w > 1 else et
    for g, always, never in groups:
        if never:
            if is_load:
                for j in range(w):
                    frag[g + j] = _zero(mem.dtype)
            continue
        # offsets (and the group predicate) are computed here, outside any branch, so that every region
        # below may use them
        offs = [offsets[g + j] for j in range(w)]
        if always:
            gp: Bool | bool = True
        else:
            gp = True
            for j in range(w):
                gp = gp & pred[g + j]
        if is_load:
            frag_group = _load_group(mem, offs, vtype, w, nbytes, gp, None if always else pred[g : g + w])
            if w == 1:
                frag[g] = frag_group
            else:
                for j in range(w):
                    frag.values[g + j] = _Lane(frag_group, j, w)
        else:
            run = _vector_run(frag.values, g) if w > 1 else None
            if w == 1:
                v = frag[g]
            elif run is not None and run[1] == w:
                v = run[0]
            else:
                v = llvm.mlir_poison(vtype)
                for j in range(w):
                    v = llvm.insertelement(v, frag[g + j], arith.constant(i32, j))
            _store_group(mem, offs, v, w, nbytes, gp, None if always else pred[g : g + w])


def _load_group(
    mem: Tensor, offs: list, vtype: ir.Type, w: int, nbytes: int, gp: object, preds: list | None
) -> ir.Value:
    """One access group: a vector (or scalar) load; under a run-time group predicate, the whole vector when
    every element is in bounds, else each element branch-free (a false one reads element 0 and yields 0)."""

    def vector() -> list[ir.Value]:
        return [llvm.load(vtype, _gep(mem, offs[0]), alignment=w * nbytes)]

    def elementwise() -> list[ir.Value]:
        zero = _zero(mem.dtype)
        vals = []
        for j in range(w):
            p = preds[j]
            if p is True:
                vals.append(_load_scalar(mem, offs[j]))
            elif p is False:
                vals.append(zero)
            else:
                x = _load_scalar(mem, select(p, offs[j], 0))
                vals.append(arith.select(p.value, x, zero))
        if w == 1:
            return vals
        v = llvm.mlir_poison(vtype)
        i32 = ir.IntegerType.get_signless(32)
        for j, x in enumerate(vals):
            v = llvm.insertelement(v, x, arith.constant(i32, j))
        return [v]

    if gp is True:
        return vector()[0]
    if w == 1:
        return elementwise()[0]
    return if_values(gp, [vtype], vector, elementwise)[0]


def _store_group(
    mem: Tensor, offs: list, v: ir.Value, w: int, nbytes: int, gp: object, preds: list | None
) -> None:
    """One access group: a vector (or scalar) store, guarded like _load_group (false elements untouched)."""

    def vector() -> None:
        llvm.store(v, _gep(mem, offs[0]), alignment=w * nbytes)

    def elementwise() -> None:
        i32 = ir.IntegerType.get_signless(32)
        for j in range(w):

            def one(j: int = j) -> None:
                x = v if w == 1 else llvm.extractelement(v, arith.constant(i32, j))
                _store_scalar(mem, offs[j], x)

            if_(preds[j], one)

    if gp is True:
        vector()
    elif w == 1:
        elementwise()
    else:
        if_(gp, vector, elementwise)

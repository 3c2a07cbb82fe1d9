"""A tiled matrix transpose through shared memory, written with the public API only (docs/tutorial.md).

The tutorial's code blocks are this file, in order (tests/test_tutorial.py checks it and runs them).
"""

# --- imports and sizes ------------------------------------------------------------------------------------
from cute_layout import Layout, Swizzle, composition
from cute_runtime import Tensor, describe, kernel

TILE = 32  # the tile is TILE x TILE 32-bit words: 32 x 32 float32, 64 x 64 float16 / bfloat16
ROWS = 8  # a block is TILE x ROWS threads; each thread moves TILE // ROWS words per phase


# --- the shared tile --------------------------------------------------------------------------------------
def smem_layout(pack: int, swizzle: bool) -> object:
    """The shared tile in words of `pack` elements: row c = column c of the x tile, column g = its row group g.

    The naive layout puts row c at word c * TILE, so the TILE words of one column lie in one bank. The
    swizzle XORs the row (counted in units of `pack` rows: the bits above 5 + log2(pack)) into the column:
    both a column and a row of the tile then cover all 32 banks.
    """
    words = Layout((TILE * pack, TILE), (TILE, 1))
    if not swizzle:
        return words
    return composition(Swizzle(5, 0, 5 + pack.bit_length() - 1), words)


# --- who touches which word -------------------------------------------------------------------------------
def store_coord(tx: object, ty: object, j: int, e: int, pack: int, rows: int = ROWS) -> tuple:
    """The shared-tile word that thread (tx, ty) of a block with `rows` thread rows writes in step j (element e)."""
    return (pack * tx + e, ty + rows * j)


def load_coord(tx: object, ty: object, j: int, rows: int = ROWS) -> tuple:
    """The shared-tile word that thread (tx, ty) of a block with `rows` thread rows reads in step j."""
    return (ty + rows * j, tx)


# --- the kernel -------------------------------------------------------------------------------------------
@kernel(block=(TILE, ROWS))
def transpose(k, x: Tensor(rank=2), y: Tensor(rank=2), pack: int = 1, swizzle: bool = True):
    """y[j, i] = x[i, j] for one (TILE * pack)-square tile per block; y must have x's shape reversed."""
    from cute_ir.dtypes import dtype_bits
    from cute_ir.tensor import Fragment, copy, local_tile, make_fragment_like
    from cute_ir.tensor import Tensor as Memory

    m, n = x.shape
    tx, ty = k.thread_idx(0), k.thread_idx(1)
    row0 = k.block_idx(1) * (TILE * pack)  # the tile's first row of x (= column of y)
    word0 = k.block_idx(0) * TILE  # the tile's first word (of `pack` columns) along x's rows
    layout = smem_layout(pack, swizzle)
    smem = k.shared_memory(TILE * pack * TILE * pack * dtype_bits(x.dtype) // 8)

    def shared_word(c: tuple) -> Memory:
        """The `pack` elements of shared-tile word c."""
        return Memory(smem, Layout(pack, 1), x.dtype, base=layout(c) * pack, align=4 if pack > 1 else None)

    # phase 1: each thread reads `pack` rows x one word of x and writes `pack` transposed words
    for j in range(TILE // ROWS):
        group = ty + ROWS * j
        rows = []
        for q in range(pack):
            r = row0 + group * pack + q
            part = local_tile(x[(r, None)], (pack,), word0 + tx)
            frag = make_fragment_like(part)
            copy(part, frag, pred=[(r < m) & ((word0 + tx) * pack + e < n) for e in range(pack)])
            rows.append(frag)
        for e in range(pack):
            word = Fragment(x.dtype, pack)
            for q in range(pack):
                word[q] = rows[q][e]
            copy(word, shared_word(store_coord(tx, ty, j, e, pack)))
    k.barrier()
    # phase 2: each thread reads one word per step and writes it to a row of y
    ym, yn = y.shape
    for j in range(TILE * pack // ROWS):
        c = ty + ROWS * j
        src = shared_word(load_coord(tx, ty, j))
        frag = make_fragment_like(src)
        copy(src, frag)
        r = word0 * pack + c
        part = local_tile(y[(r, None)], (pack,), k.block_idx(1) * TILE + tx)
        copy(frag, part, pred=[(r < ym) & ((k.block_idx(1) * TILE + tx) * pack + e < yn) for e in range(pack)])


# --- the host side ----------------------------------------------------------------------------------------
def pack_for(*matrices: object) -> int:
    """Elements per 32-bit word when every matrix's address and row stride allow paired accesses, else 1."""
    infos = [describe(m) for m in matrices]
    nbytes = infos[0].itemsize
    if nbytes >= 4:
        return 1
    for t in infos:
        if t.ptr % 4 or (t.strides[0] * nbytes) % 4 or t.strides[1] != 1:
            return 1
    return 4 // nbytes


def transpose_into(x: object, y: object, *, swizzle: bool = True, stream: object = None) -> None:
    """y = x.t() for CUDA matrices x (M, N) and y (N, M) of one dtype."""
    if x.dim() != 2 or tuple(y.shape) != (x.shape[1], x.shape[0]) or y.dtype != x.dtype:
        raise ValueError(f"transpose_into: y must be {x.dtype} of shape {(x.shape[1], x.shape[0])}, "
                         f"got {y.dtype} {tuple(y.shape)} (x: {x.dtype} {tuple(x.shape)})")
    if x.numel() == 0:
        return
    pack = pack_for(x, y)
    side = TILE * pack
    grid = (-(-x.shape[1] // side), -(-x.shape[0] // side))
    transpose(x, y, pack, swizzle, grid=grid, stream=stream)


# --- more bytes in flight: 16-byte vectors ----------------------------------------------------------------
VTILE = 16  # the vector tile is VTILE x VTILE 16-byte units: 64 x 64 float32, 128 x 128 float16 / bfloat16
VROWS = 16  # a vector block is VTILE x VROWS threads; each thread reads VTILE // VROWS x `pack` units of x
UNIT = 16  # bytes per vector access (ld.global.v4 / st.shared.v4)


def vector_layout(pack: int, swizzle: bool) -> object:
    """The vector tile in 16-byte units of `pack` elements (row c = column c of the x tile, column g = row group g).

    A 16-byte access is served a quarter-warp (8 threads, 8 units = 32 banks) at a time: the swizzle XORs
    the 3 row bits above log2(VTILE * pack) into the 3 low unit bits, so 8 consecutive rows or units of a
    column or a row cover all 32 banks.
    """
    units = Layout((VTILE * pack, VTILE), (VTILE, 1))
    if not swizzle:
        return units
    return composition(Swizzle(3, 0, VTILE.bit_length() - 1 + pack.bit_length() - 1), units)


@kernel(block=(VTILE, VROWS))
def transpose_vec(k, x: Tensor(rank=2), y: Tensor(rank=2), pack: int = 4):
    """y[j, i] = x[i, j] in 16-byte units of `pack` elements, one (VTILE * pack)-square tile per block."""
    from cute_ir.dtypes import dtype_bits
    from cute_ir.tensor import Fragment, copy, local_tile, make_fragment_like
    from cute_ir.tensor import Tensor as Memory

    if pack * dtype_bits(x.dtype) != 8 * UNIT:
        raise ValueError(f"transpose_vec: pack must be {8 * UNIT // dtype_bits(x.dtype)} for {x.dtype}, got {pack}")
    m, n = x.shape
    tx, ty = k.thread_idx(0), k.thread_idx(1)
    row0 = k.block_idx(1) * (VTILE * pack)  # the tile's first row of x (= column of y)
    unit0 = k.block_idx(0) * VTILE  # the tile's first unit (of `pack` columns) along x's rows
    layout = vector_layout(pack, True)
    smem = k.shared_memory(VTILE * pack * VTILE * UNIT)

    def shared_unit(c: tuple) -> Memory:
        """The `pack` elements of shared-tile unit c."""
        return Memory(smem, Layout(pack, 1), x.dtype, base=layout(c) * pack, align=UNIT)

    # phase 1: each thread reads `pack` rows x one unit of x (pack loads of 16 bytes in flight) and writes
    # `pack` transposed units
    for j in range(VTILE // VROWS):
        group = ty + VROWS * j
        rows = []
        for q in range(pack):
            r = row0 + group * pack + q
            part = local_tile(x[(r, None)], (pack,), unit0 + tx)
            frag = make_fragment_like(part)
            copy(part, frag, pred=[(r < m) & ((unit0 + tx) * pack + e < n) for e in range(pack)])
            rows.append(frag)
        for e in range(pack):
            unit = Fragment(x.dtype, pack)
            for q in range(pack):
                unit[q] = rows[q][e]
            copy(unit, shared_unit(store_coord(tx, ty, j, e, pack, VROWS)))
    k.barrier()
    # phase 2: each thread reads one unit per step and writes it to a row of y
    ym, yn = y.shape
    for j in range(VTILE * pack // VROWS):
        c = ty + VROWS * j
        src = shared_unit(load_coord(tx, ty, j, VROWS))
        frag = make_fragment_like(src)
        copy(src, frag)
        r = unit0 * pack + c
        part = local_tile(y[(r, None)], (pack,), k.block_idx(1) * VTILE + tx)
        copy(frag, part, pred=[(r < ym) & ((k.block_idx(1) * VTILE + tx) * pack + e < yn) for e in range(pack)])


def vector_pack_for(*matrices: object) -> int | None:
    """Elements per 16-byte unit when every matrix's address and row stride are 16-byte aligned, else None."""
    infos = [describe(m) for m in matrices]
    nbytes = infos[0].itemsize
    for t in infos:
        if t.ptr % UNIT or (t.strides[0] * nbytes) % UNIT or t.strides[1] != 1:
            return None
    return UNIT // nbytes


def transpose_vec_into(x: object, y: object, *, stream: object = None) -> None:
    """y = x.t() with 16-byte vectors where the matrices allow it, else with transpose_into's 32-bit words."""
    pack = vector_pack_for(x, y) if x.dim() == 2 and y.dim() == 2 else None
    if pack is None or tuple(y.shape) != (x.shape[1], x.shape[0]) or y.dtype != x.dtype or x.numel() == 0:
        transpose_into(x, y, stream=stream)  # checks the arguments; 32-bit words
        return
    side = VTILE * pack
    grid = (-(-x.shape[1] // side), -(-x.shape[0] // side))
    transpose_vec(x, y, pack, grid=grid, stream=stream)

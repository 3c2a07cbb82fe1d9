"""Host side of the Hopper GEMM: operand geometry, TMA descriptors, tile/cluster choice and launch.

`problem_of(a, b, out)` checks three operands the kernel can read as they are: a is (M, K) or (L, M, K),
b (K, N) or (L, K, N), out (M, N) or (L, M, N); each row- or column-major in its last two modes (A: "k" or
"m" major, B: "n" or "k" major, C: "n" or "m"). TMA's 16-byte rule binds strides and base addresses, not
extents: every non-unit stride (in bytes) and the base address must be multiples of 16, else `ValueError`
names the tensor and the stride. Modes of extent 1 count as unit-stride (their strides are never followed).
`gemm()` (`launch_plan`) stages operands that break these rules through padded copies.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

from cute_nvarch.numeric import numeric_type

from .spec import (
    AB_DTYPES,
    C_DTYPES,
    DTYPE_BYTES,
    FP8_C_DTYPES,
    FP8_C_TILE_N_MULTIPLE,
    FP8_DTYPES,
    GemmConfig,
    box_rows,
    canonical_dtype,
    padded_ld,
)

__all__ = [
    "GemmProblem",
    "choose_config",
    "choose_epilogue_config",
    "launch_gemm",
    "problem_of",
    "tensor_maps",
    "with_promotion",
]

@dataclass(frozen=True)
class _Operand:
    """A tensor seen as (rows, cols, batch) with element strides, its contiguous mode and device address."""

    name: str
    rows: int
    cols: int
    batch: int
    stride_rows: int
    stride_cols: int
    stride_batch: int
    address: int
    dtype: str


@dataclass(frozen=True)
class GemmProblem:
    """A checked GEMM: sizes, majors, dtypes and the three operands' geometry."""

    m: int
    n: int
    k: int
    l: int
    a_major: str
    b_major: str
    c_major: str
    ab_dtype: str
    c_dtype: str
    a: _Operand
    b: _Operand
    c: _Operand
    b_dtype: str | None = None  # B's dtype when it is not ab_dtype (mixed 8-bit pairs)

    def row_strides(self) -> tuple[int, int]:
        """Elements from one of A's rows to the next along its contiguous mode, and B's (0 where there is one row)."""
        a, b = self.a, self.b  # a (M, K), b (K, N)
        a_ld, a_rows = (a.stride_rows, a.rows) if self.a_major == "k" else (a.stride_cols, a.cols)
        b_ld, b_rows = (b.stride_cols, b.cols) if self.b_major == "k" else (b.stride_rows, b.rows)
        return (a_ld if a_rows > 1 else 0), (b_ld if b_rows > 1 else 0)


def _dtype_of(t: Any, what: str) -> str:
    allowed = C_DTYPES + FP8_DTYPES if what in ("a", "b") else C_DTYPES + FP8_C_DTYPES
    return canonical_dtype(str(t.dtype), f"{what}.dtype", allowed)


def _elem_bytes(dtype: str) -> int:
    """Bytes per element of an operand dtype (A/B: 16- or 8-bit; C)."""
    return DTYPE_BYTES.get(dtype) or numeric_type(dtype).bytes


def _as3(t: Any, what: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(L, R, C) sizes and element strides of a 2-D or 3-D tensor."""
    if t.dim() == 2:
        (r, c), (sr, sc) = t.shape, t.stride()
        return (1, r, c), (0, sr, sc)
    if t.dim() == 3:
        return tuple(t.shape), tuple(t.stride())
    raise ValueError(f"{what} must be 2-D or 3-D, got {t.dim()}-D")


def _operand(t: Any, what: str, unit_first: str, unit_second: str) -> tuple[_Operand, str]:
    """Geometry of `t` and which of its two matrix modes is contiguous (named unit_first / unit_second).

    A mode of extent 1 counts as unit-stride (its stride is never followed); of the candidate majors the
    first that TMA can read is taken (ValueError, naming the rule, when none can).
    """
    (nb, r, c), (sb, sr, sc) = _as3(t, what)
    dtype = _dtype_of(t, what)
    op = _Operand(what, r, c, nb, sr, sc, sb, t.data_ptr(), dtype)
    candidates = [(major, side) for major, side, unit in ((unit_second, "cols", sc == 1 or c == 1),
                                                          (unit_first, "rows", sr == 1 or r == 1)) if unit]
    if not candidates:
        raise ValueError(
            f"{what} must have a unit stride in one of its last two modes, got strides {t.stride()}"
        )
    error = None
    for major, side in candidates:
        try:
            _legal_strides(op, side)
        except ValueError as exc:
            error = error or exc
            continue
        return op, major
    raise error


def _legal_strides(op: _Operand, contiguous: str) -> tuple[int, int]:
    """(outer matrix stride, batch stride) in bytes, checked against TMA's 16-byte rule."""
    e = _elem_bytes(op.dtype)
    if contiguous == "cols":
        inner_ext, outer_ext, outer_stride, outer_name = op.cols, op.rows, op.stride_rows, "dim -2"
    else:
        inner_ext, outer_ext, outer_stride, outer_name = op.rows, op.cols, op.stride_cols, "dim -1"
    if op.address % 16:
        raise ValueError(f"{op.name}: base address {op.address:#x} must be 16-byte aligned for TMA")
    dense = padded_ld(inner_ext, e) * e
    if outer_ext == 1:
        outer_bytes = dense
    else:
        outer_bytes = outer_stride * e
        if outer_bytes % 16 or outer_bytes <= 0:
            raise ValueError(
                f"{op.name}: stride {outer_stride} of {outer_name} is {outer_bytes} bytes; "
                f"TMA needs a positive multiple of 16 bytes (pad the leading dimension)"
            )
    if op.batch == 1:
        batch_bytes = outer_bytes * outer_ext
        batch_bytes = -(-batch_bytes // 16) * 16
    else:
        batch_bytes = op.stride_batch * e
        if batch_bytes % 16 or batch_bytes <= 0:
            raise ValueError(
                f"{op.name}: batch stride {op.stride_batch} is {batch_bytes} bytes; "
                f"TMA needs a positive multiple of 16 bytes"
            )
    return outer_bytes, batch_bytes


def problem_of(a: Any, b: Any, out: Any, n_out: int | None = None) -> GemmProblem:
    """Check a (M,K[,L]), b (K,N), out (M,N) tensors and describe the GEMM (ValueError on any rule broken).

    `n_out`: C's columns when they are not b's N (SwiGLU: N / 2).
    """
    for t, what in ((a, "a"), (b, "b"), (out, "out")):
        if not getattr(t, "is_cuda", False):
            raise ValueError(f"{what} must be a CUDA tensor")
    ao, a_major = _operand(a, "a", "m", "k")  # (M, K): contiguous K -> "k"
    bo, b_major = _operand(b, "b", "k", "n")  # (K, N): contiguous N -> "n"
    co, c_major = _operand(out, "out", "m", "n")
    m, k = ao.rows, ao.cols
    if bo.rows != k:
        raise ValueError(f"b has {bo.rows} rows but a has K = {k} columns")
    n = bo.cols
    nc = n if n_out is None else n_out
    if (co.rows, co.cols) != (m, nc):
        raise ValueError(f"out must be ({m}, {nc}) per batch, got ({co.rows}, {co.cols})")
    batches = {ao.batch, bo.batch, co.batch}
    if len(batches) != 1:
        raise ValueError(
            f"a, b and out must have the same batch size, got {ao.batch}, {bo.batch}, {co.batch}"
        )
    if min(m, n, k) < 1:
        raise ValueError(f"M, N and K must be >= 1, got {m}, {n}, {k}")
    for dtype in (ao.dtype, bo.dtype):
        if dtype not in AB_DTYPES + FP8_DTYPES:
            raise ValueError(
                f"a and b must be {' or '.join(AB_DTYPES)} (or 8-bit: {', '.join(FP8_DTYPES)}), got {dtype}"
            )
    if ao.dtype in FP8_DTYPES or bo.dtype in FP8_DTYPES:
        _check_fp8(ao.dtype, bo.dtype, a_major, b_major)
    elif ao.dtype != bo.dtype:
        raise ValueError(f"a and b must have the same dtype, got {ao.dtype} and {bo.dtype}")
    for op, contiguous in (
        (ao, "cols" if a_major == "k" else "rows"),
        (bo, "cols" if b_major == "n" else "rows"),
        (co, "cols" if c_major == "n" else "rows"),
    ):
        _legal_strides(op, contiguous)
    b_dtype = bo.dtype if bo.dtype != ao.dtype else None
    return GemmProblem(m, n, k, ao.batch, a_major, b_major, c_major, ao.dtype, co.dtype, ao, bo, co, b_dtype)


def _check_fp8(a_dtype: str, b_dtype: str, a_major: str, b_major: str) -> None:
    """8-bit inputs: both 8-bit (E4M3/E5M2, mixed pairs allowed), both K-major (wgmma's rule, torch._scaled_mm's)."""
    for what, dtype in (("a", a_dtype), ("b", b_dtype)):
        if dtype not in FP8_DTYPES:
            raise ValueError(f"{what} must be 8-bit ({' or '.join(FP8_DTYPES)}) when the other operand is, got {dtype}")
    for what, major, want in (("a", a_major, "row-major (M, K): K contiguous"),
                              ("b", b_major, "column-major (K, N): K contiguous, e.g. w.t()")):
        if major != "k":
            raise ValueError(f"{what}: 8-bit operands must be K-major, {want}; got a {major}-major {what} "
                             "(pass allow_copy=True to transpose it on the device)")


def _geometry(op: _Operand, contiguous: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(rows, cols, batch) extents and legal element strides of an operand (its contiguous mode stride 1)."""
    outer_bytes, batch_bytes = _legal_strides(op, contiguous)
    e = _elem_bytes(op.dtype)
    outer, batch = outer_bytes // e, batch_bytes // e
    strides = (outer, 1, batch) if contiguous == "cols" else (1, outer, batch)
    return (op.rows, op.cols, op.batch), strides


def tensor_maps(problem: GemmProblem, cfg: GemmConfig) -> tuple[Any, Any, Any]:
    """The three encoded TMA descriptors (cute_runtime TensorMaps): the plan's tile plans bound to the operands."""
    from cute_runtime import TensorMap

    from .plan import tma_boxes

    a_plan, b_plan, c_plan = tma_boxes(cfg)
    p = problem
    # each tile plan is for an (MN, K, L) tensor: A (M, K) as stored, B (K, N) seen as (N, K), C (M, N)
    shape, stride = _geometry(p.a, "cols" if p.a_major == "k" else "rows")
    a_bound = a_plan.tma.bind(shape, stride)
    rows = cfg.a_box_rows(p.m)
    if rows < cfg.tile_m:  # fewer rows than a tile: the box covers them only (the kernel expects its bytes)
        a_bound = a_bound.with_box_extent(a_bound.dim_order.index(0), rows)
    a_map = TensorMap.from_plan(a_bound, p.a.address)
    (k, n, l), (sk, sn, sl) = _geometry(p.b, "rows" if p.b_major == "k" else "cols")
    b_map = TensorMap.from_plan(b_plan.tma.bind((n, k, l), (sn, sk, sl)), p.b.address)
    return a_map, b_map, _c_map(c_plan, p.c, p.c_major, p.m)


def _c_map(c_plan: Any, op: _Operand, c_major: str, m: int) -> Any:
    """The TMA descriptor of C's stores (C's tile plan bound to `op`: C, or the pre-activation output)."""
    from cute_runtime import TensorMap

    shape, stride = _geometry(op, "cols" if c_major == "n" else "rows")
    c_bound = c_plan.tma.bind(shape, stride)
    c_rows = c_bound.box_dims[c_bound.dim_order.index(0)]  # one 64-row slab of an N-major C
    if c_major == "n" and m < c_rows:  # the stores likewise cover only the rows M has
        c_bound = c_bound.with_box_extent(c_bound.dim_order.index(0), box_rows(m, c_rows))
    return TensorMap.from_plan(c_bound, op.address)


def aux_operand(t: Any, c_major: str, padded: bool = False) -> _Operand | None:
    """The pre-activation output `t` (C's shape and dtype) as the kernel's TMA stores of C's major take it, or
    None when they cannot: no unit stride along that major, strides or address off TMA's 16 bytes, or (unless
    `padded`: a staged copy, whose padding takes the last chunk) a contiguous extent that ends inside a 16-byte
    chunk (C's own rules: `_operand`, `_store_spills_past`)."""
    (nb, r, c), (sb, sr, sc) = _as3(t, "pre_activation_out")
    op = _Operand("pre_activation_out", r, c, nb, sr, sc, sb, t.data_ptr(), _dtype_of(t, "pre_activation_out"))
    side, unit, inner = ("cols", sc == 1 or c == 1, c) if c_major == "n" else ("rows", sr == 1 or r == 1, r)
    if not unit or (not padded and _ends_inside_chunk(inner, op.dtype)):
        return None
    try:
        _legal_strides(op, side)
    except ValueError:
        return None
    return op


def aux_tensor_map(cfg: GemmConfig, op: _Operand, m: int) -> Any:
    """The pre-activation output's TMA descriptor (`aux_operand`'s op): C's tile plan bound to it."""
    from .plan import tma_boxes

    return _c_map(tma_boxes(cfg)[2], op, cfg.c_major, m)


def choose_config(
    problem: Any,
    acc_dtype: str = "float32",
    tile_shape_mnk: tuple[int, int, int] | None = None,
    cluster_shape_mn: tuple[int, int] | None = None,
    num_sms: int = 132,
    variant: str = "fast",
    min_tile: int = 0,
) -> GemmConfig:
    """The config for a problem (GemmProblem or GemmShape): given tile/cluster, else the cost model's pick.

    Unspecified parts come from `choice.rank_configs` (the fastest modelled (tile, cluster), or the best
    cluster for a given tile; without a given tile, of tile sides `min_tile` or more); stages are the most that
    fit; `variant` names the speed options (VARIANTS).
    """
    from .choice import rank_configs

    p = problem
    if tile_shape_mnk is None or cluster_shape_mn is None:
        ranked = rank_configs(p, num_sms)
        if tile_shape_mnk is None and min_tile:
            ranked = [(t, c) for t, c in ranked if min(t) >= min_tile]
            if not ranked:
                raise ValueError(f"no tile of sides >= {min_tile} runs a {p.m} x {p.n} problem")
        if p.c_dtype in FP8_C_DTYPES:  # an 8-bit C stages whole 64-byte rows
            ranked = [(t, c) for t, c in ranked if t[1] % FP8_C_TILE_N_MULTIPLE == 0]
        if tile_shape_mnk is not None:
            ranked = [(t, c) for t, c in ranked if t == tuple(tile_shape_mnk[:2])] or [
                (tuple(tile_shape_mnk[:2]), (1, 1))
            ]
        if cluster_shape_mn is not None:
            ranked = [(t, c) for t, c in ranked if c == tuple(cluster_shape_mn)] or [
                ((128, 128), tuple(cluster_shape_mn))
            ]
        tile, cluster = ranked[0]
        tile_shape_mnk = tile_shape_mnk or (tile[0], tile[1], None)  # tile_k: one 128-byte row of A
        cluster_shape_mn = cluster_shape_mn or cluster
    return GemmConfig(
        a_dtype=p.ab_dtype,
        b_dtype=getattr(p, "b_dtype", None) or p.ab_dtype,
        c_dtype=p.c_dtype,
        acc_dtype=acc_dtype,
        a_major=p.a_major,
        b_major=p.b_major,
        c_major=p.c_major,
        tile_m=tile_shape_mnk[0],
        tile_n=tile_shape_mnk[1],
        tile_k=tile_shape_mnk[2],
        cluster_m=cluster_shape_mn[0],
        cluster_n=cluster_shape_mn[1],
    ).with_variant(variant)


def with_promotion(problem: Any, cfg: Any, interval: int, acc: str, tile: Any, num_sms: int) -> Any:
    """cfg with two-level accumulation every `interval` k-blocks; without a given tile, re-chosen at the fastest
    modelled tile with two accumulators (`choice.PROMOTING_EFFICIENCY`) at cfg's cluster whose tile N promotion allows
    (`spec.MAX_PROMOTION_TILE_N`; an 8-bit C: whole 64-byte rows), keeping cfg's epilogue and scales; a given tile
    that breaks it is a ValueError."""
    from .choice import rank_configs
    from .spec import EPILOGUE_FIELDS, MAX_PROMOTION_TILE_N

    cluster = (cfg.cluster_m, cfg.cluster_n)
    allowed = [t for t, c in rank_configs(problem, num_sms, promoting=True) if c == cluster
               and t[1] <= MAX_PROMOTION_TILE_N and (cfg.c_bytes > 1 or t[1] % FP8_C_TILE_N_MULTIPLE == 0)]
    if tile is None and allowed and allowed[0] != (cfg.tile_m, cfg.tile_n):
        picked = choose_config(problem, acc, (*allowed[0], cfg.tile_k), cluster, num_sms, cfg.variant or "fast")
        cfg = dataclasses.replace(picked, **{f: getattr(cfg, f) for f in EPILOGUE_FIELDS})
    try:
        return dataclasses.replace(cfg, mma_promotion_interval=interval)
    except ValueError as e:
        raise ValueError(f"mma_promotion_interval: {e}") from None


def choose_epilogue_config(
    problem: Any,
    fields: dict,
    acc_dtype: str = "float32",
    tile_shape_mnk: tuple[int, int, int] | None = None,
    cluster_shape_mn: tuple[int, int] | None = None,
    num_sms: int = 132,
    variant: str = "fast",
    min_tile: int = 0,
) -> GemmConfig:
    """`choose_config`'s pick (of tile sides `min_tile` or more) with the fused epilogue's GemmConfig `fields`
    (activation, bias, has_input, has_alpha).

    SwiGLU writes tile_n / 2 columns per tile, a whole number of its epilogue chunks only where tile N is a
    multiple of 2 swiglu_chunk_n (32 for a 16-bit N-major C, 128 for an M-major one): another pick is re-chosen at
    the fastest modelled tile that is;
    an input addend on the ping-pong schedule needs at most `spec.MAX_PINGPONG_INPUT_ACC` accumulators per thread
    (64 x 128): a larger pick is re-chosen at 64 x 128; a 256-row tile takes no input: re-chosen at the fastest modelled
    tile of at most 128 rows (a given tile that breaks any of these is a ValueError).
    """
    from .spec import MAX_PINGPONG_INPUT_ACC

    cfg = choose_config(problem, acc_dtype, tile_shape_mnk, cluster_shape_mn, num_sms, variant, min_tile)

    def rechosen(fits: Any, fallback: tuple[int, int]) -> GemmConfig:
        # the fastest modelled tile that `fits` (at the given cluster, if any), else `fallback`
        from .choice import rank_configs

        given = None if cluster_shape_mn is None else tuple(cluster_shape_mn)
        tiles = [t for t, c in rank_configs(problem, num_sms) if fits(t) and given in (None, c) and min(t) >= min_tile]
        tile = (*(tiles[0] if tiles else fallback), cfg.tile_k)
        return choose_config(problem, acc_dtype, tile, cluster_shape_mn, num_sms, variant)

    unit = cfg.swiglu_chunk_n
    if fields.get("activation") == "swiglu" and (cfg.tile_n // 2) % unit:
        if tile_shape_mnk is not None:
            raise ValueError(f"activation='swiglu' needs a tile N that is a multiple of {2 * unit} for a "
                             f"{cfg.c_dtype} C, got tile_shape_mnk {tuple(tile_shape_mnk)}")
        # the fastest modelled tile whose half is a whole number of chunks (an M-major C's 80 columns of tile N 160
        # are not)
        cfg = rechosen(lambda t: (t[1] // 2) % unit == 0, (cfg.tile_m, 2 * unit))
    if fields.get("has_input") and not cfg.pingpong and cfg.atoms_m > 1:
        # two atoms per warpgroup (tile_m 256) take no addend: the fastest modelled tile of at most 128 rows
        if tile_shape_mnk is not None:
            raise ValueError(f"input= needs a tile of at most 128 rows (a 256-row tile's two accumulators per "
                             f"warpgroup leave no registers for the addend's loads), got tile_shape_mnk "
                             f"{tuple(tile_shape_mnk)}")
        cfg = rechosen(lambda t: t[0] <= 128, (128, cfg.tile_n))
    # ping-pong: one warpgroup holds the whole tile, so the addend needs a 64 x 128 tile
    pp_wide = cfg.pingpong and cfg.tile_m * cfg.tile_n // 128 > MAX_PINGPONG_INPUT_ACC
    if fields.get("has_input") and pp_wide:
        if tile_shape_mnk is not None:
            raise ValueError(f"input= with the ping-pong schedule needs a tile of at most "
                             f"{128 * MAX_PINGPONG_INPUT_ACC} elements (64 x 128), got tile_shape_mnk "
                             f"{tuple(tile_shape_mnk)}")
        tile = (64, 128 * MAX_PINGPONG_INPUT_ACC // 64, cfg.tile_k)
        cfg = choose_config(problem, acc_dtype, tile, cluster_shape_mn, num_sms, variant)
    return dataclasses.replace(cfg, **fields)


def schedule(
    problem: Any,
    cfg: GemmConfig,
    num_sms: int,
    raster_along_n: int | None = None,
    swizzle_log: int | None = None,
) -> tuple[tuple[int, int, int], int, int]:
    """(grid, raster_along_n, swizzle_log) of the persistent launch (the given order, else the host's pick).

    All of it is `cfg.tile_scheduler`'s (cute-nvarch's TileScheduler, which the kernel walks): the pick
    rasters along the longer side of the cluster-tile grid and groups 2**swizzle_log (up to 8) rows of the
    other side, so that the tiles running at once share A and B panels in L2.
    """
    sched = cfg.tile_scheduler
    sched.check_order(raster_along_n, swizzle_log)
    grid, raster_n, swz = _launch_order(sched, problem.m, problem.n, problem.l, num_sms)
    if raster_along_n is not None:
        raster_n = raster_along_n
    if swizzle_log is not None:
        swz = swizzle_log
    return grid, raster_n, swz


def resident_sms(kernel: Any, cfg: GemmConfig, num_sms: int) -> int:
    """The SMs a persistent launch of `kernel` (a cute_runtime Kernel of cfg) fills at once: `num_sms`, or the SMs
    of the clusters that fit together where fewer do (the driver's occupancy: 30 2x2 clusters on a 132-SM H200,
    not 33; a grid of 33 left three waiting for a whole share of the work, 1.4-1.8x slower)."""
    size = cfg.cluster_m * cfg.cluster_n
    if size == 1:
        return num_sms
    return max(size, min(num_sms, size * kernel.max_active_clusters()))


@functools.lru_cache(maxsize=1024)
def _launch_order(sched: Any, m: int, n: int, l: int, num_sms: int) -> tuple[tuple[int, int, int], int, int]:
    """The scheduler's grid and picked (raster_along_n, swizzle_log) for a problem (cached: no per-call work)."""
    return (sched.grid(m, n, l, num_sms), *sched.pick_order(m, n, l, num_sms))


def launch_gemm(
    kernel: Any,
    problem: GemmProblem,
    cfg: GemmConfig,
    num_sms: int,
    stream: Any = None,
    raster_along_n: int | None = None,
    swizzle_log: int | None = None,
    fused: tuple = (),
) -> None:
    """Encode the descriptors and launch `kernel` (a cute_runtime Kernel of cfg) for `problem` (`fused`: the fused
    kernel's FUSED_PARAMS values, `with_aux_desc`'s)."""
    a_map, b_map, c_map = tensor_maps(problem, cfg)
    grid, raster_n, swz = schedule(problem, cfg, resident_sms(kernel, cfg, num_sms), raster_along_n, swizzle_log)
    p = problem
    kernel.launch(grid, a_map, b_map, c_map, p.m, p.n, p.k, p.l, raster_n, swz, *with_aux_desc(fused, c_map),
                  stream=stream)


def with_aux_desc(fused: tuple, c_map: Any) -> tuple:
    """The fused or scaled kernel's run-time values `fused` (FUSED_PARAMS, then SCALE_PARAMS) with C's descriptor
    `c_map` for an `aux_desc` of None (no pre-activation output: the kernel never reads it)."""
    from .kernel import FUSED_PARAMS

    i = FUSED_PARAMS.index("aux_desc")
    if len(fused) > i and fused[i] is None:
        return (*fused[:i], c_map, *fused[i + 1:])
    return fused


def _store_spills_past(problem: GemmProblem) -> bool:
    """Whether C's contiguous extent ends inside a 16-byte chunk, so that a TMA store would write past it."""
    c = getattr(problem, "c", None)  # a GemmShape has no operands: C is (M, N)
    inner = (problem.n if c is None else c.cols) if problem.c_major == "n" else problem.m
    return _ends_inside_chunk(inner, problem.c_dtype)


def _ends_inside_chunk(inner: int, dtype: str) -> bool:
    """Whether a contiguous extent of `inner` elements ends inside a 16-byte chunk (TMA stores write whole ones)."""
    return (inner * DTYPE_BYTES[dtype]) % 16 != 0

"""The fused epilogue in the GEMM kernel: each thread's output values `act(alpha*acc + beta*input + bias)`.

A consumer thread holds the accumulator values of its warpgroup's 64 rows in CuTe's wgmma C layout
(`epilogue.value_coords`). Just before a store of one or two 8-column groups, `FusedEpilogue.values` turns
their accumulators into float32 output values in the same per-thread order, so the staging code (stmatrix
pairs or f32 stores) is the plain epilogue's:

- bias along N: the thread's two columns of each 8-column group are one 2-element load (shared by its two row
  halves) at `bias_t + immediate`, `bias_t` the thread's first column's address; the host passes a contiguous
  vector aligned to two elements and of even length (it stages any other), so the pair never leaves it. The
  whole tile's pairs are loaded once per unit, with its other values, when the object is made (one register
  each; the kernel makes it beside the unit's last wgmmas, `kernel._start_fused`), so the load latency is paid
  once, not after every chunk's barrier; with an input or the pre-activation output they come `values` calls
  ahead instead (`prefetch_inputs`);
- bias along M: the thread's two rows, loaded once per work unit;
- input (the addend): one load per value at `input_ptr + row*sm + col*sn + batch*sl` (element strides as
  run-time parameters: broadcast modes have stride 0, so torch.addmm's broadcasting needs no copy), issued
  `kernel.INPUT_PREFETCH_CALLS` `values` calls ahead (`prefetch_inputs`, with the bias pairs of those groups), so
  that a chunk's first loads cross its barriers;
- every load is predicated on its row/column lying inside the problem (a compare of the columns left in N
  with an immediate), so partial tiles need no other care (the TMA store clips the rest);
- alpha, beta: f32 run-time parameters; the activation is `epilogue_math`'s, SwiGLU pairs accumulator groups
  2j (gate) and 2j+1 (up) into output group j (`epilogue.swiglu_sources`);
- the pre-activation output (`has_aux`, gemm()'s `pre_activation_out`): `values` keeps each value's
  pre-activation in `pre` (same indices), which the kernel stages and stores like C's values (its own staging
  buffers, a TMA descriptor of C's boxes: `kernel._epilogue`);
- an 8-bit C (`GemmConfig.fp8_out`): `e4m3_pair` turns two output values D into their E4M3 bytes
  `satfinite(D * out_scale)` (`cute_ir.scalar.cvt_e4m3x2`; out_scale the run-time factor times the device
  scalar at `out_scale_ptr` when that is not 0, loaded once per work unit) and keeps the thread's max |D|;
  `store_amax` reduces it over the warp (shuffles) and lane 0 raises the float at `amax_ptr` (when not 0) with
  `red.global.max.u32` (non-negative float bits order as unsigned integers; NaN, sign clear, above +inf);
  bias and input are bfloat16 then (`GemmConfig.epilogue_dtype`).

Loads are plain `ld.global` (`cute_ir.scalar.ld_global` says why not `.nc`). Why per-thread loads of the
input rather than a TMA load into the staging buffer: they need no extra shared memory, barrier or
descriptor, they take torch's broadcast views (stride 0, which a tensor map cannot encode), and their bytes
equal C's own store (one read of an M x N tensor per GEMM). A TMA load would save the address arithmetic (a
few integer ops per value) at the price of a per-chunk mbarrier round trip and a second staging buffer per
warpgroup.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from cute_ir import scalar as S
from cute_ir.dtypes import element_type
from cute_ir.values import to_i64
from mlir import ir

from . import epilogue_math as em
from .epilogue import swiglu_sources, value_coords
from .spec import DTYPE_BYTES, GemmConfig

__all__ = ["FusedEpilogue", "FusedParams", "with_unit_invariants"]


@dataclass(frozen=True)
class FusedParams:
    """The fused kernel's run-time values (`kernel.FUSED_PARAMS`): addresses and element strides (i64 Ints),
    alpha and beta (f32 values)."""

    bias_ptr: Any
    input_ptr: Any
    input_stride_m: Any
    input_stride_n: Any
    input_stride_l: Any
    alpha: Any
    beta: Any
    aux_desc: Any  # the pre-activation output's TMA descriptor (`GemmConfig.has_aux`; C's otherwise, never read)
    scale_a_ptr: Any = None  # the scaled kernel's float32 scales (`kernel.SCALE_PARAMS`)
    scale_b_ptr: Any = None
    out_scale_ptr: Any = None  # an 8-bit C's float32 device out_scale (0: none), amax address (0: none), f32 factor
    amax_ptr: Any = None
    out_scale: Any = None
    # the values every work unit shares, loaded once per CTA before the unit loop (`with_unit_invariants`): the
    # product of the per-tensor scales (None: none) and an 8-bit C's whole out_scale
    tensor_scale: Any = None
    c_scale: Any = None


def with_unit_invariants(cfg: GemmConfig, params: FusedParams, m: Any) -> FusedParams:
    """params with the loads every work unit shares done once (per-tensor scales, an 8-bit C's device out_scale):
    emitted before a CTA's unit loop, their latency is paid once per CTA instead of after every unit's mainloop."""
    tensor_scale = None
    for mode, ptr in ((cfg.scale_a, params.scale_a_ptr), (cfg.scale_b, params.scale_b_ptr)):
        if mode == "tensor":  # one value: every thread loads it once
            s = _load_scale(ptr, row0_pred(m))
            tensor_scale = s if tensor_scale is None else S.mul(tensor_scale, s)
    c_scale = None
    if cfg.fp8_out:
        # out_scale: the by-value factor times the device scalar when its address is not 0
        has_ptr = params.out_scale_ptr != 0
        dev = S.select(has_ptr, _load_scale(params.out_scale_ptr, has_ptr), S.f32(1.0))
        c_scale = S.mul(params.out_scale, dev)
    return replace(params, tensor_scale=tensor_scale, c_scale=c_scale)


def _load_f32(cfg: GemmConfig, address: Any, pred: Any) -> ir.Value:
    """An element of the epilogue's dtype (C's; bfloat16 for an 8-bit C) at address (0 when not pred) as f32."""
    dt = cfg.epilogue_dtype
    return S.as_float(S.ld_global(address, pred, 8 * DTYPE_BYTES[dt]), element_type(dt))


def _load_scale(address: Any, pred: Any) -> ir.Value:
    """A float32 scale at address (0 when not pred)."""
    return S.as_float(S.ld_global(address, pred, 32), ir.F32Type.get())


def row0_pred(m: Any) -> Any:
    """A run-time true predicate (m > 0 always holds in a launch): the load of a per-tensor scale."""
    return m > 0


class FusedEpilogue:
    """One consumer thread's epilogue of one work unit: the row/column origin, the row bias, the loads."""

    def __init__(self, cfg: GemmConfig, params: FusedParams, m: Any, n: Any, g: Any, warp: Any, lane: Any,
                 tile_row0: Any, tile_col0: Any, batch: Any) -> None:
        self.cfg, self.p = cfg, params
        self.m, self.n, self.warp, self.lane = m, n, warp, lane
        self.row0 = tile_row0 + g * 64  # the warpgroup's first row (the tile's: `GemmConfig.tile_origin`)
        self.col0 = tile_col0  # the tile's first accumulator column
        self.batch = batch
        self.esize = DTYPE_BYTES[cfg.epilogue_dtype]
        self.row_bias: dict[int, ir.Value] = {}
        self.inputs: dict[int, ir.Value] = {}  # input addends loaded ahead of their chunk (`prefetch_inputs`)
        self.pre: dict[int, ir.Value] = {}  # with has_aux: the pre-activation of `values`' latest output values
        self.row_scale: dict[int, ir.Value] = {}
        if ("tensor" in (cfg.scale_a, cfg.scale_b) and params.tensor_scale is None) or (
                cfg.fp8_out and params.c_scale is None):
            raise ValueError("FusedEpilogue: params lack the per-CTA loads (`with_unit_invariants`)")
        self.tensor_scale = params.tensor_scale
        if cfg.fp8_out:
            self.out_scale = params.c_scale
            self.amax = S.f32(0.0)  # the thread's max |D| of this unit
        if cfg.scale_a == "m":
            for h in (0, 1):  # the thread's two rows, as the row bias
                row = self.row0 + value_coords(warp, lane, 2 * h)[0]
                self.row_scale[h] = _load_scale(self.p.scale_a_ptr + to_i64(row) * 4, row < m)
        if cfg.bias == "m":
            for h in (0, 1):  # the thread's two rows (value v's row half h = (v // 2) % 2)
                row = self.row0 + value_coords(warp, lane, 2 * h)[0]
                self.row_bias[h] = _load_f32(cfg, self.p.bias_ptr + to_i64(row) * self.esize, row < m)
        # the thread's first column (value 0's) and the address of its bias: value v's column is this plus a
        # build-time constant, so each bias load is one base register and an immediate offset
        self.col_t = self.col0 + value_coords(warp, lane, 0)[1]
        if cfg.scale_b == "n":
            self.scale_t = self.p.scale_b_ptr + to_i64(self.col_t) * 4
            self.scale_cols_left = n - self.col_t
        if cfg.bias == "n":
            self.bias_t = self.p.bias_ptr + to_i64(self.col_t) * self.esize
            # value v is inside N when dcol(v) < n - col_t: one compare with an immediate per load (comparing
            # col_t with n - dcol instead would hoist every n - dcol out of the loops and hold them in registers)
            self.cols_left = n - self.col_t
        # with an input the kernel issues each `values` call's loads ahead of it (`prefetch_inputs`); so it does the
        # bias pairs with the pre-activation output, whose values take the registers the tile's pairs held (GELU
        # with it spilled at 128x256)
        self.loads_ahead = cfg.has_input or (cfg.has_aux and cfg.bias == "n")
        # the thread's bias along N for the whole tile, by 8-column group of accumulators, kept raw (one register
        # each) until its chunk: loaded with the unit's other values, before the first chunk, their latency is paid
        # once per unit rather than after every chunk's barrier (SASS before: 8 loads behind each of a 128x256
        # tile's four barriers). With the input's loads ahead they come with those instead (a 256-wide tile's 32
        # pairs next to the input values ahead spilled)
        self.bias_pairs: dict[int, ir.Value] = {}
        if cfg.bias == "n" and not self.loads_ahead:
            for j in range(cfg.tile_n // 8):
                self.bias_pairs[j] = self._bias_pair(j)

    def _bias_pair(self, j: int) -> ir.Value:
        """The thread's two bias values of accumulator 8-column group j: one 2-element load (raw)."""
        bits = 16 * DTYPE_BYTES[self.cfg.epilogue_dtype]
        d0 = value_coords(0, 0, 4 * j)[1]  # the group's first column past the thread's (even)
        # both are read when the first is inside N (the host pads an odd N to an even length)
        return S.ld_global(self.bias_t + d0 * self.esize, self.cols_left > d0, bits)

    def _pre(self, acc: ir.Value, v: int, col_bias: dict) -> ir.Value:
        """alpha * acc + beta * input + bias of accumulator value v (f32)."""
        cfg, p = self.cfg, self.p
        dcol = value_coords(0, 0, v)[1]  # the value's column past the thread's first (a Python int)
        bias = None
        if cfg.bias == "m":
            bias = self.row_bias[(v // 2) % 2]
        elif cfg.bias == "n":
            j = v // 4  # the thread's two columns of 8-column group j: one pair (dcol of value 4j is even)
            if j not in col_bias:
                pair = self.bias_pairs.pop(j) if j in self.bias_pairs else self._bias_pair(j)
                col_bias[j] = S.unpack2(pair, element_type(cfg.epilogue_dtype))
            bias = col_bias[j][v % 2]
        x = S.to_f32(acc)
        if cfg.scaled:
            x = self._scaled(x, v, dcol, col_bias)
        addend = None
        if cfg.has_input:
            addend = self.inputs.pop(v) if v in self.inputs else self._input(v)
        return em.pre_activation(
            x,
            alpha=p.alpha if cfg.has_alpha else None,
            addend=addend,
            beta=p.beta if cfg.has_input else None,
            bias=bias,
        )

    def _input(self, v: int) -> ir.Value:
        """The input addend of accumulator value v (f32; 0 outside the problem): one predicated load."""
        p = self.p
        row_in, col_in = value_coords(self.warp, self.lane, v)
        row, col = self.row0 + row_in, self.col0 + col_in
        off = to_i64(row) * p.input_stride_m + to_i64(col) * p.input_stride_n + to_i64(self.batch) * p.input_stride_l
        return _load_f32(self.cfg, p.input_ptr + off * self.esize, (row < self.m) & (col < self.n))

    def prefetch_inputs(self, groups: range) -> None:
        """Issue the input loads (and bias pairs along N) of the thread's accumulator 8-column groups `groups` now;
        `values` uses them. The kernel issues them `kernel.INPUT_PREFETCH_CALLS` `values` calls ahead, so that a
        chunk's first loads cross its barriers instead of waiting behind them."""
        for j in groups:
            if self.cfg.bias == "n":
                self.bias_pairs[j] = self._bias_pair(j)
            if self.cfg.has_input:
                for v in range(4 * j, 4 * j + 4):
                    self.inputs[v] = self._input(v)

    def _scaled(self, x: ir.Value, v: int, dcol: int, loaded: dict) -> ir.Value:
        """x times the value's scales: per tensor, its row's of A, its column's of B (loads shared per chunk)."""
        cfg = self.cfg
        if self.tensor_scale is not None:
            x = S.mul(x, self.tensor_scale)
        if cfg.scale_a == "m":
            x = S.mul(x, self.row_scale[(v // 2) % 2])
        if cfg.scale_b == "n":
            key = ("scale_b", dcol)
            if key not in loaded:
                loaded[key] = _load_scale(self.scale_t + dcol * 4, self.scale_cols_left > dcol)
            x = S.mul(x, loaded[key])
        return x

    def e4m3_pair(self, lo: ir.Value, hi: ir.Value) -> ir.Value:
        """Two output values D as the i16 of their bytes satfinite(D * out_scale) (lo first); max |D| kept."""
        self.amax = S.maximum(self.amax, S.maximum(S.abs_(lo), S.abs_(hi)))
        return S.cvt_e4m3x2(S.mul(lo, self.out_scale), S.mul(hi, self.out_scale))

    def store_amax(self, lane: Any) -> None:
        """The warp's max |D| of this unit into the amax address (when not 0): one atomic max per warp. Every lane
        of the warp runs it (a shuffle reduction)."""
        m = S.warp_max(self.amax)
        S.red_max_nonneg_f32(self.p.amax_ptr, m, (lane == 0) & (self.p.amax_ptr != 0))

    def values(self, vals: Any, groups: range) -> dict[int, ir.Value]:
        """The f32 output values of the thread's output 8-column groups `groups` (tile-relative), by index."""
        cfg = self.cfg
        out: dict[int, ir.Value] = {}
        col_bias: dict = {}
        if cfg.activation == "swiglu":
            sources = swiglu_sources(4 * 2 * (groups.stop))
            for j in groups:
                for r in range(4):
                    gv, uv = sources[4 * j + r]
                    gate = self._pre(vals[gv], gv, col_bias)
                    up = self._pre(vals[uv], uv, col_bias)
                    out[4 * j + r] = em.swiglu(gate, up)
            return out
        for j in groups:
            for v in range(4 * j, 4 * j + 4):
                pre = self._pre(vals[v], v, col_bias)
                if cfg.has_aux:
                    self.pre[v] = pre
                out[v] = em.activate(cfg.activation, pre)
        return out

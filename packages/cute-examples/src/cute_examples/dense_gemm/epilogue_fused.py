"""The fused epilogue in the GEMM kernel: each thread's output values `act(alpha*acc + beta*input + bias)`.

A consumer thread holds the accumulator values of its warpgroup's 64 rows in CuTe's wgmma C layout
(`epilogue.value_coords`). Before a 64 x epi_n chunk is staged, `FusedEpilogue.values` turns the chunk's
accumulators into float32 output values in the same per-thread order, so the staging code (stmatrix pairs or
f32 stores) is the plain epilogue's:

- bias: one value per output column ("n": the thread's two columns of each 8-column group, loaded once per
  chunk and shared by its two row halves) or per output row ("m": the thread's two rows, loaded once per work
  unit), read with `ld.global.nc` from `bias_ptr + index * bias_stride`;
- input (the addend): one `ld.global.nc` per value at `input_ptr + row*sm + col*sn + batch*sl` (element strides
  as run-time parameters: broadcast modes have stride 0, so torch.addmm's broadcasting needs no copy);
- every load is predicated on its row/column lying inside the problem (out-of-range lanes read 0 and their
  values are clipped by the TMA store anyway), so partial tiles need no other care;
- alpha, beta: f32 run-time parameters; the activation is `epilogue_math`'s, SwiGLU pairs accumulator groups
  2j (gate) and 2j+1 (up) into output group j (`epilogue.swiglu_sources`).

Why per-thread global loads rather than a TMA load of the input into the staging buffer: the loads need no
extra shared memory, barrier or descriptor, they handle torch's broadcast views (stride 0, which a tensor map
cannot encode) and any dtype/major of the addend, and their bytes equal C's own store (one read of an M x N
tensor per GEMM), which the memory system serves while other CTAs run their mainloops. A TMA load would save
the address arithmetic (a few integer ops per value) at the price of a per-chunk mbarrier round trip.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cute_ir.dtypes import element_type
from cute_ir.values import as_value, to_i64
from mlir import ir
from mlir.dialects import arith, llvm

from . import epilogue_math as em
from .epilogue import swiglu_sources, value_coords
from .spec import DTYPE_BYTES, GemmConfig

__all__ = ["FusedEpilogue", "FusedParams", "ld_global_nc"]


@dataclass(frozen=True)
class FusedParams:
    """The fused kernel's run-time values (`kernel.FUSED_PARAMS`): addresses and element strides (i64 Ints),
    alpha and beta (f32 values)."""

    bias_ptr: Any
    bias_stride: Any
    input_ptr: Any
    input_stride_m: Any
    input_stride_n: Any
    input_stride_l: Any
    alpha: Any
    beta: Any


def ld_global_nc(address: Any, pred: Any, bits: int) -> ir.Value:
    """A read-only global load of `bits` (16 or 32) at the i64 address, 0 where pred (an i1/Bool) is false."""
    i32 = ir.IntegerType.get_signless(32)
    p = arith.extui(i32, as_value(pred))
    addr = as_value(address, ir.IntegerType.get_signless(64))
    if bits == 16:
        ty, reg, mov = ir.IntegerType.get_signless(16), "h", "mov.b16 $0, 0;"
    elif bits == 32:
        ty, reg, mov = ir.F32Type.get(), "f", "mov.b32 $0, 0f00000000;"
    else:
        raise ValueError(f"ld_global_nc: bits must be 16 or 32, got {bits}")
    asm = f"{{ .reg .pred p; setp.ne.b32 p, $2, 0; {mov} @p ld.global.nc.b{bits} $0, [$1]; }}"
    return llvm.inline_asm(ty, [addr, p], asm, f"={reg},l,r")


def _load_f32(cfg: GemmConfig, address: Any, pred: Any) -> ir.Value:
    """An element of C's dtype at address (0 when not pred) as f32."""
    f32 = ir.F32Type.get()
    if cfg.c_bytes == 4:
        return ld_global_nc(address, pred, 32)
    raw = ld_global_nc(address, pred, 16)
    return arith.extf(f32, arith.bitcast(element_type(cfg.c_dtype), raw))


class FusedEpilogue:
    """One consumer thread's epilogue of one work unit: the row/column origin, the row bias, the loads."""

    def __init__(self, cfg: GemmConfig, params: FusedParams, m: Any, n: Any, g: Any, warp: Any, lane: Any,
                 tile_m: Any, tile_n: Any, batch: Any) -> None:
        self.cfg, self.p = cfg, params
        self.m, self.n, self.warp, self.lane = m, n, warp, lane
        self.row0 = tile_m * cfg.tile_m + g * 64  # the warpgroup's first row
        self.col0 = tile_n * cfg.tile_n  # the tile's first accumulator column
        self.batch = batch
        self.esize = DTYPE_BYTES[cfg.c_dtype]
        self.row_bias: dict[int, ir.Value] = {}
        if cfg.bias == "m":
            for h in (0, 1):  # the thread's two rows (value v's row half h = (v // 2) % 2)
                row = self.row0 + value_coords(warp, lane, 2 * h)[0]
                self.row_bias[h] = _load_f32(cfg, self._addr(self.p.bias_ptr, row, self.p.bias_stride), row < m)

    def _addr(self, base: Any, index: Any, stride: Any) -> Any:
        return base + to_i64(index) * stride * self.esize

    def _pre(self, acc: ir.Value, v: int, col_bias: dict) -> ir.Value:
        """alpha * acc + beta * input + bias of accumulator value v (f32)."""
        cfg, p = self.cfg, self.p
        row_in, col_in = value_coords(self.warp, self.lane, v)
        row, col = self.row0 + row_in, self.col0 + col_in
        bias = None
        if cfg.bias == "m":
            bias = self.row_bias[(v // 2) % 2]
        elif cfg.bias == "n":
            key = (v // 4, v % 2)  # the thread's column: its 8-column group and the value's parity
            if key not in col_bias:
                col_bias[key] = _load_f32(cfg, self._addr(p.bias_ptr, col, p.bias_stride), col < self.n)
            bias = col_bias[key]
        addend = None
        if cfg.has_input:
            off = to_i64(row) * p.input_stride_m + to_i64(col) * p.input_stride_n + to_i64(self.batch) * \
                p.input_stride_l
            addend = _load_f32(cfg, p.input_ptr + off * self.esize, (row < self.m) & (col < self.n))
        return em.pre_activation(
            _f32(acc),
            alpha=p.alpha if cfg.has_alpha else None,
            addend=addend,
            beta=p.beta if cfg.has_input else None,
            bias=bias,
        )

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
            for r in range(4):
                v = 4 * j + r
                out[v] = em.activate(cfg.activation, self._pre(vals[v], v, col_bias))
        return out


def _f32(v: ir.Value) -> ir.Value:
    f32 = ir.F32Type.get()
    return v if v.type == f32 else arith.extf(f32, v)


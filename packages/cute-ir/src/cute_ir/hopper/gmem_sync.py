"""Global-memory flags and partial tiles between CTAs: acquire/release at GPU scope, L2-coherent vector access.

Each function emits inline PTX at the caller's insertion point on a 64-bit global address (an i64 `Int` or
value, e.g. a u64 kernel parameter plus an offset). Every statement clobbers memory (LLVM keeps the other
memory accesses on their side of it).

- `ld_acquire_gpu(addr)`: `ld.acquire.gpu.global.u32` (an i32 `Int`);
- `st_release_gpu(addr, v)`: `st.release.gpu.global.u32`: the writes this thread made (and, after a barrier,
  those of the threads that synchronised with it) are visible to whoever acquires the value;
- `red_release_gpu_add(addr, v)`: `red.release.gpu.global.add.u32`;
- `spin_until_eq(addr, v)`: poll with `ld.acquire.gpu` (and a short `nanosleep` between polls) until the flag
  equals v: one thread waits, then a barrier lets its group read what the releasing CTA wrote; after
  `MAX_POLLS` polls (far longer than any legitimate wait: seconds) it traps, so a broken protocol is a launch
  error rather than a hang;
- `ld_global_cg_v4_f32(addr)` / `st_global_cg_v4_f32(addr, vals)`: four f32 at a 16-byte aligned address,
  cached in L2 only (`.cg`: no stale L1 line of data another SM wrote).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir
from mlir.dialects import llvm

from ..values import Int, as_value

__all__ = [
    "MAX_POLLS",
    "ld_acquire_gpu",
    "ld_global_cg_v4_f32",
    "red_release_gpu_add",
    "spin_until_eq",
    "st_global_cg_v4_f32",
    "st_release_gpu",
]


MAX_POLLS = 1 << 26


def _i64(addr: Any) -> ir.Value:
    return as_value(addr, ir.IntegerType.get_signless(64))


def _i32(v: Any) -> ir.Value:
    return as_value(v, ir.IntegerType.get_signless(32))


def _void(operands: list[ir.Value], asm: str, constraints: str) -> None:
    llvm.inline_asm(None, operands, asm, constraints, has_side_effects=True)


def ld_acquire_gpu(addr: Any) -> Int:
    """`ld.acquire.gpu.global.u32` of the flag at `addr`."""
    i32 = ir.IntegerType.get_signless(32)
    return Int(llvm.inline_asm(i32, [_i64(addr)], "ld.acquire.gpu.global.u32 $0, [$1];", "=r,l,~{memory}",
                               has_side_effects=True))


def st_release_gpu(addr: Any, value: Any) -> None:
    """`st.release.gpu.global.u32 [addr], value`."""
    _void([_i64(addr), _i32(value)], "st.release.gpu.global.u32 [$0], $1;", "l,r,~{memory}")


def red_release_gpu_add(addr: Any, value: Any) -> None:
    """`red.release.gpu.global.add.u32 [addr], value`."""
    _void([_i64(addr), _i32(value)], "red.release.gpu.global.add.u32 [$0], $1;", "l,r,~{memory}")


def spin_until_eq(addr: Any, value: Any, max_polls: int = MAX_POLLS) -> None:
    """Poll the flag at `addr` with `ld.acquire.gpu` until it equals `value` (nanosleep 32 ns between polls);
    after `max_polls` polls the thread executes `trap` (a launch error instead of a hang)."""
    if not isinstance(max_polls, int) or not 1 <= max_polls < (1 << 32):
        raise ValueError(f"max_polls must be an int in [1, 2**32), got {max_polls!r}")
    asm = (
        "{ .reg .pred p; .reg .u32 f; .reg .u32 n;\n"
        "mov.u32 n, 0;\n"
        "SPIN_WAIT:\n"
        "ld.acquire.gpu.global.u32 f, [$0];\n"
        "setp.eq.u32 p, f, $1;\n"
        "@p bra.uni SPIN_DONE;\n"
        "nanosleep.u32 32;\n"
        "add.u32 n, n, 1;\n"
        f"setp.ge.u32 p, n, {max_polls};\n"
        "@p trap;\n"
        "bra.uni SPIN_WAIT;\n"
        "SPIN_DONE:\n"
        "}"
    )
    _void([_i64(addr), _i32(value)], asm, "l,r,~{memory}")


def ld_global_cg_v4_f32(addr: Any) -> list[ir.Value]:
    """Four f32 at the 16-byte aligned global `addr` (`ld.global.cg.v4.f32`)."""
    f32 = ir.F32Type.get()
    ty = llvm.StructType.get_literal([f32] * 4)
    res = llvm.inline_asm(ty, [_i64(addr)], "ld.global.cg.v4.f32 {$0, $1, $2, $3}, [$4];",
                          "=f,=f,=f,=f,l,~{memory}", has_side_effects=True)
    return [llvm.extractvalue(f32, res, [i]) for i in range(4)]


def st_global_cg_v4_f32(addr: Any, values: Sequence[ir.Value]) -> None:
    """Store four f32 at the 16-byte aligned global `addr` (`st.global.cg.v4.f32`)."""
    if len(values) != 4:
        raise ValueError(f"st_global_cg_v4_f32 stores 4 values, got {len(values)}")
    _void([_i64(addr), *values], "st.global.cg.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f,~{memory}")

"""`setmaxnreg`: per-warpgroup register reallocation for warp-specialized kernels (sm_90a).

A warp-specialized kernel is compiled with a register cap at entry (`.maxntid T` plus `.minnctapersm 1`,
so ptxas caps registers at 65536 / T); then the producer warpgroup gives registers back
(`setmaxnreg.dec`) and the consumer warpgroups take them (`setmaxnreg.inc`). Each role must be one branch
of a single if/else on the warpgroup index, executed by all threads of the warpgroup (`.sync.aligned`).
Counts are multiples of 8 in [24, 256]; the totals over the CTA must fit the SM's 64K registers:
`128 * (producer + consumers * consumer_count) <= 65536`.
"""

from __future__ import annotations

from mlir.dialects import nvvm

__all__ = ["MAX_REGS", "MIN_REGS", "check_register_split", "setmaxnreg_dec", "setmaxnreg_inc"]

MIN_REGS = 24
MAX_REGS = 256
_REGISTER_FILE = 65536


def _check(count: int) -> None:
    if not MIN_REGS <= count <= MAX_REGS or count % 8:
        raise ValueError(f"setmaxnreg count must be a multiple of 8 in [{MIN_REGS}, {MAX_REGS}], got {count}")


def setmaxnreg_inc(count: int) -> None:
    """`setmaxnreg.inc.sync.aligned.u32 count`: raise this warpgroup's per-thread register limit."""
    _check(count)
    nvvm.setmaxregister(count, nvvm.SetMaxRegisterAction.increase)


def setmaxnreg_dec(count: int) -> None:
    """`setmaxnreg.dec.sync.aligned.u32 count`: lower this warpgroup's per-thread register limit."""
    _check(count)
    nvvm.setmaxregister(count, nvvm.SetMaxRegisterAction.decrease)


def check_register_split(producer: int, consumer: int, num_consumer_warpgroups: int) -> None:
    """Raise ValueError unless the producer and the consumer warpgroups fit the 64K registers."""
    _check(producer)
    _check(consumer)
    total = 128 * (producer + consumer * num_consumer_warpgroups)
    if total > _REGISTER_FILE:
        raise ValueError(
            f"register split {producer} + {num_consumer_warpgroups} x {consumer} per thread needs {total} "
            f"registers > {_REGISTER_FILE}"
        )

"""Benchmark: ``python -m cute_layout.bench`` times the algebra's first and repeated calls against pycute.

FIRST call: every memo cache is cleared and fresh operands are built before each timed call, so it measures
the full computation.  REPEATED call: the same operands again (served by the memo caches where the operation
is memoized).  Times are per call in microseconds, the best of several timeit repeats.  NVIDIA's pycute is
timed live when importable (it ships in the ``nvidia-cutlass`` wheel, or put its ``pycute`` folder on
PYTHONPATH); otherwise pycute reference figures kept in `cases` are printed, labelled as such.  The RANDOM MIX
rows time every operation's first call over a seeded mix of random operands (`random_operands`), against
pycute on the same operands.  Targets: first call at least 2x faster than pycute, repeated call at most 1 us.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Case", "cases", "measure", "main"]

FIRST_CALL_SPEEDUP_TARGET = 2.0
REPEATED_CALL_TARGET_US = 1.0


@dataclass(frozen=True)
class Case:
    """One benchmarked operation: how to build it here and in pycute, and pycute's quoted figure."""

    name: str
    build: Callable[[Any], tuple[Callable[..., Any], tuple[Any, ...]]]
    reference_us: tuple[float, float] | None  # pycute's quoted range, low-high, or None when not quoted
    in_pycute: bool = True


def _composition(m: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    deep = m.Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))
    return m.composition, (m.Layout((8, 8), (8, 1)), deep)


def _logical_divide(m: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return m.logical_divide, (m.Layout((4096, 4096), (4096, 1)), (m.Layout(16, 1), m.Layout(128, 1)))


def _zipped_divide(m: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return m.zipped_divide, (m.Layout((4096, 4096), (4096, 1)), (m.Layout(16, 1), m.Layout(128, 1)))


def _complement(m: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return m.complement, (m.Layout((4, 8), (1, 16)), 1024)


def _make_layout_tv(m: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return m.make_layout_tv, (m.Layout((4, 32), (32, 1)), m.Layout((4, 4), (4, 1)))


def _deep_call(m: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return m.Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))), (37,)


def cases() -> list[Case]:
    """Return the benchmarked operations with fixed operands."""
    return [
        Case("composition((8,8):(8,1), ((2,2,2),(2,2,2)):((1,16,4),(8,2,32)))", _composition, (46.0, 66.0)),
        Case("logical_divide((4096,4096):(4096,1), (16:1,128:1))", _logical_divide, (31.0, 46.0)),
        Case("zipped_divide((4096,4096):(4096,1), (16:1,128:1))", _zipped_divide, None),
        Case("complement((4,8):(1,16), 1024)", _complement, (9.0, 9.0)),
        Case("make_layout_tv((4,32):(32,1), (4,4):(4,1))", _make_layout_tv, None, in_pycute=False),
        Case("((2,2,2),(2,2,2)):((1,16,4),(8,2,32)) called with 37", _deep_call, (9.0, 9.0)),
    ]


def _clear_caches() -> None:
    """Empty the package's memo caches."""
    from . import _memo

    _memo.clear_caches()


def measure(
    module: Any, case: Case, first_samples: int, number: int, repeat: int, clear: bool
) -> tuple[float, float]:
    """Return (first-call us, repeated-call us) of a case: best single fresh call, best of ``repeat`` runs."""
    holder: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def setup() -> None:
        if clear:
            _clear_caches()
        holder[:] = [case.build(module)]

    def first() -> None:
        fn, args = holder[0]
        fn(*args)

    first_runs = timeit.Timer(first, setup).repeat(repeat=max(first_samples, 1), number=1)
    fn, args = case.build(module)
    fn(*args)

    def again() -> None:
        fn(*args)

    repeated_runs = timeit.Timer(again).repeat(repeat=repeat, number=number)
    return min(first_runs) * 1e6, min(repeated_runs) * 1e6 / number


def _load_pycute() -> Any | None:
    """Return NVIDIA's pycute when importable (it ships in the nvidia-cutlass wheel), else None."""
    try:
        import pycute  # type: ignore[import-not-found]
    except ImportError:
        return None
    needed = ("Layout", "composition", "logical_divide", "zipped_divide", "complement")
    return pycute if all(hasattr(pycute, n) for n in needed) else None


#: Operations timed on the seeded random mix (issue 19), with how many operands each takes.
MIX_OPERATIONS = (
    ("coalesce", 1), ("composition", 2), ("complement", 1), ("right_inverse", 1), ("left_inverse", 1),
    ("logical_divide", 2), ("logical_product", 2), ("zipped_divide", 2),
)


def random_operands(seed: int, count: int) -> list[tuple[tuple, tuple]]:
    """`count` distinct (shape, stride) pairs from random.Random(seed): ranks 1..3, nesting depth <= 2,
    shape leaves 1..8, stride leaves 0..32 (as issue 19's differential check drew them)."""
    import random

    rng = random.Random(seed)
    out: list[tuple[tuple, tuple]] = []
    seen: set = set()
    while len(out) < count:
        shape, stride = [], []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.3:
                k = rng.randint(1, 2)
                shape.append(tuple(rng.randint(1, 8) for _ in range(k)))
                stride.append(tuple(rng.randint(0, 32) for _ in range(k)))
            else:
                shape.append(rng.randint(1, 8))
                stride.append(rng.randint(0, 32))
        pair = (tuple(shape), tuple(stride))
        if pair not in seen:
            seen.add(pair)
            out.append(pair)
    return out


def _succeeds(module: Any, name: str, arity: int, pairs: list) -> list[bool]:
    """Which operand pairs `module`'s operation accepts (a dry run on fresh Layouts)."""
    fn = getattr(module, name)
    lay = module.Layout
    out = []
    for a, b in pairs:
        try:
            fn(lay(*a)) if arity == 1 else fn(lay(*a), lay(*b))
        except Exception:  # noqa: BLE001 - rejected (or failing) operands are left out of the timing
            out.append(False)
        else:
            out.append(True)
    return out


def mix_pairs(operands: list) -> list[tuple[tuple, tuple]]:
    """The (first, second) operand pairs of the mix: each layout with another, fixed pseudo-random, one."""
    return [(operands[i], operands[(i * 7 + 3) % len(operands)]) for i in range(len(operands))]


def measure_mix(module: Any, name: str, arity: int, pairs: list, clear: bool) -> float:
    """Per-call us of `name` over `pairs`: one timed loop that builds each call's Layouts from tuples and
    calls the operation once; caches are cleared first and the operands are distinct, so no call hits a
    cache; the garbage collector is off during the loop, as in timeit."""
    import gc

    fn = getattr(module, name)
    lay = module.Layout
    if clear:
        _clear_caches()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as timeit does: a collection in the timed loop would land on one side at random
    try:
        return _timed_loop(fn, lay, arity, pairs)
    finally:
        if gc_was_enabled:
            gc.enable()


def _timed_loop(fn: Any, lay: Any, arity: int, pairs: list) -> float:
    """Per-call us of one loop over `pairs` (the Layouts built inside the loop)."""
    import time

    if arity == 1:
        t0 = time.perf_counter()
        for a, _ in pairs:
            fn(lay(*a))
        t1 = time.perf_counter()
    else:
        t0 = time.perf_counter()
        for a, b in pairs:
            fn(lay(*a), lay(*b))
        t1 = time.perf_counter()
    return (t1 - t0) / max(len(pairs), 1) * 1e6


def _mix_rows(pycute: Any, seed: int, count: int, repeat: int) -> int:
    """Print the random-mix rows (cute_layout vs pycute first calls); return the number of missed targets."""
    import cute_layout

    operands = random_operands(seed, count)
    print(f"\nfirst calls on a seeded random mix: {count} distinct layouts from random.Random({seed}) "
          "(ranks 1..3, depth <= 2, shapes 1..8, strides 0..32), each paired with another; timed on the pairs "
          "both libraries accept, Layouts built from tuples inside the timed loop, caches cleared; best of",
          repeat, "runs")
    print(f"{'operation':<18} {'pycute us':>10} {'cute_layout us':>15} {'ratio':>7} {'pairs timed':>12}")
    missed = 0
    for name, arity in MIX_OPERATIONS:
        pairs = mix_pairs(operands)
        ok = _succeeds(cute_layout, name, arity, pairs)
        if pycute is not None:
            ok = [x and y for x, y in zip(ok, _succeeds(pycute, name, arity, pairs))]  # noqa: B905
        pairs = [p for p, keep in zip(pairs, ok) if keep]  # noqa: B905
        if pycute is None:
            ours = min(measure_mix(cute_layout, name, arity, pairs, True) for _ in range(repeat))
            print(f"{name:<18} {'n/a':>10} {ours:>15.2f} {'n/a':>7} {len(pairs):>12}")
            continue
        ours = ref = float("inf")
        for _ in range(repeat):  # alternating runs, so that a busy moment of the machine hits both sides
            ours = min(ours, measure_mix(cute_layout, name, arity, pairs, True))
            ref = min(ref, measure_mix(pycute, name, arity, pairs, False))
        ratio = ref / ours
        ok_ = ratio >= FIRST_CALL_SPEEDUP_TARGET
        missed += not ok_
        print(f"{name:<18} {ref:>10.2f} {ours:>15.2f} {ratio:>6.2f}x {len(pairs):>12}  " + ("ok" if ok_ else "MISSED"))
    return missed


def _fmt(x: float | None, suffix: str = "") -> str:
    return "n/a" if x is None else f"{x:.2f}{suffix}"


def parser_() -> argparse.ArgumentParser:
    """Return the benchmark's argument parser."""
    from .cli_contract import ContractParser, positive_int

    parser = ContractParser(prog="python -m cute_layout.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=positive_int, default=2000,
                        help="calls per timeit run of the repeated call (default: 2000), e.g. --number 500")
    parser.add_argument("--repeat", type=positive_int, default=7,
                        help="timed runs; the best is reported (default: 7), e.g. --repeat 3")
    parser.add_argument("--quick", action="store_true", default=False,
                        help="one call per run, one run, a 20-layout mix: proves it runs (default: off), e.g. --quick")
    parser.add_argument("--seed", type=int, default=19,
                        help="seed of the random operand mix (default: 19), e.g. --seed 7")
    parser.add_argument("--mix", type=positive_int, default=2000,
                        help="number of distinct random layouts in the mix (default: 2000), e.g. --mix 500")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; return the exit status."""
    parser = parser_()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, its one line already printed)
        return int(exc.code or 0)
    number, repeat = (1, 1) if args.quick else (args.number, args.repeat)
    # the first-call timing takes the best of this many single calls, each on fresh operands and caches
    first_samples = 1 if args.quick else 20 * repeat

    import cute_layout

    pycute = _load_pycute()
    ref_label = "pycute live" if pycute is not None else "pycute (quoted)"
    print(f"cute_layout {cute_layout.__version__} benchmark: per call, microseconds, best of {repeat} runs")
    if pycute is None:
        print("NVIDIA pycute is not importable: its column shows reference figures kept in this module "
              "(install nvidia-cutlass, which ships pycute, to time it live)")
    header = f"{'operation':<66} {ref_label:>15} {'first':>9} {'ratio':>7} {'repeated':>9}  targets"
    print(header)
    print("-" * len(header))
    failures = 0
    for case in cases():
        first, repeated = measure(cute_layout, case, first_samples, number, repeat, clear=True)
        ref: float | None
        if pycute is not None and case.in_pycute:
            ref, _ = measure(pycute, case, first_samples, 1, 1, clear=False)
            ref_text = _fmt(ref)
        elif case.reference_us is not None:
            lo, hi = case.reference_us
            ref = lo
            ref_text = f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"
            ref_text = "~" + ref_text if lo == hi else ref_text
        else:
            ref, ref_text = None, "n/a"
        ratio = None if ref is None else ref / first
        marks = []
        if ratio is not None:
            ok = ratio >= FIRST_CALL_SPEEDUP_TARGET
            marks.append("first " + ("ok" if ok else "MISSED"))
            failures += not ok
        ok = repeated <= REPEATED_CALL_TARGET_US
        marks.append("repeated " + ("ok" if ok else "MISSED"))
        failures += not ok
        print(f"{case.name:<66} {ref_text:>15} {_fmt(first):>9} {_fmt(ratio, 'x'):>7} {_fmt(repeated):>9}  "
              + ", ".join(marks))
    print(f"ratio = pycute / first call (quoted ranges use their low end); targets: ratio >= "
          f"{FIRST_CALL_SPEEDUP_TARGET:g}x, repeated <= {REPEATED_CALL_TARGET_US:g} us; {failures} missed")
    count = 20 if args.quick else args.mix
    missed = _mix_rows(pycute, args.seed, count, 1 if args.quick else repeat)
    print(f"random mix: target ratio >= {FIRST_CALL_SPEEDUP_TARGET:g}x on every operation; {missed} missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Structured control flow at the current insertion point, folding build-time conditions.

    if_(cond, then_body, else_body=None)            # scf.if; a Python bool calls one body directly
    vals = if_values(cond, types, then_fn, else_fn)  # scf.if yielding values (then_fn/else_fn return lists)
    for_(start, stop, step, body)                     # scf.for over an Int induction variable
    for_(start, stop, step, body, init=[v0, ...])     # with loop-carried values; body(iv, *carried) -> list
    while_(cond, body=None, init=[v0, ...])           # scf.while: cond(*carried) -> Bool; body(*carried) -> list

Conditions are `cute_ir.values.Bool` (or Python bools); loop bounds are Ints or Python ints. Carried values
are Ints, Bools or raw ir.Values (an accumulator struct) and come back wrapped as they went in. Kernels use
these instead of `scf` ops.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from .values import Bool, Int, as_value

__all__ = ["for_", "if_", "if_values", "while_"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


def _cond_value(cond: object, what: str) -> ir.Value:
    if isinstance(cond, Bool):
        return cond.value
    if isinstance(cond, ir.Value):
        return Bool(cond).value
    raise TypeError(
        f"{what}: cond must be a Bool, an i1 ir.Value or a Python bool, got {type(cond).__name__}"
    )


def if_(
    cond: Bool | bool, then_body: Callable[[], None], else_body: Callable[[], None] | None = None
) -> None:
    """Emit `scf.if cond { then_body() } else { else_body() }` (a Python bool runs one body inline)."""
    if type(cond) is bool:
        if cond:
            then_body()
        elif else_body is not None:
            else_body()
        return
    op = scf.IfOp(_cond_value(cond, "if_"), [], has_else=else_body is not None)
    with ir.InsertionPoint(op.then_block):
        then_body()
        scf.YieldOp([])
    if else_body is not None:
        with ir.InsertionPoint(op.else_block):
            else_body()
            scf.YieldOp([])


def _values(xs: Sequence[object]) -> list[ir.Value]:
    return [x.value if isinstance(x, (Int, Bool)) else x for x in xs]


def _check_types(what: str, got: Sequence[ir.Value], init: Sequence[ir.Value]) -> None:
    """A loop body must return its carried values with the types they went in with."""
    if [v.type for v in got] != [v.type for v in init]:
        raise TypeError(
            f"{what}: body returns {[str(v.type) for v in got]}, the carried values are "
            f"{[str(v.type) for v in init]}"
        )


def _like(vals: Sequence[ir.Value], protos: Sequence[object]) -> list[object]:
    """`vals` wrapped as the corresponding `protos` are (Int, Bool or raw ir.Value)."""
    return [
        Int(v) if isinstance(p, Int) else Bool(v) if isinstance(p, Bool) else v
        for v, p in zip(vals, protos, strict=True)
    ]


def if_values(
    cond: Bool | bool,
    result_types: Sequence[ir.Type],
    then_fn: Callable[[], Sequence[object]],
    else_fn: Callable[[], Sequence[object]],
) -> list[object]:
    """`scf.if` yielding `result_types`: then_fn/else_fn return lists of ir.Value/Int/Bool (wrapped alike)."""
    if type(cond) is bool:
        return list(then_fn() if cond else else_fn())
    types = list(result_types)
    op = scf.IfOp(_cond_value(cond, "if_values"), types, has_else=True)
    protos: list[object] = []
    for block, fn in ((op.then_block, then_fn), (op.else_block, else_fn)):
        with ir.InsertionPoint(block):
            res = list(fn())
            vals = _values(res)
            if [v.type for v in vals] != types:
                raise TypeError(
                    f"if_values: a branch yields {[str(v.type) for v in vals]}, expected "
                    f"{[str(t) for t in types]}"
                )
            scf.YieldOp(vals)
            if not protos:
                protos = res
    return [
        Int(r) if isinstance(p, Int) else Bool(r) if isinstance(p, Bool) else r
        for r, p in zip(op.results, protos, strict=True)
    ]


def for_(
    start: Int | int,
    stop: Int | int,
    step: Int | int,
    body: Callable[..., Sequence[object] | None],
    init: Sequence[object] = (),
    *,
    bits: int | None = None,
) -> list[object]:
    """Emit `scf.for iv = start to stop step step` calling body(iv: Int, *carried); return the final carried.

    The induction variable has the type of the first Int bound, else i32 (`bits=32`), i64 (`bits=64`), index.
    """
    ints = [x for x in (start, stop, step) if isinstance(x, Int)]
    if ints:
        ty = ints[0].type
    elif bits in (32, 64):
        ty = ir.IntegerType.get_signless(bits)
    elif bits is None:
        ty = ir.IndexType.get()
    else:
        raise ValueError(f"for_: bits must be 32, 64 or None, got {bits!r}")
    lb, ub, st = (as_value(x, ty) for x in (start, stop, step))
    init_vals = _values(list(init))
    op = scf.ForOp(lb, ub, st, init_vals)
    with ir.InsertionPoint(op.body):
        carried = [
            Int(a) if isinstance(p, Int) else Bool(a) if isinstance(p, Bool) else a
            for a, p in zip(op.inner_iter_args, init, strict=True)
        ]
        res = body(Int(op.induction_variable), *carried)
        res_vals = _values(list(res or []))
        if len(res_vals) != len(init_vals):
            raise ValueError(f"for_: body must return {len(init_vals)} carried values, got {len(res_vals)}")
        _check_types("for_", res_vals, init_vals)
        scf.YieldOp(res_vals)
    return [
        Int(r) if isinstance(p, Int) else Bool(r) if isinstance(p, Bool) else r
        for r, p in zip(op.results, init, strict=True)
    ]


def while_(
    cond: Callable[..., Bool],
    body: Callable[..., Sequence[object] | None] | None = None,
    init: Sequence[object] = (),
) -> list[object]:
    """Emit `scf.while`: loop while `cond(*carried)` holds, `body(*carried)` returning the next carried values.

    Without a body (and carried values) it is a spin loop whose work is in `cond` (e.g. a try-wait).
    Returns the carried values the loop exits with.
    """
    init_vals = _values(list(init))
    types = [v.type for v in init_vals]
    loop = scf.WhileOp(types, init_vals)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        c = cond(*_like(list(before.arguments), init))
        scf.condition(_cond_value(c, "while_"), list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        res = _values(list(body(*_like(list(after.arguments), init)) or [])) if body is not None else []
        if len(res) != len(init_vals):
            raise ValueError(f"while_: body must return {len(init_vals)} carried values, got {len(res)}")
        _check_types("while_", res, init_vals)
        scf.YieldOp(res)
    return _like(list(loop.results), init)

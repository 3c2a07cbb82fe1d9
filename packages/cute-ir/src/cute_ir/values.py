"""SSA-backed integers and booleans that cute_layout's functions accept as leaves.

`Int` wraps an `ir.Value` of type `index`, `i32` or `i64`; `Bool` wraps an `i1`. Both emit `arith` ops at
`ir.InsertionPoint.current` (with `ir.Location.current`), so they work inside any caller's function:

    with ir.InsertionPoint(block):
        t = Int(tid_value)                 # i32
        off = t * 4 + 128                  # arith.muli / arith.addi, Python ints folded
        ok = (t < 100) & (off >= 0)        # Bool (i1)

Semantics (documented contract):
- Values are signed two's-complement integers of their width. `+ - *` carry the `nsw` flag: overflow is
  undefined, which is why tensors that can exceed 2**31 elements compute offsets in i64 (see `offset_type`).
- `//` and `%` assume a non-negative dividend and a positive divisor, as CuTe's coordinates, indices and
  shapes are (strides may be negative, but they are only added and multiplied): they emit `arith.divui` /
  `arith.remui`, which are cheaper on the GPU than the signed forms. `>>` is a logical shift.
- Folding at build time: `x + 0 -> x`, `x * 1 -> x`, `x * 0 -> 0`, `x // 1 -> x`, `x % 1 -> 0`; operations
  on two Python ints never reach this module (Python computes them), so static parts of a layout stay
  Python ints and only dynamic parts emit IR.
- Mixed widths widen to the wider operand (`index` counts as 64 bits; `index` with `i64` gives `i64`) by sign
  extension; a Python int that does not fit the SSA operand's type widens that operand to i64 (no truncation).
- Comparisons return `Bool` (signed predicates). `bool(Int)` / `bool(Bool)` raise `TypeError`: a run-time
  value has no build-time truth value, so cute_layout raises where it would have to branch on one.

- Divisibility: an Int carries `divby`, a known divisor (1 unless declared with `assume_divisible` or
  derived): `+`/`-` give the gcd, `*` the product, `<<` scales it, casts keep it. Vectorized copies use it to
  prove alignment (as CuTeDSL's `?{div=16}`).

Module-level helpers: `const`, `as_value`, `wrap`, `select`, `min_`, `max_`, `to_i32`, `to_i64`, `to_index`,
`offset_type`, `is_dynamic`.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

__all__ = [
    "Bool",
    "Int",
    "IntLike",
    "as_value",
    "const",
    "is_dynamic",
    "max_",
    "min_",
    "offset_type",
    "select",
    "to_i32",
    "to_i64",
    "to_index",
    "wrap",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    IntLike: TypeAlias = "int | Int"
    BoolLike: TypeAlias = "bool | Bool"
else:
    IntLike = object
    BoolLike = object

_NSW = None


def _nsw() -> object:
    """The `nsw` overflow-flags attribute value (created once per process)."""
    global _NSW
    if _NSW is None:
        _NSW = arith.IntegerOverflowFlags.nsw
    return _NSW


def _width(t: ir.Type) -> int:
    """Bit width of an integer or index type (index counts as 64)."""
    if isinstance(t, ir.IndexType):
        return 64
    if isinstance(t, ir.IntegerType):
        return t.width
    raise TypeError(f"expected an index or integer type, got {t}")


def _fits(x: int, t: ir.Type) -> bool:
    """Whether the Python int x is representable as a signed value of type t."""
    w = _width(t)
    return -(1 << (w - 1)) <= x < (1 << (w - 1))


def _gcd(a: int, b: int) -> int:
    import math

    return max(1, math.gcd(a, b))


def _lcm(a: int, b: int) -> int:
    import math

    return a * b // math.gcd(a, b)


def _div_of(x: object) -> int:
    """Known divisor of an operand: |x| for a Python int (0 divides by anything), divby for an Int."""
    if isinstance(x, Int):
        return x.divby
    return abs(x) if isinstance(x, int) else 1


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def const(x: int, ty: ir.Type) -> ir.Value:
    """An `arith.constant` of the integer or index type `ty` holding the Python int x.

    x is a signed value of the type's width, or for an integer type a bit pattern in [2**(w-1), 2**w)
    (stored two's-complement: descriptor halves, masks); anything else is a ValueError.
    """
    if ty is None:
        raise TypeError("const: ty must be an MLIR integer or index type, got None")
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"const: x must be a Python int, got {x!r}")
    if not _fits(x, ty):
        w = _width(ty)
        if not (isinstance(ty, ir.IntegerType) and 0 <= x < (1 << w)):
            raise ValueError(f"const: {x} does not fit in {ty}")
        x -= 1 << w
    return arith.constant(ty, x)


def _cast_value(v: ir.Value, to: ir.Type) -> ir.Value:
    """Sign-extend, truncate or index-cast an integer SSA value to the type `to`."""
    src = v.type
    if src == to:
        return v
    if isinstance(src, ir.IndexType) or isinstance(to, ir.IndexType):
        return arith.index_cast(to, v)
    if src.width < to.width:
        return arith.extsi(to, v)
    return arith.trunci(to, v)


def _common(a: Int, b: Int) -> tuple[ir.Value, ir.Value, ir.Type]:
    """Both operands widened to the wider of their types."""
    ta, tb = a.value.type, b.value.type
    if ta == tb:
        return a.value, b.value, ta
    wa, wb = _width(ta), _width(tb)
    if wa == wb:  # index vs i64: i64
        t = ta if isinstance(tb, ir.IndexType) else tb
    else:
        t = ta if wa > wb else tb
    return _cast_value(a.value, t), _cast_value(b.value, t), t


def _operands(a: Int, b: object, op: str) -> tuple[ir.Value, ir.Value, ir.Type] | None:
    """SSA operands for `a op b` (b an Int or Python int); None when b is not an integer."""
    if isinstance(b, Int):
        return _common(a, b)
    if isinstance(b, bool) or not isinstance(b, int):
        return None
    t = a.value.type
    if not _fits(b, t):
        t = _i64()
        if not _fits(b, t):
            raise ValueError(f"Int {op}: constant {b} does not fit in a 64-bit signed integer")
        return _cast_value(a.value, t), const(b, t), t
    return a.value, const(b, t), t


class Int:
    """An SSA integer (index/i32/i64) usable as a cute_layout leaf; see the module docstring for semantics."""

    __cute_int__ = True
    __slots__ = ("divby", "value")

    def __init__(self, value: ir.Value, divby: int = 1) -> None:
        if isinstance(value, Int):
            divby = _lcm(divby, value.divby)
            value = value.value
        if not isinstance(value, ir.Value):
            raise TypeError(f"Int: value must be an ir.Value, got {type(value).__name__}")
        t = value.type
        if not (
            isinstance(t, ir.IndexType) or (isinstance(t, ir.IntegerType) and t.width in (8, 16, 32, 64))
        ):
            raise TypeError(f"Int: value must have type index, i8, i16, i32 or i64, got {t}")
        if isinstance(divby, bool) or not isinstance(divby, int) or divby < 1:
            raise ValueError(f"Int: divby must be a positive int, got {divby!r}")
        self.value = value
        self.divby = divby

    def assume_divisible(self, k: int) -> Int:
        """The same value, known (the caller guarantees it) to be a multiple of k (e.g. an aligned stride)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"assume_divisible: k must be a positive int, got {k!r}")
        return Int(self.value, _lcm(self.divby, k))

    # --- introspection -------------------------------------------------------------------------------
    @property
    def type(self) -> ir.Type:
        """The MLIR type of the wrapped value."""
        return self.value.type

    @property
    def width(self) -> int:
        """Bit width (index counts as 64)."""
        return _width(self.value.type)

    def __repr__(self) -> str:
        d = f", divby={self.divby}" if self.divby > 1 else ""
        return f"Int(<{self.value.type}>{d})"

    def __bool__(self) -> bool:
        raise TypeError("Int: a run-time value has no build-time truth value (use a Bool with select or cute_ir.if_)")

    def __index__(self) -> int:
        raise TypeError("Int: a run-time value cannot be used where a static Python int is required")

    __hash__ = object.__hash__

    # --- casts ---------------------------------------------------------------------------------------
    def cast(self, ty: ir.Type) -> Int:
        """This value sign-extended, truncated or index-cast to `ty` (divisibility kept)."""
        return Int(_cast_value(self.value, ty), self.divby)

    # --- arithmetic ----------------------------------------------------------------------------------
    def __add__(self, other: IntLike) -> IntLike:
        if type(other) is int and other == 0:
            return self
        ops = _operands(self, other, "+")
        if ops is None:
            return NotImplemented
        return Int(arith.addi(ops[0], ops[1], overflow_flags=_nsw()), _gcd(self.divby, _div_of(other)))

    def __radd__(self, other: IntLike) -> IntLike:
        return self.__add__(other)

    def __sub__(self, other: IntLike) -> IntLike:
        if type(other) is int and other == 0:
            return self
        ops = _operands(self, other, "-")
        if ops is None:
            return NotImplemented
        return Int(arith.subi(ops[0], ops[1], overflow_flags=_nsw()), _gcd(self.divby, _div_of(other)))

    def __rsub__(self, other: IntLike) -> IntLike:
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented
        t = self.value.type if _fits(other, self.value.type) else _i64()
        v = arith.subi(const(other, t), _cast_value(self.value, t), overflow_flags=_nsw())
        return Int(v, _gcd(self.divby, _div_of(other)))

    def __neg__(self) -> Int:
        return 0 - self

    def __pos__(self) -> Int:
        return self

    def __mul__(self, other: IntLike) -> IntLike:
        if type(other) is int:
            if other == 1:
                return self
            if other == 0:
                return 0
            if other == -1:
                return -self
        ops = _operands(self, other, "*")
        if ops is None:
            return NotImplemented
        return Int(arith.muli(ops[0], ops[1], overflow_flags=_nsw()), self.divby * _div_of(other))

    def __rmul__(self, other: IntLike) -> IntLike:
        return self.__mul__(other)

    def __floordiv__(self, other: IntLike) -> IntLike:
        if type(other) is int:
            if other == 1:
                return self
            if other <= 0:
                raise ZeroDivisionError(f"Int //: divisor must be positive, got {other}")
        ops = _operands(self, other, "//")
        if ops is None:
            return NotImplemented
        return Int(arith.divui(ops[0], ops[1]))

    def __rfloordiv__(self, other: IntLike) -> IntLike:
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented
        if other == 0:
            return 0
        if other < 0:
            raise ValueError(f"Int //: dividend must be non-negative, got {other}")
        a, b, _ = _operands(self, other, "//")
        return Int(arith.divui(b, a))

    def __mod__(self, other: IntLike) -> IntLike:
        if type(other) is int:
            if other == 1:
                return 0
            if other <= 0:
                raise ZeroDivisionError(f"Int %: divisor must be positive, got {other}")
        ops = _operands(self, other, "%")
        if ops is None:
            return NotImplemented
        return Int(arith.remui(ops[0], ops[1]))

    def __rmod__(self, other: IntLike) -> IntLike:
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented
        if other == 0:
            return 0
        if other < 0:
            raise ValueError(f"Int %: dividend must be non-negative, got {other}")
        a, b, _ = _operands(self, other, "%")
        return Int(arith.remui(b, a))

    # --- bitwise (for swizzles) ------------------------------------------------------------------------
    def __and__(self, other: IntLike) -> IntLike:
        if type(other) is int and other == 0:
            return 0
        ops = _operands(self, other, "&")
        if ops is None:
            return NotImplemented
        return Int(arith.andi(ops[0], ops[1]))

    __rand__ = __and__

    def __or__(self, other: IntLike) -> IntLike:
        if type(other) is int and other == 0:
            return self
        ops = _operands(self, other, "|")
        if ops is None:
            return NotImplemented
        return Int(arith.ori(ops[0], ops[1]))

    __ror__ = __or__

    def __xor__(self, other: IntLike) -> IntLike:
        if type(other) is int and other == 0:
            return self
        ops = _operands(self, other, "^")
        if ops is None:
            return NotImplemented
        return Int(arith.xori(ops[0], ops[1]))

    __rxor__ = __xor__

    def __lshift__(self, other: IntLike) -> IntLike:
        if type(other) is int and other == 0:
            return self
        ops = _operands(self, other, "<<")
        if ops is None:
            return NotImplemented
        d = self.divby << other if type(other) is int and 0 <= other < 64 else self.divby
        return Int(arith.shli(ops[0], ops[1]), d)

    def __rshift__(self, other: IntLike) -> IntLike:
        if type(other) is int and other == 0:
            return self
        ops = _operands(self, other, ">>")
        if ops is None:
            return NotImplemented
        return Int(arith.shrui(ops[0], ops[1]))

    # --- comparisons ---------------------------------------------------------------------------------
    def _cmp(self, other: object, pred: object, sym: str) -> Bool:
        ops = _operands(self, other, sym)
        if ops is None:
            return NotImplemented
        return Bool(arith.cmpi(pred, ops[0], ops[1]))

    def __lt__(self, other: IntLike) -> Bool:
        return self._cmp(other, arith.CmpIPredicate.slt, "<")

    def __le__(self, other: IntLike) -> Bool:
        return self._cmp(other, arith.CmpIPredicate.sle, "<=")

    def __gt__(self, other: IntLike) -> Bool:
        return self._cmp(other, arith.CmpIPredicate.sgt, ">")

    def __ge__(self, other: IntLike) -> Bool:
        return self._cmp(other, arith.CmpIPredicate.sge, ">=")

    def __eq__(self, other: object) -> Bool:  # type: ignore[override]
        return self._cmp(other, arith.CmpIPredicate.eq, "==")

    def __ne__(self, other: object) -> Bool:  # type: ignore[override]
        return self._cmp(other, arith.CmpIPredicate.ne, "!=")


class Bool:
    """An SSA boolean (i1); `&`, `|`, `^`, `~` fold Python bools at build time."""

    __slots__ = ("value",)

    def __init__(self, value: ir.Value) -> None:
        if isinstance(value, Bool):
            value = value.value
        if not isinstance(value, ir.Value):
            raise TypeError(f"Bool: value must be an ir.Value, got {type(value).__name__}")
        t = value.type
        if not (isinstance(t, ir.IntegerType) and t.width == 1):
            raise TypeError(f"Bool: value must have type i1, got {t}")
        self.value = value

    def __repr__(self) -> str:
        return "Bool(<i1>)"

    def __bool__(self) -> bool:
        raise TypeError("Bool: a run-time value has no build-time truth value (use select or cute_ir.if_)")

    __hash__ = object.__hash__

    def __and__(self, other: BoolLike) -> BoolLike:
        if type(other) is bool:
            return self if other else False
        if not isinstance(other, Bool):
            return NotImplemented
        return Bool(arith.andi(self.value, other.value))

    __rand__ = __and__

    def __or__(self, other: BoolLike) -> BoolLike:
        if type(other) is bool:
            return True if other else self
        if not isinstance(other, Bool):
            return NotImplemented
        return Bool(arith.ori(self.value, other.value))

    __ror__ = __or__

    def __xor__(self, other: BoolLike) -> BoolLike:
        if type(other) is bool:
            return ~self if other else self
        if not isinstance(other, Bool):
            return NotImplemented
        return Bool(arith.xori(self.value, other.value))

    __rxor__ = __xor__

    def __invert__(self) -> Bool:
        one = arith.constant(ir.IntegerType.get_signless(1), 1)
        return Bool(arith.xori(self.value, one))


# --- helpers ---------------------------------------------------------------------------------------------


def is_dynamic(x: object) -> bool:
    """Whether x is a run-time value (an Int or Bool) rather than a Python constant."""
    return isinstance(x, (Int, Bool))


def wrap(v: ir.Value) -> Int | Bool:
    """An Int (integer/index value) or Bool (i1 value) around an SSA value."""
    t = v.type
    if isinstance(t, ir.IntegerType) and t.width == 1:
        return Bool(v)
    return Int(v)


def as_value(x: IntLike | BoolLike | ir.Value, ty: ir.Type | None = None) -> ir.Value:
    """The SSA value of x (Int, Bool, ir.Value or Python int/bool), cast to `ty` when given.

    The cast is `Int.cast`'s: sign extension (Int semantics are signed), truncation, or an index cast.
    """
    if isinstance(x, (Int, Bool)):
        v = x.value
    elif isinstance(x, ir.Value):
        v = x
    elif isinstance(x, bool):
        return arith.constant(ir.IntegerType.get_signless(1), int(x))
    elif isinstance(x, int):
        if ty is None:
            ty = _i32() if _fits(x, _i32()) else _i64()
        return const(x, ty)
    else:
        raise TypeError(f"as_value: x must be an Int, Bool, ir.Value or Python int, got {type(x).__name__}")
    if ty is not None and v.type != ty:
        v = _cast_value(v, ty)
    return v


def _cast(x: IntLike, t: ir.Type) -> IntLike:
    if isinstance(x, Int):
        return x.cast(t)
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"expected an Int or a Python int, got {type(x).__name__}")
    if not _fits(x, t):
        raise ValueError(f"{x} does not fit in {t}")
    return x


def to_i32(x: IntLike) -> IntLike:
    """x as an i32 Int (Python ints stay Python ints, range-checked)."""
    return _cast(x, _i32())


def to_i64(x: IntLike) -> IntLike:
    """x as an i64 Int (Python ints stay Python ints)."""
    return _cast(x, _i64())


def to_index(x: IntLike) -> IntLike:
    """x as an index Int (Python ints stay Python ints)."""
    return _cast(x, ir.IndexType.get())


def select(cond: BoolLike, a: IntLike, b: IntLike) -> IntLike:
    """`cond ? a : b`, folded when cond is a Python bool."""
    if type(cond) is bool:
        return a if cond else b
    if not isinstance(cond, Bool):
        raise TypeError(f"select: cond must be a Bool or a Python bool, got {type(cond).__name__}")
    if isinstance(a, Int) and isinstance(b, Int):
        va, vb, _ = _common(a, b)
    elif isinstance(a, Int):
        va, vb, _ = _operands(a, b, "select")
    elif isinstance(b, Int):
        vb, va, _ = _operands(b, a, "select")
    else:
        if a == b:
            return a
        t = _i32() if _fits(a, _i32()) and _fits(b, _i32()) else _i64()
        va, vb = const(a, t), const(b, t)
    return Int(arith.select(cond.value, va, vb))


def min_(a: IntLike, b: IntLike) -> IntLike:
    """The signed minimum of a and b (Python ints fold)."""
    if not isinstance(a, Int) and not isinstance(b, Int):
        return min(a, b)
    x, y = (a, b) if isinstance(a, Int) else (b, a)
    va, vb, _ = _operands(x, y, "min")
    return Int(arith.minsi(va, vb))


def max_(a: IntLike, b: IntLike) -> IntLike:
    """The signed maximum of a and b (Python ints fold)."""
    if not isinstance(a, Int) and not isinstance(b, Int):
        return max(a, b)
    x, y = (a, b) if isinstance(a, Int) else (b, a)
    va, vb, _ = _operands(x, y, "max")
    return Int(arith.maxsi(va, vb))


def offset_type(num_elements: int | None) -> ir.Type:
    """The integer type for element offsets of a tensor: i32 when it provably has < 2**31 elements, else i64.

    Pass the static element count when known (None means unknown, i.e. i64).
    """
    if num_elements is not None and 0 <= num_elements < (1 << 31):
        return _i32()
    return _i64()

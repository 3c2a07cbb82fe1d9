"""Swizzle functors and composed layouts (CuTe's ``Swizzle<B,M,S>`` and ``ComposedLayout``).

``Swizzle(bits, base, shift)`` is CuTe's ``Swizzle<B,M,S>``: with ``yyy_msk = ((1<<B)-1) << (M+max(0,S))`` and
``zzz_msk = ((1<<B)-1) << (M-min(0,S))`` it maps ``x -> x ^ ((x & yyy_msk) >> S)`` (``<< -S`` for a negative
shift).  It is an involution, hence a bijection on every ``[0, k * 2**(B+M+|S|))``.

``ComposedLayout(outer, offset, inner)`` is the function ``c -> outer(offset + inner(c))``; its
domain and shape are those of ``inner``.  The argument order is pycute's
``ComposedLayout(layoutB, offset, layoutA)`` (outer first) and CuTe's
``ComposedLayout<LayoutA, Offset, LayoutB>`` (also outer first); the attribute names follow pycute
(``layoutB`` is the outer function, ``layoutA`` the inner layout) and the methods follow CuTe
(``layout_a()`` is the outer function, ``layout_b()`` the inner layout).  ``outer`` and ``inner`` name them
without ambiguity.

Both classes implement the ``LayoutBase`` protocol that the generic functions of :mod:`cute_layout` delegate
to: ``size()``, ``cosize()``, ``__call__``, ``compose(rhs)``, ``composed_on(lhs)``, ``right_inverse()``,
``left_inverse()`` and (for ``ComposedLayout``) ``shape``, ``rank``, ``__getitem__``, slicing and
``slice_and_offset(coord)``.  Every operation either returns the exact result or raises ``ValueError``.
"""

from __future__ import annotations

from math import gcd
from typing import Any

from . import algebra as _alg
from . import divide as _div
from . import products as _prod
from .int_tuple import depth as _depth
from .int_tuple import flatten, has_none, is_int
from .int_tuple import rank as _rank
from .layout import Layout, LayoutBase, make_layout, size, slice_and_offset

__all__ = [
    "Swizzle",
    "ComposedLayout",
    "make_swizzle",
    "make_composed_layout",
    "max_alignment",
]

# Largest number of image points enumerated when a result cannot be computed in closed form.
_ENUMERATION_LIMIT = 1 << 22


def _algebra(func: str) -> Any:
    """Return the algebra function named `func` (coalesce, composition, a divide or a product)."""
    for module in (_alg, _div, _prod):
        fn = getattr(module, func, None)
        if fn is not None:
            return fn
    raise AttributeError(f"cute_layout has no algebra function {func!r}")


def _check_static_int(value: Any, func: str, what: str) -> int:
    """Return ``value`` if it is a plain int, else raise TypeError naming it."""
    if type(value) is int:
        return value
    if getattr(type(value), "__cute_int__", False):
        raise TypeError(f"{func}: {what} must be a static int, got a run-time value")
    raise TypeError(f"{func}: {what} must be an int, got {value!r}")


def _shiftr(x: Any, s: int) -> Any:
    """Shift right by ``s`` (left by ``-s`` when ``s`` is negative), as CuTe's ``shiftr``."""
    return x >> s if s >= 0 else x << -s


def _flat_modes(layout: Layout) -> list[tuple[int, int]]:
    """Return the (shape, stride) pairs of the flattened layout, requiring static ints."""
    shapes = flatten(layout.shape)
    strides = flatten(layout.stride)
    if not isinstance(shapes, tuple):
        shapes, strides = (shapes,), (strides,)
    return [
        (
            _check_static_int(n, "ComposedLayout", "every shape"),
            _check_static_int(d, "ComposedLayout", "every stride"),
        )
        for n, d in zip(shapes, strides, strict=True)
    ]


class Swizzle(LayoutBase):
    """CuTe's ``Swizzle<B,M,S>``: ``x -> x ^ ((x & yyy_msk) >> S)``, an involution on the integers."""

    __slots__ = ("bits", "base", "shift", "yyy_msk", "zzz_msk", "_hash")

    #: every leaf is a static int, so memoized functions may cache on a Swizzle
    _cute_static = True

    def __init__(self, bits: int, base: int, shift: int) -> None:
        bits = _check_static_int(bits, "Swizzle", "bits")
        base = _check_static_int(base, "Swizzle", "base")
        shift = _check_static_int(shift, "Swizzle", "shift")
        if bits < 0:
            raise ValueError(f"Swizzle: bits must be >= 0, got {bits}")
        if base < 0:
            raise ValueError(f"Swizzle: base must be >= 0, got {base}")
        if abs(shift) < bits:
            raise ValueError(f"Swizzle: |shift| must be >= bits (Y and Z bits must not overlap), got "
                             f"bits={bits}, shift={shift}")
        self.bits = bits
        self.base = base
        self.shift = shift
        bit_msk = (1 << bits) - 1
        self.yyy_msk = bit_msk << (base + max(0, shift))
        self.zzz_msk = bit_msk << (base - min(0, shift))
        self._hash = hash(("Swizzle", bits, base, shift))

    # -- the function ---------------------------------------------------------------------------------------
    def apply(self, offset: Any) -> Any:
        """Return the swizzled offset ``offset ^ ((offset & yyy_msk) >> shift)``."""
        if type(offset) is int:
            s = self.shift
            y = offset & self.yyy_msk
            return offset ^ (y >> s if s >= 0 else y << -s)
        if isinstance(offset, (bool, float, str, tuple, list)) or offset is None:
            raise TypeError(f"Swizzle: the offset must be an int, got {offset!r}")
        try:
            return offset ^ _shiftr(offset & self.yyy_msk, self.shift)
        except TypeError as exc:
            raise TypeError(f"Swizzle: the offset {offset!r} does not support & ^ >> <<") from exc

    def __call__(self, offset: Any) -> Any:
        """Return the swizzled offset (CuTe's ``Swizzle::operator()``)."""
        return self.apply(offset)

    # -- LayoutBase protocol ------------------------------------------------------------------------------
    @property
    def swizzle_code(self) -> int:
        """Return ``yyy_msk | zzz_msk`` (CuTe's ``swizzle_code``)."""
        return self.yyy_msk | self.zzz_msk

    def size(self) -> int:
        """Return ``2**(B+M+|S|)``, the smallest block the swizzle permutes (pycute's ``Swizzle.size``)."""
        return 1 << (self.bits + self.base + abs(self.shift))

    def cosize(self) -> int:
        """Return the codomain size of the swizzle on ``[0, size())``, equal to ``size()``."""
        return self.size()

    def right_inverse(self) -> Swizzle:
        """Return the swizzle itself: a swizzle is an involution."""
        return self

    def left_inverse(self) -> Swizzle:
        """Return the swizzle itself: a swizzle is an involution."""
        return self

    def compose(self, rhs: Any) -> LayoutBase:
        """Return ``composition(self, rhs)``: a ComposedLayout, or a Swizzle for two swizzles."""
        if isinstance(rhs, Swizzle):
            return _compose_swizzles(self, rhs)
        if isinstance(rhs, (Layout, ComposedLayout)):
            return ComposedLayout(self, 0, rhs)
        if type(rhs) is int or getattr(type(rhs), "__cute_int__", False):
            return ComposedLayout(self, 0, Layout(rhs))
        if isinstance(rhs, tuple) and all(type(x) is int for x in flatten(rhs)):
            return ComposedLayout(self, 0, Layout(rhs))
        raise TypeError(f"composition: cannot compose {self} with {rhs!r}; expected a Layout, a "
                        "ComposedLayout, a Swizzle or a shape")

    def composed_on(self, lhs: Any) -> LayoutBase:
        """Return ``composition(lhs, self)`` for a Layout ``lhs`` (CuTe's ``Layout o Swizzle``)."""
        if isinstance(lhs, Layout):
            return _compose_layout_swizzle(lhs, self)
        if isinstance(lhs, Swizzle):
            return _compose_swizzles(lhs, self)
        raise TypeError(f"composition: cannot compose {lhs!r} with {self}")

    def is_identity(self) -> bool:
        """Return True when the swizzle changes no offset (``bits == 0``)."""
        return self.bits == 0

    # -- value semantics ----------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Swizzle)
            and self.bits == other.bits
            and self.base == other.base
            and self.shift == other.shift
        )

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return f"S<{self.bits},{self.base},{self.shift}>"

    def __repr__(self) -> str:
        return f"Swizzle({self.bits},{self.base},{self.shift})"


def make_swizzle(yyy_msk: int, zzz_msk: int) -> Swizzle:
    """Return the Swizzle with Y and Z masks ``yyy_msk`` and ``zzz_msk`` (CuTe's ``make_swizzle<Y,Z>``)."""
    y = _check_static_int(yyy_msk, "make_swizzle", "yyy_msk")
    z = _check_static_int(zzz_msk, "make_swizzle", "zzz_msk")
    if y < 0 or z < 0:
        raise ValueError(f"make_swizzle: masks must be non-negative, got yyy_msk={y}, zzz_msk={z}")
    by, bz = bin(y).count("1"), bin(z).count("1")
    if by != bz:
        raise ValueError(f"make_swizzle: yyy_msk={y:#x} and zzz_msk={z:#x} must have the same number of bits")
    if by == 0:
        return Swizzle(0, 0, 0)
    ty = (y & -y).bit_length() - 1
    tz = (z & -z).bit_length() - 1
    base = min(ty, tz)
    shift = ty - tz
    if abs(shift) < by:
        raise ValueError(f"make_swizzle: yyy_msk={y:#x} and zzz_msk={z:#x} overlap; "
                         "no Swizzle<B,M,S> has them")
    sw = Swizzle(by, base, shift)
    if sw.yyy_msk != y or sw.zzz_msk != z:
        raise ValueError(f"make_swizzle: yyy_msk={y:#x} and zzz_msk={z:#x} are not contiguous runs of bits "
                         "shifted by one amount; no Swizzle<B,M,S> has them")
    return sw


def _compose_swizzles(a: Swizzle, b: Swizzle) -> Swizzle:
    """Return the swizzle equal to ``a o b`` (CuTe's ``composition(Swizzle, Swizzle)``), or raise."""
    if a.bits == 0:
        return b
    if b.bits == 0:
        return a
    if a.shift != b.shift:
        raise ValueError(f"composition: {a} o {b} is not a swizzle: the shifts differ")
    if b.zzz_msk & a.yyy_msk:
        raise ValueError(f"composition: {a} o {b} is not a swizzle: the Z bits of {b} overlap "
                         f"the Y bits of {a}")
    return make_swizzle(a.yyy_msk ^ b.yyy_msk, a.zzz_msk ^ b.zzz_msk)


def _swizzle_fixes_prefix(sw: Swizzle, n: int) -> bool:
    """Return True when ``sw`` maps ``[0, n)`` onto itself."""
    if sw.bits == 0 or n <= 0:
        return True
    block = sw.size()
    r = n % block
    if r == 0:
        return True
    # The swizzle keeps the bits above the block and permutes each block; only the partial block matters.
    lowest_y = (sw.yyy_msk & -sw.yyy_msk).bit_length() - 1
    if r <= (1 << lowest_y):
        return True
    return all(sw.apply(x) < r for x in range(r))


def _swizzle_prefix_limit(sw: Swizzle, n: int) -> int:
    """Return the largest ``m <= n`` such that ``sw`` maps ``[0, m)`` into ``[0, n)``."""
    if sw.bits == 0 or n <= 0:
        return max(n, 0)
    block = sw.size()
    full = (n // block) * block
    r = n - full
    m = 0
    while m < r and sw.apply(m) < r:
        m += 1
    return full + m


def _compose_layout_swizzle(a: Layout, sw: Swizzle) -> LayoutBase:
    """Return the layout equal to ``c -> a(sw(c))`` on ``a``'s domain (CuTe's ``Layout o Swizzle``)."""
    if sw.bits == 0:
        return a
    n = _check_static_int(size(a), "composition", "the size of the Layout composed with a Swizzle")
    if not _swizzle_fixes_prefix(sw, n):
        raise ValueError(f"composition: {a} o {sw} is not defined: {sw} does not map [0,{n}) onto itself")
    candidate = _swizzle_through_layout(a, sw)
    if candidate is not None:
        return candidate
    # General case: a(sw(i)) with i the column-major index of the coordinate in a's shape.
    return ComposedLayout(a, 0, ComposedLayout(sw, 0, Layout(a.shape)))


def _swizzle_through_layout(a: Layout, sw: Swizzle) -> LayoutBase | None:
    """Return ``S' o a`` equal to ``a o sw`` when ``a`` moves bits to bits, else None."""
    modes = _flat_modes(a)
    images: list[int] = []
    for shape, stride in modes:
        if shape & (shape - 1):
            return None
        for j in range(shape.bit_length() - 1):
            images.append(stride << j)
    nonzero = [v for v in images if v != 0]
    if any(v < 0 or v & (v - 1) for v in nonzero) or len(set(nonzero)) != len(nonzero):
        return None
    nbits = len(images)
    pairs = []
    for k in range(sw.bits):
        y = sw.base + max(0, sw.shift) + k
        z = y - sw.shift
        if y >= nbits:
            continue  # never set by an index of the domain
        if z >= nbits:
            return None
        pairs.append((y, z))
    kept = []
    for y, z in pairs:
        iy, iz = images[y], images[z]
        if iz == 0:
            continue  # flipping a bit that the layout ignores changes nothing
        if iy == 0:
            return None  # the flip depends on a bit that the layout's value does not show
        kept.append((iy, iz))
    if not kept:
        return a
    ymask = 0
    zmask = 0
    for iy, iz in kept:
        ymask |= iy
        zmask |= iz
    try:
        new = make_swizzle(ymask, zmask)
    except ValueError:
        return None
    if any(_shiftr(iy, new.shift) != iz for iy, iz in kept):
        return None
    return ComposedLayout(new, 0, a)


def _image_bounds(modes: list[tuple[int, int]], offset: int) -> tuple[int, int]:
    """Return the smallest and largest value of ``offset + L(c)`` over the domain."""
    lo = hi = offset
    for n, d in modes:
        span = d * (n - 1)
        if span < 0:
            lo += span
        else:
            hi += span
    return lo, hi


def _swizzled_image_max(sw: Swizzle, offset: int, layout: Layout) -> int:
    """Return ``max(sw(offset + layout(i)))`` over the layout's domain, exactly."""
    modes = [(n, d) for n, d in _flat_modes(layout) if n > 1 and d != 0]
    _, hi = _image_bounds(modes, offset)
    if sw.bits == 0:
        return hi
    t = sw.bits + sw.base + abs(sw.shift)
    # The swizzle keeps every bit at or above t and permutes the t low bits: the maximum lies in hi's block.
    floor = (hi >> t) << t
    modes.sort(key=lambda m: -abs(m[1]) * (m[0] - 1))
    k = len(modes)
    rest_max = [0] * (k + 1)
    rest_min = [0] * (k + 1)
    for i in range(k - 1, -1, -1):
        n, d = modes[i]
        span = d * (n - 1)
        rest_max[i] = rest_max[i + 1] + max(0, span)
        rest_min[i] = rest_min[i + 1] + min(0, span)
    best = None
    visited = 0

    def visit(i: int, partial: int) -> None:
        nonlocal best, visited
        if i == k:
            visited += 1
            if visited > _ENUMERATION_LIMIT:
                raise ValueError(f"cosize: the image of {sw} o {offset} o {layout} is too large to "
                                 "search exactly")
            value = sw.apply(partial)
            if best is None or value > best:
                best = value
            return
        n, d = modes[i]
        need = floor - partial - rest_max[i + 1]  # d * c must reach at least this
        if d > 0:
            lo = max(0, -(-need // d))
            cs = range(lo, n)
        else:
            cs = range(0, min(n - 1, need // d) + 1)  # d * c >= need  <=>  c <= need / d
        for c in cs:
            visit(i + 1, partial + d * c)

    visit(0, offset)
    assert best is not None
    return best


class ComposedLayout(LayoutBase):
    """CuTe's ``ComposedLayout``: the function ``c -> outer(offset + inner(c))`` on ``inner``'s domain."""

    __slots__ = ("layoutB", "offset", "layoutA", "_hash", "_cute_static")

    def __init__(self, layoutB: Any, offset: Any, layoutA: Any) -> None:
        if not isinstance(layoutB, LayoutBase):
            raise TypeError(f"ComposedLayout: the outer function (layoutB) must be a Layout, a Swizzle or a "
                            f"ComposedLayout, got {layoutB!r}")
        if not isinstance(layoutA, (Layout, ComposedLayout)):
            raise TypeError(f"ComposedLayout: the inner layout (layoutA) must be a Layout or a "
                            f"ComposedLayout, got {layoutA!r}")
        if not is_int(offset):
            raise TypeError(f"ComposedLayout: the offset must be an int, got {offset!r}")
        self.layoutB = layoutB
        self.offset = offset
        self.layoutA = layoutA
        self._hash: int | None = None
        # memoized functions may cache on a ComposedLayout whose parts are all static
        self._cute_static = (
            type(offset) is int
            and bool(getattr(layoutB, "_cute_static", False))
            and bool(getattr(layoutA, "_cute_static", False))
        )

    # -- accessors -----------------------------------------------------------------------------------------
    @property
    def outer(self) -> LayoutBase:
        """The outer function (pycute's ``layoutB``, CuTe's ``layout_a()``)."""
        return self.layoutB

    @property
    def inner(self) -> LayoutBase:
        """The inner layout (pycute's ``layoutA``, CuTe's ``layout_b()``)."""
        return self.layoutA

    def layout_a(self) -> LayoutBase:
        """Return the outer function (CuTe's name)."""
        return self.layoutB

    def layout_b(self) -> LayoutBase:
        """Return the inner layout (CuTe's name)."""
        return self.layoutA

    @property
    def shape(self) -> Any:
        """The shape of the domain (the inner layout's shape)."""
        return self.layoutA.shape

    def rank(self) -> int:
        """Return the number of top-level modes of the domain."""
        return _rank(self.layoutA.shape)

    def depth(self) -> int:
        """Return the nesting depth of the domain's shape."""
        return _depth(self.layoutA.shape)

    def __len__(self) -> int:
        return len(self.layoutA)

    def __getitem__(self, i: Any) -> ComposedLayout:
        """Return mode ``i`` as a ComposedLayout with the same outer function and offset."""
        return ComposedLayout(self.layoutB, self.offset, self.layoutA[i])

    # -- the function ---------------------------------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        """Return ``outer(offset + inner(coord))``, or a sliced ComposedLayout for a coordinate with None."""
        crd = args[0] if len(args) == 1 else args
        if has_none(crd):
            return self.slice(crd)
        return self.layoutB(self.offset + self.layoutA(crd))

    def slice_and_offset(self, crd: Any) -> tuple[ComposedLayout, int]:
        """Return ``(sublayout, 0)``: the offset of the slice is kept inside the composed layout."""
        sub, off = slice_and_offset(crd, self.layoutA)
        return ComposedLayout(self.layoutB, self.offset + off, sub), 0

    def slice(self, crd: Any) -> ComposedLayout:
        """Return the sublayout at the coordinate ``crd`` (None marks the kept modes)."""
        return self.slice_and_offset(crd)[0]

    # -- LayoutBase protocol ------------------------------------------------------------------------------
    def size(self) -> Any:
        """Return the size of the domain."""
        return size(self.layoutA)

    def cosize(self) -> int:
        """Return ``1 + max(self(i))`` over the domain, exactly."""
        inner, outer, offset = self.layoutA, self.layoutB, self.offset
        if type(offset) is int and isinstance(inner, Layout) and isinstance(outer, Swizzle):
            return _swizzled_image_max(outer, offset, inner) + 1
        n = _check_static_int(self.size(), "cosize", "the size of the ComposedLayout")
        if n > _ENUMERATION_LIMIT:
            raise ValueError(f"cosize: {self} is too large ({n} points) to compute exactly")
        return max(self(i) for i in range(n)) + 1

    def compose(self, rhs: Any) -> ComposedLayout:
        """Return ``composition(self, rhs)``: the same outer function and offset over ``inner o rhs``."""
        return ComposedLayout(self.layoutB, self.offset, _alg.composition(self.layoutA, rhs))

    def composed_on(self, lhs: Any) -> LayoutBase:
        """Return ``composition(lhs, self)`` for a Layout ``lhs``."""
        if isinstance(lhs, Swizzle):
            return ComposedLayout(_alg.composition(lhs, self.layoutB), self.offset, self.layoutA)
        if not isinstance(lhs, Layout):
            raise TypeError(f"composition: cannot compose {lhs!r} with {self}")
        sw, inner = self.layoutB, self.layoutA
        zero_offset = type(self.offset) is int and self.offset == 0
        if isinstance(sw, Swizzle) and zero_offset and isinstance(inner, Layout):
            n = size(lhs)
            modes = [(m, d) for m, d in _flat_modes(inner) if m > 1 and d != 0]
            lo, hi = _image_bounds(modes, 0)
            if type(n) is int and lo >= 0 and hi < n and _swizzle_fixes_prefix(sw, n):
                moved = _swizzle_through_layout(lhs, sw)
                if isinstance(moved, ComposedLayout):
                    try:
                        return ComposedLayout(moved.layoutB, 0, _alg.composition(lhs, inner))
                    except ValueError:
                        pass
                elif moved is lhs:
                    return _alg.composition(lhs, inner)
        return ComposedLayout(lhs, 0, self)

    def right_inverse(self) -> LayoutBase:
        """Return R with ``self(R(i)) == i`` on R's domain; defined for ``Swizzle o 0 o Layout``."""
        sw, inner = self._swizzle_parts("right_inverse")
        rinv = _alg.right_inverse(inner)
        n = _check_static_int(size(rinv), "right_inverse", "the size of the inner right inverse")
        m = _swizzle_prefix_limit(sw, n)
        if m == n:
            return _compose_layout_swizzle(rinv, sw)
        return ComposedLayout(rinv, 0, ComposedLayout(sw, 0, Layout(m)))

    def left_inverse(self) -> LayoutBase:
        """Return L with ``L(self(c)) == c`` for an injective self; defined for ``Swizzle o 0 o Layout``."""
        sw, inner = self._swizzle_parts("left_inverse")
        linv = _alg.left_inverse(inner)
        n = _check_static_int(size(linv), "left_inverse", "the size of the inner left inverse")
        if _swizzle_fixes_prefix(sw, n):
            return _compose_layout_swizzle(linv, sw)
        m = self.cosize()
        if m <= n and _swizzle_prefix_limit(sw, n) >= m:
            return ComposedLayout(linv, 0, ComposedLayout(sw, 0, Layout(m)))
        raise ValueError(f"left_inverse: {self} has no left inverse as a layout: {sw} does not map its "
                         f"codomain [0,{m}) into the domain [0,{n}) of the left inverse of {inner}")

    def _swizzle_parts(self, func: str) -> tuple[Swizzle, Layout]:
        """Return (swizzle, inner layout) when self is ``Swizzle o 0 o Layout``, else raise ValueError."""
        sw, inner, off = self.layoutB, self.layoutA, self.offset
        if not isinstance(sw, Swizzle) or not isinstance(inner, Layout) or type(off) is not int or off != 0:
            raise ValueError(f"{func}: defined for a ComposedLayout Swizzle o 0 o Layout, got {self}")
        return sw, inner

    def coalesce(self, profile: Any = None) -> ComposedLayout:
        """Return the same function with the inner layout coalesced (by ``profile`` when given)."""
        inner = _alg.coalesce(self.layoutA) if profile is None else _alg.coalesce(self.layoutA, profile)
        return ComposedLayout(self.layoutB, self.offset, inner)

    def _on_inner(self, func: str, *args: Any) -> ComposedLayout:
        """Return the same outer function and offset over ``func(inner, *args)``."""
        return ComposedLayout(self.layoutB, self.offset, _algebra(func)(self.layoutA, *args))

    # Divides compose the layout with a tiler, so they act on the inner layout; the products replicate
    # the inner layout under the same outer function, as CuTe defines them for a ComposedLayout.
    def logical_divide(self, tiler: Any) -> ComposedLayout:
        """Return ``logical_divide(self, tiler)``: the outer function over the divided inner layout."""
        return self._on_inner("logical_divide", tiler)

    def zipped_divide(self, tiler: Any) -> ComposedLayout:
        """Return ``zipped_divide(self, tiler)``: the outer function over the divided inner layout."""
        return self._on_inner("zipped_divide", tiler)

    def tiled_divide(self, tiler: Any) -> ComposedLayout:
        """Return ``tiled_divide(self, tiler)``: the outer function over the divided inner layout."""
        return self._on_inner("tiled_divide", tiler)

    def flat_divide(self, tiler: Any) -> ComposedLayout:
        """Return ``flat_divide(self, tiler)``: the outer function over the divided inner layout."""
        return self._on_inner("flat_divide", tiler)

    def logical_product(self, tiler: Any) -> ComposedLayout:
        """Return ``logical_product(self, tiler)``: the outer function over the replicated inner layout."""
        return self._on_inner("logical_product", tiler)

    def zipped_product(self, tiler: Any) -> ComposedLayout:
        """Return ``zipped_product(self, tiler)``: the outer function over the replicated inner layout."""
        return self._on_inner("zipped_product", tiler)

    def tiled_product(self, tiler: Any) -> ComposedLayout:
        """Return ``tiled_product(self, tiler)``: the outer function over the replicated inner layout."""
        return self._on_inner("tiled_product", tiler)

    def flat_product(self, tiler: Any) -> ComposedLayout:
        """Return ``flat_product(self, tiler)``: the outer function over the replicated inner layout."""
        return self._on_inner("flat_product", tiler)

    def blocked_product(self, tiler: Any) -> ComposedLayout:
        """Return ``blocked_product(self, tiler)``: the outer function over the replicated inner layout."""
        return self._on_inner("blocked_product", tiler)

    def raked_product(self, tiler: Any) -> ComposedLayout:
        """Return ``raked_product(self, tiler)``: the outer function over the replicated inner layout."""
        return self._on_inner("raked_product", tiler)

    def tile_to_shape(self, shape: Any, order: Any = None) -> ComposedLayout:
        """Return ``tile_to_shape(self, shape)``: the outer function over the tiled inner layout."""
        if order is None:
            return self._on_inner("tile_to_shape", shape)
        return self._on_inner("tile_to_shape", shape, order)

    def filter(self, profile: Any = None) -> ComposedLayout:
        """Return the same function with the inner layout filtered (stride-0 and size-1 modes removed)."""
        if profile is None:
            return self._on_inner("filter")
        return self._on_inner("filter", profile)

    def with_shape(self, *shape: Any) -> ComposedLayout:
        """Return ``composition(self, make_layout(shape))``: this function reshaped."""
        return self.compose(make_layout(shape[0] if len(shape) == 1 else shape))

    def tile(self, *tilers: Any) -> ComposedLayout:
        """Return ``tiled_divide(self, tiler)``."""
        return self.tiled_divide(tilers[0] if len(tilers) == 1 else tilers)

    # -- value semantics ----------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ComposedLayout)
            and self.layoutB == other.layoutB
            and self.offset == other.offset
            and self.layoutA == other.layoutA
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(("ComposedLayout", self.layoutB, self.offset, self.layoutA))
        return self._hash

    def __str__(self) -> str:
        return f"{self.layoutB} o {self.offset} o {self.layoutA}"

    def __repr__(self) -> str:
        return f"ComposedLayout({self.layoutB!r},{self.offset!r},{self.layoutA!r})"


def make_composed_layout(outer: Any, offset: Any, inner: Any) -> ComposedLayout:
    """Return the ComposedLayout ``c -> outer(offset + inner(c))`` (CuTe's ``make_composed_layout``)."""
    return ComposedLayout(outer, offset, inner)


def max_alignment(layout: Any) -> int:
    """Return the largest N for which the image is made of N-aligned runs of N consecutive offsets."""
    if isinstance(layout, Swizzle):
        return 1 << layout.base
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.layoutB, Swizzle):
            raise TypeError(f"max_alignment: defined for a ComposedLayout whose outer function is a Swizzle, "
                            f"got {layout}")
        off = layout.offset
        off_align = abs(off) if type(off) is int else 1
        return gcd(max_alignment(layout.layoutB), off_align, max_alignment(layout.layoutA))
    if isinstance(layout, Layout):
        return _layout_max_alignment(layout)
    if type(layout) is int:
        return abs(layout)
    raise TypeError(f"max_alignment: expected a Layout, a Swizzle, a ComposedLayout or an int, "
                    f"got {layout!r}")


def _layout_max_alignment(layout: Layout) -> int:
    """Return CuTe's ``max_alignment`` of a Layout: gcd of its contiguous prefix and the other strides."""
    modes = []
    for n, d in zip(_flat_or_single(layout.shape), _flat_or_single(layout.stride), strict=True):
        if type(n) is not int:
            continue  # run-time shapes are assumed large multiples, as CuTe assumes for dynamic shapes
        if n == 1:
            continue
        modes.append((n, d if type(d) is int else None))
    contiguous = 1
    used = [False] * len(modes)
    progress = True
    while progress:
        progress = False
        for i, (n, d) in enumerate(modes):
            if not used[i] and d is not None and d == contiguous:
                used[i] = True
                contiguous *= n
                progress = True
                break
    result = contiguous
    for i, (_n, d) in enumerate(modes):
        if not used[i] and d is not None:
            result = gcd(result, d)
    return result


def _flat_or_single(x: Any) -> tuple[Any, ...]:
    """Return the leaves of an IntTuple as a tuple."""
    flat = flatten(x)
    return flat if isinstance(flat, tuple) else (flat,)

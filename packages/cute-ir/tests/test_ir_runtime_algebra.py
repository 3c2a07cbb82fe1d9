"""cute_layout's functions fed SSA integers: lowered to the CPU, run, compared with the static results.

Hundreds of random layouts and coordinates per function, batched into one module and one ExecutionEngine.
"""

from __future__ import annotations

import random

import pytest
from _ir_host import HostProgram
from cute_ir.tensor import elem_less as rt_elem_less
from cute_ir.values import Int
from cute_layout import Layout, crd2idx, elem_less, flatten, idx2crd, size, slice_and_offset

N_CASES = 200


def _rand_shape(rng: random.Random, depth: int) -> object:
    if depth == 0 or rng.random() < 0.4:
        return rng.randint(1, 6)
    return tuple(_rand_shape(rng, depth - 1) for _ in range(rng.randint(1, 3)))


def _rand_stride(rng: random.Random, shape: object, positive: bool = False) -> object:
    if isinstance(shape, tuple):
        return tuple(_rand_stride(rng, s, positive) for s in shape)
    return rng.randint(1, 40) if positive else rng.randint(-12, 40)


def _map(t: object, f: object) -> object:
    if isinstance(t, tuple):
        return tuple(_map(e, f) for e in t)
    return f(t)


def _rand_crd(rng: random.Random, shape: object) -> object:
    return _map(shape, lambda s: rng.randrange(s))


def _leaves(t: object) -> list:
    return list(flatten(t)) if isinstance(t, tuple) else [t]


def _dyn(p: HostProgram, t: object, rng: random.Random) -> object:
    """Each leaf of t as a run-time value of a random width (i32, i64 or index); some leaves stay static."""

    def leaf(x: int) -> object:
        r = rng.random()
        if r < 0.15:
            return x
        bits = 32 if r < 0.5 else (64 if r < 0.85 else 0)
        return p.input(x, bits)

    return _map(t, leaf)


def _out_tuple(p: HostProgram, got: object, expected: object, label: str) -> None:
    g, e = _leaves(got), _leaves(expected)
    assert len(g) == len(e), f"{label}: {got} vs {expected}"
    for x, y in zip(g, e, strict=True):
        p.output(x, y, label)


def test_crd2idx_runtime_coordinates_and_strides() -> None:
    """crd2idx with hierarchical and 1-D run-time coordinates, run-time strides, static shapes."""
    rng = random.Random(1)
    with HostProgram() as p:
        for case in range(N_CASES):
            p.case()
            shape = _rand_shape(rng, 3)
            stride = _rand_stride(rng, shape)
            crd = _rand_crd(rng, shape)
            want = crd2idx(crd, shape, stride)
            got = crd2idx(_dyn(p, crd, rng), shape, _dyn(p, stride, rng))
            p.output(got, want, f"crd2idx#{case} {crd} {shape}:{stride}")
            idx = rng.randrange(size(shape))
            want1 = crd2idx(idx, shape, stride)
            got1 = crd2idx(p.input(idx, rng.choice((32, 64))), shape, _dyn(p, stride, rng))
            p.output(got1, want1, f"crd2idx-1d#{case} {idx} {shape}:{stride}")
    assert p.check() == 2 * N_CASES


def test_idx2crd_runtime_index_and_shapes() -> None:
    """idx2crd (shape only: colex, last mode unwrapped; with stride: every mode wraps) on run-time values."""
    rng = random.Random(2)
    with HostProgram() as p:
        for case in range(N_CASES):
            p.case()
            shape = _rand_shape(rng, 3)
            idx = rng.randrange(size(shape) * 2)  # beyond the size: the last mode does not wrap
            want = idx2crd(idx, shape)
            got = idx2crd(p.input(idx, rng.choice((32, 64, 0))), _dyn(p, shape, rng))
            _out_tuple(p, got, want, f"idx2crd#{case} {idx} {shape}")
            stride = _rand_stride(rng, shape, positive=True)
            want_s = idx2crd(idx, shape, stride)
            got_s = idx2crd(p.input(idx, 64), shape, _dyn(p, stride, rng))
            _out_tuple(p, got_s, want_s, f"idx2crd-strided#{case} {idx} {shape}:{stride}")
    assert p.check() > 2 * N_CASES


def test_layout_call_with_runtime_index_and_dynamic_layout() -> None:
    """Layout(shape, stride)(i) for a run-time i, with run-time strides and (some) run-time shapes."""
    rng = random.Random(3)
    with HostProgram() as p:
        for case in range(N_CASES):
            p.case()
            shape = _rand_shape(rng, 2)
            stride = _rand_stride(rng, shape)
            ref = Layout(shape, stride)
            i = rng.randrange(ref.size())
            dyn = Layout(_dyn(p, shape, rng), _dyn(p, stride, rng))
            p.output(dyn(p.input(i, rng.choice((32, 64)))), ref(i), f"call#{case} {ref}({i})")
            crd = _rand_crd(rng, shape)
            p.output(dyn(_dyn(p, crd, rng)), ref(crd), f"call-crd#{case} {ref}({crd})")
    assert p.check() == 2 * N_CASES


def _none_some(rng: random.Random, crd: object) -> object:
    if isinstance(crd, tuple):
        return tuple(_none_some(rng, c) for c in crd)
    return None if rng.random() < 0.4 else crd


def test_slice_offsets_runtime() -> None:
    """slice_and_offset with run-time coordinate entries and strides: the offset, and the kept sub-layout."""
    rng = random.Random(4)
    with HostProgram() as p:
        n = 0
        for case in range(N_CASES):
            p.case()
            shape = _rand_shape(rng, 2)
            if not isinstance(shape, tuple):
                shape = (shape, rng.randint(1, 5))
            stride = _rand_stride(rng, shape)
            crd = _none_some(rng, _rand_crd(rng, shape))
            ref_sub, ref_off = slice_and_offset(crd, Layout(shape, stride))
            dyn_stride = _dyn(p, stride, rng)
            dcrd = _dyn_crd(p, crd, rng)
            sub, off = slice_and_offset(dcrd, Layout(shape, dyn_stride))
            p.output(off, ref_off, f"slice#{case} {crd} of {shape}:{stride}")
            assert sub.shape == ref_sub.shape
            _out_tuple(p, sub.stride, ref_sub.stride, f"slice-stride#{case}")
            n += 1 + len(_leaves(ref_sub.stride))
    assert p.check() == n


def _dyn_crd(p: HostProgram, crd: object, rng: random.Random) -> object:
    if isinstance(crd, tuple):
        return tuple(_dyn_crd(p, c, rng) for c in crd)
    if crd is None:
        return None
    return p.input(crd, rng.choice((32, 64))) if rng.random() < 0.85 else crd


def test_elem_less_runtime() -> None:
    """elem_less(coord, shape) predicates with run-time coordinates and shapes, as Bool (i1)."""
    rng = random.Random(5)
    with HostProgram() as p:
        for case in range(N_CASES):
            p.case()
            shape = _rand_shape(rng, 2)
            crd = _map(shape, lambda s: rng.randrange(s + 2))
            want = elem_less(crd, shape)
            got = rt_elem_less(_dyn(p, crd, rng), _dyn(p, shape, rng))
            p.output(got, want, f"elem_less#{case} {crd} < {shape}")
    assert p.check() == N_CASES


def test_static_parts_fold_without_ir() -> None:
    """Static arithmetic stays Python ints: x*0, x*1, x+0 and crd2idx of static coordinates emit nothing."""
    with HostProgram() as p:
        x = p.input(5)
        n_ops = len(p.block.operations)
        assert x * 0 == 0 and (x * 1) is x and (x + 0) is x and (x - 0) is x and (x // 1) is x and x % 1 == 0
        assert crd2idx((1, 2), (3, 4), (x * 0, 5)) == 10
        assert len(p.block.operations) == n_ops
        p.output(x, 5)
    p.check()


def test_decisions_on_runtime_values_raise() -> None:
    """Where cute_layout must decide on a value, a run-time value raises TypeError (never a guess)."""
    from cute_layout import coalesce

    with HostProgram() as p:
        s = p.input(4)
        with pytest.raises(TypeError):
            bool(s < 3)
        with pytest.raises(TypeError):
            elem_less((s,), (3,))
        with pytest.raises(TypeError):
            coalesce(Layout((s, 4), (1, 4)))
        p.output(s, 4)
    p.check()


def test_runtime_int_rejects_bad_operands() -> None:
    """Int refuses non-integer values and a non-positive static divisor."""
    with HostProgram() as p:
        x = p.input(7)
        with pytest.raises(TypeError):
            Int(3)  # type: ignore[arg-type]
        with pytest.raises(ZeroDivisionError):
            x // 0
        with pytest.raises(ZeroDivisionError):
            x % -2
        p.output(x, 7)
    p.check()


def test_dynamic_layout_helpers() -> None:
    """dynamic/values_of/make_dynamic_layout convert between SSA values and Int leaves."""
    from cute_ir.algebra import dynamic, make_dynamic_layout, values_of
    from mlir import ir

    with HostProgram() as p:
        m, s = p.input(7), p.input(11)
        t = dynamic((m.value, (3, s.value)))
        assert isinstance(t[0], Int) and t[1][0] == 3 and isinstance(t[1][1], Int)
        lay = make_dynamic_layout((m.value, 4), (s.value, 1))
        p.output(lay((2, 3)), 2 * 11 + 3)
        vals = values_of((lay((1, 1)), 5), ir.IntegerType.get_signless(64))
        assert all(isinstance(v, ir.Value) for v in vals)
        p.output(Int(vals[0]), 12)
        p.output(Int(vals[1]), 5)
    assert p.check() == 3


def test_composition_and_divides_with_runtime_leaves() -> None:
    """composition with run-time strides (as functions: run-time strides do not coalesce, so the shapes may
    be finer) and zipped_divide with run-time extents (exactly) equal the static results."""
    from cute_layout import composition, zipped_divide

    rng = random.Random(6)
    with HostProgram() as p:
        n_comp = n_div = 0
        for case in range(N_CASES):
            p.case()
            shape = tuple(rng.choice((2, 3, 4)) for _ in range(rng.randint(1, 3)))
            stride = tuple(rng.randint(-9, 30) for _ in shape)
            total = size(shape)
            k = rng.choice([d for d in range(1, total + 1) if total % d == 0])
            rhs = Layout((k, total // k), (total // k, 1)) if rng.random() < 0.5 else Layout(k, total // k)
            try:
                want = composition(Layout(shape, stride), rhs)
            except ValueError:
                continue
            got = composition(Layout(shape, _dyn(p, stride, rng)), rhs)
            assert size(got.shape) == size(want.shape), (shape, stride, rhs)
            for i in range(size(want.shape)):
                p.output(got(i), want(i), f"composition#{case} {shape}:{stride} o {rhs} at {i}")
            n_comp += 1
            m, n = rng.randint(1, 50), rng.randint(1, 70)
            sm, sn = rng.randint(-5, 80), rng.randint(1, 4)
            tiler = (rng.choice((1, 2, 4, 8)), rng.choice((1, 4, 16)))
            want_z = zipped_divide(Layout((m, n), (sm, sn)), tiler)
            got_z = zipped_divide(Layout((p.input(m, 32), p.input(n, 32)), (p.input(sm), sn)), tiler)
            _out_tuple(p, got_z.shape, want_z.shape, f"zipped_divide-shape#{case}")
            # a mode of extent 1 may carry any stride (static extents give 0, run-time ones the product)
            for e, g, w in zip(
                _leaves(want_z.shape), _leaves(got_z.stride), _leaves(want_z.stride), strict=True
            ):
                if e != 1:
                    p.output(g, w, f"zipped_divide-stride#{case}")
            n_div += 1
        assert n_comp > N_CASES // 2 and n_div == n_comp
    p.check()

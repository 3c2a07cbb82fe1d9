"""The fused epilogue's arithmetic (dense_gemm.epilogue_math) run on the CPU: the very emitters the kernel uses
(GELU's erf approximation included), with MLIR's `math` dialect (libm) standing in for cute_ir.math's GPU
functions, executed by MLIR's
ExecutionEngine against torch float32 within `activation.error_bound`; the SwiGLU interleave against torch
and against the accumulator layout (`epilogue.value_coords`, `swiglu_sources`)."""

from __future__ import annotations

import ctypes
import random

import pytest
import torch
from cute_examples.dense_gemm import activation as act
from cute_examples.dense_gemm.epilogue import swiglu_sources, value_coords

mlir = pytest.importorskip("mlir")

from cute_examples.dense_gemm import epilogue_math as em  # noqa: E402
from mlir import ir, passmanager  # noqa: E402
from mlir.dialects import func  # noqa: E402
from mlir.dialects import math as mmath  # noqa: E402
from mlir.execution_engine import ExecutionEngine  # noqa: E402


def _cpu_math() -> em.Math:
    return em.Math(exp2=mmath.exp2, tanh=mmath.tanh)


_ENGINES: dict[str, ExecutionEngine] = {}


def _engine(activation: str) -> ExecutionEngine:
    """f(acc, alpha, addend, beta, bias) -> act(alpha*acc + beta*addend + bias) (swiglu: f(gate, up))."""
    if activation in _ENGINES:
        return _ENGINES[activation]
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.F32Type.get()
        nargs = 2 if activation == "swiglu" else 5
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ir.FunctionType.get([f32] * nargs, [f32]))
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            a = list(block.arguments)
            if activation == "swiglu":
                y = em.swiglu(a[0], a[1], _cpu_math())
            else:
                x = em.pre_activation(a[0], alpha=a[1], addend=a[2], beta=a[3], bias=a[4])
                y = em.activate(activation, x, _cpu_math())
            func.ReturnOp([y])
        module.operation.verify()
        passmanager.PassManager.parse(
            "builtin.module(convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)"
        ).run(module.operation)
        _ENGINES[activation] = ExecutionEngine(module, opt_level=2)
    return _ENGINES[activation]


def _run(activation: str, *args: float) -> float:
    cargs = [ctypes.c_float(v) for v in args]
    res = ctypes.c_float()
    _engine(activation).invoke("f", *[ctypes.pointer(c) for c in cargs], ctypes.pointer(res))
    return res.value


def _inputs(rng: random.Random, n: int = 300) -> list[float]:
    xs = [rng.uniform(-10, 10) for _ in range(n)] + [rng.uniform(-1, 1) for _ in range(n // 3)]
    return xs + [0.0, -0.0, 1e-30, -1e-30, 5.0, -5.0, 20.0, -20.0]


@pytest.mark.parametrize("name", [a for a in act.ACTIVATIONS if a != "swiglu"])
def test_activation_matches_torch_float32(name: str) -> None:
    """act(alpha*acc + beta*addend + bias) on the CPU against torch float32 of the same f32 pre-activation."""
    rng = random.Random(7)
    for x in _inputs(rng):
        alpha, beta, addend, bias = rng.choice([1.0, 0.5, -2.0]), rng.choice([0.0, 1.0, 0.25]), rng.uniform(-2, 2), \
            rng.uniform(-1, 1)
        got = _run(name, x, alpha, addend, beta, bias)
        t = torch.tensor
        pre = t(alpha, dtype=torch.float32) * t(x, dtype=torch.float32)
        pre = pre + t(beta, dtype=torch.float32) * t(addend, dtype=torch.float32) + t(bias, dtype=torch.float32)
        want = float(act.reference(pre, name))
        # our float32 roundings and torch's each within the bound of the exact function, plus 2 ulp of slack
        allowed = 2 * act.error_bound(name, float(pre)) + 2 * 2.0**-23 * max(abs(want), 2.0**-126)
        assert abs(got - want) <= allowed, f"{name}({float(pre)}): {got} vs torch {want} (allowed {allowed})"


def test_relu_keeps_nan() -> None:
    assert _run("relu", float("nan"), 1.0, 0.0, 0.0, 0.0) != _run("relu", float("nan"), 1.0, 0.0, 0.0, 0.0)


def test_swiglu_matches_torch_float32() -> None:
    rng = random.Random(11)
    for g, u in zip(_inputs(rng), _inputs(rng), strict=True):
        got = _run("swiglu", g, u)
        want = float(torch.nn.functional.silu(torch.tensor(g)) * torch.tensor(u))
        allowed = 2 * act.error_bound("swiglu", g, u) + 2 * 2.0**-23 * max(abs(want), 2.0**-126)
        assert abs(got - want) <= allowed, f"swiglu({g}, {u}): {got} vs {want}"


def test_pre_activation_terms_are_optional() -> None:
    """Without alpha, addend and bias the pre-activation is the accumulator itself (no instruction)."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.F32Type.get()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("g", ir.FunctionType.get([f32, f32], [f32]))
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            x = block.arguments[0]
            assert em.pre_activation(x) == x
            assert em.activate("identity", x) == x
            with pytest.raises(ValueError, match="beta needs an addend"):
                em.pre_activation(x, beta=block.arguments[1])
            with pytest.raises(ValueError, match="swiglu"):
                em.activate("swiglu", x)
            with pytest.raises(ValueError, match="activation must be"):
                em.activate("tanh", x)
            func.ReturnOp([x])


def test_check_activation_names() -> None:
    assert act.check_activation(None) == "identity"
    for name in act.ACTIVATIONS:
        assert act.check_activation(name) == name
    for bad in ("gelu_erf", "GELU", 3):
        with pytest.raises(ValueError, match="activation must be None or one of"):
            act.check_activation(bad)


def test_interleaved_weight_gives_swiglu() -> None:
    """gemm's SwiGLU on the interleaved weight (its math in float64 torch) is silu(x @ g.t()) * (x @ u.t())."""
    torch.manual_seed(0)
    n, k = 48, 40
    x = torch.randn(5, k, dtype=torch.float64)
    wg, wu = torch.randn(n, k, dtype=torch.float64), torch.randn(n, k, dtype=torch.float64)
    bg, bu = torch.randn(n, dtype=torch.float64), torch.randn(n, dtype=torch.float64)
    w, b = act.interleave_gate_up(wg, wu), act.interleave_gate_up(bg, bu)
    assert w.shape == (2 * n, k) and b.shape == (2 * n,)
    assert torch.equal(w[:8], wg[:8]) and torch.equal(w[8:16], wu[:8]) and torch.equal(w[16:24], wg[8:16])
    got = act.reference(x @ w.t() + b, "swiglu")
    want = torch.nn.functional.silu(x @ wg.t() + bg) * (x @ wu.t() + bu)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    g, u = act.split_gate_up(w)
    assert torch.equal(g, wg) and torch.equal(u, wu)


def test_interleave_refuses_bad_weights() -> None:
    w = torch.zeros(16, 4)
    with pytest.raises(ValueError, match="multiple of 8"):
        act.interleave_gate_up(torch.zeros(12, 4), torch.zeros(12, 4))
    with pytest.raises(ValueError, match="one shape"):
        act.interleave_gate_up(w, torch.zeros(16, 5))
    with pytest.raises(ValueError, match="dtype and device"):
        act.interleave_gate_up(w, w.half())
    with pytest.raises(TypeError, match="up must be a torch.Tensor"):
        act.interleave_gate_up(w, [1.0])
    with pytest.raises(ValueError, match="multiple of 16"):
        act.split_gate_up(torch.zeros(24))


@pytest.mark.parametrize("tile_n", [64, 128, 256])
def test_swiglu_sources_follow_the_interleave(tile_n: int) -> None:
    """Every thread's output value o sits at the output column whose gate and up its sources hold.

    A fused column c is part `(c // 8) % 2` (0 gate, 1 up) of output column `8 * (c // 16) + c % 8`
    (`interleave_gate_up`); the output values keep the accumulator layout at half the width.
    """
    values = tile_n // 2  # accumulator values per thread: tile_n / 8 groups of 4
    for warp in range(4):
        for lane in range(32):
            for o, (g, u) in enumerate(swiglu_sources(values)):
                out_row, out_col = value_coords(warp, lane, o)
                for v, part in ((g, 0), (u, 1)):
                    row, col = value_coords(warp, lane, v)
                    assert row == out_row
                    assert ((col // 8) % 2, 8 * (col // 16) + col % 8) == (part, out_col)
    with pytest.raises(ValueError, match="multiple of 8"):
        swiglu_sources(12)


def test_error_bounds_grow_with_x() -> None:
    for name in ("gelu", "gelu_tanh", "silu"):
        assert act.error_bound(name, 0.0) == 0.0
        assert 0 < act.error_bound(name, 1.0) < act.error_bound(name, 8.0) < 2**-7
    assert act.error_bound("relu", 5.0) == 0.0
    with pytest.raises(ValueError):
        act.error_bound("tanh", 1.0)

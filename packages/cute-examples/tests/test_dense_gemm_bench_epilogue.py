"""The fused-epilogue benchmark's pieces without a GPU: the eager references, a row's cells and target marks, and
the config and schedule line (`_ran`) that reads the plan gemm() ran."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")


def test_eager_references_are_torch_functions_of_addmm():
    from cute_examples.dense_gemm.bench_epilogue import eager_fn

    g = torch.Generator().manual_seed(3)
    bias, a, b = torch.randn(5, generator=g), torch.randn(4, 3, generator=g), torch.randn(3, 5, generator=g)
    pre = torch.addmm(bias, a, b)
    assert torch.equal(eager_fn("gelu")(bias, a, b), torch.nn.functional.gelu(pre))
    assert torch.equal(eager_fn("gelu_tanh")(bias, a, b), torch.nn.functional.gelu(pre, approximate="tanh"))
    got_pre, got = eager_fn("gelu+pre")(bias, a, b)
    assert torch.equal(got_pre, pre) and torch.equal(got, torch.nn.functional.gelu(pre))


def test_cells_mark_a_missed_target_and_show_the_ratios():
    from cute_examples.dense_gemm.bench_epilogue import _cells

    times = {"fused": 1.1, "plain": 1.0, "eager": 1.21}
    row = _cells("gelu 8x8->8", times, 2.2e9, "gelu", 1e-3)
    assert "1.100 (> 1.06)" in row and "1.100x" in row and "n/a" in row
    assert "(>" not in _cells("relu 8x8->8", {**times, "fused": 1.02}, 2.2e9, "relu", 0.0)
    assert "(>" not in _cells("bias 8x8->8", times, 2.2e9, "bias", 0.0)  # no fused/plain target of its own
    with_compile = _cells("silu 8x8->8", {**times, "compiled": 1.32}, 2.2e9, "silu", 0.0)
    assert "1.320    1.200x" in with_compile


def test_ran_reads_the_plan_of_the_call_and_restores_the_lookup(monkeypatch):
    from cute_examples.dense_gemm import bench_epilogue, launch_plan

    plans = {
        "dp": SimpleNamespace(config=SimpleNamespace(name="dense_gemm_x_bn"), schedule=None),
        "sk": SimpleNamespace(config=SimpleNamespace(name="dense_gemm_x_bn_splitk"),
                              schedule=SimpleNamespace(label="split_k S=4 units=128")),
    }
    get = lambda key, *args: plans[key]  # noqa: E731 - the lookup gemm() calls
    monkeypatch.setattr(launch_plan, "_get", get)
    assert bench_epilogue._ran(lambda: launch_plan._get("dp")) == "dense_gemm_x_bn data_parallel"
    assert bench_epilogue._ran(lambda: launch_plan._get("sk")) == "dense_gemm_x_bn_splitk split_k S=4 units=128"
    assert launch_plan._get is get

    def fails():
        launch_plan._get("dp")
        raise RuntimeError("launch failed")

    with pytest.raises(RuntimeError, match="launch failed"):
        bench_epilogue._ran(fails)
    assert launch_plan._get is get

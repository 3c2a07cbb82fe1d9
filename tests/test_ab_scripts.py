"""`scripts/bundle_ab.py` loads each row's kernel from two bundles in one process, and `scripts/k_intercept.py` fits a
launch's fixed cost: the pieces they rely on, without a GPU."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture
def scripts(load_script, monkeypatch):  # noqa: ANN001, ANN201
    monkeypatch.syspath_prepend(str(SCRIPTS))  # both import gemm_sweep
    return load_script("bundle_ab"), load_script("k_intercept")


def test_bundle_ab_empties_every_gemm_kernel_table(scripts, monkeypatch):  # noqa: ANN001
    """Every JIT kernel a GemmConfig can run (`kernel._kernel_fn`) is one whose table `use_bundle` empties, and the
    bundle directory switches."""
    from cute_examples.dense_gemm import kernel
    from cute_examples.dense_gemm.configs import sweep_configs
    from cute_examples.dense_gemm.fp8_cases import fp8_gpu_configs
    from cute_runtime import JitKernel

    bundle_ab, _ = scripts
    fns = {name for name, v in vars(kernel).items() if isinstance(v, JitKernel)}
    run = {kernel._kernel_fn(cfg) for cfg in sweep_configs() + fp8_gpu_configs()}
    assert len(run) == 6 and run <= {getattr(kernel, name) for name in fns}
    for name in fns:
        getattr(kernel, name)._kernels[("spec", "sm_90a", None)] = object()
    monkeypatch.setenv("CUTE_BUNDLE_DIR", "/old")
    bundle_ab.use_bundle("/new")
    assert all(not getattr(kernel, name)._kernels for name in fns)
    assert os.environ["CUTE_BUNDLE_DIR"] == "/new"


def test_bundle_ab_specs_name_every_pick(scripts, tmp_path):  # noqa: ANN001
    bundle_ab, _ = scripts
    rows = bundle_ab.rows(6, 5, suite=False)
    assert len(rows) == 6
    path = tmp_path / "specs.jsonl"
    from gemm_sweep import write_config_specs

    n = write_config_specs(str(path), [cfg for _, _, (cfg, _) in rows])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == n == len({cfg.name for _, _, (cfg, _) in rows})
    assert all(line["kernel"].startswith("dense_gemm") and line["target"] == "sm_90a" for line in lines)


def test_k_intercept_line_recovers_a_line(scripts):  # noqa: ANN001
    _, k_intercept = scripts
    ks = list(k_intercept.KS)
    a, b = k_intercept._line(ks, [2.5 + 0.004 * k for k in ks])
    assert a == pytest.approx(2.5) and b == pytest.approx(0.004)
    a, b = k_intercept._line([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])  # least squares, not the end points
    assert (a, b) == pytest.approx((1.0, 0.5))

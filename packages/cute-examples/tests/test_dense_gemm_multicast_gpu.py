"""The GEMM on an sm_90 GPU: issue 9's multicast classes, and random problems whose config `gemm()` chooses.

- Every formerly failing class (A m-major under cluster_n 2, B n-major under cluster_m 2; float16 and bfloat16;
  every tile; `configs.multicast_split_configs()`) on odd shapes, 2-D and batched, against torch, with the
  guard region around C untouched.
- `configs.random_problems()` (seeded): shapes, majors, dtypes, batch counts and whether `out` is passed are
  drawn; `gemm(a, b[, out])` is called as a user calls it, without tile, cluster or variant, so the cost model
  chooses. Their configs are planned into the AOT bundle (`python -m cute_examples.build_bundle build/aot`)
  for 132- and 114-SM GPUs. This test runs from that bundle only: without CUTE_BUNDLE_DIR, or when the bundle
  lacks the kernel `gemm()` asks for (the runtime then raises KernelNotFoundError and compiles nothing), it fails.
"""

from __future__ import annotations

import pytest
from cute_examples.dense_gemm.aot import BENCH_NUM_SMS
from cute_examples.dense_gemm.configs import (
    RANDOM_PROBLEM_COUNT,
    gemm_call_configs,
    multicast_split_configs,
    random_problem_configs,
    random_problems,
)
from cute_examples.dense_gemm.kernel import gemm_spec
from cute_runtime.testing import requires_sm90

torch = pytest.importorskip("torch")

from test_dense_gemm_gpu import _guarded, _mask_of, _tdt, tolerance  # noqa: E402  (the GPU tests' helpers)

# odd sizes everywhere (M and N end inside tiles and 16-byte chunks, K inside a K-tile); 2-D and batched
SHAPES = [(127, 255, 72, 1, False), (257, 130, 100, 3, True), (1000, 1000, 1000, 1, True)]


def _call(ab, c_dtype, a_major, b_major, c_major, m, n, k, l, batched, out_given, **kwargs):
    """gemm() on guarded, padded operands; checks the result against torch and the guard region; returns out."""
    from cute_examples.dense_gemm import gemm

    _, a = _guarded(l, m, k, a_major == "k", _tdt(ab), "randn")
    _, b = _guarded(l, k, n, b_major == "n", _tdt(ab), "randn")
    c = cbuf = None
    if out_given:
        cbuf, c = _guarded(l, m, n, c_major == "n", _tdt(c_dtype), "nan")
        untouched, mask = cbuf.clone(), _mask_of(cbuf, c)
    if not batched:
        a, b = a[0], b[0]
        c = None if c is None else c[0]
    out = gemm(a, b, c, **kwargs)
    torch.cuda.synchronize()
    if out_given:
        assert out is c
    assert tuple(out.shape) == ((l, m, n) if batched else (m, n))
    assert out.dtype == _tdt(c_dtype)
    ref = torch.matmul(a.float(), b.float())
    got = out.float()
    assert bool(torch.isfinite(got).all()), "output not fully written (NaN poison left)"
    err = float((got - ref).norm() / ref.norm().clamp_min(1e-30))
    assert err <= tolerance("float32", c_dtype), f"{m}x{n}x{k}x{l}: error {err:.3e}"
    if out_given:
        assert torch.equal(cbuf[~mask], untouched[~mask]), "guard region or padding written"
    return out


_MC = multicast_split_configs()


@requires_sm90
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s[:4])) + ("" if s[4] else "-2d"))
@pytest.mark.parametrize("cfg", _MC, ids=lambda c: c.name)
def test_formerly_failing_multicast_classes(cfg, shape):
    torch.manual_seed(0)
    _call(
        cfg.a_dtype, cfg.c_dtype, cfg.a_major, cfg.b_major, cfg.c_major, *shape, True,
        tile_shape_mnk=(cfg.tile_m, cfg.tile_n, cfg.tile_k),
        cluster_shape_mn=(cfg.cluster_m, cfg.cluster_n),
        variant=cfg.variant,
    )


def _bundle():
    """The AOT bundle this test must run from (pytest.fail when none is configured)."""
    from cute_runtime import load_bundle
    from cute_runtime.config import bundle_dir

    path = bundle_dir()
    if path is None:
        pytest.fail(
            "the random-problem GEMM test runs from the AOT bundle only: build it with "
            "`python -m cute_examples.build_bundle build/aot` and set CUTE_BUNDLE_DIR=build/aot",
            pytrace=False,
        )
    return load_bundle(path)


@requires_sm90
@pytest.mark.parametrize("index", range(RANDOM_PROBLEM_COUNT))
def test_random_problem_with_the_config_gemm_chooses(index, monkeypatch, tmp_path):
    from cute_runtime import KernelNotFoundError, device_properties

    monkeypatch.setenv("CUTE_TUNE_CACHE", str(tmp_path / "tune.json"))  # no tuned entry: the cost model chooses
    bundle = _bundle()
    p = random_problems()[index]
    sms = device_properties(0).sm_count
    planned = {c.name for c in random_problem_configs()}
    for cfg in gemm_call_configs(p, sms):
        if cfg.name not in planned or bundle.find(gemm_spec(cfg)) is None:
            pytest.fail(
                f"bundle miss: {p} on a {sms}-SM GPU needs {cfg.name}, which the bundle {bundle.path} lacks "
                f"(configs are planned for {BENCH_NUM_SMS} SMs; rebuild: python -m cute_examples.build_bundle)",
                pytrace=False,
            )
    torch.manual_seed(index)
    try:
        _call(p.ab_dtype, p.c_dtype, p.a_major, p.b_major, p.c_major, p.m, p.n, p.k, p.l, p.batched, p.out_given)
    except KernelNotFoundError as e:
        pytest.fail(f"bundle miss: gemm() asked the bundle for a kernel it lacks ({e})", pytrace=False)

"""The torch.ops and FP8 GPU tests' calls (`dense_gemm.gpu_calls`, `torch_ops_cases`) load only kernels the AOT
catalogue holds, so a bundle-only GPU host runs them without recording a miss.

gemm() itself runs here on CPU fakes of each call's tensors (its checks, staging, epilogue and device-scale rules,
tuned-table miss and config decision, split-K included) with the kernel loader replaced by a recorder, on a 132-
and a 114-SM device; every kernel it asks for must be a catalogue entry (the bundle's key: the kernel's spec). The
torch.ops tests' elementwise_add calls are cases of the add's list, which `test_elementwise_add_plans` checks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from cute_examples.dense_gemm.aot import BENCH_NUM_SMS
from cute_examples.dense_gemm.gpu_calls import gpu_calls
from gemm_fakes import Driver, FakeCuda, GemmKernel  # the tests' CPU stand-ins


@pytest.fixture(scope="module")
def catalogued():
    """The canonical specs of every GEMM kernel the sm_90a catalogue lists (what the bundle holds)."""
    from cute_examples import catalogue
    from cute_examples.dense_gemm.kernel import compile_gemm, gemm_spec
    from cute_nvarch.kernel_spec import canonical_spec

    cfgs = [fn.args[0] for _, fn in catalogue.jobs("sm_90a") if getattr(fn, "func", None) is compile_gemm]
    return {canonical_spec(gemm_spec(c)) for c in cfgs}


@pytest.fixture
def loads(monkeypatch, tmp_path):
    """run(call, sm_count): the configs gemm() loads for a GemmCall on fakes of its tensors."""
    import cute_runtime
    from cute_examples.dense_gemm import kernel as gemm_kernel
    from cute_examples.dense_gemm import launch_plan, tune_cache
    from cute_runtime import TensorMap

    loaded = []

    def kernel_of(cfg, cc, device=None):
        loaded.append(cfg)
        return GemmKernel(cfg, lambda grid, stream, block: None)

    props = SimpleNamespace(compute_capability=(9, 0), sm_count=0, name="Fake H100")
    monkeypatch.setenv("CUTE_TUNE_CACHE", str(tmp_path / "none.json"))
    monkeypatch.setattr(tune_cache, "_once", {})
    monkeypatch.setattr(cute_runtime, "device_properties", lambda device: props)
    monkeypatch.setattr(cute_runtime.driver, "init", lambda: Driver)
    monkeypatch.setattr(gemm_kernel, "kernel_of", kernel_of)
    monkeypatch.setattr(launch_plan, "tensor_maps", lambda p, cfg: [TensorMap(bytes(128)) for _ in range(3)])
    monkeypatch.setattr(launch_plan, "aux_tensor_map", lambda cfg, op, m: TensorMap(bytes(128)))
    # build the plan (everything gemm() decides), launch nothing
    monkeypatch.setattr(launch_plan, "_get", lambda key, *args: (launch_plan._build(*args), lambda *a: None)[1])

    def load(a, b, out, kwargs, sm_count):
        """The configs gemm(a, b, out, **kwargs) loads on fakes (run.load: for calls that are not GemmCalls)."""
        from cute_examples.dense_gemm import gemm

        props.sm_count = sm_count
        loaded.clear()
        gemm(a, b, out, **kwargs)
        return list(loaded)

    def run(call, sm_count):
        shapes = call.shapes()
        c = getattr(torch, call.c_name)
        a = FakeCuda(shapes["a"], dtype=getattr(torch, call.a_dtype))
        b = FakeCuda(shapes["b"], dtype=getattr(torch, call.b_dtype or call.a_dtype))
        if call.b_major == "k":  # the transpose of a row-major (.., N, K)
            s = b.stride()
            b = FakeCuda((*b.shape[:-2], b.shape[-1], b.shape[-2]), (*s[:-2], 1, s[-2]), b.dtype)
        tensors = {n: FakeCuda(shapes[n], dtype=c) for n in ("bias", "input", "aux")}
        tensors.update({n: FakeCuda(shapes[n], dtype=torch.float32) for n in ("scale_a", "scale_b") if n in shapes})
        out = FakeCuda(shapes["out"], dtype=c) if call.out else None
        return load(a, b, out, call.keywords(**tensors), sm_count)

    run.load = load
    return run


def test_calls_cover_the_tests_that_recorded_misses():
    """The lists hold the calls whose kernels bundle-only GPU runs recorded as misses: the torch.ops tests' fused
    bias and addmm calls on an N-major b, and the FP8 tests' E5M2 x E4M3 calls with promotion and float scales."""
    calls = gpu_calls()
    assert any(c.b_major == "n" and c.bias and c.activation == "relu" for c in calls)
    assert any(c.b_major == "n" and c.input and c.alpha != 1 for c in calls)
    assert any(c.a_dtype == "float8_e5m2" and c.promotion and isinstance(c.scale_a, float) for c in calls)
    assert any(c.scale_a == "m" and c.scale_b == "n" for c in calls)


@pytest.mark.parametrize("sm_count", BENCH_NUM_SMS)
def test_every_gpu_call_loads_a_catalogued_kernel(loads, catalogued, sm_count):
    from cute_examples.dense_gemm.kernel import gemm_spec
    from cute_nvarch.kernel_spec import canonical_spec

    missing = {}
    for call in gpu_calls():
        got = loads(call, sm_count)
        assert got, call
        for cfg in got:
            if canonical_spec(gemm_spec(cfg)) not in catalogued:
                missing[cfg.name] = call
    assert not missing, "\n".join(f"{name}: {call}" for name, call in missing.items())


def test_the_listed_configs_are_the_loaded_ones(loads):
    """`GemmCall.configs` (what the catalogue lists) names exactly the kernel gemm() loads for each call."""
    for call in gpu_calls():
        assert [c.name for c in call.configs(BENCH_NUM_SMS)] == [loads(call, s)[-1].name for s in BENCH_NUM_SMS], call

"""gemm()'s 8-bit (E4M3) C on CPU fakes: the argument rules (out_scale, amax, 8-bit inputs, row-major out, bfloat16
bias) raise before any GPU work, naming the argument; the plan runs `dense_gemm_scaled` with out_scale by value or
by address and amax's address in its parameter block, zeroing amax before every launch."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from cute_examples.dense_gemm import launch_plan
from cute_examples.dense_gemm.kernel import SCALE_PARAMS
from cute_examples.dense_gemm.launch_plan import PlanCache
from gemm_fakes import Driver, FakeCuda, GemmKernel, block_fields

E4M3 = torch.float8_e4m3fn


class Scalar(FakeCuda):
    """A 1-element float32 CUDA tensor's stand-in that records zero_()."""

    def __init__(self, shape=(), dtype=torch.float32, address=1 << 30, device=0):
        super().__init__(shape, None, dtype, address, device)
        self.zeroed = 0

    def numel(self):
        return int(torch.Size(self.shape).numel())

    def zero_(self):
        self.zeroed += 1
        return self


def _ops(c_dtype=E4M3, out_stride=None):
    a = FakeCuda((256, 128), dtype=E4M3)
    b = FakeCuda((128, 192), stride=(1, 128), dtype=E4M3, address=1 << 24)  # K-major (w.t())
    out = FakeCuda((256, 192), stride=out_stride, dtype=c_dtype, address=1 << 26)
    return a, b, out


@pytest.mark.parametrize(
    ("kwargs", "error", "rule"),
    [
        ({"out_scale": 2.0, "out": "bf16"}, ValueError, "out_scale is only for an 8-bit C"),
        ({"amax": Scalar(), "out": "bf16"}, ValueError, "amax is only for an 8-bit C"),
        ({"out_scale": "2"}, TypeError, "out_scale must be a real number or a float32 CUDA tensor"),
        ({"out_scale": True}, TypeError, "out_scale must be a real number"),
        ({"out_scale": float("nan")}, ValueError, "out_scale must not be NaN"),
        ({"out_scale": Scalar(dtype=torch.float16)}, ValueError, "out_scale must be a float32 CUDA tensor"),
        ({"out_scale": Scalar((2,))}, ValueError, r"out_scale must have one element, got shape \(2,\)"),
        ({"amax": 0.0}, TypeError, "amax must be a float32 CUDA tensor"),
        ({"amax": Scalar(device=1)}, ValueError, "amax must be a float32 CUDA tensor on a's device"),
        ({"amax": Scalar((1, 2))}, ValueError, "amax must have one element"),
    ],
)
def test_out_scale_and_amax_rules(kwargs, error, rule):
    a, b, out = _ops()
    if kwargs.pop("out", None) == "bf16":
        out = FakeCuda(out.shape, dtype=torch.bfloat16, address=1 << 26)
    with pytest.raises(error, match=rule):
        launch_plan.gemm(a, b, out, **kwargs)


def test_8_bit_c_needs_8_bit_inputs_and_a_row_major_out():
    a, b, out = _ops()
    h = FakeCuda((256, 128), dtype=torch.float16)
    hb = FakeCuda((128, 192), dtype=torch.float16, address=1 << 24)
    with pytest.raises(ValueError, match=r"c_dtype: an 8-bit C \(float8_e4m3fn\) needs 8-bit a and b"):
        launch_plan.gemm(h, hb, c_dtype=E4M3)
    with pytest.raises(ValueError, match=r"out: an 8-bit C \(float8_e4m3fn\) needs 8-bit a and b"):
        launch_plan.gemm(h, hb, out, out_scale=2.0)
    with pytest.raises(ValueError, match="out: an 8-bit out must be row-major"):
        launch_plan.gemm(a, b, FakeCuda((256, 192), stride=(1, 256), dtype=E4M3, address=1 << 26))
    with pytest.raises(ValueError, match=r"bias.dtype must be bfloat16 \(C's dtype; bfloat16 for an 8-bit C\)"):
        launch_plan.gemm(a, b, out, bias=FakeCuda((192,), dtype=E4M3, address=1 << 28))




@pytest.fixture
def fakes(monkeypatch, tmp_path):
    """gemm() on fakes: (cache, launches (parameter blocks), configs built)."""
    import cute_runtime
    from cute_examples.dense_gemm import kernel as gemm_kernel
    from cute_examples.dense_gemm import tune_cache
    from cute_runtime import TensorMap

    launches, configs = [], []

    def kernel_of(cfg, cc, device=None):
        configs.append(cfg)
        return GemmKernel(cfg, lambda grid, stream, block: launches.append(block))

    monkeypatch.setenv("CUTE_TUNE_CACHE", str(tmp_path / "none.json"))
    monkeypatch.setattr(tune_cache, "_once", {})
    props = SimpleNamespace(compute_capability=(9, 0), sm_count=132, name="Fake H100")
    monkeypatch.setattr(cute_runtime, "device_properties", lambda device: props)
    monkeypatch.setattr(cute_runtime.driver, "init", lambda: Driver)
    monkeypatch.setattr(gemm_kernel, "kernel_of", kernel_of)
    monkeypatch.setattr(launch_plan, "tensor_maps", lambda p, cfg: [TensorMap(bytes(128)) for _ in range(3)])
    cache = PlanCache(launch_plan._build)
    monkeypatch.setattr(launch_plan, "_get", cache.get)
    return cache, launches, configs


def _scale_fields(block, plan):
    return block_fields(block, plan.kernel.layout, SCALE_PARAMS)


def test_fp8_out_plan_sets_out_scale_and_amax_per_call(fakes):
    cache, launches, configs = fakes
    a, b, out = _ops()
    assert launch_plan.gemm(a, b, out) is out  # no out_scale: 1, no amax
    (plan,) = cache.table().values()
    cfg = configs[-1]
    assert cfg.fp8_out and cfg.scaled and cfg.tile_n % 64 == 0 and (cfg.scale_a, cfg.scale_b) == (None, None)
    assert _scale_fields(launches[-1], plan) == dict(scale_a_ptr=0, scale_b_ptr=0, out_scale_ptr=0, amax_ptr=0,
                                                     out_scale=1.0)
    amax = Scalar(address=1 << 29)
    launch_plan.gemm(a, b, out, out_scale=0.5, amax=amax)
    assert _scale_fields(launches[-1], plan) == dict(scale_a_ptr=0, scale_b_ptr=0, out_scale_ptr=0, amax_ptr=1 << 29,
                                                     out_scale=0.5)
    assert amax.zeroed == 1
    dev = Scalar((1,), address=1 << 31)
    launch_plan.gemm(a, b, out, out_scale=dev, amax=amax)
    got = _scale_fields(launches[-1], plan)
    assert (got["out_scale_ptr"], got["out_scale"], got["amax_ptr"], amax.zeroed) == (1 << 31, 1.0, 1 << 29, 2)
    launch_plan.gemm(a, b, out)  # a later call without amax does not write the previous one
    assert _scale_fields(launches[-1], plan)["amax_ptr"] == 0 and len(cache.table()) == 1
    # device scales of A and B with an 8-bit C: one kernel reading all of them
    sa, sb = Scalar(address=1 << 32), Scalar((1, 192), address=1 << 33)
    launch_plan.gemm(a, b, out, scale_a=sa, scale_b=sb, out_scale=2.0)
    assert (configs[-1].scale_a, configs[-1].scale_b, configs[-1].fp8_out) == ("tensor", "n", True)
    got = _scale_fields(launches[-1], list(cache.table().values())[-1])
    assert (got["scale_a_ptr"], got["scale_b_ptr"], got["out_scale"]) == (1 << 32, 1 << 33, 2.0)
    with pytest.raises(ValueError, match="amax overlaps out"):
        launch_plan.gemm(a, b, out, amax=Scalar(address=(1 << 26) + 64))


def test_cli_takes_an_8_bit_c_and_out_scale():
    from cute_examples.dense_gemm.__main__ import config_of, parse_args

    fp8 = ["--a_dtype", "Float8E4M3FN", "--b_dtype", "Float8E4M3FN"]
    args = parse_args([*fp8, "--c_dtype", "Float8E4M3FN", "--out_scale", "0.5"])
    cfg = config_of(args)
    assert (cfg.c_dtype, cfg.fp8_out, cfg.tile_k, args.out_scale) == ("float8_e4m3fn", True, 128, 0.5)
    for bad in ([*fp8, "--out_scale", "2"], [*fp8, "--c_dtype", "Float8E4M3FN", "--c_major", "m"],
                ["--c_dtype", "Float8E4M3FN"], [*fp8, "--c_dtype", "Float8E4M3FN", "--tile_shape_mnk", "128,96,128"],
                [*fp8, "--c_dtype", "Float8E4M3FN", "--tune"]):
        with pytest.raises(SystemExit):
            parse_args(bad)


def test_cli_compiles_an_8_bit_c_without_a_gpu(capsys):
    pytest.importorskip("mlir")
    from cute_examples.dense_gemm.__main__ import main
    from cute_runtime import gpu_available

    if gpu_available():
        pytest.skip("a GPU is present: the GPU tests run the 8-bit C")
    assert main(["--a_dtype", "Float8E4M3FN", "--b_dtype", "Float8E4M3FN", "--c_dtype", "Float8E4M3FN",
                 "--out_scale", "0.5", "--mnkl", "256,256,256,1"]) == 0
    text = capsys.readouterr().out
    assert "kernel: dense_gemm_e4m3_f32_e4m3_kkn_128x128x128_c1x1_s6_p1s2_sxx" in text
    assert "spill" in text and "no GPU" in text


def test_empty_k_store_saturates_and_sets_amax():
    """K = 0 (no launch): the epilogue's D in torch, stored as satfinite(D * out_scale), amax = max |D|."""
    from cute_examples.dense_gemm.launch_plan import _fp8_store

    d = torch.tensor([[0.0, -1.5, 300.0], [float("nan"), 2.0, -1000.0]])
    amax = torch.full((1,), -1.0)
    got = _fp8_store(torch, d[:1], 2.0, amax)
    assert got.dtype == E4M3 and got.float().tolist() == [[0.0, -3.0, 448.0]] and amax.tolist() == [300.0]
    got = _fp8_store(torch, d, None, amax)
    assert got.float()[1, 1:].tolist() == [2.0, -448.0] and bool(torch.isnan(got.float()[1, 0]))
    assert bool(torch.isnan(amax).all())
    assert _fp8_store(torch, d[:0], 1.0, amax).numel() == 0 and amax.tolist() == [0.0]

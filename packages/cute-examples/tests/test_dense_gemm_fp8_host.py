"""Host side of the FP8 GEMM: 8-bit dtype rules (K-major, pairs), config choice (tile K 128), TMA encodings."""

from __future__ import annotations

import pytest
import torch
from cute_examples.dense_gemm import host
from cute_examples.dense_gemm.fp8_cases import decomposed_calls, pingpong_calls
from cute_examples.dense_gemm.launch_plan import _scaled_alpha
from test_dense_gemm_host import _col, _row

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def test_fp8_problem_and_config():
    p = host.problem_of(_row(1000, 512, dtype=E4M3), _col(512, 768, dtype=E5M2), _row(1000, 768, dtype=torch.bfloat16))
    assert (p.a_major, p.b_major, p.ab_dtype, p.b_dtype) == ("k", "k", "float8_e4m3fn", "float8_e5m2")
    cfg = host.choose_config(p)
    assert (cfg.a_dtype, cfg.b_dtype, cfg.c_dtype, cfg.tile_k) == ("float8_e4m3fn", "float8_e5m2", "bfloat16", 128)
    same = host.problem_of(_row(64, 32, dtype=E4M3), _col(32, 64, dtype=E4M3), _row(64, 64, dtype=torch.float32))
    assert same.b_dtype is None and host.choose_config(same).b_dtype == "float8_e4m3fn"


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        (_col(256, 128, dtype=E4M3), _col(128, 256, dtype=E4M3), "a: 8-bit operands must be K-major"),
        (_row(256, 128, dtype=E4M3), _row(128, 256, dtype=E4M3), "b: 8-bit operands must be K-major"),
        (_row(256, 128, dtype=E4M3), _col(128, 256, dtype=torch.float16), "b must be 8-bit"),
    ],
)
def test_fp8_rules_name_the_operand(a, b, match):
    with pytest.raises(ValueError, match=match):
        host.problem_of(a, b, _row(256, 256, dtype=torch.bfloat16))


def test_fp8_tensor_maps_are_8_bit_with_128_byte_rows(monkeypatch):
    calls = []
    monkeypatch.setattr("cute_runtime.tma.encode_tiled", lambda *args, owner=None: calls.append(args) or args)
    p = host.problem_of(_row(300, 256, dtype=E4M3), _col(256, 200, dtype=E5M2), _row(300, 200, 208, torch.float16))
    cfg = host.choose_config(p, tile_shape_mnk=(128, 128, 128), cluster_shape_mn=(1, 1))
    host.tensor_maps(p, cfg)
    a, b, _ = calls
    assert a[0] == b[0] == 0  # CU_TENSOR_MAP_DATA_TYPE_UINT8: TMA moves 8-bit floats as bytes
    assert a[3:6] == ((256, 300, 1), (256, 256 * 300), (128, 128, 1))  # A (K, M, L): 128-byte K rows
    assert b[3:6] == ((256, 200, 1), (256, 256 * 200), (128, 128, 1))  # B (K, N, L)
    assert a[8] == b[8] == 3  # 128-byte swizzle


def test_python_float_scales_fold_into_alpha():
    assert _scaled_alpha(1.0, 0.5, 4.0) == 2.0 and _scaled_alpha(2.0, None, 3) == 6.0
    with pytest.raises(ValueError, match="scale_a must be a Python float"):
        _scaled_alpha(1.0, torch.ones(1), None)


def test_cli_takes_cutedsl_fp8_names_and_the_promotion_interval():
    from cute_examples.dense_gemm.__main__ import config_of, parse_args

    args = parse_args(["--a_dtype", "Float8E4M3FN", "--b_dtype", "Float8E5M2", "--c_dtype", "BFloat16",
                       "--mma_promotion_interval", "8"])
    cfg = config_of(args)
    assert (cfg.a_dtype, cfg.b_dtype, cfg.tile_k, cfg.mma_promotion_interval) == (
        "float8_e4m3fn", "float8_e5m2", 128, 8)
    for bad in (["--a_major", "m"], ["--mma_promotion_interval", "6"], ["--mnkl", "256,256,256,2", "--benchmark"]):
        with pytest.raises(SystemExit):
            parse_args(["--a_dtype", "Float8E4M3FN", "--b_dtype", "Float8E4M3FN", *bad])


class _Scale:
    """A stand-in for a float32 CUDA scale tensor (shape, strides)."""

    is_cuda = True
    dtype = torch.float32
    device = "cuda:0"

    def __init__(self, shape, stride):
        self.shape, self._stride = tuple(shape), tuple(stride)

    def numel(self):
        out = 1
        for s in self.shape:
            out *= s
        return out

    def stride(self):
        return self._stride

    def data_ptr(self):
        return 1 << 20


class _Op:
    def __init__(self, shape):
        self.shape, self.device = shape, "cuda:0"

    def dim(self):
        return len(self.shape)


def test_device_scale_modes_are_torch_scaled_mms():
    from cute_examples.dense_gemm.launch_plan import scale_modes

    a, b = _Op((300, 256)), _Op((256, 200))
    assert scale_modes(a, b, _Scale((), ()), _Scale((1,), (1,))) == ("tensor", "tensor")
    assert scale_modes(a, b, _Scale((300, 1), (1, 1)), _Scale((1, 200), (200, 1))) == ("m", "n")
    assert scale_modes(a, b, None, _Scale((1, 1), (1, 1))) == (None, "tensor")
    with pytest.raises(ValueError, match=r"scale_a must have one element or shape \(300, 1\)"):
        scale_modes(a, b, _Scale((1, 300), (300, 1)), None)
    with pytest.raises(ValueError, match="scale_b must have one element or shape"):
        scale_modes(a, b, None, _Scale((1, 200), (1, 2)))
    bad = _Scale((1,), (1,))
    bad.dtype = torch.float16
    with pytest.raises(ValueError, match="scale_a must be a float32 CUDA tensor"):
        scale_modes(a, b, bad, None)


def test_allow_copy_makes_8_bit_operands_k_major():
    from cute_examples.dense_gemm.launch_plan import k_major_copies

    a = torch.randn(64, 32).to(E4M3).t().contiguous().t()  # M-major
    b = torch.randn(32, 48).to(E5M2)  # row-major (K, N): N-major
    ka, kb = k_major_copies(a, b)
    assert ka.stride(-1) == 1 and kb.stride(-2) == 1
    assert torch.equal(ka.float(), a.float()) and torch.equal(kb.float(), b.float())
    h = torch.randn(64, 32, dtype=torch.float16).t().contiguous().t()
    assert k_major_copies(h, b)[0] is h  # 16-bit operands take any major as they are
    ok = torch.randn(64, 32).to(E4M3)
    assert k_major_copies(ok, kb) == (ok, kb)


@pytest.mark.parametrize("c_dtype", ["bfloat16", "float8_e4m3fn"])
def test_promotion_keeps_the_scales_where_it_narrows_the_tile(c_dtype):
    # 4096^3's data-parallel pick is 128 x 256; promotion re-chooses it at a tile N it allows (192 at most; an 8-bit
    # C: 128), which once kept neither the device scales nor the epilogue (the plain kernel then ran without
    # scale_a * scale_b)
    from cute_examples.dense_gemm.choice import GemmShape
    from cute_examples.dense_gemm.launch_plan import plan_config
    from cute_examples.dense_gemm.spec import MAX_PROMOTION_TILE_N

    shape = GemmShape(4096, 4096, 4096, 1, ab_dtype="float8_e4m3fn", c_dtype=c_dtype, a_major="k", b_major="k",
                      c_major="n")
    fields = {"scale_a": "m", "scale_b": "tensor", "activation": "relu", "bias": "n"}
    plain, _ = plan_config(shape, (c_dtype, "float32", None, None, None, 0), fields, 132)
    assert plain.tile_n > MAX_PROMOTION_TILE_N  # the case: a pick wider than promotion allows
    cfg, _ = plan_config(shape, (c_dtype, "float32", None, None, None, 4), fields, 132)
    assert cfg.tile_n <= MAX_PROMOTION_TILE_N and cfg.mma_promotion_interval == 4
    assert cfg.tile_n % 128 == 0 or c_dtype != "float8_e4m3fn"
    assert {f: getattr(cfg, f) for f in fields} == fields and cfg.scaled


@pytest.mark.parametrize("call", decomposed_calls(),
                         ids=lambda c: f"{c.mnk[0]}x{c.mnk[1]}x{c.mnk[2]}-{c.c_dtype}-pi{c.promotion}")
@pytest.mark.parametrize("sms", [132, 114])
def test_the_decomposed_calls_split_k_on_h100_and_h200(call, sms):
    """The FP8 split-K GPU test's calls are ones whose free choice shares K on an H200 (132 SMs) and an H100 (114): a
    cost-model change that moves one to data-parallel fails here, before the GPU test does."""
    assert call.configs([sms])[0].shares_k, call.configs([sms])[0].name


@pytest.mark.parametrize("call", pingpong_calls(),
                         ids=lambda c: f"{c.mnk[0]}x{c.mnk[1]}x{c.mnk[2]}x{c.batch or 1}-{c.scale_a}{c.scale_b}")
@pytest.mark.parametrize("sms", [132, 114])
def test_the_pingpong_calls_run_ping_pong_on_h100_and_h200(call, sms):
    """The FP8 ping-pong GPU test's calls are ones whose free choice runs the ping-pong schedule on an H200 and an
    H100: a choice change that moves one off it fails here, before the GPU test does."""
    assert call.configs([sms])[0].pingpong, call.configs([sms])[0].name

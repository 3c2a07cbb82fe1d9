"""The GEMM's 8-bit (E4M3) C on an sm_90 GPU (configs in the AOT bundle: `fp8_cases.fp8_out_configs` through
`fp8_gpu_configs`): satfinite(D * out_scale) against the float64 reference clamped to +-448 and rounded to E4M3
(within one E4M3 ulp plus the 8-bit tensor cores' accumulation error: their float32 partial sums keep fewer mantissa
bits, measured on an H200: up to 2 E4M3 ulps on values far below max |D|), with values saturating, float and
device out_scale, amax = max |D|, odd shapes and batches, NaN propagation, and torch._scaled_mm's FP8 output."""

from __future__ import annotations

import pytest
from cute_examples.dense_gemm.fp8_cases import FP8_GPU_SHAPES, fp8_out_configs
from cute_runtime.testing import requires_sm90

torch = pytest.importorskip("torch")

E4M3_MAX = 448.0
AMAX_RTOL = 5e-3  # max |D| in float32 (8-bit tensor-core accumulation) against float64
ACC_REL = 2.0**-12  # the 8-bit wgmma accumulation's error relative to sum |a_k b_k| (about 13 mantissa bits, x2)


def _operands(cfg, m, n, k, l):
    ad, bd = (getattr(torch, d) for d in (cfg.a_dtype, cfg.b_dtype))
    lead = (l,) if l > 1 else ()
    a = torch.randn((*lead, m, k), device="cuda").to(ad)
    b = torch.randn((*lead, n, k), device="cuda").to(bd).transpose(-1, -2)  # (K, N), K contiguous
    return a, b


def _ulp_e4m3(x):
    """One E4M3 ulp at |x| (3 mantissa bits; subnormals below 2^-6 have ulp 2^-9)."""
    _, exponent = torch.frexp(x.abs().clamp_min(2.0**-6))  # exact (a CUDA log2 of 64 may floor to 5)
    return torch.ldexp(torch.ones_like(x), exponent - 4)


def _expected(d, out_scale):
    """float64 D's 8-bit C: clamp(D * out_scale, -448, 448) rounded to E4M3 (torch's cast), as float64."""
    return (d * out_scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).double()


def _check(out, d, out_scale, acc_err=0.0):
    """out within one E4M3 ulp of the rounded reference plus `acc_err` (D's accumulation error) times out_scale."""
    exp = _expected(d, out_scale)
    got = out.double()
    assert bool(torch.isfinite(got).all())
    bad = (got - exp).abs() > _ulp_e4m3(exp) + acc_err * out_scale
    assert not bool(bad.any()), f"{int(bad.sum())} values beyond one E4M3 ulp, e.g. got {got[bad][:4].tolist()} " \
        f"want {exp[bad][:4].tolist()}"


def _case(cfg, shape, seed):
    """(a, b, kwargs of gemm, float64 D, D's accumulation error bound) of a config on a shape."""
    from cute_examples.dense_gemm.activation import reference

    m, n, k, l = shape
    torch.manual_seed(seed)
    a, b = _operands(cfg, m, n, k, l)
    kwargs = dict(c_dtype=torch.float8_e4m3fn, tile_shape_mnk=(cfg.tile_m, cfg.tile_n, cfg.tile_k),
                  cluster_shape_mn=(cfg.cluster_m, cfg.cluster_n), variant=cfg.variant,
                  mma_promotion_interval=cfg.mma_promotion_interval)
    d = torch.matmul(a.double(), b.double())
    err = float(torch.matmul(a.double().abs(), b.double().abs()).max()) * ACC_REL
    if cfg.scale_a is not None:
        sa = torch.rand(() if cfg.scale_a == "tensor" else (m, 1), device="cuda") + 0.5
        sb = torch.rand(() if cfg.scale_b == "tensor" else (1, n), device="cuda") + 0.5
        kwargs.update(scale_a=sa, scale_b=sb)
        d = d * sa.double() * sb.double()
        err *= float(sa.max()) * float(sb.max())
    if cfg.bias is not None:
        bias = torch.randn(n, device="cuda").to(torch.bfloat16) * 8
        kwargs.update(bias=bias)
        d = d + bias.double()
    if cfg.activation != "identity":
        kwargs.update(activation=cfg.activation)
        # gelu/silu/relu change an error by at most 1.13x; silu(g) * u by |g| + |u| times it
        err *= 2 * float(d.abs().max()) if cfg.activation == "swiglu" else 1.2
        d = reference(d, cfg.activation)
    return a, b, kwargs, d, err


def _shapes(cfg):
    # SwiGLU needs N a multiple of 16 (gate/up blocks of 8), rowwise scales 2-D operands
    return [s for s in FP8_GPU_SHAPES if (cfg.activation != "swiglu" or s[1] % 16 == 0)
            and (cfg.scale_a != "m" or s[3] == 1)]


_CASES = [(cfg, shape) for cfg in fp8_out_configs() for shape in _shapes(cfg)]


@requires_sm90
@pytest.mark.parametrize(("cfg", "shape"), _CASES, ids=[f"{c.name}-{'x'.join(map(str, s))}" for c, s in _CASES])
@pytest.mark.parametrize("scale_kind", ["float", "device"])
def test_fp8_out_saturates_and_writes_amax(cfg, shape, scale_kind):
    from cute_examples.dense_gemm import gemm

    a, b, kwargs, d, err = _case(cfg, shape, seed=16)
    dmax = float(d.abs().max())
    # a scale that puts the largest values at 2 x 448: every |D| above half the max saturates
    scale = 2 * E4M3_MAX / dmax
    out_scale = scale if scale_kind == "float" else torch.full((1,), scale, device="cuda")
    amax = torch.full((), -1.0, device="cuda")  # gemm() zeroes it
    out = gemm(a, b, out_scale=out_scale, amax=amax, **kwargs)
    torch.cuda.synchronize()
    assert out.dtype == torch.float8_e4m3fn and tuple(out.shape) == tuple(d.shape)
    assert bool((d.abs() * scale > E4M3_MAX).any())  # saturation is exercised
    _check(out, d, scale, err)
    assert abs(float(amax) - dmax) <= AMAX_RTOL * dmax, (float(amax), dmax)
    # into a given out, amax again (zeroed before the launch, so equal to this call's max)
    out2 = torch.empty_like(out)
    gemm(a, b, out2, out_scale=out_scale, amax=amax, **{k: v for k, v in kwargs.items() if k != "c_dtype"})
    torch.cuda.synchronize()
    assert torch.equal(out2.view(torch.uint8), out.view(torch.uint8))
    assert abs(float(amax) - dmax) <= AMAX_RTOL * dmax


@requires_sm90
def test_fp8_out_without_out_scale_or_amax_and_with_python_float_scales():
    from cute_examples.dense_gemm import gemm

    cfg = fp8_out_configs()[0]
    a, b, kwargs, d, err = _case(cfg, (300, 200, 272, 1), seed=3)
    out = gemm(a, b, scale_a=0.25, scale_b=0.5, **kwargs)  # Python floats: alpha
    torch.cuda.synchronize()
    _check(out, d * 0.125, 1.0, err * 0.125)


@requires_sm90
def test_fp8_out_nan_propagates_to_out_and_amax():
    from cute_examples.dense_gemm import gemm

    cfg = fp8_out_configs()[0]
    _, b, kwargs, _, _ = _case(cfg, (256, 256, 256, 1), seed=5)
    a = torch.randn(256, 256, device="cuda")
    a[7, 3] = float("nan")
    a = a.to(torch.float8_e4m3fn)
    amax = torch.zeros((), device="cuda")
    out = gemm(a, b, amax=amax, out_scale=1e-3, **kwargs)
    torch.cuda.synchronize()
    got = out.float()
    assert bool(torch.isnan(got[7]).all()) and bool(torch.isfinite(got[:7]).all())
    assert bool(torch.isnan(amax))


@requires_sm90
def test_fp8_out_matches_torch_scaled_mm():
    """torch._scaled_mm's FP8 output (use_fast_accum=False) on the same tensors and scales, within one E4M3 ulp plus
    the accumulation error; out_scale 1 (torch 2.11's _scaled_mm left its output unscaled by a tensor-wide
    scale_result on an H200: no value saturated at scale_result = 8, so the two are compared without one)."""
    from cute_examples.dense_gemm import gemm

    m = n = k = 1024
    torch.manual_seed(7)
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    sa, sb = torch.full((), 0.75, device="cuda"), torch.full((), 1.25, device="cuda")
    theirs = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.float8_e4m3fn, use_fast_accum=False)
    cfg = next(c for c in fp8_out_configs() if c.scale_a == "tensor" and c.mma_promotion_interval)
    ours = gemm(a, b, scale_a=sa, scale_b=sb, out_scale=1.0, c_dtype=torch.float8_e4m3fn,
                tile_shape_mnk=(cfg.tile_m, cfg.tile_n, cfg.tile_k), cluster_shape_mn=(cfg.cluster_m, cfg.cluster_n),
                mma_promotion_interval=cfg.mma_promotion_interval)
    torch.cuda.synchronize()
    t, o = theirs.double(), ours.double()
    err = float(torch.matmul(a.double().abs(), b.double().abs()).max()) * ACC_REL * 0.75 * 1.25
    assert not bool(((o - t).abs() > _ulp_e4m3(t) + err).any())

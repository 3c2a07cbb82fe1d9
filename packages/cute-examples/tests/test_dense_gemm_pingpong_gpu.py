"""The ping-pong schedule on an sm_90 GPU: plain configs on odd and batched shapes (every major, three C dtypes),
the fused calls (GELU with a bias, SwiGLU, an input addend), and every tile written exactly once when a CTA has an
odd number of work units (its two consumer warpgroups then take different counts).

Outputs are poisoned with NaN inside guard regions that must stay untouched. "Exactly once": the output is also the
input addend with beta = 1, so C = A @ B + C0 holds only if each tile is read and written by one warpgroup once
(a second pass over a tile would add A @ B again)."""

from __future__ import annotations

import math

import pytest
from cute_examples.dense_gemm.pingpong_cases import PLAIN_GPU_CONFIGS, gpu_calls
from cute_examples.dense_gemm.spec import TOLERANCE
from cute_runtime.testing import requires_sm90
from test_dense_gemm_gpu import run_case  # the GEMM GPU tests' guarded run (NaN poison, guard regions)

torch = pytest.importorskip("torch")

GUARD = 256


@requires_sm90
@pytest.mark.parametrize("cfg", PLAIN_GPU_CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize(
    "shape",
    [(1000, 1000, 1000, 1), (127, 255, 72, 1), (257, 130, 100, 3), (1536, 1536, 200, 2), (1, 1, 8, 1)],
    ids=lambda s: "x".join(map(str, s)),
)
def test_pingpong_plain(cfg, shape):
    # 1536 x 1536 x 2 gives every CTA several units: both warpgroups' pipeline phases and buffers carry over
    run_case(cfg, *shape)


def _guarded_out(shape, dtype):
    """(buffer, dense view of `shape`) inside NaN guard elements before and after."""
    numel = math.prod(shape)
    buf = torch.full((2 * GUARD + numel,), float("nan"), dtype=dtype, device="cuda")
    return buf, buf[GUARD : GUARD + numel].view(shape)


def _run_call(call, out0=None):
    """Run one `GemmCall` on random tensors and check it against torch float32 of the same function."""
    from cute_examples.dense_gemm import gemm
    from cute_examples.dense_gemm.activation import interleave_gate_up
    from cute_examples.torch_types import torch_dtype

    g = torch.Generator(device="cuda").manual_seed(sum(call.mnk) + call.batch)
    shapes = call.shapes()
    ab, cd = torch_dtype(call.a_dtype), torch_dtype(call.c_name)
    m, n, k = call.mnk

    def randn(shape, dtype):
        return torch.randn(shape, device="cuda", generator=g).to(dtype)

    a = randn(shapes["a"], ab) / 4
    w = randn(shapes["b"], ab) / math.sqrt(k)
    if call.activation == "swiglu":
        wg, wu = w[: n // 2], w[n // 2 :]
        w = interleave_gate_up(wg, wu)
    b = w.transpose(-1, -2) if call.b_major == "k" else w
    bias = randn(shapes["bias"], cd) if call.bias else None
    n_out = n // 2 if call.activation == "swiglu" else n
    out_shape = (*shapes["out"][:-1], n_out)
    buf, out = _guarded_out(out_shape, cd) if call.out else (None, None)
    inp = None
    if call.input:
        out.copy_(randn(out_shape, cd) if out0 is None else out0)
        inp = out  # the addend is the output itself (beta = 1): each tile read and written once
    c0 = None if inp is None else inp.float().clone()
    aux_buf, aux = _guarded_out(out_shape, cd) if call.aux else (None, None)
    got = gemm(a, b, out, **call.keywords(bias=bias, input=inp, aux=aux))
    torch.cuda.synchronize()
    af, bf = a.float(), b.float()
    if call.activation == "swiglu":
        ref = torch.nn.functional.silu(af @ wg.float().transpose(-1, -2)) * (af @ wu.float().transpose(-1, -2))
    else:
        ref = af @ bf
        if bias is not None:
            ref = ref + bias.float()
        if c0 is not None:
            ref = ref + (call.beta if call.beta is not None else 1.0) * c0
        act = {None: lambda x: x, "gelu": torch.nn.functional.gelu,
               "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh")}[call.activation]
        if aux is not None:  # the pre-activation output, inside its guards
            pre_err = float((aux.float() - ref).norm() / ref.norm().clamp_min(1e-30))
            assert pre_err <= 2 * TOLERANCE[call.c_name], f"{call}: pre-activation error {pre_err:.3e}"
            assert bool(torch.isnan(torch.cat([aux_buf[:GUARD], aux_buf[-GUARD:]])).all()), "aux guard written"
        ref = act(ref)
    got_f = got.float()
    assert bool(torch.isfinite(got_f).all()), "output not fully written (NaN poison left)"
    err = float((got_f - ref).norm() / ref.norm().clamp_min(1e-30))
    # the reference rounds nothing; ours rounds the input/bias sums and C once more than the plain GEMM
    assert err <= 2 * TOLERANCE[call.c_name], f"{call}: normwise error {err:.3e}"
    if buf is not None:
        guards = torch.cat([buf[:GUARD], buf[-GUARD:]])
        assert bool(torch.isnan(guards).all()), "guard region written"
    return got


@requires_sm90
@pytest.mark.parametrize("index", range(len(gpu_calls())), ids=lambda i: f"call{i}")
def test_pingpong_fused_calls(index):
    _run_call(gpu_calls()[index])


@requires_sm90
@pytest.mark.parametrize("extra", [0, 1], ids=["3_units_per_cta", "2_or_3_units_per_cta"])
def test_pingpong_writes_every_tile_once_with_odd_units_per_cta(extra):
    """tiles = 3 x SMs (every CTA 3 units: warpgroup 0 takes 2, warpgroup 1 one) or 2 x SMs + 1 (one CTA 3), on the
    input-is-output call of `gpu_calls()` with a 64 x 128 tile: M and N end inside their last tiles."""
    import dataclasses

    from cute_runtime import device_properties

    sms = device_properties(0).sm_count
    call = next(c for c in gpu_calls() if c.input and c.tile[:2] == (64, 128))
    tiles_n = 3 if not extra else 1
    tiles_m = sms if not extra else 2 * sms + 1
    shaped = dataclasses.replace(call, mnk=(64 * tiles_m - 5, 128 * tiles_n - 8, 200))
    _run_call(shaped)

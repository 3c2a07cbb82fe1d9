"""gemm()'s fused epilogue on an sm_90 GPU: every `epilogue_cases.GPU_CASES` call against float64 torch.

For each case the result must lie within the documented bound of the exact value (`activation` module).
A and B hold multiples of 1/4 in [-1/2, 1/2], so every product and partial sum is exact in float32 and the
accumulators are exact whatever the wgmma summation order (the pre-activations spread over about [-12, 12]);
what remains is the pre-activation's few float32 roundings (alpha, beta * input, bias) carried through the
activation's slope, the activation's own bound (`activation.error_bound`) and half an ulp of C's dtype, so
a float32 C checks each activation's bound sharply. The output is poisoned with NaN
first (everything must be written); a second call on fresh tensors of the same geometry (a plan hit with
re-pointed addresses and new alpha/beta) must be right too. The max abs error against torch float32 of the
same function is part of every failure message. The split-K cases also check that gemm() split K. A case with a
pre-activation output (`pre_activation_out`) also
checks that tensor against the float64 pre-activation (its own roundings and half an ulp of C's dtype), and that
every element of its storage around it (guard elements before and after, a padded view's gaps) keeps its NaN.
"""

from __future__ import annotations

import pytest
from cute_examples.dense_gemm.activation import SLOPE, error_bound, interleave_gate_up, split_gate_up
from cute_examples.dense_gemm.epilogue_cases import GPU_CASES
from cute_runtime.testing import requires_sm90

torch = pytest.importorskip("torch")

# half an ulp of C's dtype, relative, and the smallest absolute spacing that matters
_ROUND = {torch.float16: (2.0**-11, 2.0**-25), torch.bfloat16: (2.0**-8, 2.0**-133), torch.float32: (2.0**-24, 0.0)}


def _dt(name):
    return getattr(torch, name)


def _operands(case, seed, device="cuda"):
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k, l = case.mnkl
    ab, cd = _dt(case.dtype), _dt(case.c_dtype)
    lead = (l,) if l > 1 else ()

    def randn(*shape, dtype=ab, scale=1.0):
        return (torch.randn(*shape, device=device, generator=g) * scale).to(dtype)

    def quarters(*shape):  # exact products and sums in float32
        return (torch.randint(-2, 3, shape, device=device, generator=g).float() / 4).to(ab)

    a = quarters(*lead, m, k)
    if case.activation == "swiglu":
        w = interleave_gate_up(quarters(n // 2, k), quarters(n // 2, k))
    else:
        w = quarters(*lead, n, k)
    b = w.transpose(-1, -2)  # (.., K, N), K-major, dense batches (the geometry epilogue_cases.case_problem plans)
    bias = None
    if case.bias is not None:
        length = n if case.bias == "n" else m
        bias = _view(randn(2 * length + 1, dtype=cd), case.bias_view, length)
        if case.activation == "swiglu":
            bias = interleave_gate_up(bias[: n // 2].clone(), bias[n // 2 :].clone())
        if case.bias == "m":
            bias = bias[:, None]
    nc = case.n_out
    if case.c_major == "n":
        out = torch.empty(*lead, m, nc, device=device, dtype=cd)
    else:
        out = torch.empty(*lead, nc, m, device=device, dtype=cd).transpose(-1, -2)
    out.fill_(float("nan"))
    inp = {"full": lambda: randn(*lead, m, nc, dtype=cd), "row": lambda: randn(nc, dtype=cd),
           "col": lambda: randn(m, 1, dtype=cd), None: lambda: None}.get(case.input, lambda: None)()
    if case.input == "out":
        out.copy_(randn(*lead, m, nc, dtype=cd))
        inp = out
    return a, b, bias, inp, out, _aux(case, (*lead, m, nc), cd, device)


_GUARD = 64  # NaN elements of the pre-activation output's storage before and after it


def _aux(case, shape, dtype, device):
    """(pre_activation_out view, its NaN-filled storage) as case.aux says, inside guard elements; (None, None)."""
    if case.aux is None:
        return None, None
    *lead, m, nc = shape
    rows, cols = {"dense": (m, nc), "padded": (m, nc + 1), "col_major": (nc, m)}[case.aux]
    size = (lead[0] if lead else 1) * rows * cols
    storage = torch.full((2 * _GUARD + size,), float("nan"), device=device, dtype=dtype)
    view = storage[_GUARD : _GUARD + size].view(*lead, rows, cols)
    view = view[..., :nc] if case.aux == "padded" else view
    return (view.transpose(-1, -2) if case.aux == "col_major" else view), storage


def _untouched(view, storage):
    """The storage elements outside the view (its guard elements and gaps): all must still be NaN."""
    index = torch.arange(storage.numel(), device=storage.device)
    covered = torch.zeros(storage.numel(), dtype=torch.bool, device=storage.device)
    covered[index.as_strided(view.shape, view.stride(), view.storage_offset()).reshape(-1)] = True
    return storage[~covered]


def _view(storage, view, length):
    """A bias vector of `length` elements in `storage` (1-D, 2 * length + 1 elements) as `view` says."""
    return {"dense": storage[:length], "strided": storage[: 2 * length : 2], "one": storage[:1],
            "misaligned": storage[1 : length + 1]}[view]


def _act64(activation, x):
    F = torch.nn.functional
    return {"identity": lambda: x, "relu": lambda: F.relu(x), "gelu": lambda: F.gelu(x),
            "gelu_tanh": lambda: F.gelu(x, approximate="tanh"), "silu": lambda: F.silu(x)}[activation]()


def _reference(case, a, b, bias, inp, alpha, beta, dtype):
    """(act(pre), the bound of our error, pre, the bound of its error) in `dtype` (float64 for the reference,
    float32 for torch's own)."""
    acc = a.to(dtype) @ b.to(dtype)  # exact (see the module doc)
    pre = alpha * acc
    terms = pre.abs()
    if inp is not None:
        pre = pre + (1.0 if beta is None else beta) * inp.to(dtype)
        terms = terms + abs(1.0 if beta is None else beta) * inp.to(dtype).abs()
    if bias is not None:
        pre = pre + bias.to(dtype)
        terms = terms + bias.to(dtype).abs()
    e_pre = 4 * 2.0**-24 * terms  # each float32 rounding of the sum is at most 2**-24 of its terms' sum
    activation = case.activation or "identity"
    if activation == "swiglu":
        (g, u), (eg, eu) = split_gate_up(pre, -1), split_gate_up(e_pre, -1)
        ref = torch.nn.functional.silu(g) * u
        bound = u.abs() * SLOPE["silu"] * eg + torch.nn.functional.silu(g).abs() * eu + eg * eu \
            + error_bound("swiglu", g, u)
        return ref, bound, pre, e_pre
    return _act64(activation, pre), SLOPE[activation] * e_pre + error_bound(activation, pre), pre, e_pre


def _run(case, seed, alpha, beta):
    from cute_examples.dense_gemm import gemm

    a, b, bias, inp, out, (aux, aux_storage) = _operands(case, seed)
    ref, bound, pre, e_pre = _reference(case, a, b, bias, inp.clone() if inp is out else inp, alpha, beta,
                                        torch.float64)
    ref32, _, pre32, _ = _reference(case, a, b, bias, inp.clone() if inp is out else inp, alpha, beta, torch.float32)
    res = gemm(a, b, out, bias=bias, input=inp, alpha=alpha, beta=beta, activation=case.activation,
               pre_activation_out=aux)
    torch.cuda.synchronize()
    assert res is out
    if aux is not None:
        _check_pre_activation(case, aux, aux_storage, pre, e_pre, pre32)
    got = out.double()
    assert bool(torch.isfinite(got).all()), "output not fully written (NaN poison left)"
    rel, tiny = _ROUND[out.dtype]
    allowed = bound * (1 + rel) + rel * ref.abs() + tiny  # rounding our value, which is off ref by bound
    err = (got - ref).abs()
    worst = float((err - allowed).max())
    vs32 = float((got - ref32.double()).abs().max())
    assert worst <= 0, (f"{case.name}: max abs error {float(err.max()):.3e} exceeds its bound by {worst:.3e} "
                        f"(max abs error vs torch float32: {vs32:.3e})")
    # the figures docs/gemm.md quotes (pytest -s shows them)
    print(f"{case.name}: max abs error {float(err.max()):.3e} vs float64, {vs32:.3e} vs torch float32, "
          f"least margin to the bound {-worst:.3e}")
    return float(err.max())


def _check_pre_activation(case, aux, storage, pre, e_pre, pre32):
    """pre_activation_out within its bound of the float64 pre-activation; its storage untouched around it."""
    assert bool(torch.isnan(_untouched(aux, storage)).all()), f"{case.name}: a write outside pre_activation_out"
    got = aux.double()
    assert bool(torch.isfinite(got).all()), f"{case.name}: pre_activation_out not fully written (NaN poison left)"
    rel, tiny = _ROUND[aux.dtype]
    err = (got - pre).abs()
    worst = float((err - (e_pre * (1 + rel) + rel * pre.abs() + tiny)).max())
    vs32 = float((got - pre32.double()).abs().max())
    assert worst <= 0, (f"{case.name}: pre_activation_out's max abs error {float(err.max()):.3e} exceeds its bound by "
                        f"{worst:.3e} (max abs error vs torch float32: {vs32:.3e})")
    print(f"{case.name}: pre-activation max abs error {float(err.max()):.3e} vs float64, {vs32:.3e} vs torch float32")


@requires_sm90
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: c.name)
def test_fused_epilogue_matches_float64_within_its_bound(case):
    from cute_examples.dense_gemm import launch_plan

    before = set(launch_plan.plans.table())
    _run(case, 1, case.alpha, case.beta)
    on_132 = torch.cuda.get_device_properties(0).multi_processor_count == 132
    if "splitk" in case.name or case.name.startswith("transposed") or (case.name.startswith("quantised") and on_132):
        (key,) = set(launch_plan.plans.table()) - before
        plan = launch_plan.plans.table()[key]
        if "splitk" in case.name:  # these cases' few tiles and long K: gemm() splits K with its fused epilogue
            assert plan.config.decomposition == "split_k" and plan.schedule.splits >= 2, plan.config.name
        else:  # the transposed problem (few rows, or `transposed.quantises` on 132 SMs), its bias along the other mode
            assert plan.transposed and plan.config.c_major == "m" and plan.config.bias != case.bias, plan.config.name
        print(case.name, plan.config.name, plan.schedule.label if plan.schedule else "")
    # a plan hit: fresh tensors of the same geometry (new addresses), other alpha/beta values of the same kind
    alpha = case.alpha if case.alpha == 1 else -case.alpha * 1.5
    beta = case.beta if case.beta in (None, 0) else case.beta * 2
    _run(case, 2, alpha, beta)


def test_gpu_cases_run_configs_in_the_bundle():
    """(CPU) The configs gemm() picks for the tensors this test builds are the ones the AOT bundle holds."""
    from cute_examples.dense_gemm.aot import BENCH_NUM_SMS
    from cute_examples.dense_gemm.epilogue_args import check_epilogue
    from cute_examples.dense_gemm.epilogue_cases import gpu_case_configs
    from cute_examples.dense_gemm.launch_plan import Layout, plan_pick, staged_problem

    bundled = {c.name for c in gpu_case_configs(BENCH_NUM_SMS)}
    for case in GPU_CASES:
        a, b, bias, inp, out, (aux, _) = _operands(case, 1, "cpu")
        la, lb, lc = (Layout(t.shape, t.stride(), t.dtype, t.data_ptr()) for t in (a, b, out))
        fields = check_epilogue(_cuda_like(a), _cuda_like(b), _cuda_like(out), case.c_dtype,
                                activation=case.activation, alpha=case.alpha,
                                beta=case.beta, input=None if inp is None else _cuda_like(inp),
                                bias=None if bias is None else _cuda_like(bias),
                                pre_activation_out=None if aux is None else _cuda_like(aux)).config_fields
        assert fields == case.fields, case.name
        n_out = case.n_out if case.activation == "swiglu" else None
        problem = staged_problem(la, lb, lc, n_out=n_out)
        for sms in BENCH_NUM_SMS:
            direct, t_pick = plan_pick(problem, (problem.c_dtype, "float32", None, None, None), fields, sms)
            for cfg, _ in (direct,) if t_pick is None else (direct, t_pick):
                assert cfg.name in bundled, (case.name, cfg.name)


def _cuda_like(t):
    """A CPU tensor's geometry as a CUDA tensor's (what check_epilogue reads)."""
    from types import SimpleNamespace

    return SimpleNamespace(shape=t.shape, stride=t.stride, dtype=t.dtype, data_ptr=t.data_ptr, is_cuda=True,
                           device=torch.device("cuda", 0), dim=t.dim)


@requires_sm90
def test_beta_zero_never_reads_input():
    """beta = 0 (BLAS, torch.addmm): NaN in input stays out of the result."""
    from cute_examples.dense_gemm import gemm

    # the geometry of GPU case relu_beta0_f16 (its config is in the bundle): K-major b as F.linear has it
    a = torch.randn(300, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(272, 1024, device="cuda", dtype=torch.float16).t()
    inp = torch.full((300, 272), float("nan"), device="cuda", dtype=torch.float16)
    out = gemm(a, b, input=inp, beta=0.0, activation="relu")
    torch.testing.assert_close(out.float(), torch.relu(a.float() @ b.float()), rtol=2e-3, atol=2e-3)


@requires_sm90
def test_empty_k_gives_the_epilogue_of_zero():
    from cute_examples.dense_gemm import gemm

    a = torch.empty(5, 0, device="cuda", dtype=torch.float16)
    b = torch.empty(0, 16, device="cuda", dtype=torch.float16)
    bias = torch.randn(16, device="cuda", dtype=torch.float16)
    out = gemm(a, b, bias=bias, activation="gelu")
    torch.testing.assert_close(out, torch.nn.functional.gelu(bias.float()).expand(5, 16).half())
    pre = torch.full((5, 16), float("nan"), device="cuda", dtype=torch.float16)
    out = gemm(a, b, bias=bias, activation="gelu", pre_activation_out=pre)
    torch.testing.assert_close(pre, bias.expand(5, 16))  # the pre-activation of acc = 0
    torch.testing.assert_close(out, torch.nn.functional.gelu(bias.float()).expand(5, 16).half())


@requires_sm90
def test_pre_activation_out_refused_before_any_write():
    """An overlapping pre_activation_out is a ValueError and nothing is written (out keeps its NaN)."""
    from cute_examples.dense_gemm import gemm

    a = torch.randn(300, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(272, 1024, device="cuda", dtype=torch.float16).t()  # GPU case gelu_bias_aux_f16's geometry
    bias = torch.randn(272, device="cuda", dtype=torch.float16)
    out = torch.full((300, 272), float("nan"), device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="pre_activation_out overlaps out"):
        gemm(a, b, out, bias=bias, activation="gelu", pre_activation_out=out)
    torch.cuda.synchronize()
    assert bool(torch.isnan(out).all())

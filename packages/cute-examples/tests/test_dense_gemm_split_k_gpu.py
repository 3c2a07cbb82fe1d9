"""Split-K and stream-K on an sm_90 GPU: deterministic (10 launches on two streams, bitwise equal) and exact
(normwise relative error against a float64 reference within the dtype's bound), guard regions intact, the
fix-up's arrival counters back at zero; for the plain, the device-scale and the fused-epilogue kernels."""

from __future__ import annotations

import pytest
from cute_examples.dense_gemm.split_k_cases import FP8_SPLIT_GPU_CASES, FUSED_SPLIT_GPU_CASES, SPLIT_GPU_CASES
from cute_runtime.testing import requires_sm90

torch = pytest.importorskip("torch")

GUARD = 4096


def _randn(shape, dtype, gen):
    """A row-major (rows, cols) tensor whose rows are padded to 16 bytes (TMA's rule for a direct launch)."""
    from cute_examples.dense_gemm.launch_plan import padded

    storage = torch.randn(padded(shape, dtype)[0], device="cuda", dtype=dtype, generator=gen)
    return storage[:, : shape[1]]


def _parts_per_tile(cfg, m, n, k, schedule):
    """The most units sharing one tile's K range in the launch (host enumeration of the kernel's walk)."""
    sched = cfg.tile_scheduler
    clusters = schedule.grid[0] // cfg.cluster_m
    parts = {}
    for _, _, wu in sched.work_units(m, n, k, 1, clusters, schedule.raster_along_n, schedule.swizzle_log,
                                     schedule.decomposition):
        parts[(wu.m, wu.n)] = max(parts.get((wu.m, wu.n), 0), wu.parts)
    return max(parts.values())


def _launch_ten(case, a, b, extra=(), c_dtype=None):
    """Ten launches of the case on two streams into guarded C buffers; returns (the first C, every buffer) after
    checking the schedule's sharing, the guards, equal bits and the counters back at zero."""
    from cute_examples.dense_gemm.decomposed import Workspace, launch_decomposed, schedule_of
    from cute_examples.dense_gemm.host import problem_of
    from cute_examples.dense_gemm.kernel import kernel_of
    from cute_examples.dense_gemm.launch_plan import padded
    from cute_runtime import device_properties

    cfg, (m, n, k), splits = case.config, case.mnk, case.splits
    props = device_properties(torch.cuda.current_device())
    tc = getattr(torch, c_dtype or cfg.c_dtype)
    ld = padded((m, n), tc)[0][-1]  # C's rows padded to 16 bytes as well
    schedule = schedule_of(problem_of(a, b, torch.empty(m, ld, device="cuda", dtype=tc)[:, :n]), cfg,
                           props.sm_count, splits)
    print(cfg.name, schedule.label)
    assert schedule.kind == cfg.decomposition
    assert _parts_per_tile(cfg, m, n, k, schedule) >= case.min_parts
    kernel = kernel_of(cfg, tuple(props.compute_capability))
    workspace = Workspace()
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    bufs = []
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    for i in range(10):
        s = streams[i % 2]
        with torch.cuda.stream(s):
            buf = torch.full((2 * GUARD + m * ld,), -7.25, device="cuda", dtype=tc)
            c = buf[GUARD:GUARD + m * ld].view(m, ld)[:, :n]
            c.fill_(float("nan"))
            launch_decomposed(kernel, problem_of(a, b, c), cfg, schedule, workspace, s, extra)
            bufs.append(buf)
    torch.cuda.synchronize()
    for s in streams:  # every final part set its counters back to 0 (the next launch or graph replay starts clean)
        counters = workspace.held(torch.cuda.current_device(), s.cuda_stream)[1]
        assert int(counters.count_nonzero()) == 0, (cfg.name, schedule.label)
    guard = torch.full((GUARD,), -7.25, device="cuda", dtype=tc)
    for buf in bufs:
        assert torch.equal(buf[:GUARD].view(torch.uint8), guard.view(torch.uint8))
        assert torch.equal(buf[-GUARD:].view(torch.uint8), guard.view(torch.uint8))
        assert torch.equal(buf.view(torch.uint8), bufs[0].view(torch.uint8)), "results differ in bits"
    return bufs[0][GUARD:GUARD + m * ld].view(m, ld)[:, :n], schedule


@requires_sm90
@pytest.mark.parametrize("case", SPLIT_GPU_CASES, ids=lambda c: c.label)
def test_split_and_stream_k_bitwise_and_exact(case):
    from cute_examples.dense_gemm.spec import tolerance

    cfg, (m, n, k) = case.config, case.mnk
    td = getattr(torch, cfg.a_dtype)
    gen = torch.Generator(device="cuda").manual_seed(14)
    a = _randn((m, k), td, gen)
    w = _randn((n, k), td, gen)
    b = w.t()  # F.linear's operand: weight.t() of an (out, in) weight
    ref = a.double() @ b.double()
    first, schedule = _launch_ten(case, a, b)
    err = float((first.double() - ref).norm() / ref.norm())
    assert err <= tolerance(cfg.acc_dtype, cfg.c_dtype), (cfg.name, schedule.label, err)


@requires_sm90
@pytest.mark.parametrize("case", FP8_SPLIT_GPU_CASES, ids=lambda c: c.label)
def test_fp8_split_and_stream_k_bitwise_and_exact(case):
    """The scaled kernel's split form: E4M3 operands, device scales (per tensor or rowwise) applied once after the
    fix-up, an E4M3 C with amax; against float64 of the dequantized operands times the scales."""
    from cute_examples.dense_gemm.bench_fp8 import scaled_extra
    from cute_examples.dense_gemm.spec import tolerance

    cfg, (m, n, k) = case.config, case.mnk
    gen = torch.Generator(device="cuda").manual_seed(16)
    e4m3 = torch.float8_e4m3fn
    a = _randn((m, k), torch.float32, gen).to(e4m3)  # K = 2048, 4096: 16-byte rows as they are
    b = _randn((n, k), torch.float32, gen).to(e4m3).t()
    sa = torch.rand((() if cfg.scale_a == "tensor" else (m, 1)), device="cuda", generator=gen) + 0.5
    sb = torch.rand((() if cfg.scale_b == "tensor" else (1, n)), device="cuda", generator=gen) + 0.5
    d = (a.double() @ b.double()) * sa.double() * sb.double()
    so = torch.full((), 0.5, device="cuda")
    amax = torch.zeros((), device="cuda")
    fp8_out = cfg.c_dtype == "float8_e4m3fn"
    out = (so.data_ptr(), amax.data_ptr(), 1.0) if fp8_out else (0, 0, 1.0)
    extra = scaled_extra(sa, sb, out)  # no bias, input or pre-activation output, alpha 1, beta 0; the scales
    first, schedule = _launch_ten(case, a, b, extra)
    ref = (d * 0.5).clamp(-448, 448) if fp8_out else d
    err = float((first.double() - ref).norm() / ref.norm())
    assert err <= tolerance(cfg.acc_dtype, cfg.c_dtype), (cfg.name, schedule.label, err)
    if fp8_out:  # max |D| before out_scale, from the final parts only (each tile once)
        want = float(d.abs().max())
        assert abs(float(amax) - want) <= 5e-3 * want, (float(amax), want)


@requires_sm90
@pytest.mark.parametrize("case", FUSED_SPLIT_GPU_CASES, ids=lambda c: c.label)
def test_fused_split_and_stream_k_bitwise_and_exact(case):
    """The fused kernel's split form: bias, input, alpha/beta and the activation applied once, by each tile's final
    part after the fix-up; against the activation of the float64 pre-activation."""
    from cute_examples.dense_gemm.activation import reference
    from cute_examples.dense_gemm.spec import tolerance

    cfg, (m, n, k) = case.config, case.mnk
    td = getattr(torch, cfg.a_dtype)
    gen = torch.Generator(device="cuda").manual_seed(15)
    a = _randn((m, k), td, gen)
    b = _randn((n, k), td, gen).t()
    bias = torch.randn(n if cfg.bias == "n" else m, device="cuda", dtype=td, generator=gen)
    inp = _randn((m, n), td, gen) if cfg.has_input else None
    alpha = 0.75 if cfg.has_alpha else 1.0
    beta = 1.0 if cfg.has_input else 0.0
    pre = alpha * (a.double() @ b.double()) + (bias.double() if cfg.bias == "n" else bias.double()[:, None])
    if inp is not None:
        pre = pre + beta * inp.double()
    ref = reference(pre, cfg.activation)
    extra = (bias.data_ptr(), 0 if inp is None else inp.data_ptr(), 0 if inp is None else inp.stride(0),
             0 if inp is None else inp.stride(1), 0, alpha, beta, None)  # None: C's descriptor for aux (unread)
    first, schedule = _launch_ten(case, a, b, extra)
    err = float((first.double() - ref).norm() / ref.norm())
    assert err <= tolerance(cfg.acc_dtype, cfg.c_dtype), (cfg.name, schedule.label, err)


_SANITIZER_CASE = """
import torch
from cute_runtime import device_properties
from cute_examples.dense_gemm.decomposed import Workspace, launch_decomposed, schedule_of
from cute_examples.dense_gemm.host import problem_of
from cute_examples.dense_gemm.kernel import kernel_of
from cute_examples.dense_gemm.launch_plan import padded
from cute_examples.dense_gemm.split_k_cases import FP8_SPLIT_GPU_CASES, FUSED_SPLIT_GPU_CASES, SPLIT_GPU_CASES
from cute_examples.dense_gemm.bench_fp8 import scaled_extra
def rows(shape):  # row-major, rows padded to 16 bytes (TMA's rule for a direct launch)
    return torch.randn(padded(shape, torch.float16)[0], dtype=torch.float16, device="cuda")[:, :shape[1]]
props = device_properties(torch.cuda.current_device())
# stream-K and split-K; then stream-K whose M edge tile starts inside M, split-K past a wave (data-parallel waves,
# then the last wave split) and stream-K on 128x160 (five chunks through two staging buffers), in bfloat16
cases = [(SPLIT_GPU_CASES[0], torch.float16, 2e-3), (SPLIT_GPU_CASES[3], torch.float16, 2e-3)]
cases += [(c, torch.bfloat16, 1e-2) for c in SPLIT_GPU_CASES
          if c.mnk in ((2000, 8192, 1024), (3000, 4096, 2048), (2000, 2000, 3000))]
for case, dt, bound in cases:
    cfg, (m, n, k) = case.config, case.mnk
    a, b, c = rows((m, k)).to(dt), rows((n, k)).t().to(dt), rows((m, n)).to(dt)
    p = problem_of(a, b, c)
    launch_decomposed(kernel_of(cfg, tuple(props.compute_capability)), p, cfg,
                      schedule_of(p, cfg, props.sm_count, case.splits), Workspace())
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    assert float((c.float() - ref).norm() / ref.norm()) < bound
for case in (FP8_SPLIT_GPU_CASES[0], FP8_SPLIT_GPU_CASES[2]):  # the scaled kernel's split form, an E4M3 C with amax
    cfg, (m, n, k) = case.config, case.mnk
    a, b = (torch.randn(r, k, device="cuda").to(torch.float8_e4m3fn) for r in (m, n))
    b = b.t()
    c = torch.empty(m, n, device="cuda", dtype=getattr(torch, cfg.c_dtype))
    s, amax = torch.ones((), device="cuda"), torch.zeros((), device="cuda")
    out = (s.data_ptr(), amax.data_ptr(), 1.0) if cfg.fp8_out else (0, 0, 1.0)
    p = problem_of(a, b, c)
    launch_decomposed(kernel_of(cfg, tuple(props.compute_capability)), p, cfg,
                      schedule_of(p, cfg, props.sm_count, case.splits), Workspace(), None, scaled_extra(s, s, out))
    torch.cuda.synchronize()
    ref = (a.float() @ b.float()).clamp(-448, 448)
    assert float((c.float() - ref).norm() / ref.norm()) < 7e-2
case = FUSED_SPLIT_GPU_CASES[0]  # the fused kernel's split form: bias, input, alpha/beta, GELU after the fix-up
cfg, (m, n, k) = case.config, case.mnk
a, b, c, inp = rows((m, k)).bfloat16(), rows((n, k)).t().bfloat16(), rows((m, n)).bfloat16(), rows((m, n)).bfloat16()
bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
p = problem_of(a, b, c)
launch_decomposed(kernel_of(cfg, tuple(props.compute_capability)), p, cfg,
                  schedule_of(p, cfg, props.sm_count, case.splits), Workspace(), None,
                  (bias.data_ptr(), inp.data_ptr(), inp.stride(0), inp.stride(1), 0, 1.0, 1.0, None))
torch.cuda.synchronize()
ref = torch.nn.functional.gelu(a.float() @ b.float() + inp.float() + bias.float())
assert float((c.float() - ref).norm() / ref.norm()) < 1e-2
print("case ok")
"""


@requires_sm90
@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_compute_sanitizer_is_clean_on_split_and_stream_k(tool):
    import os
    import shutil
    import subprocess
    import sys

    exe = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(exe):
        pytest.skip("CUDA compute-sanitizer not installed")
    proc = subprocess.run(
        [exe, "--tool", tool, "--report-api-errors", "no", "--error-exitcode", "3",
         sys.executable, "-c", _SANITIZER_CASE],
        capture_output=True, text=True, timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "case ok" in out, out[-4000:]
    if tool == "memcheck":
        assert "ERROR SUMMARY: 0 errors" in out, out[-4000:]
    else:
        assert "RACECHECK SUMMARY: 0 hazards" in out or "ERROR SUMMARY: 0 errors" in out, out[-4000:]


@requires_sm90
def test_gemm_runs_stream_k_past_one_round_where_k_choice_takes_it():
    """`k_choice._rounds_stream_k`: gemm()'s own plan for 2410 x 1920 x 5664 (float16, 152 tiles of 128x256: on 132
    SMs stream-K on 128x256, a tile shared by two workers in K step) is the host's pick for this GPU's SM count,
    within the error bound, with the same bits on a second call."""
    from cute_examples.dense_gemm import gemm
    from cute_examples.dense_gemm.bench_run import bench_shape
    from cute_examples.dense_gemm.launch_plan import plan_pick, plans
    from cute_examples.dense_gemm.spec import tolerance
    from cute_runtime import device_properties

    sms = device_properties(torch.cuda.current_device()).sm_count
    (want, _), t_pick = plan_pick(bench_shape((2410, 1920, 5664, 1), "float16"),
                                  ("float16", "float32", None, None, None), None, sms)
    assert t_pick is None
    if sms == 132:
        assert want.decomposition == "stream_k" and (want.tile_m, want.tile_n) == (128, 256), want.name
    gen = torch.Generator(device="cuda").manual_seed(7)
    a = _randn((2410, 5664), torch.float16, gen)
    b = _randn((1920, 5664), torch.float16, gen).t()
    first = gemm(a, b)
    plan = list(plans.table().values())[-1]
    assert plan.config == want, (plan.config.name, want.name)
    ref = a.double() @ b.double()
    assert float((first.double() - ref).norm() / ref.norm()) <= tolerance(want.acc_dtype, want.c_dtype)
    assert torch.equal(gemm(a, b), first)

"""Split-K and stream-K on an sm_90 GPU: deterministic (10 launches on two streams, bitwise equal) and exact
(normwise relative error against a float64 reference within the dtype's bound), guard regions intact."""

from __future__ import annotations

import pytest
from cute_examples.dense_gemm.split_k_cases import SPLIT_GPU_CASES
from cute_runtime.testing import requires_sm90

torch = pytest.importorskip("torch")

GUARD = 4096


def _parts_per_tile(cfg, m, n, k, schedule):
    """The most units sharing one tile's K range in the launch (host enumeration of the kernel's walk)."""
    sched = cfg.tile_scheduler
    clusters = schedule.grid[0] // cfg.cluster_m
    parts = {}
    for _, _, wu in sched.work_units(m, n, k, 1, clusters, schedule.raster_along_n, schedule.swizzle_log,
                                     schedule.decomposition):
        parts[(wu.m, wu.n)] = max(parts.get((wu.m, wu.n), 0), wu.parts)
    return max(parts.values())


@requires_sm90
@pytest.mark.parametrize("case", SPLIT_GPU_CASES, ids=lambda c: c.label)
def test_split_and_stream_k_bitwise_and_exact(case):
    from cute_examples.dense_gemm.decomposed import Workspace, launch_decomposed, schedule_of
    from cute_examples.dense_gemm.host import problem_of
    from cute_examples.dense_gemm.kernel import kernel_of
    from cute_examples.dense_gemm.spec import tolerance
    from cute_runtime import device_properties

    cfg, (m, n, k), splits = case.config, case.mnk, case.splits
    props = device_properties(torch.cuda.current_device())
    td = getattr(torch, cfg.a_dtype)
    gen = torch.Generator(device="cuda").manual_seed(14)
    a = torch.randn(m, k, device="cuda", dtype=td, generator=gen)
    w = torch.randn(n, k, device="cuda", dtype=td, generator=gen)
    b = w.t()  # F.linear's operand: weight.t() of a contiguous (out, in) weight
    ref = a.double() @ b.double()
    tc = getattr(torch, cfg.c_dtype)
    schedule = schedule_of(problem_of(a, b, torch.empty(m, n, device="cuda", dtype=tc)), cfg, props.sm_count, splits)
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
            buf = torch.full((2 * GUARD + m * n,), -7.25, device="cuda", dtype=tc)
            c = buf[GUARD:GUARD + m * n].view(m, n)
            c.fill_(float("nan"))
            launch_decomposed(kernel, problem_of(a, b, c), cfg, schedule, workspace, s)
            bufs.append(buf)
    torch.cuda.synchronize()
    first = bufs[0][GUARD:GUARD + m * n].view(m, n)
    err = float((first.double() - ref).norm() / ref.norm())
    assert err <= tolerance(cfg.acc_dtype, cfg.c_dtype), (cfg.name, schedule.label, err)
    for buf in bufs:
        assert torch.equal(buf[:GUARD], torch.full_like(buf[:GUARD], -7.25))
        assert torch.equal(buf[-GUARD:], torch.full_like(buf[-GUARD:], -7.25))
        assert torch.equal(buf.view(torch.uint8), bufs[0].view(torch.uint8)), "results differ in bits"


_SANITIZER_CASE = """
import torch
from cute_runtime import device_properties
from cute_examples.dense_gemm.decomposed import Workspace, launch_decomposed, schedule_of
from cute_examples.dense_gemm.host import problem_of
from cute_examples.dense_gemm.kernel import kernel_of
from cute_examples.dense_gemm.split_k_cases import SPLIT_GPU_CASES
props = device_properties(torch.cuda.current_device())
for case in (SPLIT_GPU_CASES[0], SPLIT_GPU_CASES[3]):
    cfg, (m, n, k) = case.config, case.mnk
    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(n, k, dtype=torch.float16, device="cuda").t()
    c = torch.empty(m, n, dtype=torch.float16, device="cuda")
    p = problem_of(a, b, c)
    launch_decomposed(kernel_of(cfg, tuple(props.compute_capability)), p, cfg,
                      schedule_of(p, cfg, props.sm_count, case.splits), Workspace())
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    assert float((c.float() - ref).norm() / ref.norm()) < 2e-3
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

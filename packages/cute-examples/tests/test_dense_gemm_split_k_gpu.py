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
    schedule = schedule_of(problem_of(a, b, torch.empty(m, n, device="cuda", dtype=td)), cfg, props.sm_count, splits)
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
            buf = torch.full((2 * GUARD + m * n,), -7.25, device="cuda", dtype=td)
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
        assert torch.equal(buf.view(torch.int16), bufs[0].view(torch.int16)), "results differ in bits"

"""gemm() on geometries TMA cannot read as they are (staged through padded copies), against torch, on an sm_90 GPU.

Every `ANY_SHAPE_CASES` view (K = 127, N = 1001, odd M-major M, a stride-0 broadcast batch, size-1 modes, views
with no unit stride, a misaligned base, an odd batch stride) is built with `as_strided` inside a guarded buffer;
the output's covered elements are poisoned with NaN and everything else must stay untouched. Also: extents of
0, plan hits on rotated buffers, a non-default stream, and the ValueErrors that stay.
"""

from __future__ import annotations

import pytest
from cute_examples.dense_gemm.any_shape_cases import (
    ANY_SHAPE_CASES,
    ONE_ROUND_CASES,
    QUANTISED_CASES,
    TRANSPOSED_CASES,
)
from cute_runtime.testing import requires_sm90

torch = pytest.importorskip("torch")

GUARD = 256  # elements on either side of every view


def _tdt(name):
    return {"float16": torch.float16, "bfloat16": torch.bfloat16}[name]


def _buffer(view, dtype, fill):
    buf = torch.full((2 * GUARD + view.extent,), -7.25, dtype=dtype, device="cuda")
    t = buf.as_strided(view.shape, view.stride, GUARD + view.offset)
    if fill == "randn":
        buf[GUARD : GUARD + view.extent].normal_()
    else:
        t.fill_(float("nan"))
    return buf, t


def _covered(buf, t):
    mask = torch.zeros_like(buf, dtype=torch.bool)
    mask.as_strided(t.shape, t.stride(), t.storage_offset()).fill_(True)
    return mask


def _check(a, b, out, cbuf, untouched, mask):
    ref = torch.matmul(a.float(), b.float())
    got = out.float()
    assert bool(torch.isfinite(got).all()), "output not fully written (NaN poison left)"
    err = float((got - ref).norm() / ref.norm().clamp_min(1e-30))
    assert err <= (2e-3 if out.dtype == torch.float16 else 1.6e-2), f"error {err:.3e}"
    assert torch.equal(cbuf[~mask], untouched[~mask]), "guard region or padding written"


@requires_sm90
@pytest.mark.parametrize("case", ANY_SHAPE_CASES, ids=lambda c: c.name)
def test_any_shape_and_stride_against_torch(case):
    from cute_examples.dense_gemm import gemm

    dt = _tdt(case.dtype)
    _, a = _buffer(case.a, dt, "randn")
    _, b = _buffer(case.b, dt, "randn")
    for _ in range(2):  # the second call is a plan hit
        cbuf, c = _buffer(case.out, dt, "nan")
        untouched, mask = cbuf.clone(), _covered(cbuf, c)
        assert gemm(a, b, c) is c
        torch.cuda.synchronize()
        _check(a, b, c, cbuf, untouched, mask)
    out = gemm(a, b)  # gemm()'s own output
    torch.cuda.synchronize()
    ref = torch.matmul(a.float(), b.float())
    assert out.shape == ref.shape and float((out.float() - ref).norm() / ref.norm()) <= 1.6e-2


def _twice(case, plan_ok):  # noqa: ANN001, ANN202
    """Run the case's gemm(a, b, out) twice: each plan passes `plan_ok` (an assertion), the output is within the error
    bound with every element outside out untouched, and the second call writes the first's bits; returns (a, b, the
    output)."""
    from cute_examples.dense_gemm import gemm
    from cute_examples.dense_gemm.launch_plan import plans

    dt = _tdt(case.dtype)
    _, a = _buffer(case.a, dt, "randn")
    _, b = _buffer(case.b, dt, "randn")
    first = None
    for _ in range(2):
        cbuf, c = _buffer(case.out, dt, "nan")
        untouched, mask = cbuf.clone(), _covered(cbuf, c)
        assert gemm(a, b, c) is c
        torch.cuda.synchronize()
        plan_ok(list(plans.table().values())[-1])
        _check(a, b, c, cbuf, untouched, mask)
        assert first is None or torch.equal(c, first)
        first = c.clone()
    return a, b, first


@requires_sm90
@pytest.mark.parametrize("case", TRANSPOSED_CASES, ids=lambda c: c.name)
def test_few_rows_run_as_the_transposed_problem(case):
    """`transposed`: the plan runs C^T = B^T A^T (M-major C') on the same tensors, within the error bound, every
    element outside out (its rows' padding included) untouched, the same bits on a second call and into gemm()'s own
    output."""
    from cute_examples.dense_gemm import gemm

    def transposed(plan) -> None:  # noqa: ANN001
        assert plan.transposed and plan.config.c_major == "m" and not plan.staged, plan.config.name

    a, b, first = _twice(case, transposed)
    assert torch.equal(gemm(a, b), first)


@requires_sm90
@pytest.mark.parametrize("case", QUANTISED_CASES, ids=lambda c: c.name)
def test_rows_whose_transposed_tiles_fill_the_sms_better_run_transposed(case):
    """`transposed.quantises`: on a 132-SM GPU (the cases were sized for it) the plan runs C^T = B^T A^T, within the
    error bound, every element outside out (its rows' padding included) untouched, the same bits on a second call."""
    on_132 = torch.cuda.get_device_properties(0).multi_processor_count == 132

    def transposed(plan) -> None:  # noqa: ANN001
        assert not on_132 or (plan.transposed and plan.config.c_major == "m"), plan.config.name

    _twice(case, transposed)


@requires_sm90
@pytest.mark.parametrize("case", ONE_ROUND_CASES, ids=lambda c: c.name)
def test_one_round_tiles_against_torch(case):
    """`choice.ONE_ROUND_TILES`: gemm() runs the case on 128x144 / 128x176 (the tile in its name, on a 132-SM GPU:
    the cases were sized for one round there), within the error bound, every element outside out (its rows' padding
    included) untouched, the same bits on a second call."""
    tile = f"_128x{case.name.split('_')[2]}x64_"
    on_132 = torch.cuda.get_device_properties(0).multi_processor_count == 132

    def fitted(plan) -> None:  # noqa: ANN001
        assert not on_132 or tile in plan.config.name, plan.config.name

    _twice(case, fitted)


@requires_sm90
def test_rotated_buffers_hit_one_plan_and_a_stream_is_honoured():
    from cute_examples.dense_gemm import gemm, launch_plan

    sets = [
        (torch.randn(256, 127, dtype=torch.float16, device="cuda"),
         torch.randn(127, 1001, dtype=torch.float16, device="cuda"),
         torch.empty(256, 1001, dtype=torch.float16, device="cuda"))
        for _ in range(4)
    ]
    before = len(launch_plan.plans.table())
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for *_, c in sets:
            c.fill_(float("nan"))
    for a, b, c in sets:
        gemm(a, b, c, stream=s)
    assert len(launch_plan.plans.table()) == before + 1
    s.synchronize()
    for a, b, c in sets:
        ref = a.float() @ b.float()
        assert float((c.float() - ref).norm() / ref.norm()) <= 2e-3


@requires_sm90
def test_zero_extents_need_no_kernel():
    from cute_examples.dense_gemm import gemm

    a = torch.randn(64, 0, dtype=torch.float16, device="cuda")
    b = torch.randn(0, 32, dtype=torch.float16, device="cuda")
    c = torch.full((64, 32), float("nan"), dtype=torch.float16, device="cuda")
    assert gemm(a, b, c) is c and bool((c == 0).all())
    out = gemm(torch.randn(0, 64, dtype=torch.float16, device="cuda"), torch.randn(64, 32, dtype=torch.float16,
                                                                                    device="cuda"))
    assert out.shape == (0, 32)


@requires_sm90
def test_what_no_gemm_can_do_stays_a_value_error():
    from cute_examples.dense_gemm import gemm

    a = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    with pytest.raises(ValueError, match="b has 32 rows"):
        gemm(a, torch.randn(32, 64, dtype=torch.float16, device="cuda"))
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        gemm(a.float(), a.float())
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        gemm(a, a.cpu())
    with pytest.raises(ValueError, match="overlaps an input"):
        gemm(a, torch.randn(64, 64, dtype=torch.float16, device="cuda"), a)


def _two_hoppers() -> bool:
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        return False
    return all(torch.cuda.get_device_capability(d) == (9, 0) for d in (0, 1))


@pytest.mark.multi_gpu
@pytest.mark.skipif(not _two_hoppers(), reason="needs torch.cuda.device_count() >= 2 sm_90 GPUs "
                    "(multi-GPU machines are not lent: not forced by CUTE_REQUIRE_GPU=1)")
def test_each_device_gets_its_own_plan_and_kernel():
    from cute_examples.dense_gemm import gemm, launch_plan

    plans = {}
    for d in (0, 1):
        a = torch.randn(256, 127, dtype=torch.float16, device=f"cuda:{d}")
        b = torch.randn(127, 200, dtype=torch.float16, device=f"cuda:{d}")
        out = gemm(a, b)
        torch.cuda.synchronize(d)
        assert out.device == a.device
        ref = a.float() @ b.float()
        assert float((out.float() - ref).norm() / ref.norm()) <= 2e-3
        key = launch_plan.plan_key(a, a.data_ptr(), b, b.data_ptr(), None, 0, (None, "float32", None, None, None))
        plans[d] = launch_plan.plans.table()[key]
    assert (plans[0].device, plans[1].device) == (0, 1)
    assert plans[0].kernel is not plans[1].kernel and plans[1].kernel.device == 1


CLUSTER_2X2_CASE = dict(m=1024, n=2048, k=256, tile_shape_mnk=(128, 128, 64), cluster_shape_mn=(2, 2))


@requires_sm90
def test_a_2x2_cluster_grid_holds_the_clusters_that_fit():
    """gemm() with 2x2 clusters: 32 cluster units, a persistent grid of the clusters the device runs at once (30 on
    a 132-SM H200, where SMs / 4 = 33 left three waiting), and the right result."""
    from cute_examples.dense_gemm import gemm, launch_plan
    from cute_runtime import device_properties

    c = dict(CLUSTER_2X2_CASE)
    m, n, k = c.pop("m"), c.pop("n"), c.pop("k")
    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(n, k, dtype=torch.float16, device="cuda").t()
    out = gemm(a, b, **c)
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    assert float((out.float() - ref).norm() / ref.norm()) <= 2e-3
    plan = [p for p in launch_plan.plans.table().values()  # (a plan of zero extents has no config)
            if not p.trivial and p.config.cluster_m == p.config.cluster_n == 2 and p.out_shape == (m, n)][-1]
    fit = plan.kernel.max_active_clusters()
    sms = device_properties(torch.cuda.current_device()).sm_count
    assert 1 <= fit
    assert plan.grid == (2 * min(32, fit, sms // 4), 2, 1)


CHAIN_CASE = dict(m=1000, k=512, n1=384, n2=640, tile_shape_mnk=(128, 128, 64), cluster_shape_mn=(1, 1))


@requires_sm90
@pytest.mark.parametrize("graph", [False, True], ids=["stream", "graph"])
def test_a_chained_gemm_reads_the_previous_ones_output(graph):
    """gemm() launches with programmatic stream serialization (its kernels wait on the previous grid before any
    global access): 16 chains C1[i] = A[i] @ B1, C2[i] = C1[i] @ B2 back to back without a synchronisation, on a
    stream or replayed from a CUDA graph, every output NaN-filled before; each C2[i] must be C1[i] @ B2."""
    from cute_examples.dense_gemm import gemm

    c = dict(CHAIN_CASE)
    m, k, n1, n2 = c.pop("m"), c.pop("k"), c.pop("n1"), c.pop("n2")
    f16 = dict(dtype=torch.float16, device="cuda")
    a = [torch.randn(m, k, **f16) for _ in range(16)]
    b1 = torch.randn(n1, k, **f16).t() / k ** 0.5
    b2 = torch.randn(n2, n1, **f16).t() / n1 ** 0.5
    c1 = [torch.empty(m, n1, **f16) for _ in a]
    c2 = [torch.empty(m, n2, **f16) for _ in a]

    def chains():
        for ai, c1i, c2i in zip(a, c1, c2, strict=True):
            gemm(ai, b1, c1i, **c)
            gemm(c1i, b2, c2i, **c)

    chains()  # plans built outside the timed / captured launches
    torch.cuda.synchronize()
    run = chains
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            chains()
        run = g.replay
    for t in c1 + c2:
        t.fill_(float("nan"))
    run()
    torch.cuda.synchronize()
    for ai, c1i, c2i in zip(a, c1, c2, strict=True):
        ref1 = ai.float() @ b1.float()
        assert float((c1i.float() - ref1).norm() / ref1.norm()) <= 2e-3
        ref2 = c1i.float() @ b2.float()
        assert float((c2i.float() - ref2).norm() / ref2.norm()) <= 2e-3

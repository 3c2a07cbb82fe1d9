"""torch.ops.cute.* on an sm_90 GPU: torch.compile(fullgraph=True) of the public calls runs our kernels and
matches eager; torch.library.opcheck of every op; a CUDA graph of both ops replays on new input values.

The gemm() calls and shapes are `cute_examples.torch_ops_cases`' (the AOT catalogue lists their kernels;
`test_dense_gemm_gpu_calls` checks it on CPU)."""

from __future__ import annotations

import pytest
from cute_examples.torch_ops_cases import ADD_SHAPE, GRAPH_CALL, MODEL_CALLS, OPCHECK_CALLS, PADDED_CALLS, SHAPE
from cute_runtime.testing import requires_sm90

torch = pytest.importorskip("torch")


def _operands(m: int = SHAPE[0], n: int = SHAPE[1], k: int = SHAPE[2], batch: int = 0, dtype: object = None) -> tuple:
    """A and B of multiples of 1/4 in [-1/2, 1/2] (exact products and sums in float32), bias and an addend."""
    dt = dtype or torch.float16
    lead = (batch,) if batch else ()

    def quarters(*shape: int) -> object:
        return (torch.randint(-2, 3, shape, device="cuda") / 4).to(dt)

    return quarters(*lead, m, k), quarters(*lead, k, n), quarters(n), quarters(*lead, m, n)


def _model(a: object, b: object, bias: object, y: object) -> object:
    from cute_examples.dense_gemm import gemm
    from cute_examples.elementwise_add import elementwise_add

    fused, into_out = MODEL_CALLS
    h = gemm(a, b, **fused.keywords(bias=bias))  # the fused epilogue (bias, ReLU)
    z = elementwise_add(h, y)
    out = torch.empty_like(z)
    gemm(a, b, out=out, **into_out.keywords())
    return elementwise_add(z, out, out=out)


def _kernel_names(fn: object, *args: object) -> tuple[object, list[str]]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        result = fn(*args)
        torch.cuda.synchronize()
    return result, [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


@requires_sm90
def test_compile_fullgraph_runs_our_kernels() -> None:
    """torch.compile(fullgraph=True) of gemm (with an epilogue, and into out) and elementwise_add (new and into out)
    equals the eager call exactly, and the profiler shows our kernels (dense_gemm_*, elementwise_add*) only."""
    torch._dynamo.reset()
    args = _operands()
    want = _model(*args)
    compiled = torch.compile(_model, fullgraph=True)
    compiled(*args)  # compiles
    got, names = _kernel_names(compiled, *args)
    assert torch.equal(got, want)
    ref = torch.relu(args[0].float() @ args[1].float() + args[2].float()) + args[3].float() + \
        args[0].float() @ args[1].float()
    torch.testing.assert_close(got.float(), ref, rtol=5e-3, atol=2e-2)
    assert sum("dense_gemm_" in n for n in names) == 2, names
    assert sum("elementwise_add" in n for n in names) == 2, names
    assert not [n for n in names if "gemm" in n.lower() and "dense_gemm_" not in n], names  # no cuBLAS fallback


@requires_sm90
def test_compile_padded_output_and_dynamic_shapes() -> None:
    """An odd N keeps gemm()'s padded leading dimension through the compiled graph; dynamic M recompiles no more."""
    from cute_examples.dense_gemm import gemm

    torch._dynamo.reset()

    def f(a: object, b: object) -> object:
        return gemm(a, b)

    compiled = torch.compile(f, fullgraph=True, dynamic=True)
    for call in PADDED_CALLS:
        a, b, _, _ = _operands(*call.mnk)
        got, want = compiled(a, b), gemm(a, b)
        assert got.stride() == want.stride() == (1008, 1)
        assert torch.equal(got, want)


def _gemm_sample(call: object) -> tuple[object, tuple, dict]:
    """(cute::gemm or cute::gemm_out, args, kwargs) of a GemmCall."""
    a, b, bias, y = _operands(*call.mnk, batch=call.batch)
    kwargs = call.keywords(bias=bias, input=y)
    if not call.out:
        return torch.ops.cute.gemm.default, (a, b), kwargs
    out = torch.empty(call.shapes()["out"], device="cuda", dtype=getattr(torch, call.c_name))
    return torch.ops.cute.gemm_out.default, (a, b, out), kwargs


def _opcheck_samples() -> list[tuple[object, tuple, dict]]:
    _, _, _, y = _operands(*OPCHECK_CALLS[0].mnk)
    x, row = torch.randn(*ADD_SHAPE, device="cuda"), torch.randn(ADD_SHAPE[1], device="cuda")
    return [_gemm_sample(call) for call in OPCHECK_CALLS] + [
        (torch.ops.cute.elementwise_add.default, (x, row), {}),
        (torch.ops.cute.elementwise_add.default, (y, y), {}),
        (torch.ops.cute.elementwise_add_out.default, (x, row, torch.empty_like(x)), {}),
    ]


@requires_sm90
def test_opcheck_every_op() -> None:
    """torch.library.opcheck (schema, fake vs real, AOT dispatch, static and dynamic) passes for each op."""
    samples = _opcheck_samples()
    assert {op.name() for op, _, _ in samples} == {f"cute::{n}" for n in
                                                   ("gemm", "gemm_out", "elementwise_add", "elementwise_add_out")}
    for op, args, kwargs in samples:
        result = torch.library.opcheck(op, args, kwargs)
        assert all(v == "SUCCESS" for v in result.values()), (op, kwargs, result)


@requires_sm90
def test_cuda_graph_replays_on_new_inputs() -> None:
    """A graph captured after one warm-up call (gemm with bias into a new tensor, the add into out) replays on
    values newly written into its inputs and matches the new reference."""
    from cute_examples.elementwise_add import elementwise_add

    a, b, bias, y = _operands()
    out = torch.empty_like(y)

    def step() -> object:
        h = torch.ops.cute.gemm(a, b, **GRAPH_CALL.keywords(bias=bias))  # the operator (what a compiled graph calls)
        elementwise_add(h, y, out=out)  # the public call
        return h

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()  # warm-up: plans built, kernels loaded
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        h = step()
    for _ in range(2):
        new = _operands()
        for dst, src in zip((a, b, bias, y), new, strict=True):
            dst.copy_(src)
        graph.replay()
        torch.cuda.synchronize()
        ref = a.float() @ b.float() + bias.float()
        torch.testing.assert_close(h.float(), ref, rtol=2e-3, atol=1e-2)
        assert torch.equal(out, h + y)


@requires_sm90
def test_compile_reduce_overhead_replays_on_new_inputs() -> None:
    """torch.compile(mode="reduce-overhead") (CUDA graphs of the compiled graph) of gemm + elementwise_add gives
    the new result after new values are written into the same inputs."""
    from cute_examples.dense_gemm import gemm
    from cute_examples.elementwise_add import elementwise_add

    torch._dynamo.reset()

    def f(a: object, b: object, bias: object, y: object) -> object:
        return elementwise_add(gemm(a, b, **MODEL_CALLS[0].keywords(bias=bias)), y)

    compiled = torch.compile(f, mode="reduce-overhead", fullgraph=True)
    args = _operands()
    for _ in range(4):
        for dst, src in zip(args, _operands(), strict=True):
            dst.copy_(src)
        got = compiled(*args).clone()
        torch.cuda.synchronize()
        assert torch.equal(got, f(*args))

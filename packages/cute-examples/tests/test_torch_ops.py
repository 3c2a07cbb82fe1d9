"""torch.ops.cute.* without a GPU: the schemas, and the fakes' shapes, dtypes and strides (also with symbolic
sizes) against the real ops' rules; torch.export (Dynamo, strict) of the public calls records the cute ops."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from cute_examples import torch_ops
from cute_examples.dense_gemm.launch_plan import padded
from cute_examples.tracing import GEMM_KWARGS
from torch._dynamo.source import ConstantSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv


def _schema(name: str) -> str:
    return str(getattr(torch.ops.cute, name).default._schema)


def test_public_imports_register_the_ops_without_mlir() -> None:
    """Importing gemm or elementwise_add registers torch.ops.cute.* (before any tracing); no MLIR is imported."""
    code = (
        "import sys, torch\n"
        "from cute_examples.dense_gemm import gemm\n"
        "assert [hasattr(torch.ops.cute, n) for n in ('gemm', 'gemm_out', 'elementwise_add')] == [True] * 3\n"
        "from cute_examples.elementwise_add import elementwise_add\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mlir', 'cute_ir')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_schemas_registered() -> None:
    for name, schema in torch_ops.SCHEMAS.items():
        assert _schema(name) == "cute::" + schema
    assert _schema("gemm").endswith("-> Tensor")
    assert "Tensor(a!) out" in _schema("gemm_out") and _schema("gemm_out").endswith("-> ()")
    assert _schema("elementwise_add_out") == "cute::elementwise_add_out(Tensor a, Tensor b, Tensor(a!) out) -> ()"
    assert "stream" not in " ".join(map(_schema, torch_ops.SCHEMAS))


def test_gemm_keywords_are_gemms() -> None:
    """Every keyword of gemm() but `stream` is a GEMM_KWARGS row, in gemm()'s order; the schemas hold those but the
    eager-only outputs (type None: a mutable optional argument breaks inductor's lowering of the op)."""
    import inspect

    from cute_examples.dense_gemm import gemm

    params = inspect.signature(gemm).parameters
    kw = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY and n != "stream"]
    assert kw == [n for n, _, _ in GEMM_KWARGS]
    op_args = [a.name for a in torch.ops.cute.gemm.default._schema.arguments if a.kwarg_only]
    eager_only = [n for n, t, _ in GEMM_KWARGS if t is None]
    assert eager_only == ["pre_activation_out", "amax"]
    assert op_args == [n for n in kw if n not in eager_only]


def _cuda(mode: FakeTensorMode, shape: tuple, dtype: object = None) -> object:
    with mode:
        return torch.empty(shape, dtype=dtype or torch.float16, device="cuda")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(("l", "m", "n", "k"), [(0, 128, 256, 64), (0, 100, 1001, 127), (3, 64, 1001, 64),
                                                (2, 1, 8, 1), (0, 5, 0, 7), (0, 0, 9, 16)])
def test_gemm_fake_matches_padded_allocation(dtype: object, l: int, m: int, n: int, k: int) -> None:
    """The fake's output: gemm()'s shape, C dtype and the strides of `padded`'s storage narrowed to N."""
    mode = FakeTensorMode()
    lead = (l,) if l else ()
    a, b = _cuda(mode, (*lead, m, k), dtype), _cuda(mode, (*lead, k, n), dtype)
    for c_dtype in (None, torch.float32):
        with mode:
            c = torch.ops.cute.gemm(a, b, c_dtype=c_dtype)
        want = c_dtype or dtype
        storage = torch.empty(padded((*lead, m, n), want)[0], dtype=want).narrow(-1, 0, n)
        assert (tuple(c.shape), c.stride(), c.dtype, c.device.type) == ((*lead, m, n), storage.stride(), want, "cuda")
        if n and m > 1:
            assert c.stride()[-2] * c.element_size() % 16 == 0


def test_gemm_fake_swiglu_and_epilogue() -> None:
    mode = FakeTensorMode()
    a, b = _cuda(mode, (2, 40, 64)), _cuda(mode, (2, 64, 48))
    with mode:
        c = torch.ops.cute.gemm(a, b, activation="swiglu")
        assert (tuple(c.shape), c.stride()) == ((2, 40, 24), (40 * 24, 24, 1))
        bias, inp = torch.empty(48, dtype=torch.float16, device="cuda"), torch.empty(40, 1, dtype=torch.float16,
                                                                                    device="cuda")
        c = torch.ops.cute.gemm(a, b, bias=bias, input=inp, alpha=2.0, beta=0.5, activation="relu")
        assert (tuple(c.shape), c.stride()) == ((2, 40, 48), (40 * 48, 48, 1))


def test_gemm_fake_errors_name_the_argument() -> None:
    mode = FakeTensorMode()
    a, b = _cuda(mode, (40, 64)), _cuda(mode, (63, 48))
    with mode, pytest.raises(ValueError, match="b has 63 rows but a has K = 64"):
        torch.ops.cute.gemm(a, b)
    b = _cuda(mode, (64, 40))
    with mode, pytest.raises(ValueError, match="swiglu"):
        torch.ops.cute.gemm(a, b, activation="swiglu")
    with mode, pytest.raises(ValueError, match="out must be"):
        torch.ops.cute.gemm_out(a, b, torch.empty(40, 41, dtype=torch.float16, device="cuda"))
    with mode:
        torch.ops.cute.gemm_out(a, b, torch.empty(40, 40, dtype=torch.float16, device="cuda"))


def _symbolic(env: ShapeEnv, name: str, hint: int) -> object:
    """A dynamic SymInt of the ShapeEnv with this hint (as Dynamo makes for a dynamic size)."""
    src = ConstantSource(name)
    return env.create_symintnode(env.create_symbol(hint, src, dynamic_dim=DimDynamic.DYNAMIC), hint=hint, source=src)


def _value(env: ShapeEnv, s: object) -> int:
    return int(s.node.expr.xreplace(env.backed_var_to_val)) if isinstance(s, torch.SymInt) else int(s)


@pytest.mark.parametrize(("n", "ld"), [(1001, 1008), (64, 64), (9, 16)])
def test_fakes_take_symbolic_sizes(n: int, ld: int) -> None:
    """With symbolic L, M, N, K the fakes' sizes and strides are expressions whose values are the real ones."""
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    L, M, N, K = (_symbolic(env, name, v) for name, v in (("L", 3), ("M", 100), ("N", n), ("K", 72)))
    with mode:
        a = torch.empty(L, M, K, device="cuda", dtype=torch.float16)
        b = torch.empty(L, K, N, device="cuda", dtype=torch.float16)
        c = torch.ops.cute.gemm(a, b)
        assert isinstance(c.stride()[-2], torch.SymInt)
        assert [_value(env, s) for s in c.shape] == [3, 100, n]
        assert [_value(env, s) for s in c.stride()] == [100 * ld, ld, 1]
        x, y = torch.empty(M, 1, device="cuda"), torch.empty(N, device="cuda")
        z = torch.ops.cute.elementwise_add(x, y)
        assert [_value(env, s) for s in z.shape] == [100, n] and [_value(env, s) for s in z.stride()] == [n, 1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32])
@pytest.mark.parametrize(("sa", "sb"), [((5, 7), (5, 7)), ((5, 1), (7,)), ((1, 7), (5, 7)), ((3, 0), (3, 0)),
                                        ((2, 3, 4), (4,))])
def test_add_fake_broadcasts(dtype: object, sa: tuple, sb: tuple) -> None:
    """The add's fake: torch's broadcast shape, contiguous strides, a's dtype (its out variant checks out)."""
    mode = FakeTensorMode()
    a, b = _cuda(mode, sa, dtype), _cuda(mode, sb, dtype)
    want = torch.empty(torch.broadcast_shapes(sa, sb))
    with mode:
        c = torch.ops.cute.elementwise_add(a, b)
        assert (c.shape, c.stride(), c.dtype, c.device.type) == (want.shape, want.stride(), dtype, "cuda")
        torch.ops.cute.elementwise_add_out(a, b, torch.empty(want.shape, dtype=dtype, device="cuda"))
        with pytest.raises(ValueError, match="out"):
            torch.ops.cute.elementwise_add_out(a, b, torch.empty((*want.shape, 2), dtype=dtype, device="cuda"))
        with pytest.raises(ValueError, match="broadcast"):
            torch.ops.cute.elementwise_add(a, torch.empty(6, 6, dtype=dtype, device="cuda"))
        with pytest.raises(TypeError, match="dtype"):
            torch.ops.cute.elementwise_add(a, torch.empty(sb, dtype=torch.float64, device="cuda"))


def test_export_records_the_cute_ops() -> None:
    """Dynamo (torch.export, strict: no graph break allowed) traces the public gemm() and elementwise_add() into
    cute::gemm, cute::elementwise_add and their out variants, on fake CUDA tensors."""
    from cute_examples.dense_gemm import gemm
    from cute_examples.elementwise_add import elementwise_add

    class Model(torch.nn.Module):
        def forward(self, a: object, b: object, bias: object, y: object) -> object:
            c = gemm(a, b, bias=bias, activation="relu")
            d = elementwise_add(c, y)
            gemm(a, b, out=d)
            return elementwise_add(d, y, out=y)

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        args = [torch.empty(s, device="cuda", dtype=torch.float16) for s in ((64, 32), (32, 48), (48,), (64, 48))]
        ep = torch.export.export(Model(), tuple(args), strict=True)
    called = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert called == ["cute.gemm.default", "cute.elementwise_add.default", "cute.gemm_out.default",
                      "cute.elementwise_add_out.default"]
    node = next(n for n in ep.graph.nodes if str(n.target) == "cute.gemm.default")
    assert node.kwargs["activation"] == "relu" and node.meta["val"].stride() == (48, 1)


def test_stream_is_refused_while_tracing() -> None:
    from cute_examples.dense_gemm import gemm

    class Model(torch.nn.Module):
        def forward(self, a: object, b: object) -> object:
            return gemm(a, b, stream=0)

    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        args = (torch.empty(64, 32, device="cuda", dtype=torch.float16),
                torch.empty(32, 48, device="cuda", dtype=torch.float16))
        with pytest.raises(Exception, match="stream= is not supported"):
            torch.export.export(Model(), args, strict=False)
    del mode


def test_pre_activation_out_is_refused_while_tracing() -> None:
    """pre_activation_out is an eager-only output (its schema row is there, the traced call refuses it)."""
    from cute_examples.dense_gemm import gemm

    class Model(torch.nn.Module):
        def forward(self, a: object, b: object, pre: object) -> object:
            return gemm(a, b, activation="gelu", pre_activation_out=pre)

    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        args = (torch.empty(64, 32, device="cuda", dtype=torch.float16),
                torch.empty(32, 48, device="cuda", dtype=torch.float16),
                torch.empty(64, 48, device="cuda", dtype=torch.float16))
        with pytest.raises(Exception, match="pre_activation_out is not traced"):
            torch.export.export(Model(), args, strict=False)
    del mode


def test_eager_calls_do_not_route() -> None:
    """Outside tracing, the public functions keep their own host path (CPU tensors: their own errors)."""
    from cute_examples.dense_gemm import gemm
    from cute_examples.elementwise_add import elementwise_add

    with pytest.raises(ValueError, match="a must be a CUDA tensor"):
        gemm(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))
    with pytest.raises(ValueError, match="CUDA tensor"):
        elementwise_add(torch.ones(4), torch.ones(4))
    with pytest.raises(ValueError, match="a must be a CUDA tensor"):
        torch.ops.cute.gemm(torch.ones(4, 4, dtype=torch.float16), torch.ones(4, 4, dtype=torch.float16))

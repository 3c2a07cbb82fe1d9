"""gemm()'s epilogue arguments on CPU stand-ins of CUDA tensors: every rule's error names its argument, and the
checked epilogue (config fields, broadcast strides of input) for the shapes torch.addmm / baddbmm accept."""

from __future__ import annotations

import pytest
import torch
from cute_examples.dense_gemm.epilogue_args import broadcast_strides, check_epilogue


class Fake:
    """A CUDA tensor's metadata without a GPU (strides of a contiguous tensor unless given)."""

    is_cuda = True

    def __init__(self, shape, dtype=torch.float16, stride=None, device="cuda:0", address=1 << 20, cuda=True):
        self.shape = torch.Size(shape)
        self._stride = tuple(stride) if stride is not None else torch.empty(shape, device="meta").stride()
        self.dtype, self.device, self._address, self.is_cuda = dtype, torch.device(device), address, cuda

    def dim(self):
        return len(self.shape)

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._address


A, B = Fake((100, 64)), Fake((64, 48), address=1 << 24)


def _check(**kw):
    out = kw.pop("out", None)
    a, b = kw.pop("a", A), kw.pop("b", B)
    return check_epilogue(a, b, out, kw.pop("c_dtype", "float16"), **kw)


def test_defaults_are_the_plain_gemm():
    e = _check()
    assert not e.fused and e.config_fields == {"activation": "identity", "bias": None, "has_input": False,
                                               "has_alpha": False, "has_aux": False}
    assert (e.alpha, e.n_out, e.input, e.bias) == (1.0, 48, None, None)


@pytest.mark.parametrize("shape, mode", [((48,), "n"), ((1, 48), "n"), ((1,), "n"), ((100, 1), "m")])
def test_bias_shapes(shape, mode):
    e = _check(bias=Fake(shape), activation="gelu")
    assert e.bias_mode == mode and e.fused and e.config_fields["activation"] == "gelu"


def test_batched_bias_shapes():
    a, b = Fake((3, 100, 64)), Fake((3, 64, 48))
    assert _check(a=a, b=b, bias=Fake((1, 1, 48))).bias_mode == "n"
    assert _check(a=a, b=b, bias=Fake((1, 100, 1))).bias_mode == "m"
    with pytest.raises(ValueError, match="bias must not vary along the batch"):
        _check(a=a, b=b, bias=Fake((3, 1, 48)))


@pytest.mark.parametrize("shape", [(47,), (100,), (100, 48), (2, 48), (48, 1, 1)])
def test_bias_of_another_shape_is_refused(shape):
    with pytest.raises(ValueError, match=r"bias must be a vector of shape"):
        _check(bias=Fake(shape))


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (Fake((48,), dtype=torch.bfloat16), ValueError, r"bias.dtype must be float16 \(C's dtype"),
        (Fake((48,), dtype=torch.int32), ValueError, r"bias.dtype must be float16 \(C's dtype"),
        (Fake((48,), device="cuda:1"), ValueError, "bias must be on a's device"),
        (Fake((48,), cuda=False), ValueError, "bias must be a CUDA tensor"),
        ([1.0] * 48, TypeError, "bias must be a torch.Tensor or None"),
    ],
)
def test_bias_rules(bad, exc, match):
    with pytest.raises(exc, match=match):
        _check(bias=bad)


@pytest.mark.parametrize(
    "shape, stride, want",
    [
        ((100, 48), None, (48, 1)),
        ((48,), None, (0, 1)),
        ((1, 48), None, (0, 1)),
        ((100, 1), None, (1, 0)),
        ((), None, (0, 0)),
        ((100, 48), (1, 100), (1, 100)),
    ],
)
def test_input_broadcasts_as_addmm(shape, stride, want):
    e = _check(input=Fake(shape, stride=stride, address=1 << 28))
    assert e.has_input and e.beta == 1.0 and e.input_strides == want
    # torch agrees on which shapes broadcast
    torch.empty(shape).expand(100, 48)


def test_batched_input_broadcasts_as_baddbmm():
    a, b = Fake((3, 100, 64)), Fake((3, 64, 48))
    assert _check(a=a, b=b, input=Fake((100, 48))).input_strides == (0, 48, 1)
    assert _check(a=a, b=b, input=Fake((3, 1, 48))).input_strides == (48, 0, 1)
    with pytest.raises(ValueError, match=r"input must broadcast to C's shape \(3, 100, 48\)"):
        _check(a=a, b=b, input=Fake((2, 100, 48)))


@pytest.mark.parametrize("shape", [(47,), (100, 47), (99, 48), (2, 100, 48)])
def test_input_that_does_not_broadcast_is_refused(shape):
    with pytest.raises(ValueError, match=r"input must broadcast to C's shape \(100, 48\)"):
        _check(input=Fake(shape))
    with pytest.raises(RuntimeError):
        torch.empty(shape).expand(100, 48)


def test_beta_rules():
    assert _check(input=Fake((48,)), beta=0.5).beta == 0.5
    e = _check(input=Fake((48,)), beta=0)
    assert not e.has_input and e.input is None  # beta 0 never reads input (a NaN there stays out)
    with pytest.raises(ValueError, match="beta scales input"):
        _check(beta=2.0)
    with pytest.raises(TypeError, match="beta must be a real number"):
        _check(input=Fake((48,)), beta="1")
    with pytest.raises(TypeError, match="alpha must be a real number"):
        _check(alpha=True)
    with pytest.raises(TypeError, match="alpha must be a real number"):
        _check(alpha=1j)
    with pytest.raises(ValueError, match="alpha must not be NaN"):
        _check(alpha=float("nan"))
    assert _check(alpha=2).has_alpha and not _check(alpha=1).has_alpha


def test_input_rules():
    with pytest.raises(ValueError, match=r"input.dtype must be float32 \(C's dtype"):
        _check(input=Fake((48,)), c_dtype="float32")
    with pytest.raises(ValueError, match="input must be on a's device"):
        _check(input=Fake((48,), device="cuda:1"))
    out = Fake((100, 48), address=1 << 26)
    assert _check(out=out, input=Fake((100, 48), address=1 << 26)).has_input  # in place: out itself
    with pytest.raises(ValueError, match="input may be out itself"):
        _check(out=out, input=Fake((48,), address=1 << 26))


def test_activation_rules():
    with pytest.raises(ValueError, match="activation must be None or one of"):
        _check(activation="gelu_erf")
    e = _check(b=Fake((64, 96)), activation="swiglu", bias=Fake((96,)))
    assert e.n_out == 48 and e.bias_mode == "n"
    with pytest.raises(ValueError, match=r"b's N \(40\) to be a multiple of 16"):
        _check(b=Fake((64, 40)), activation="swiglu")
    with pytest.raises(ValueError, match="input= is not supported with activation='swiglu'"):
        _check(b=Fake((64, 96)), activation="swiglu", input=Fake((48,)))


def test_broadcast_strides_direct():
    assert broadcast_strides((1,), (1,), (4, 5, 6), "x") == (0, 0, 0)
    with pytest.raises(ValueError, match="x must broadcast"):
        broadcast_strides((7,), (1,), (4, 6), "x")


def test_pre_activation_out_rules():
    aux = Fake((100, 48), address=1 << 28)
    e = _check(activation="relu", pre_activation_out=aux)
    assert e.fused and e.config_fields["has_aux"] and e.aux is aux
    # any strides whose elements are distinct: column-major, padded rows, a batch of transposes, any pitch of one row
    # (the plan stages what its TMA stores cannot take: test_dense_gemm_epilogue_plan)
    a3, b3 = Fake((3, 100, 64)), Fake((3, 64, 48))
    for kw in ({"pre_activation_out": Fake((100, 48), stride=(1, 100))},
               {"pre_activation_out": Fake((100, 48), stride=(49, 1))},
               {"a": a3, "b": b3, "pre_activation_out": Fake((3, 100, 48), stride=(4800, 1, 100))},
               {"a": Fake((1, 64)), "pre_activation_out": Fake((1, 48), stride=(7, 1))}):
        e = _check(**kw)
        assert e.config_fields["has_aux"] and e.aux is kw["pre_activation_out"]
    for bad, match in (
        (Fake((100, 48), stride=(1, 50)), "elements overlap"),  # columns 50 apart, 100 rows
        (Fake((3, 100, 48), stride=(100, 48, 1)), "elements overlap"),
        (Fake((100, 1)), "must have out's shape"),  # no broadcasting: it is an output
    ):
        with pytest.raises(ValueError, match=match):
            _check(a=a3 if bad.dim() == 3 else A, b=b3 if bad.dim() == 3 else B, pre_activation_out=bad)
    with pytest.raises(ValueError, match="not supported with activation='swiglu'"):
        _check(b=Fake((64, 32)), activation="swiglu", pre_activation_out=Fake((100, 16)))

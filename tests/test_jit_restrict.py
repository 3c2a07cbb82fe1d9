"""JitBuilder.restrict: a JIT kernel's `const __restrict__` promise (noalias + readonly) gives ld.global.nc;
without it the loads stay coherent; a name that is not a tensor parameter is refused by name."""

from __future__ import annotations

import pytest

pytest.importorskip("mlir")

from cute_runtime import Placeholder, Tensor, kernel  # noqa: E402


@kernel(block=128)
def copy1(k, x: Tensor(rank=1), y: Tensor(rank=1), promise: bool = False, bad: bool = False):
    """y[i] = x[i] (one element per thread), x promised read-only and unaliased when `promise`."""
    from cute_ir.control import if_

    if promise:
        k.restrict("x", readonly=True)
        k.restrict("y")
    if bad:
        k.restrict("n")
    i = k.block_idx(0) * 128 + k.thread_idx(0)
    if_(i < x.shape[0], lambda: y.store((i,), x.load((i,))))


def test_restrict_gives_non_coherent_loads() -> None:
    xs = [Placeholder((1000,), "float32")] * 2
    plain = copy1.artifact(*xs, False, target="sm_90a").ptx
    promised = copy1.artifact(*xs, True, target="sm_90a").ptx
    assert "ld.global.nc" not in plain and "ld.global" in plain
    assert "ld.global.nc" in promised


def test_restrict_names_a_tensor_parameter() -> None:
    with pytest.raises(ValueError, match="restrict: 'n' is not a tensor parameter"):
        copy1.artifact(*[Placeholder((10,), "float32")] * 2, False, True, target="sm_90a")

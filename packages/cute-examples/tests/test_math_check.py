"""The math check's pieces on the CPU: its element-wise bound is cute-nvarch's Bound.allowed, its inputs stay in
each function's domain, the catalogue holds both math-check kernels, and they compile with 0 spills."""

from __future__ import annotations

import pytest
from cute_examples.catalogue import jobs
from cute_examples.math_check import allowed_error, inputs, math_spec, reference
from cute_nvarch.math_functions import FAMILIES, MATH_FUNCTIONS, family_functions

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", list(MATH_FUNCTIONS))
def test_elementwise_bound_is_the_tables(name: str) -> None:
    fn = MATH_FUNCTIONS[name]
    x = inputs(name, 4097).double()
    exact = reference(name, x)
    for family in fn.families():
        bound = fn.error(family)
        got = allowed_error(bound, x, exact)
        for i in range(0, 4097, 97):
            assert got[i].item() == bound.allowed(x[i].item(), exact[i].item()), (name, family, i)
    lo, hi = fn.domain
    assert float(x.min()) >= lo - 1e-6 * abs(lo) and float(x.max()) <= hi + 1e-6 * abs(hi)  # float32 rounding
    assert bool(torch.isfinite(exact).all())


def test_the_catalogue_holds_both_kernels() -> None:
    labels = {label for label, _ in jobs("sm_90a", gemm=False)}
    assert {f"math_check {family}" for family in FAMILIES} <= labels
    assert math_spec("fast")["functions"] == list(family_functions("fast"))


@pytest.mark.parametrize("family", FAMILIES)
def test_compiles_without_spills(family: str) -> None:
    pytest.importorskip("mlir")
    from cute_examples.math_check import compile_math

    art = compile_math(math_spec(family), "sm_90a")
    res = art.entry.resources
    assert res["spill_stores"] == res["spill_loads"] == res["local_memory"] == 0, res
    assert "__nv_" not in art.ptx


@pytest.mark.parametrize("family", FAMILIES)
def test_measure_passes_rounded_exact_values_and_names_a_wrong_one(family: str) -> None:
    """Correctly rounded outputs are within every bound (all are >= 0.5 ulp); a perturbed row is named."""
    from cute_examples.math_check import measure

    names = family_functions(family)
    x = torch.stack([inputs(name, 2049) for name in names])
    y = torch.stack([reference(name, x[f].double()).float() for f, name in enumerate(names)])
    results = measure(family, x, y)
    assert [r.name for r in results] == list(names)
    assert all(r.worst_fraction <= 1.0 and r.max_ulp <= 0.5 for r in results), [r.line() for r in results]
    y[names.index("tanh"), 1000] *= 1.01
    y[names.index("sqrt"), 7] = float("nan")
    with pytest.raises(AssertionError, match=r"(?s)\btanh\b.*\bsqrt\b"):
        measure(family, x, y)

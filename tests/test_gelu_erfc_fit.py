"""The fused GELU's erfc polynomial (`activation.GELU_ERFC`) is what `scripts/fit_gelu_erfc.py` fits: refit it here,
compare the coefficients, and check the float32 formula's error and the polynomial past its interval (the kernel has
no clamp there)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cute_examples.dense_gemm.activation import GELU_ERFC, error_bound


@pytest.fixture(scope="module")
def fit_script(load_script):  # noqa: ANN001, ANN201
    return load_script("fit_gelu_erfc")


def test_kernel_coefficients_are_the_fit(fit_script):  # noqa: ANN001
    refit = fit_script.fit()
    assert len(refit) == len(GELU_ERFC)
    for got, want in zip(GELU_ERFC, refit, strict=True):
        assert got == pytest.approx(want, rel=1e-6, abs=1e-12)


def test_float32_formula_within_the_documented_bound(fit_script):  # noqa: ANN001
    c = np.array(GELU_ERFC)
    worst = fit_script.max_error(c)
    # error_bound("gelu", x) is 2^-20 |x|; the float32 formula stays under half of it (ex2.approx adds 2^-23.7 |x|)
    assert worst <= error_bound("gelu", 1.0) / 2, math.log2(worst)
    # past the fitted interval P keeps falling, far below the bound: erfc goes to 0 without a clamp
    assert fit_script.max_beyond(c) < -24

"""cute_ir.math on a GPU: every function of both families within its documented error (cute-nvarch's
MATH_FUNCTIONS) against torch in float64, from the math-check kernels of the AOT bundle (or a build)."""

from __future__ import annotations

import pytest
from cute_examples.math_check import check_math
from cute_nvarch.math_functions import FAMILIES
from cute_runtime.testing import requires_gpu


@requires_gpu
@pytest.mark.parametrize("family", FAMILIES)
def test_within_the_documented_bounds(family: str) -> None:
    for result in check_math(family):  # raises naming every function beyond its bound
        print(result.line())  # the measured figures (pytest -s shows them)

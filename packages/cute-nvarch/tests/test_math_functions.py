"""The kernel math functions' table: float32 spacing, bounds, families and the README table's rows."""

from __future__ import annotations

import struct

import pytest
from cute_nvarch.math_functions import FAMILIES, MATH_FUNCTIONS, Bound, family_functions, math_table, ulp_f32


def _next_f32(y: float) -> float:
    """The next float32 above the float32 y >= 0."""
    bits = struct.unpack("<I", struct.pack("<f", y))[0]
    return struct.unpack("<f", struct.pack("<I", bits + 1))[0]


@pytest.mark.parametrize("y", [1.0, 1.5, 2.0, 0.75, 3.0e38, 1.17549435e-38, 1e-40, 1e-45, 123.456, 1e-30])
def test_ulp_f32_is_the_float32_spacing(y: float) -> None:
    y32 = struct.unpack("<f", struct.pack("<f", y))[0]
    assert ulp_f32(y32) == _next_f32(y32) - y32
    assert ulp_f32(-y32) == ulp_f32(y32)
    assert ulp_f32(0.0) == 2.0**-149


def test_bound_takes_the_largest_term() -> None:
    b = Bound(ulp=2, ulp_per_x=1.0, rel=2**-20, abs=2**-30)
    assert b.allowed(3.0, 1.0) == 2**-20  # rel 2**-20 > (2 + 3) * 2**-23
    assert b.allowed(30.0, 1.0) == 32 * 2**-23
    assert b.allowed(0.0, 0.0) == 2**-30
    assert b.text() == "2 + 1 abs(x) ulp; rel 2^-20; abs 2^-30"
    assert Bound().text() == "exact"


def test_families() -> None:
    assert family_functions("accurate") == tuple(MATH_FUNCTIONS)
    fast = family_functions("fast")
    assert "erf" not in fast and "tanh" in fast and set(fast) < set(MATH_FUNCTIONS)
    with pytest.raises(ValueError, match="family must be one of"):
        family_functions("exact")
    with pytest.raises(ValueError, match="erf: no 'fast' form"):
        MATH_FUNCTIONS["erf"].error("fast")
    for f in MATH_FUNCTIONS.values():
        assert set(f.families()) <= set(FAMILIES)
        assert (f.fast is None) == (f.fast_error is None) == (f.fast_ptx is None) == (f.fast_instruction is None)
        assert f.domain[0] < f.domain[1] and (not f.log_spaced or f.domain[0] > 0)
        for family in f.families():
            assert f.error(family).source, (f.name, family)


def test_markdown_table_has_a_row_per_function() -> None:
    rows = math_table().splitlines()
    assert len(rows) == 2 + len(MATH_FUNCTIONS)
    assert all(row.count("|") == 9 for row in rows)  # no stray pipe inside a cell

"""The add kernel's spec: numbers and tokens only, its tile the TV layouts' tiler, its name from the dtype table."""

from __future__ import annotations

import pytest
from cute_examples.elementwise_add.kernel import (
    DTYPES,
    elementwise_add_spec,
    grid_for,
    kernel_name,
    tv_layouts,
)
from cute_layout.tv import make_layout_tv
from cute_nvarch.kernel_spec import canonical_spec, check_spec


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", [(1, 1), (4, 4), (2, 8)])
@pytest.mark.parametrize("vector_bits", [32, 64, 128])
def test_tile_is_the_tv_tiler(dtype: str, layout: tuple[int, int], vector_bits: int) -> None:
    """spec["tile"] (what grid_for divides by) is the tiler make_layout_tv gives the kernel's TV layouts."""
    threads_m, values_m = layout
    if vector_bits < (16 if dtype in ("float16", "bfloat16") else 32):
        pytest.skip("vector narrower than the element")
    spec = elementwise_add_spec(dtype, vector_bits=vector_bits, threads_m=threads_m, values_m=values_m)
    tiler, _ = make_layout_tv(*tv_layouts(spec))
    assert list(tiler) == spec["tile"]


def test_spec_is_numbers_and_tokens_only() -> None:
    """No layout strings, no prose: the spec passes cute-nvarch's check, which refuses the old layout strings."""
    for raster in ("row", "col", "grid2d"):
        spec = elementwise_add_spec("bf16", "strided", raster=raster, threads_m=4, values_m=4)
        assert check_spec(spec) is spec
        assert canonical_spec(spec).count('"') == 2 * (len(spec) + 4)  # keys and the 4 token values only
        assert set(spec) == {
            "kernel", "dtype", "variant", "vector_bits", "offset_bits", "threads_m", "values_m", "tile",
            "nc_loads", "raster",
        }


def test_check_spec_refuses_layout_strings_and_prose() -> None:
    spec = elementwise_add_spec("float32")
    with pytest.raises(ValueError, match="identifier tokens"):
        check_spec(dict(spec, thr_layout="(1,128):(128,1)"))
    with pytest.raises(ValueError, match="identifier tokens"):
        check_spec(dict(spec, grid="ceil(M/tile[0]) * ceil(N/tile[1]), 1, 1"))


def test_names_and_grids() -> None:
    spec = elementwise_add_spec("float16", offset_bits=32)
    assert kernel_name(spec) == "elementwise_add_f16_vec128_i32"
    assert kernel_name(elementwise_add_spec("int32", "strided", threads_m=4, values_m=4)) == (
        "elementwise_add_i32_strided_i64_t16x128"
    )
    assert grid_for(spec, 3, 1025) == (3 * 2, 1, 1)

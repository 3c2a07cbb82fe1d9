"""The add kernel's specializations: tiles are the TV layouts' tilers, specs are numbers and tokens only (the
JIT's spec, no layout strings), and one spec per (dtype, rank, unit mode, alignment, index width)."""

from __future__ import annotations

import pytest
from cute_examples.elementwise_add.kernel import DTYPES, add_kernel, grid_for, tile_shape, tv_layouts
from cute_layout.tv import make_layout_tv
from cute_nvarch.jit_spec import entry_symbol
from cute_nvarch.kernel_spec import canonical_spec, check_spec
from cute_runtime import Placeholder


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", [(1, 1), (4, 4), (2, 8)])
def test_tile_is_the_tv_tiler(dtype: str, layout: tuple[int, int]) -> None:
    """tile_shape (what grid_for divides by) is the tiler make_layout_tv gives the kernel's TV layouts."""
    tiler, _ = make_layout_tv(*tv_layouts(dtype, 2, *layout))
    assert tuple(tiler) == tile_shape(dtype, 2, *layout)
    tiler1, _ = make_layout_tv(*tv_layouts(dtype, 1))
    assert tuple(tiler1) == tile_shape(dtype, 1)


def test_spec_is_numbers_and_tokens_only() -> None:
    """The spec passes cute-nvarch's check, which refuses layout strings and prose."""
    spec = add_kernel.specialize(*[Placeholder((300, 512), "bfloat16")] * 3, 4, 4)[0]
    assert check_spec(spec) is spec
    with pytest.raises(ValueError, match="identifier tokens"):
        check_spec(dict(spec, thr_layout="(1,128):(128,1)"))


def test_one_spec_per_specialization() -> None:
    """Dynamic extents and strides share a spec; dtype, rank, alignment and index width do not."""
    def key(*ts: Placeholder) -> str:
        return canonical_spec(add_kernel.specialize(*ts)[0])

    base = key(*[Placeholder((100, 1024), "float32")] * 3)
    assert key(*[Placeholder((7, 4096), "float32")] * 3) == base
    assert key(*[Placeholder((100, 1024), "float16")] * 3) != base
    assert key(*[Placeholder((100 * 1024,), "float32")] * 3) != base
    assert key(*[Placeholder((100, 1024), "float32", align=4)] * 3) != base
    assert key(*[Placeholder((2, 1024), "float32", strides=(2**31, 1))] * 3) != base
    assert entry_symbol(add_kernel.specialize(*[Placeholder((5,), "int32")] * 3)[0]).startswith("elementwise_add_")
    assert grid_for(tile_shape("float16", 1), (10000 * 10007,)) == -(-10000 * 10007 // 1024)

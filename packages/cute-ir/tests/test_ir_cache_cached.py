"""An artifact the disk cache serves says so (`cached`), and its resource line shows `(cached)` instead of the
compile time of the run that filled the cache."""

from __future__ import annotations

import _ir_kernels as K
import cute_ir
import pytest
from cute_ir import cache


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):  # noqa: ANN001, ANN201 - pytest fixture
    monkeypatch.setenv("CUTE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUTE_DUMP_DIR", raising=False)
    monkeypatch.delenv("CUTE_CACHE", raising=False)
    cache.clear_memory_cache()
    return tmp_path / "cache"


def test_built_is_not_cached_disk_hit_is(cache_dir) -> None:  # noqa: ANN001
    built = cute_ir.compile_kernel(K.spec_for(7), K.builder(7), "sm_80")
    assert built.cached is False
    assert built.resource_line().endswith(f"compile: {built.resources['compile_ms']:.1f} ms")
    cache.clear_memory_cache()
    hit = cute_ir.compile_kernel(K.spec_for(7), K.builder(7), "sm_80")
    assert hit.cached is True and hit.cubin == built.cubin
    assert hit.resource_line().endswith("compile: (cached)")

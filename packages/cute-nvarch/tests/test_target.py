"""Targets sm_80, sm_89, sm_90a as data (CUDA programming guide, compute capability tables)."""

from __future__ import annotations

import cute_nvarch as nv
import pytest


def test_sm90a_limits() -> None:
    t = nv.SM90A
    # Oracle: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability", 9.0.
    assert t.compute_capability == (9, 0)
    assert t.smem_per_block == 227 * 1024 and t.smem_per_sm == 228 * 1024
    assert t.registers_per_sm == 65536 and t.registers_per_thread == 255
    assert t.max_threads_per_block == 1024 and t.max_threads_per_sm == 2048
    assert t.cluster_support and t.max_cluster_size == 8 and t.max_cluster_size_nonportable == 16
    assert t.ptx_isa_floor == (8, 0) and t.ptx_version == "8.0" and t.ptx_features == "+ptx80"
    assert t.has_wgmma and t.has_tma and t.has_stmatrix


def test_sm80_and_sm89_limits() -> None:
    assert nv.SM80.smem_per_block == 163 * 1024 and nv.SM80.smem_per_sm == 164 * 1024
    assert nv.SM89.smem_per_block == 99 * 1024 and nv.SM89.smem_per_sm == 100 * 1024
    assert nv.SM89.max_threads_per_sm == 1536 and nv.SM80.max_threads_per_sm == 2048
    for t in (nv.SM80, nv.SM89):
        assert not t.cluster_support and t.max_cluster_size == 1
        assert not t.has_wgmma and not t.has_tma and t.has_cp_async and t.has_ldmatrix
    assert nv.SM80.ptx_isa_floor == (7, 0) and nv.SM89.ptx_isa_floor == (7, 8)
    assert nv.SM89.has_fp8_mma and not nv.SM80.has_fp8_mma


@pytest.mark.parametrize(
    "key,name",
    [
        ("sm_90a", "sm_90a"),
        ("sm_90", "sm_90a"),
        ("90a", "sm_90a"),
        ((9, 0), "sm_90a"),
        ("sm80", "sm_80"),
        ((8, 9), "sm_89"),
        ("SM_89", "sm_89"),
    ],
)
def test_get_target(key: object, name: str) -> None:
    assert nv.get_target(key).name == name  # type: ignore[arg-type]


def test_get_target_errors() -> None:
    with pytest.raises(ValueError, match="unknown target 'sm_75'"):
        nv.get_target("sm_75")
    with pytest.raises(ValueError, match="compute capability"):
        nv.get_target((10, 0))
    with pytest.raises(TypeError):
        nv.get_target(90)  # type: ignore[arg-type]
    assert nv.get_target(nv.SM80) is nv.SM80
    assert set(nv.TARGETS) == {"sm_80", "sm_89", "sm_90a"}

from __future__ import annotations

import pytest
import runtime_kernels as rk
from cute_runtime.arch import (
    Arch,
    compute_capability,
    cubin_runs_on,
    device_arch_name,
    parse_arch,
    ptx_entries,
    ptx_runs_on,
    ptx_target,
    ptx_version,
)


def test_parse_arch_names() -> None:
    assert parse_arch("sm_80") == Arch(8, 0, "")
    assert parse_arch("sm_90a") == Arch(9, 0, "a")
    assert parse_arch("sm_89") == Arch(8, 9, "")
    assert parse_arch("sm_100f") == Arch(10, 0, "f")
    assert parse_arch("sm_120a").name == "sm_120a"
    assert parse_arch("sm_90a").compute_capability == (9, 0)
    assert str(parse_arch("sm_86")) == "sm_86"


@pytest.mark.parametrize("bad", ["sm90", "sm_9", "compute_90", "sm_90b", "", "sm_90x"])
def test_parse_arch_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="sm_XY"):
        parse_arch(bad)


def test_parse_arch_type() -> None:
    with pytest.raises(TypeError, match="arch must be a str"):
        parse_arch(90)  # type: ignore[arg-type]


def test_compute_capability_forms() -> None:
    assert compute_capability((9, 0)) == (9, 0)
    assert compute_capability("9.0") == (9, 0)
    assert compute_capability("sm_86") == (8, 6)
    assert compute_capability("sm_90a") == (9, 0)
    assert device_arch_name((8, 9)) == "sm_89"
    with pytest.raises(ValueError, match="pair"):
        compute_capability((9, 0, 1))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compute_capability(9.0)  # type: ignore[arg-type]


# (cubin arch, device cc, loads?)
CUBIN_CASES = [
    ("sm_80", (8, 0), True),
    ("sm_80", (8, 6), True),
    ("sm_80", (8, 9), True),
    ("sm_86", (8, 0), False),
    ("sm_80", (9, 0), False),
    ("sm_89", (8, 9), True),
    ("sm_90", (9, 0), True),
    ("sm_90a", (9, 0), True),
    ("sm_90a", (9, 1), False),
    ("sm_90a", (10, 0), False),
    ("sm_90", (10, 0), False),
    ("sm_100f", (10, 3), True),
    ("sm_100a", (10, 3), False),
]


@pytest.mark.parametrize(("arch", "cc", "ok"), CUBIN_CASES)
def test_cubin_rules(arch: str, cc: tuple[int, int], ok: bool) -> None:
    assert cubin_runs_on(arch, cc) is ok


PTX_CASES = [
    ("sm_80", (8, 0), True),
    ("sm_80", (9, 0), True),
    ("sm_80", (12, 0), True),
    ("sm_86", (8, 0), False),
    ("sm_90", (8, 9), False),
    ("sm_90a", (9, 0), True),
    ("sm_90a", (10, 0), False),
    ("sm_100f", (10, 3), True),
    ("sm_100f", (12, 0), False),
]


@pytest.mark.parametrize(("arch", "cc", "ok"), PTX_CASES)
def test_ptx_rules(arch: str, cc: tuple[int, int], ok: bool) -> None:
    assert ptx_runs_on(arch, cc) is ok


def test_ptx_directives() -> None:
    assert ptx_target(rk.ADD_F32_PTX) == "sm_80"
    assert ptx_version(rk.ADD_F32_PTX) == (7, 8)
    assert ptx_entries(rk.ADD_F32_PTX) == ["add_f32"]
    assert ptx_target(rk.TMA_LOAD_PTX) == "sm_90a"
    assert ptx_entries(rk.DUMP_PTX) == ["dump_params"]
    assert ptx_target(".version 8.0\n.target sm_90a, debug\n") == "sm_90a"
    with pytest.raises(ValueError, match=".target"):
        ptx_target(".version 8.0\n")
    with pytest.raises(ValueError, match=".version"):
        ptx_version(".target sm_80\n")

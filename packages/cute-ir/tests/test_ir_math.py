"""cute_ir.math: every function of both families compiles through ptxas with no spills and no local memory,
libdevice is linked and inlined (no `__nv_` call left), the fast forms show their PTX instruction, the PTX
costs are cute-nvarch's table's, and libdevice keys the compile cache."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mlir")

from cute_ir import cache, stages, versions  # noqa: E402
from cute_ir import math as cm  # noqa: E402
from cute_ir.errors import CompileError  # noqa: E402
from cute_ir.kernel import KernelDef, Param  # noqa: E402
from cute_ir.tensor import make_fragment_like, make_tensor  # noqa: E402
from cute_layout import Layout  # noqa: E402
from cute_nvarch.math_functions import MATH_FUNCTIONS, family_functions, math_table  # noqa: E402

README = Path(__file__).resolve().parents[1] / "README.md"
_SKIP = re.compile(r"^(\.|\{|\}|\$|//|ret;)")


def _kernel(name: str | None, fast: bool, dtype: str = "float32", *, fragment: bool = False) -> KernelDef:
    """y[t] = f(x[t]) for thread t (identity when name is None)."""
    kd = KernelDef(f"math_{name}_{int(fast)}_{dtype}", [Param("x", "ptr", dtype=dtype, align=4),
                   Param("y", "ptr", dtype=dtype, align=4)], block=128, target="sm_90a")
    with kd.body() as k:
        x = make_tensor(k.arg("x"), Layout(128, 1), dtype)
        y = make_tensor(k.arg("y"), Layout(128, 1), dtype)
        t = k.thread_idx(0)
        if fragment:
            frg = make_fragment_like(make_tensor(k.arg("x"), Layout(2, 1), dtype))
            frg[0], frg[1] = x.load(t), x.load(t + 1)
            out = cm.apply(name, frg.load(), fast=fast)
            y.store(t, out.scalars()[0])
            y.store(t + 1, out.scalars()[1])
        else:
            v = x.load(t)
            y.store(t, v if name is None else cm.apply(name, v, fast=fast))
    return kd


def _instructions(ptx: str) -> int:
    body = ptx[ptx.index(".entry"):]
    return sum(1 for line in body.splitlines() if line.strip() and not _SKIP.match(line.strip()))


_BASE: list[int] = []


def _baseline() -> int:
    if not _BASE:
        _BASE.append(_instructions(stages.compile(_kernel(None, False)).ptx))
    return _BASE[0]


def test_emitters_match_the_table() -> None:
    """cute_ir.math implements exactly the functions and families cute-nvarch's table documents."""
    assert tuple(cm.ACCURATE) == family_functions("accurate") == tuple(MATH_FUNCTIONS)
    assert tuple(cm.FAST) == family_functions("fast")
    for name in MATH_FUNCTIONS:
        assert callable(getattr(cm, name)), name


@pytest.mark.parametrize("family", ["accurate", "fast"])
@pytest.mark.parametrize("name", list(MATH_FUNCTIONS))
def test_compiles_without_spills_and_shows_its_ptx(name: str, family: str) -> None:
    fn = MATH_FUNCTIONS[name]
    if family not in fn.families():
        with pytest.raises(ValueError, match="no fast form"):
            stages.compile(_kernel(name, True))
        return
    art = stages.compile(_kernel(name, family == "fast"))
    res = art.entry.resources
    assert res["spill_stores"] == res["spill_loads"] == res["local_memory"] == 0, res
    assert "__nv_" not in art.ptx and "call" not in art.ptx  # libdevice linked and inlined
    if family == "fast":
        assert fn.fast_instruction in art.ptx
    cost = _instructions(art.ptx) - _baseline()
    assert cost == (fn.fast_ptx if family == "fast" else fn.accurate_ptx), (name, family, cost)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_compute_in_f32(dtype: str) -> None:
    """f16/bf16 values widen to f32, go through the f32 function and round back (fragments too)."""
    for name, fast in (("erf", False), ("tanh", True), ("sigmoid", True)):
        art = stages.compile(_kernel(name, fast, dtype, fragment=True))
        assert art.entry.resources["spill_stores"] == 0
        assert "cvt.f32." in art.ptx and "cvt.rn." in art.ptx and "__nv_" not in art.ptx


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown function 'gelu'"):
        cm.apply("gelu", None)
    with pytest.raises(ValueError, match="erf: there is no fast form"):
        stages.compile(_kernel("erf", True))
    with pytest.raises(TypeError, match="x must be an ir.Value or Values"):
        cm.exp(1.0)
    with pytest.raises(TypeError, match="f32, f16 or bf16"):
        kd = KernelDef("math_int", [Param("x", "ptr", dtype="int32", align=4)], block=128, target="sm_90a")
        with kd.body() as k:
            cm.tanh(make_tensor(k.arg("x"), Layout(128, 1), "int32").load(k.thread_idx(0)))
    with pytest.raises(TypeError, match="fast must be a bool"):
        cm.apply("exp", None, fast=1)


def test_missing_libdevice_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUTE_LIBDEVICE", str(tmp_path / "nowhere.bc"))
    assert versions.find_libdevice() is None and versions.libdevice_version() == "none"
    with pytest.raises(CompileError, match="CUTE_LIBDEVICE"):
        stages.compile(_kernel("erf", False))
    stages.compile(_kernel("tanh", True))  # the fast forms need no libdevice


def test_libdevice_keys_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Another libdevice (another path with other content) gives another version and cache key."""
    real = versions.find_libdevice()
    assert real is not None and real.endswith("libdevice.10.bc")
    k0, v0 = cache.cache_key({"kernel": "k"}, "sm_90a"), versions.libdevice_version()
    copy = tmp_path / "libdevice.10.bc"
    shutil.copyfile(real, copy)
    monkeypatch.setenv("CUTE_LIBDEVICE", str(copy))
    assert versions.libdevice_version() == v0  # same content: same version
    with open(copy, "ab") as f:
        f.write(b"\0")
    assert versions.libdevice_version() != v0
    assert cache.cache_key({"kernel": "k"}, "sm_90a") != k0
    monkeypatch.delenv("CUTE_LIBDEVICE")
    assert cache.cache_key({"kernel": "k"}, "sm_90a") == k0


def test_readme_shows_the_table() -> None:
    assert math_table() in README.read_text(), "cute-ir README: paste cute_nvarch.math_functions.math_table()"

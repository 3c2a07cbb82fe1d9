"""The compile cache: memory and disk hits build no IR (a warm process never imports MLIR), corrupt
entries are rebuilt, writes are atomic, CUTE_DUMP_DIR writes every stage, the versions key the entries, and
the source record decides which edits invalidate an entry (by content and module name, not mtime or path)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import textwrap

import _ir_kernels as K
import cute_ir
import pytest
from cute_ir import cache, config, files, sources, versions

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):  # noqa: ANN001, ANN201 - pytest fixture
    d = tmp_path / "cache"
    monkeypatch.setenv("CUTE_CACHE_DIR", str(d))
    monkeypatch.delenv("CUTE_DUMP_DIR", raising=False)
    monkeypatch.delenv("CUTE_CACHE", raising=False)
    cache.clear_memory_cache()
    return d


def _entry_files(d) -> list:  # noqa: ANN001
    return sorted(p for p in (d / "kernels").rglob("*") if p.is_file())


def test_memory_then_disk_hits_build_no_ir(cache_dir) -> None:  # noqa: ANN001
    """The second call hits memory, a fresh memory hits disk; neither calls build."""
    K.BUILDS["count"] = 0
    a1 = cute_ir.compile_kernel(K.spec_for(3), K.builder(3), "sm_80")
    assert K.BUILDS["count"] == 1
    a2 = cute_ir.compile_kernel(K.spec_for(3), K.builder(3), "sm_80")
    assert a2 is a1 and K.BUILDS["count"] == 1
    cache.clear_memory_cache()
    a3 = cute_ir.compile_kernel(K.spec_for(3), K.builder(3), "sm_80")
    assert K.BUILDS["count"] == 1
    assert a3.cubin == a1.cubin and a3.ptx == a1.ptx and a3.entry == a1.entry
    assert a3.entry.spec == K.spec_for(3) and a3.entry.name == "scale_i32_x3"
    names = [p.name for p in _entry_files(cache_dir)]
    assert len(names) == 4 and {n.split(".", 1)[1] for n in names} == {"sources.json", "json", "cubin", "ptx"}
    assert not [n for n in names if n.endswith(".tmp")]
    # another spec or target is another entry
    cute_ir.compile_kernel(K.spec_for(4), K.builder(4), "sm_80")
    cute_ir.compile_kernel(K.spec_for(3), K.builder(3, "sm_90a"), "sm_90a")
    assert K.BUILDS["count"] == 3


def test_warm_process_never_imports_mlir(cache_dir) -> None:  # noqa: ANN001
    """A new process with MLIR made unimportable gets the artifact from disk."""
    art = cute_ir.compile_kernel(K.spec_for(5), K.builder(5), "sm_80")
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["mlir"] = None          # any `import mlir` now raises ImportError
        sys.path.insert(0, {HERE!r})
        import cute_ir, _ir_kernels as K
        art = cute_ir.compile_kernel(K.spec_for(5), K.builder(5), "sm_80")
        assert K.BUILDS["count"] == 0, "built IR on a warm cache"
        loaded = [m for m in sys.modules if sys.modules[m] is not None]
        assert not any(m == "mlir" or m.startswith("mlir.") for m in loaded)
        print(art.name, len(art.cubin), cute_ir.cache.stats["disk_hits"])
        """
    )
    env = dict(os.environ, CUTE_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    name, size, hits = out.stdout.split()
    assert name == art.name and int(size) == len(art.cubin) and hits == "1"


@pytest.mark.parametrize("damage", ["cubin", "ptx", "json-truncated", "json-key", "missing-cubin", "index"])
def test_corrupt_entry_is_rebuilt_and_overwritten(cache_dir, damage: str) -> None:  # noqa: ANN001
    """Any damage (payload bytes, truncated/alien JSON, missing file, a truncated index) means rebuild."""
    good = cute_ir.compile_kernel(K.spec_for(6), K.builder(6), "sm_80")
    files = {p.suffix: p for p in _entry_files(cache_dir) if not p.name.endswith(".sources.json")}
    if damage == "cubin":
        raw = bytearray(files[".cubin"].read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        files[".cubin"].write_bytes(bytes(raw))
    elif damage == "ptx":
        files[".ptx"].write_text(files[".ptx"].read_text().replace("mul", "add", 1))
    elif damage == "json-truncated":
        files[".json"].write_bytes(files[".json"].read_bytes()[:40])
    elif damage == "index":
        index = next(p for p in _entry_files(cache_dir) if p.name.endswith(".sources.json"))
        index.write_bytes(index.read_bytes()[:30])
    elif damage == "json-key":
        meta = json.loads(files[".json"].read_text())
        meta["key"] = "0" * 64
        files[".json"].write_text(json.dumps(meta))
    else:
        files[".cubin"].unlink()
    cache.clear_memory_cache()
    K.BUILDS["count"] = 0
    corrupt0 = cache.stats["corrupt"]
    again = cute_ir.compile_kernel(K.spec_for(6), K.builder(6), "sm_80")
    assert K.BUILDS["count"] == 1 and cache.stats["corrupt"] == corrupt0 + 1
    assert again.cubin == good.cubin
    cache.clear_memory_cache()
    cute_ir.compile_kernel(K.spec_for(6), K.builder(6), "sm_80")
    assert K.BUILDS["count"] == 1  # the rewritten entry is valid again


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """atomic_write replaces whole files; a failure before the rename keeps the old content, no temp file."""
    target = tmp_path / "f.bin"
    files.atomic_write(str(target), b"old")
    assert target.read_bytes() == b"old"

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        files.atomic_write(str(target), b"new content")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]


def test_dump_dir_writes_every_stage(cache_dir, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """CUTE_DUMP_DIR gets <kernel>.mlir, .nvvm.mlir, .ptx, .cubin, .ptxas.txt, .json (even when warm)."""
    art = cute_ir.compile_kernel(K.spec_for(7), K.builder(7), "sm_80")
    dump = tmp_path / "dump"
    monkeypatch.setenv("CUTE_DUMP_DIR", str(dump))
    art2 = cute_ir.compile_kernel(K.spec_for(7), K.builder(7), "sm_80")
    name = art.name
    for suffix in (".mlir", ".nvvm.mlir", ".ptx", ".cubin", ".ptxas.txt", ".json"):
        assert (dump / f"{name}{suffix}").stat().st_size > 0, suffix
    assert (dump / f"{name}.cubin").read_bytes() == art2.cubin
    assert "gpu.func @scale_i32_x7" in (dump / f"{name}.mlir").read_text()
    assert "llvm.func @scale_i32_x7" in (dump / f"{name}.nvvm.mlir").read_text()
    assert json.loads((dump / f"{name}.json").read_text())["name"] == name
    assert art2.mlir is not None and "llvm.func" in art2.mlir


def test_disk_cache_can_be_disabled(cache_dir, monkeypatch) -> None:  # noqa: ANN001
    """CUTE_CACHE=0 keeps nothing on disk (memory still serves repeats)."""
    monkeypatch.setenv("CUTE_CACHE", "0")
    K.BUILDS["count"] = 0
    cute_ir.compile_kernel(K.spec_for(8), K.builder(8), "sm_80")
    cute_ir.compile_kernel(K.spec_for(8), K.builder(8), "sm_80")
    assert K.BUILDS["count"] == 1 and not (cache_dir / "kernels").exists()


def test_key_depends_on_spec_target_and_versions(cache_dir, monkeypatch) -> None:  # noqa: ANN001
    """Spec, target and every tool version change the key; a non-JSON spec is a TypeError."""
    k0 = cache.cache_key({"a": 1}, "sm_80")
    assert k0 == cache.cache_key({"a": 1}, "sm_80")
    assert k0 != cache.cache_key({"a": 2}, "sm_80") and k0 != cache.cache_key({"a": 1}, "sm_90a")
    real = versions.versions()
    for tool in real:
        monkeypatch.setattr(cache, "versions", lambda t=tool: {**real, t: "0.0.0"})
        assert cache.cache_key({"a": 1}, "sm_80") != k0, tool
    monkeypatch.setattr(cache, "versions", versions.versions)
    assert cache.entry_key(k0, {"m": "1"}) != cache.entry_key(k0, {"m": "2"})
    with pytest.raises(TypeError, match="JSON"):
        cache.cache_key({"a": object()}, "sm_80")
    with pytest.raises(TypeError):
        cute_ir.compile_kernel({"a": 1}, "not callable", "sm_80")  # type: ignore[arg-type]


def test_build_returning_wrong_target_is_refused(cache_dir) -> None:  # noqa: ANN001
    """compile_kernel checks the KernelDef against the requested target."""
    with pytest.raises(ValueError, match="target"):
        cute_ir.compile_kernel(K.spec_for(9), K.builder(9, "sm_90a"), "sm_80")


def test_versions_match_the_pinned_wheels() -> None:
    """The MLIR wheel and ptxas versions are the pinned ones, and ptxas --version is cached on disk."""
    v = versions.versions()
    assert v["cute_ir"] == cute_ir.__version__
    assert v["mlir"] == "22.1.8.4" and v["ptxas"] == "13.0.88"
    assert os.path.exists(os.path.join(config.cache_dir(), "ptxas-version.json"))


# --- the source record: which edits invalidate an entry -------------------------------------------------------

# A user package: kern.build reaches helper through mid (a function-level import); other is not reached.
_USER_PACKAGE = {
    "userk/__init__.py": "",
    "userk/helper.py": "FACTOR = 11\n",
    "userk/mid.py": "from .helper import FACTOR\n\n\ndef factor() -> int:\n    return FACTOR\n",
    "userk/kern.py": (
        "import _ir_kernels as K\n\n\ndef build():\n    from .mid import factor\n\n"
        "    return K.build_scale(factor())\n"
    ),
    "userk/other.py": "def unrelated() -> int:\n    return 1\n",
}


def _write_package(root, mtime: float) -> None:  # noqa: ANN001
    for rel, text in _USER_PACKAGE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (mtime, mtime))


@pytest.fixture()
def user_package(tmp_path, monkeypatch):  # noqa: ANN001, ANN201 - pytest fixture
    root = tmp_path / "checkout-a"
    _write_package(root, 1_600_000_000)
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in [m for m in sys.modules if m == "userk" or m.startswith("userk.")]:
        del sys.modules[name]


def _edit(path, text: str) -> None:  # noqa: ANN001
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_record_names_the_modules_the_build_reaches(cache_dir, user_package) -> None:  # noqa: ANN001
    """The record holds the build's module, what it imports at any depth (function-level too) and cute-ir's
    compile path, by module name; not the sibling modules the build does not reach, nor the standard library."""
    import userk.kern

    record = sources.record(userk.kern.build)
    assert {"userk.kern", "userk.mid", "userk.helper", "_ir_kernels", "cute_ir.stages", "cute_ir.kernel"} <= set(
        record
    )
    assert "userk.other" not in record and "json" not in record and not any(m.startswith("mlir") for m in record)
    assert sources.unchanged(record)
    assert sources.record(functools.partial(userk.kern.build)) == record  # the function's module, not functools
    assert record["userk.helper"] == hashlib.sha256(_USER_PACKAGE["userk/helper.py"].encode()).hexdigest()


def test_edits_reached_by_the_build_miss_others_hit(cache_dir, user_package) -> None:  # noqa: ANN001
    """Editing an unrelated module or touching a file keeps the entry a hit; editing a helper the build
    imports indirectly is a miss; restoring the helper hits the first entry again."""
    import userk.kern

    spec = K.spec_for(11)
    K.BUILDS["count"] = 0
    first = cute_ir.compile_kernel(spec, userk.kern.build, "sm_80")
    assert K.BUILDS["count"] == 1

    def again() -> object:
        cache.clear_memory_cache()
        return cute_ir.compile_kernel(spec, userk.kern.build, "sm_80")

    _edit(user_package / "userk/other.py", _USER_PACKAGE["userk/other.py"] + "# edited\n")
    assert again().cubin == first.cubin and K.BUILDS["count"] == 1
    helper = user_package / "userk/helper.py"
    os.utime(helper, (1_700_000_000, 1_700_000_000))  # a new mtime, the same content
    again()
    assert K.BUILDS["count"] == 1
    stale = cache.stats["stale"]
    _edit(helper, "FACTOR = 11  # edited\n")
    again()
    assert K.BUILDS["count"] == 2 and cache.stats["stale"] == stale + 1
    _edit(helper, _USER_PACKAGE["userk/helper.py"])
    again()
    assert K.BUILDS["count"] == 2  # both records are kept under the kernel key


_NEW_PROCESS = """
import json, sys, time
sys.modules["mlir"] = None          # any `import mlir` now raises ImportError
sys.path[:0] = [{root!r}, {here!r}]
import cute_ir, cute_ir.cache, userk.kern, _ir_kernels as K
t = time.perf_counter()
art = cute_ir.compile_kernel(K.spec_for(11), userk.kern.build, "sm_80")
ms = (time.perf_counter() - t) * 1e3
loaded = [m for m in sys.modules if sys.modules[m] is not None]
print(json.dumps({{"builds": K.BUILDS["count"], "hits": cute_ir.cache.stats["disk_hits"], "ms": ms,
                  "mlir": any(m == "mlir" or m.startswith("mlir.") for m in loaded), "kern": userk.kern.__file__}}))
"""


def test_clone_at_another_path_hits_in_a_new_process(cache_dir, user_package, tmp_path) -> None:  # noqa: ANN001
    """A copy of the sources at another path, with other mtimes, hits the entry in a process without MLIR."""
    import userk.kern

    art = cute_ir.compile_kernel(K.spec_for(11), userk.kern.build, "sm_80")
    clone = tmp_path / "elsewhere" / "checkout-b"
    _write_package(clone, 1_750_000_000)
    script = _NEW_PROCESS.format(root=str(clone), here=HERE)
    env = dict(os.environ, CUTE_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["kern"].startswith(str(clone)) and got["builds"] == 0 and got["hits"] == 1 and not got["mlir"]
    print(f"new-process hit of {art.name} from a clone: {got['ms']:.1f} ms")  # the bench row measures it

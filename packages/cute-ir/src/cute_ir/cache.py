"""The compile cache: memory dict -> disk directory -> build + stages; a hit builds no IR and imports no MLIR.

    art = compile_kernel(spec, build, target)   # spec: JSON-able dict; build: () -> built KernelDef;
                                                # target: "sm_80" | "sm_89" | "sm_90a" | ...

Key: sha256 of the canonical JSON of {spec, target, versions of cute_ir / the MLIR wheel / ptxas, and a source
fingerprint (path, mtime, size of the build function's file and of cute_ir's own modules, so editing a
kernel never hits a stale entry)}.
Disk: CUTE_CACHE_DIR (default ~/.cache/cute-ir)/kernels/<key[:2]>/<key>.{json,cubin,ptx}; payloads are written
first and the JSON last, each atomically (temporary file + os.replace). The JSON holds the entry and the
sha256 of both payloads; on read any parse error, key mismatch, missing file or digest mismatch means
"rebuild and overwrite", never trust. With CUTE_DUMP_DIR set every call compiles afresh (so that every stage
gets written) and refreshes the cache. `stats` counts memory hits, disk hits, builds and corrupt entries.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os

from cute_nvarch.entry import KernelEntry
from cute_nvarch.kernel_spec import canonical_spec

from . import config
from .artifact import Artifact
from .versions import versions

__all__ = ["atomic_write", "cache_key", "canonical_json", "clear_memory_cache", "compile_kernel", "stats"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .kernel import KernelDef

_FORMAT = 1
_memory: dict[str, Artifact] = {}
stats = {"memory_hits": 0, "disk_hits": 0, "builds": 0, "corrupt": 0}
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


canonical_json = canonical_spec  # cute-nvarch owns the canonical JSON text (sorted keys, no spaces)


def atomic_write(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same directory and os.replace."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _package_root(path: str) -> str:
    """The directory of the top-level package that contains the file at path."""
    d = os.path.dirname(os.path.abspath(path))
    while os.path.exists(os.path.join(os.path.dirname(d), "__init__.py")):
        d = os.path.dirname(d)
    return d


def _build_file(build: object) -> str | None:
    fn = build
    for _ in range(3):  # functools.partial / bound methods
        code = getattr(fn, "__code__", None)
        if code is not None:
            return code.co_filename
        fn = getattr(fn, "func", None) or getattr(fn, "__func__", None)
        if fn is None:
            break
    return None


def _source_roots(build: object) -> tuple[str, ...]:
    """Package trees whose sources shape the IR: the build function's package, cute-ir, cute-layout, cute-nvarch."""
    roots = [_PKG_DIR]
    for name in ("cute_layout", "cute_nvarch"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            roots.extend(spec.submodule_search_locations)
    path = _build_file(build)
    if path is not None:
        roots.append(_package_root(path))
    return tuple(dict.fromkeys(os.path.abspath(r) for r in roots))


@functools.lru_cache(maxsize=64)
def _fingerprint_roots(roots: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
    out = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for n in sorted(filenames):
                if n.endswith(".py"):
                    st = os.stat(os.path.join(dirpath, n))
                    out.append((os.path.relpath(os.path.join(dirpath, n), root), st.st_mtime_ns, st.st_size))
    return tuple(out)


def _fingerprint(build: object) -> list[list]:
    """(file, mtime, size) of every source that shapes the IR; computed once per process and set of roots."""
    return [list(t) for t in _fingerprint_roots(_source_roots(build))]


def cache_key(spec: dict, target: str, build: object = None) -> str:
    """The cache key (hex sha256) of a kernel specification for `target` with the current tool versions."""
    if not isinstance(spec, dict):
        raise TypeError(f"spec must be a dict, got {type(spec).__name__}")
    if not isinstance(target, str):
        raise TypeError(f"target must be a str such as 'sm_90a', got {type(target).__name__}")
    try:
        material = canonical_json(
            {
                "spec": spec,
                "target": target,
                "versions": versions(),
                "source": _fingerprint(build),
                "format": _FORMAT,
            }
        )
    except (TypeError, ValueError) as e:
        raise TypeError(f"spec must be JSON-able (str/int/float/bool/None/list/dict): {e}") from None
    return hashlib.sha256(material.encode()).hexdigest()


def clear_memory_cache() -> None:
    """Forget the in-memory artifacts (the disk cache stays)."""
    _memory.clear()


def _paths(key: str) -> tuple[str, str, str]:
    d = os.path.join(config.cache_dir(), "kernels", key[:2])
    return os.path.join(d, key + ".json"), os.path.join(d, key + ".cubin"), os.path.join(d, key + ".ptx")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load(key: str) -> Artifact | None:
    """The artifact stored under key, or None when absent; raises ValueError when the entry is corrupt."""
    jpath, cpath, ppath = _paths(key)
    try:
        with open(jpath, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None
    try:
        meta = json.loads(raw)
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT or meta.get("key") != key:
            raise ValueError("bad header")
        entry, digests = KernelEntry.from_dict(meta["entry"]), meta["sha256"]
        if not isinstance(digests, dict):
            raise ValueError("bad fields")
        with open(cpath, "rb") as f:
            cubin = f.read()
        with open(ppath, "rb") as f:
            ptx_bytes = f.read()
        if _sha(cubin) != digests.get("cubin") or _sha(ptx_bytes) != digests.get("ptx"):
            raise ValueError("digest mismatch")
        if not entry.resources or not entry.versions:
            raise ValueError("entry lacks resources or versions")
        return Artifact(entry, cubin, ptx_bytes.decode(), timings=meta.get("timings") or {})
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise ValueError(f"corrupt cache entry {jpath}: {e}") from None


def _store(key: str, art: Artifact) -> None:
    jpath, cpath, ppath = _paths(key)
    ptx_bytes = art.ptx.encode()
    atomic_write(cpath, art.cubin)
    atomic_write(ppath, ptx_bytes)
    meta = {
        "format": _FORMAT,
        "key": key,
        "entry": art.entry.to_dict(),
        "sha256": {"cubin": _sha(art.cubin), "ptx": _sha(ptx_bytes)},
        "timings": art.timings,
    }
    atomic_write(jpath, json.dumps(meta, sort_keys=True).encode())


def compile_kernel(spec: dict, build: Callable[[], KernelDef], target: str) -> Artifact:
    """The compiled kernel for (spec, target): from memory, else disk, else `build()` and every stage."""
    if not callable(build):
        raise TypeError(f"build must be a callable returning a KernelDef, got {type(build).__name__}")
    key = cache_key(spec, target, build)
    dumping = config.dump_dir() is not None
    if not dumping:
        art = _memory.get(key)
        if art is not None:
            stats["memory_hits"] += 1
            return art
    use_disk = config.cache_enabled()
    if use_disk and not dumping:
        try:
            art = _load(key)
        except ValueError:
            stats["corrupt"] += 1
            art = None
        if art is not None:
            stats["disk_hits"] += 1
            _memory[key] = art
            return art
    art = _build(spec, build, target)
    if use_disk:
        try:
            _store(key, art)
        except OSError:
            pass  # a read-only or full cache directory must not fail a compile
    _memory[key] = art
    return art


def _build(spec: dict, build: Callable[[], KernelDef], target: str) -> Artifact:
    import time

    from mlir import ir

    from . import stages
    from .errors import CompileError, format_mlir_error
    from .kernel import KernelDef

    stats["builds"] += 1
    t = time.perf_counter()
    name = str(spec.get("kernel", spec.get("name", "<kernel>")))
    try:
        kd = build()
    except ir.MLIRError as e:
        raise CompileError(name, "build", format_mlir_error(e)) from None
    if not isinstance(kd, KernelDef):
        raise TypeError(f"build must return a KernelDef, got {type(kd).__name__}")
    if kd.module is None:
        raise ValueError(
            f"build returned KernelDef {kd.name!r} without a body: build it with `with kd.body() as k:`"
        )
    if kd.target != target:
        raise ValueError(
            f"build returned a kernel for target {kd.target!r}, but compile_kernel asked for {target!r}"
        )
    kd.spec = spec
    build_ms = (time.perf_counter() - t) * 1e3
    return stages.compile(kd, build_ms=build_ms)

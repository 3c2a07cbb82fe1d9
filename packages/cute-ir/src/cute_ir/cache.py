"""The compile cache: memory dict -> disk directory -> build + stages; a hit builds no IR and imports no MLIR.

    art = compile_kernel(spec, build, target)   # spec: JSON-able dict; build: () -> built KernelDef;
                                                # target: "sm_80" | "sm_89" | "sm_90a" | ...

Key, in two steps. The kernel key = sha256 of the canonical JSON of {spec, target, the versions of cute_ir /
the MLIR wheel / ptxas}. Under it an index lists the source records of the builds stored for it, newest
first: a record is {module name: sha256 of its source} of the project and user modules the build depended on
(`cute_ir.sources.record`, taken when it ran). A lookup takes the first record whose modules still have those
hashes (`sources.unchanged`: a few stats and, for files not seen yet, a hash) and reads the entry stored
under sha256({kernel key, record}). So an edit to a module the build does not reach leaves the entry a hit,
an edit to one it reaches (at any depth) is a miss, and a clone of the tree at another path with new mtimes
hits.
Disk: CUTE_CACHE_DIR (default ~/.cache/cute-ir)/kernels/<k[:2]>/<k>.sources.json (the index of kernel key k)
and kernels/<e[:2]>/<e>.{json,cubin,ptx} (the entry of entry key e); payloads are written first and the
JSON last, each atomically (temporary file + os.replace). The entry JSON holds the kernel entry and the
sha256 of both payloads; on read any parse error, key mismatch, missing file or digest mismatch means
"rebuild and overwrite", never trust. With CUTE_DUMP_DIR set every call compiles afresh (so that every stage
gets written) and refreshes the cache. `stats` counts memory hits, disk hits, builds, corrupt entries and
stale lookups (an index whose every record names a changed module).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time

from cute_nvarch.entry import KernelEntry
from cute_nvarch.kernel_spec import canonical_spec

from . import config, sources
from .artifact import Artifact
from .files import atomic_write
from .versions import versions

__all__ = ["cache_key", "clear_memory_cache", "compile_kernel", "entry_key", "stats"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .kernel import KernelDef

_FORMAT = 2
_RECORDS = 8  # source records kept per kernel key (e.g. two branches of a checkout, both warm)
_memory: dict[str, Artifact] = {}
stats = {"memory_hits": 0, "disk_hits": 0, "builds": 0, "corrupt": 0, "stale": 0}


def cache_key(spec: dict, target: str) -> str:
    """The kernel key (hex sha256) of a kernel specification for `target` with the current tool versions."""
    if not isinstance(spec, dict):
        raise TypeError(f"spec must be a dict, got {type(spec).__name__}")
    if not isinstance(target, str):
        raise TypeError(f"target must be a str such as 'sm_90a', got {type(target).__name__}")
    try:
        material = canonical_spec({"spec": spec, "target": target, "versions": versions(), "format": _FORMAT})
    except (TypeError, ValueError) as e:
        raise TypeError(f"spec must be JSON-able (str/int/float/bool/None/list/dict): {e}") from None
    return hashlib.sha256(material.encode()).hexdigest()


def entry_key(key: str, record: dict[str, str]) -> str:
    """The key (hex sha256) of the entry stored under kernel key `key` for one source record."""
    return hashlib.sha256(canonical_spec({"key": key, "sources": record}).encode()).hexdigest()


def clear_memory_cache() -> None:
    """Forget the in-memory artifacts (the disk cache stays)."""
    _memory.clear()


def _paths(key: str) -> tuple[str, str, str]:
    d = os.path.join(config.cache_dir(), "kernels", key[:2])
    return os.path.join(d, key + ".json"), os.path.join(d, key + ".cubin"), os.path.join(d, key + ".ptx")


def _index_path(key: str) -> str:
    return os.path.join(config.cache_dir(), "kernels", key[:2], key + ".sources.json")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _records(key: str) -> list[dict[str, str]]:
    """The source records of kernel key `key`, newest first ([] when none); ValueError when corrupt."""
    try:
        with open(_index_path(key), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ValueError(f"unreadable cache index for {key}: {e}") from None
    try:
        index = json.loads(raw)
        records = index["records"]
        if index.get("format") != _FORMAT or index.get("key") != key or not isinstance(records, list):
            raise ValueError("bad header")
        for record in records:
            if not isinstance(record, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in record.items()
            ):
                raise ValueError("bad record")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
        raise ValueError(f"corrupt cache index {_index_path(key)}: {e}") from None
    return records


def _lookup(key: str) -> Artifact | None:
    """The stored artifact whose source record still holds, or None; ValueError when something is corrupt."""
    records = _records(key)
    for record in records:
        if sources.unchanged(record):
            return _load(entry_key(key, record))
    if records:
        stats["stale"] += 1
    return None


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
        return Artifact(entry, cubin, ptx_bytes.decode(), timings=meta.get("timings") or {}, cached=True)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise ValueError(f"corrupt cache entry {jpath}: {e}") from None


def _store(key: str, record: dict[str, str], art: Artifact) -> None:
    ekey = entry_key(key, record)
    jpath, cpath, ppath = _paths(ekey)
    ptx_bytes = art.ptx.encode()
    atomic_write(cpath, art.cubin)
    atomic_write(ppath, ptx_bytes)
    meta = {
        "format": _FORMAT,
        "key": ekey,
        "entry": art.entry.to_dict(),
        "sha256": {"cubin": _sha(art.cubin), "ptx": _sha(ptx_bytes)},
        "timings": art.timings,
    }
    atomic_write(jpath, json.dumps(meta, sort_keys=True).encode())
    try:
        older = [r for r in _records(key) if r != record]
    except ValueError:
        older = []  # a corrupt index is replaced
    index = {"format": _FORMAT, "key": key, "records": [record, *older][:_RECORDS]}
    atomic_write(_index_path(key), json.dumps(index, sort_keys=True).encode())


def compile_kernel(
    spec: dict, build: Callable[[], KernelDef], target: str, *, sources_of: Callable[[], list[str]] | None = None
) -> Artifact:
    """The compiled kernel for (spec, target): from memory, else disk, else `build()` and every stage;
    `sources_of()` names more modules whose sources key the stored artifact (called after the build)."""
    if not callable(build):
        raise TypeError(f"build must be a callable returning a KernelDef, got {type(build).__name__}")
    key = cache_key(spec, target)
    dumping = config.dump_dir() is not None
    if not dumping:
        art = _memory.get(key)
        if art is not None:
            stats["memory_hits"] += 1
            return art
    use_disk = config.cache_enabled()
    if use_disk and not dumping:
        try:
            art = _lookup(key)
        except ValueError:
            stats["corrupt"] += 1
            art = None
        if art is not None:
            stats["disk_hits"] += 1
            _memory[key] = art
            return art
    before = set(sys.modules)
    art = _build(spec, build, target)
    if use_disk:
        t = time.perf_counter()
        extra = sources_of() if sources_of is not None else []
        record = sources.record(build, [m for m in list(sys.modules) if m not in before] + extra)
        art.timings["sources_ms"] = (time.perf_counter() - t) * 1e3
        try:
            _store(key, record, art)
        except OSError:
            pass  # a read-only or full cache directory must not fail a compile
    _memory[key] = art
    return art


def _build(spec: dict, build: Callable[[], KernelDef], target: str) -> Artifact:
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

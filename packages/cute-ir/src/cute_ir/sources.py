"""The Python modules a kernel build depends on, named by module and hashed by content (imports no MLIR).

    recorded = record(build, first_imported)   # at build time: {module name: sha256 of its source}
    unchanged(recorded)                          # at lookup: each module still has that source

`record` takes the import closure of the build callable's module (and of the modules that define its closure
cells, defaults and partial arguments, or their classes), of the modules first imported while it ran, and of cute-ir's
compile path (`cute_ir.stages`, `cute_ir.cache`). The closure follows every import statement of a source,
function-level ones too, the lazily loaded submodules that a package `__getattr__` names, and stops at the
standard library and third-party packages (their versions key the cache elsewhere, or they do not shape the
IR). Modules are recorded by name and found again on the current sys.path without importing them, so a
clone of the tree at another path with new mtimes hashes the same. A file's hash is memoized per process by
(path, mtime_ns, size).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import sys
import sysconfig

__all__ = ["module_file", "record", "source_hash", "unchanged"]

# cute-ir's own modules that shape every compiled kernel (the lowering pipeline, ptxas flags, the entry)
COMPILE_PATH = ("cute_ir.stages", "cute_ir.cache")
# packages of this project: tracked wherever they are installed
PROJECT = frozenset({"cute_layout", "cute_nvarch", "cute_ir", "cute_runtime", "cute_examples"})

_hashes: dict[tuple[str, int, int], str] = {}
_IMPORT_RE = re.compile(
    r"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]+))", re.M
)
_NAME_RE = re.compile(r"""["']\.?([A-Za-z_]\w*)["']""")
_COMMENT_RE = re.compile(r"#[^\n]*")


def source_hash(path: str) -> str | None:
    """sha256 of the file at path (None when it cannot be read), memoized by (path, mtime_ns, size)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_mtime_ns, st.st_size)
    sha = _hashes.get(key)
    if sha is None:
        try:
            with open(path, "rb") as f:
                sha = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            return None
        _hashes[key] = sha
    return sha


def _loaded_file(module: object) -> str | None:
    path = getattr(module, "__file__", None)
    return path if isinstance(path, str) and path.endswith(".py") else None


def module_file(name: str) -> str | None:
    """The .py source of module `name` on the current sys.path (imported or not; nothing is imported)."""
    module = sys.modules.get(name)
    if module is not None:
        return _loaded_file(module)
    top, *rest = name.split(".")
    dirs, top_file = _top_locations(top)
    if not rest:
        return top_file
    for base in dirs:
        path = os.path.join(base, *rest)
        for candidate in (os.path.join(path, "__init__.py"), path + ".py"):
            if os.path.isfile(candidate):
                return candidate
    return None


_tops: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], str | None]] = {}


def _top_locations(top: str) -> tuple[tuple[str, ...], str | None]:
    """(package directories, source file) of a top-level module, found without importing it."""
    module = sys.modules.get(top)
    if module is not None:
        return tuple(getattr(module, "__path__", None) or ()), _loaded_file(module)
    key = (top, tuple(sys.path))
    found = _tops.get(key)
    if found is None:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            found = ((), None)
        else:
            origin = spec.origin if isinstance(spec.origin, str) and spec.origin.endswith(".py") else None
            found = (tuple(spec.submodule_search_locations or ()), origin)
        _tops[key] = found
    return found


def unchanged(recorded: dict[str, str]) -> bool:
    """Whether every recorded module still resolves to a source with the recorded sha256."""
    for name, sha in recorded.items():
        path = module_file(name)
        if path is None or source_hash(path) != sha:
            return False
    return True


@functools.lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(os.path.join(os.path.realpath(d), "") for d in dirs)


def _tracked(name: str, path: str, own: frozenset[str]) -> bool:
    """Project and user modules are tracked; the standard library and third-party packages are not."""
    if name.split(".")[0] in own:
        return True
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return not real.startswith(_library_dirs())


@functools.lru_cache(maxsize=4096)
def _imports_of(path: str, mtime_ns: int, size: int, name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(module, names taken from it) for every import statement of the source, at any depth, made absolute."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return ()
    is_package = os.path.basename(path) == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out: list[tuple[str, tuple[str, ...]]] = []
    for m in _IMPORT_RE.finditer(text):
        source, names, plain = m.groups()
        if plain is not None:
            out += [(item.split()[0], ()) for item in _COMMENT_RE.sub("", plain).split(",") if item.split()]
            continue
        base = _absolute(source, package)
        if base is not None:
            items = _COMMENT_RE.sub("", names).strip().strip("()").split(",")
            out.append((base, tuple(item.split()[0] for item in items if item.split())))
    if is_package and re.search(r"^def __getattr__\(", text, re.M):  # a lazy namespace names its submodules
        out += [(f"{name}.{n}", ()) for n in _NAME_RE.findall(text)]
    return tuple((m, items) for m, items in out if all(p.isidentifier() for p in m.split(".")))


def _absolute(source: str, package: str) -> str | None:
    level = len(source) - len(source.lstrip("."))
    if level == 0:
        return source
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    rest = source[level:]
    return ".".join(base + ([rest] if rest else [])) or None


def _module_name(obj: object) -> str | None:
    """The real name of the module that defines obj (a running `__main__` by its spec name when it has one)."""
    name = getattr(obj, "__module__", None) if not isinstance(obj, type(sys)) else obj.__name__
    if not isinstance(name, str):
        return None
    if name == "__main__":
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        return spec.name if spec is not None and spec.name else "__main__"
    return name


def _roots_of(build: object) -> list[str]:
    """Modules of the build callable and of what it closes over or is bound to (the callable's module first)."""
    objs: list[object] = []
    fn = build
    for _ in range(4):  # functools.partial / bound methods / callable objects
        objs.append(fn)
        objs += list(getattr(fn, "args", ()) or ()) + list((getattr(fn, "keywords", None) or {}).values())
        inner = getattr(fn, "func", None) or getattr(fn, "__func__", None)
        if inner is None:
            break
        fn = inner
    code_fn = fn if hasattr(fn, "__code__") else type(fn).__call__ if callable(fn) else None
    if code_fn is not None:
        objs.insert(0, code_fn)
        for cell in getattr(code_fn, "__closure__", None) or ():
            try:
                objs.append(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        objs += list(getattr(code_fn, "__defaults__", None) or ())
    names = []
    for obj in objs:  # a function, class or module by where it is defined; any other value by its class
        name = _module_name(obj if callable(obj) or isinstance(obj, type(sys)) else type(obj))
        if name is not None:
            names.append(name)
    return names


def record(build: object, first_imported: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """{module name: sha256} of the project and user modules `build` depends on (see the module docstring)."""
    build_roots = _roots_of(build)
    roots = build_roots + [n for n in first_imported if n != "__main__"] + list(COMPILE_PATH)
    own = (PROJECT | {build_roots[0].split(".")[0]}) if build_roots else PROJECT
    top_tracked: dict[str, bool] = {}
    resolve = functools.lru_cache(maxsize=None)(module_file)  # names repeat across a closure's sources

    def tracked_top(name: str) -> bool:
        top = name.split(".")[0]
        ok = top_tracked.get(top)
        if ok is None:
            dirs, path = _top_locations(top)
            where = path or (dirs[0] if dirs else None)
            ok = top_tracked[top] = top in own or (where is not None and _tracked(top, where, own))
        return ok

    out: dict[str, str] = {}
    seen: set[str] = set()
    todo = [n for n in dict.fromkeys(roots) if tracked_top(n)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = resolve(name)
        if path is None or not _tracked(name, path, own):
            continue
        sha = source_hash(path)
        if sha is None:
            continue
        out[name] = sha
        st = os.stat(path)
        for module, items in _imports_of(path, st.st_mtime_ns, st.st_size, name):
            if not tracked_top(module):
                continue
            submodules = [f"{module}.{i}" for i in items if i.isidentifier() and resolve(f"{module}.{i}")]
            todo += submodules
            if len(submodules) < len(items) or not items:  # names taken from the module itself
                todo.append(module)
    return dict(sorted(out.items()))

"""JIT kernels: `JitKernel` specializes a call's arguments, finds or compiles the kernel, caches and launches
(`cute_runtime.kernel`, in `frontend`, is the decorator that makes one).

    @cute_runtime.kernel(block=(32, 8))
    def transpose(k, x: Tensor(rank=2), y: Tensor(rank=2), tile: int = 32):
        from cute_ir.tensor import make_tensor     # builder names resolve inside the body: importing the
        ...                                        # module that defines the kernel imports no MLIR

    transpose(x, y, grid=(n // 32, m // 32))       # torch tensors, __cuda_array_interface__ or DLPack
    transpose(x, y, grid=g, stream=s, smem=0)      # launch options: grid, stream, dynamic smem bytes

A call derives the specialization of each argument (cute-nvarch's `jit_spec`: dtype, rank, alignment,
contiguous mode, index width, static extents; compile-time ints/bools/layouts), the canonical spec, and then
a loaded `Kernel`: from this process, else from the AOT bundle of CUTE_BUNDLE_DIR when it holds the spec, else
from the compiler of the group `cute.compilers` (cute-ir: its compile cache, then a build); a kernel served
only by a bundle is `load_bundle(path)["name"]`. cute-runtime
imports neither cute-ir nor MLIR. The default stream is torch's current stream when torch is imported, else
the legacy default stream.

The per-call fast path: after a first call with torch tensors, the class's generated `__call__` computes a key
from each tensor's (dtype, shape, stride(), data_ptr() & 15, get_device()) and the compile-time arguments,
finds the launch plan of that key in a dict and packs straight into the kernel's parameter block.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import sysconfig
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cute_nvarch.entry import KernelEntry
from cute_nvarch.jit_spec import MAX_ALIGN, TensorArg, entry_symbol, kernel_params, tensor_param_names
from cute_nvarch.kernel_spec import canonical_spec, check_spec

from . import config
from . import stream as _stream
from .compilers import compiler
from .errors import CompilerError
from .jit_types import Scalar, Tensor, const_to_spec, is_const_dataclass
from .kernel import Kernel, _grid3
from .pointers import is_torch_tensor
from .tensors import TensorInfo, describe
from .tma import TensorMap

__all__ = ["JitKernel", "Scalar", "Tensor", "source_digest"]

Source = Callable[[dict[str, Any], "str | tuple[int, int]", "int | None"], Kernel]
_PLANS_MAX = 4096  # launch plans kept per kernel (keys include shapes: bounded, then cleared)


# ---------------------------------------------------------------- the source a kernel reaches


def _keyed(module: str | None) -> bool:
    """Whether code of this module is part of a kernel's source key: not the standard library, not the
    project's packages (whose versions and sources key the compile cache); by name, so that an editable and
    a regular install key alike."""
    top = (module or "").split(".")[0]  # no module: code run with exec, i.e. the user's
    return top not in _PROJECT and top not in sys.stdlib_module_names and top != "builtins"


_PROJECT = ("cute_layout", "cute_nvarch", "cute_ir", "cute_runtime")


def _user_function(obj: Any) -> bool:
    return isinstance(obj, types.FunctionType) and _keyed(obj.__module__)


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


_INSTALLED = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
)


def _module_file(name: str) -> str | None:
    """The source file of module `name`: its loaded module's, else located on the file system (nothing is
    imported: a top-level name through the path finder, a submodule under its top-level package's directory)."""
    mod = sys.modules.get(name)
    path = getattr(mod, "__file__", None) if mod is not None else None
    if path is None:
        top, *rest = name.split(".")
        top_mod = sys.modules.get(top)
        path = getattr(top_mod, "__file__", None) if top_mod is not None else None
        if path is None:
            try:
                spec = importlib.machinery.PathFinder.find_spec(top)
            except (ImportError, ValueError):
                return None
            path = spec.origin if spec is not None and spec.has_location else None
        if path is None:
            return None
        if rest:
            if os.path.basename(path) != "__init__.py":
                return None
            base = os.path.join(os.path.dirname(path), *rest)
            path = base + ".py" if os.path.isfile(base + ".py") else os.path.join(base, "__init__.py")
    return path if path and path.endswith(".py") and os.path.isfile(path) else None


_SCANNED: dict[tuple[str, str, int, int], tuple[str, list[str]]] = {}  # (module, path, mtime, size) -> result


def _scan(path: str, module: str) -> tuple[str, list[str]]:
    """(sha256 of the file, the modules it imports), memoized per process by the file's mtime and size."""
    st = os.stat(path)
    key = (module, path, st.st_mtime_ns, st.st_size)
    hit = _SCANNED.get(key)
    if hit is None:
        with open(path, "rb") as fh:
            data = fh.read()
        hit = _SCANNED[key] = (hashlib.sha256(data).hexdigest(), _imports(data, path, module))
    return hit


def _imports(data: bytes, path: str, module: str) -> list[str]:
    """The modules a source imports (any nesting; relative ones resolved against `module`)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level + (node.module or "")) if node.level else (node.module or "")
            try:
                base = importlib.util.resolve_name(base, package) if node.level else base
            except (ImportError, ValueError):
                continue
            subs = [f"{base}.{a.name}" for a in node.names if a.name != "*"]
            # `from pkg import mod`: the submodule's source, not the package's __init__ (which merely runs first)
            if not subs or not all(_module_file(m) is not None for m in subs):
                out.append(base)
            out += subs
    return out


class _SourceKey:
    """The modules a kernel's source reaches, hashed by file: its own package's wherever installed, and any
    module outside the installed trees (the user's scripts and checkouts); the standard library, third-party
    installs and this project's packages (whose versions and sources key the compile cache) stop the walk."""

    def __init__(self, root: str | None) -> None:
        self.root = (root or "").split(".")[0]
        self.seen: set[str] = set()
        self.files: dict[str, str] = {}

    def _follows(self, name: str) -> bool:
        """Whether to key module `name` (decided on its top-level package, which is located, not imported)."""
        if not _keyed(name):
            return False
        top = name.split(".")[0]
        if top == self.root:
            return True
        path = _module_file(top)
        return path is not None and not os.path.realpath(path).startswith(_INSTALLED)

    def add(self, name: str | None) -> None:
        """Key module `name` and, transitively, the modules it imports that `_follows` accepts."""
        todo = [name] if name else []
        while todo:
            mod = todo.pop()
            if mod in self.seen:
                continue
            self.seen.add(mod)
            if not self._follows(mod):
                continue
            path = _module_file(mod)
            if path is None:
                continue
            self.files[mod], imported = _scan(path, mod)
            todo += imported


def source_digest(fn: Callable[..., Any]) -> str:
    """A token naming the kernel's source: sha256 of its code and of the user functions and values it reaches.

    Reached: the globals the function's code names (at any nesting) and its closure cells, followed through
    functions of any module but the standard library and the project's packages (whose versions and sources
    key the compile cache); plain values and cute-layout objects by their repr; and by their files' content
    the modules of the functions and classes reached (also the parameters' annotations' classes) with the
    modules they import, at any nesting, within the kernel's own package and outside installed trees
    (`_SourceKey`). A closure cell holding anything else is a TypeError (pass it as a compile-time argument).
    """
    h = hashlib.sha256()
    seen: set[int] = set()
    todo: list[Any] = [fn]
    key = _SourceKey(getattr(fn, "__module__", None))

    def value(name: str, v: Any, strict: bool) -> None:
        if _user_function(v):
            todo.append(v)
        elif isinstance(v, types.ModuleType):
            if _keyed(v.__name__):
                key.add(v.__name__)
        elif isinstance(v, type) and _keyed(v.__module__):
            key.add(v.__module__)
        elif type(v) in (int, float, bool, str, bytes, tuple) or v is None or _layout_value(v):
            h.update(f"{name}={v!r}".encode())
        elif strict and not (callable(v) or isinstance(v, type)):
            raise TypeError(
                f"kernel {fn.__name__!r} closes over {name!r} ({type(v).__name__}), which cannot be part of its "
                f"compile key: make it a compile-time parameter or a module-level value"
            )

    for name, ann in inspect.get_annotations(fn).items():  # a dataclass argument's class shapes the kernel
        if isinstance(ann, str):
            try:
                ann = eval(ann, fn.__globals__)  # noqa: S307 - what inspect.signature(eval_str=True) does
            except Exception:  # noqa: BLE001 - an annotation naming a later definition keys by its text
                pass
        value(name, ann, False)
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        key.add(f.__module__)
        try:
            h.update(inspect.getsource(f).encode())
        except (OSError, TypeError):
            h.update(f.__code__.co_code)
        g = f.__globals__
        for name in sorted(_code_names(f.__code__)):
            if name in g:
                value(name, g[name], False)
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or (), strict=True):
            try:
                contents = cell.cell_contents
            except ValueError:  # not yet bound
                continue
            value(name, contents, True)
    for mod in sorted(key.files):
        h.update(f"{mod}={key.files[mod]}".encode())
    return "h" + h.hexdigest()[:32]


def _layout_value(v: Any) -> bool:
    return type(v).__module__.startswith("cute_layout") and type(v).__name__ in _LAYOUT_TYPES


# ---------------------------------------------------------------- signatures


@dataclass(frozen=True)
class ArgDecl:
    """One parameter of a kernel function after `k`: name, kind (tensor/const/scalar), annotation, default."""

    name: str
    kind: str
    ann: Any
    default: Any = inspect.Parameter.empty

    def to_json(self) -> dict[str, Any]:
        """The declaration as JSON (for bundles)."""
        d: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == "tensor":
            d.update(self.ann.to_json())
        elif self.kind == "scalar":
            d["param"] = self.ann.kind
        if self.default is not inspect.Parameter.empty:
            d["default"] = const_to_spec(self.name, self.default)
        return d


_LAYOUT_TYPES = ("Layout", "Swizzle", "ComposedLayout")


def _decl(p: inspect.Parameter) -> ArgDecl:
    ann = p.annotation
    if isinstance(ann, Tensor) or ann is Tensor:
        return ArgDecl(p.name, "tensor", ann if isinstance(ann, Tensor) else Tensor(), p.default)
    if isinstance(ann, Scalar):
        return ArgDecl(p.name, "scalar", ann, p.default)
    if ann is float:
        return ArgDecl(p.name, "scalar", Scalar("f32"), p.default)
    if ann is TensorMap:
        return ArgDecl(p.name, "scalar", Scalar("tma"), p.default)
    if ann in (int, bool, str) or is_const_dataclass(ann) or (
        isinstance(ann, type) and ann.__module__.startswith("cute_layout") and ann.__name__ in _LAYOUT_TYPES
    ):
        return ArgDecl(p.name, "const", ann, p.default)
    raise TypeError(
        f"parameter {p.name!r}: annotate it with cute_runtime.Tensor(...), cute_runtime.Scalar(kind), float, "
        f"cute_runtime.TensorMap, int, bool, str, a frozen dataclass or a cute_layout layout type, got {ann!r}"
    )


def parse_signature(fn: Callable[..., Any]) -> tuple[ArgDecl, ...]:
    """The declarations of a kernel function's parameters after the first (the builder `k`)."""
    sig = inspect.signature(fn, eval_str=True)
    params = list(sig.parameters.values())
    if not params:
        raise TypeError(f"kernel {fn.__name__!r}: the first parameter receives the kernel builder (k)")
    out = []
    for p in params[1:]:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            raise TypeError(f"kernel {fn.__name__!r}: parameter {p.name!r} must be a plain named parameter")
        if p.name in ("grid", "stream", "smem"):
            raise TypeError(f"kernel {fn.__name__!r}: {p.name!r} is a launch option, not a parameter name")
        out.append(_decl(p))
    return tuple(out)


def decls_from_json(items: Sequence[dict[str, Any]]) -> tuple[ArgDecl, ...]:
    """The declarations stored in a bundle's signature."""
    out = []
    for d in items:
        kind = d["kind"]
        default = d.get("default", inspect.Parameter.empty)
        if kind == "tensor":
            ann: Any = Tensor(d.get("dtype"), d.get("rank"), tuple(d.get("static") or ()))
        elif kind == "scalar":
            ann = Scalar(d["param"])
        else:
            ann = None
        out.append(ArgDecl(d["name"], kind, ann, default))
    return tuple(out)


# ---------------------------------------------------------------- specialization


def _lowbit(x: int) -> int:
    x = abs(x)
    return x & -x if x else 1 << 62


def tensor_spec(name: str, ann: Tensor, info: TensorInfo) -> TensorArg:
    """The specialization of one tensor argument (ValueError/TypeError naming it when it breaks a rule)."""
    from cute_nvarch.numeric import numeric_type

    if ann.dtype is not None and info.dtype != ann.dtype:
        raise TypeError(f"argument {name!r}: dtype must be {ann.dtype}, got {info.dtype}")
    rank = len(info.shape)
    if ann.rank is not None and rank != ann.rank:
        raise ValueError(f"argument {name!r}: rank must be {ann.rank}, got shape {info.shape}")
    if any(m >= rank for m in ann.static):
        raise ValueError(f"argument {name!r}: static modes {ann.static} exceed rank {rank}")
    nbytes = max(1, numeric_type(info.dtype).width // 8)
    unit = None
    for m in range(rank):
        if info.strides[m] == 1 and info.shape[m] > 1:
            unit = m
    if unit is None:
        for m in range(rank):
            if info.shape[m] <= 1:
                unit = m
    align = min(MAX_ALIGN, _lowbit(info.ptr))
    span = 0
    for m in range(rank):
        if m != unit and info.shape[m] > 1:
            align = min(align, _lowbit(info.strides[m] * nbytes))
        span += max(info.shape[m] - 1, 0) * abs(info.strides[m])
    small = span < 2**31 and all(e < 2**31 for e in info.shape) and all(abs(s) < 2**31 for s in info.strides)
    shape = tuple(info.shape[m] if m in ann.static else None for m in range(rank))
    return TensorArg(name, info.dtype, shape, unit, align, 32 if small else 64)


def tensor_values(t: TensorArg, info: TensorInfo) -> list[int]:
    """The packed values of a tensor argument, in kernel_params order: pointer, dynamic extents, strides."""
    extents, strides = tensor_param_names(t)
    return [info.ptr, *(info.shape[m] for m, _ in extents), *(info.strides[m] for m, _ in strides)]


def _record_miss(name: str, spec: dict[str, Any], target: str) -> None:
    """Append a spec that nothing could serve to the CUTE_RECORD_MISSES file (see `config.record_misses`)."""
    path = config.record_misses()
    if path is None:
        return
    import json

    with open(path, "a") as fh:
        fh.write(json.dumps({"kernel": name, "spec": spec, "target": target}, sort_keys=True) + "\n")


def _dim3(v: Any, what: str) -> list[int]:
    return list(_grid3(v, what))


class JitKernel:
    """A kernel function made callable on tensors: specialize -> spec -> Kernel (cached) -> launch.

    `fn` is None for a kernel served only from an AOT bundle (then `signature` describes it).
    """

    def __init__(
        self,
        fn: Callable[..., Any] | None,
        *,
        name: str | None = None,
        block: Any = (128, 1, 1),
        cluster: Any = (1, 1, 1),
        target: str | None = None,
        signature: dict[str, Any] | None = None,
        source: Source | None = None,
        fallback: Callable[[dict[str, Any], str | tuple[int, int], int | None], Kernel | None] | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or (fn.__name__ if fn is not None else str((signature or {}).get("name")))
        self.block = block
        self.cluster = cluster
        self.target = target
        self._decls: tuple[ArgDecl, ...] | None = None
        self._digest: str | None = None
        if signature is not None:
            self._decls = decls_from_json(signature["args"])
            self._digest = signature["source"]
            self.block = signature["block"]
            self.cluster = signature["cluster"]
        self._source = source
        self._fallback = fallback
        self._kernels: dict[tuple[str, str, int | None], Kernel] = {}
        self.artifacts: dict[str, Any] = {}  # canonical spec -> what the compiler returned
        self.compiles = 0
        self._plans: dict[tuple, Callable[..., None]] = {}
        self._lock = threading.Lock()
        self.__doc__ = getattr(fn, "__doc__", None)
        if fn is not None:
            self.__wrapped__ = fn
            self.__module__ = fn.__module__
            self.__qualname__ = getattr(fn, "__qualname__", self.name)

    def __repr__(self) -> str:
        return f"JitKernel({self.name!r}, {len(self._kernels)} specializations)"

    @property
    def kernels(self) -> list[Kernel]:
        """The Kernels of the specializations found or compiled so far."""
        return list(self._kernels.values())

    @property
    def plans(self) -> dict[tuple, Callable[..., None]]:
        """The fast path's launch plans by call_key (the dict itself)."""
        return self._plans

    # ------------------------------------------------------------ signature

    @property
    def decls(self) -> tuple[ArgDecl, ...]:
        """The parameter declarations (parsed on first use, so annotations may name later definitions)."""
        if self._decls is None:
            assert self.fn is not None
            self._decls = parse_signature(self.fn)
        return self._decls

    @property
    def digest(self) -> str:
        """The source token of the kernel (see source_digest)."""
        if self._digest is None:
            assert self.fn is not None
            self._digest = source_digest(self.fn)
        return self._digest

    def signature(self) -> dict[str, Any]:
        """The kernel's signature and specialization rules as JSON (what a bundle stores to dispatch)."""
        empty = inspect.Parameter.empty
        consts = {d.name: d.default for d in self.decls if d.kind == "const" and d.default is not empty}
        return {
            "name": self.name,
            "source": self.digest,
            "block": self._launch_dim(self.block, consts, "block") if not callable(self.block) else None,
            "cluster": self._launch_dim(self.cluster, consts, "cluster") if not callable(self.cluster) else None,
            "args": [d.to_json() for d in self.decls],
        }

    def _launch_dim(self, v: Any, consts: dict[str, Any], what: str) -> list[int]:
        if callable(v):
            v = v(**consts)
        return _dim3(v, f"kernel {self.name!r}: {what}")

    def _bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        decls = self.decls
        if len(args) > len(decls):
            raise TypeError(f"kernel {self.name!r} takes {len(decls)} arguments, got {len(args)}")
        values = list(args)
        for d in decls[len(args) :]:
            if d.name in kwargs:
                values.append(kwargs.pop(d.name))
            elif d.default is not inspect.Parameter.empty:
                values.append(d.default)
            else:
                raise TypeError(f"kernel {self.name!r}: missing argument {d.name!r}")
        if kwargs:
            raise TypeError(f"kernel {self.name!r}: unexpected arguments {sorted(kwargs)}")
        return values

    # ------------------------------------------------------------ specialization

    def specialize(self, *args: Any, **kwargs: Any) -> tuple[dict[str, Any], list[Any], int | None]:
        """(spec, packed values in kernel-parameter order, device ordinal or None) for a call's arguments."""
        values = self._bind(args, dict(kwargs))
        spec_args: list[dict[str, Any]] = []
        packed: list[Any] = []
        consts: dict[str, Any] = {}
        device: int | None = None
        for d, v in zip(self.decls, values, strict=True):
            if d.kind == "tensor":
                info = describe(v, d.name)
                if info.device >= 0:
                    if device is not None and info.device != device:
                        raise ValueError(
                            f"kernel {self.name!r}: argument {d.name!r} is on cuda:{info.device}, an earlier "
                            f"tensor on cuda:{device}"
                        )
                    device = info.device
                t = tensor_spec(d.name, d.ann, info)
                spec_args.append(t.to_spec())
                packed += tensor_values(t, info)
            elif d.kind == "const":
                if (d.ann in (int, bool, str) and type(v) is not d.ann) or (
                    is_const_dataclass(d.ann) and not isinstance(v, d.ann)
                ):
                    raise TypeError(f"argument {d.name!r}: expects a compile-time {d.ann.__name__}, got {v!r}")
                c = const_to_spec(d.name, v)
                consts[d.name] = v
                spec_args.append({"name": d.name, "kind": "const", "value": c})
            else:
                spec_args.append({"name": d.name, "kind": "scalar", "param": d.ann.kind})
                packed.append(v)
        spec = {
            "kernel": self.name,
            "source": self.digest,
            "block": None if self.block is None else self._launch_dim(self.block, consts, "block"),
            "cluster": None if self.cluster is None else self._launch_dim(self.cluster, consts, "cluster"),
            "args": spec_args,
        }
        return check_spec(spec), packed, device

    def _target(self, target: str | None, device: int | None) -> str | tuple[int, int]:
        if target is not None:
            return target
        if self.target is not None:
            return self.target
        from .device import device_properties

        return device_properties(device).compute_capability

    def kernel_for(self, spec: dict[str, Any], target: str | tuple[int, int], device: int | None) -> Kernel:
        """The Kernel of a spec for a target name or device compute capability (compiled or found once)."""
        key = (canonical_spec(spec), str(target), device)
        k = self._kernels.get(key)
        if k is not None:
            return k
        with self._lock:
            k = self._kernels.get(key)
            if k is None:
                if self._source is not None:
                    k = self._source(spec, target, device)
                else:
                    k = self._fallback(spec, target, device) if self._fallback is not None else None
                    if k is None:
                        k = self._compile(spec, target, device)
                self._kernels[key] = k
        return k

    def _compile(self, spec: dict[str, Any], target: str | tuple[int, int], device: int | None) -> Kernel:
        if self.fn is None:
            raise CompilerError(f"kernel {self.name!r} has no Python function to compile")
        if not isinstance(target, str):
            from cute_nvarch.target import compile_target

            target = compile_target(target).name
        try:
            compile_fn = compiler()
        except CompilerError:
            _record_miss(self.name, spec, target)
            raise
        art = compile_fn(self.fn, spec, target)
        entry = art.entry
        if not isinstance(entry, KernelEntry) or entry.params != kernel_params(spec):
            raise CompilerError(f"kernel {self.name!r}: the compiler returned an entry that does not match the spec")
        self.compiles += 1
        self.artifacts[canonical_spec(spec) + "@" + entry.target] = art
        return Kernel(entry, art.cubin, art.ptx, device=device)

    def compiled_here(self, kernel: Kernel) -> bool:
        """Whether this process's compiler built `kernel` (else its cache or an AOT bundle served it)."""
        art = self.artifacts.get(kernel.entry.key + "@" + kernel.entry.target)
        return art is not None and not getattr(art, "cached", False)

    def artifact(self, *args: Any, target: str, **kwargs: Any) -> Any:
        """What the compiler returned (entry, cubin, ptx) for these arguments on target (compiled if needed)."""
        spec, _, device = self.specialize(*args, **kwargs)
        self.kernel_for(spec, target, device)
        key = canonical_spec(spec) + "@" + target
        if key not in self.artifacts:  # compiled in this process for another device: compile once more
            self._compile(spec, target, device)
        return self.artifacts[key]

    def compile(self, *args: Any, target: str | None = None, **kwargs: Any) -> Kernel:
        """The Kernel for these arguments (specialized and compiled, not loaded; no GPU needed with target=)."""
        spec, _, device = self.specialize(*args, **kwargs)
        return self.kernel_for(spec, self._target(target, device), device)

    # ------------------------------------------------------------ calls

    def __call__(self, *args: Any, grid: Any, stream: Any = None, smem: int | None = None, **kwargs: Any) -> None:
        """Launch on grid (int or 1-3 ints) with stream (default: torch's current) and dynamic smem bytes."""
        self._install_fast_call()
        return self._slow_call(args, kwargs, grid, stream, smem)

    def _slow_call(self, args: Sequence[Any], kwargs: dict[str, Any], grid: Any, stream: Any, smem: Any) -> None:
        values = self._bind(args, dict(kwargs))
        spec, packed, device = self.specialize(*values)
        if device is None:
            from . import driver

            device = driver.current_device()
        k = self.kernel_for(spec, self._target(None, device), device)
        k.launch(grid, *packed, stream=stream, smem=smem)
        if smem is None and k._owner == threading.get_ident():
            key = self.call_key(values)
            if key is not None:
                if len(self._plans) >= _PLANS_MAX:
                    self._plans.clear()
                self._plans[key] = self._make_plan(k, spec)

    def call_key(self, values: Sequence[Any]) -> tuple | None:
        """The fast path's dict key for the values of all parameters, in order (None unless every tensor is a
        torch tensor): the key the generated __call__ computes."""
        key: list[Any] = []
        for d, v in zip(self.decls, values, strict=True):
            if d.kind == "tensor":
                if not is_torch_tensor(v):
                    return None
                key += [v.dtype, v.shape, v.stride(), v.data_ptr() & 15, v.get_device()]
            elif d.kind == "const":
                key.append(v)
        return tuple(key)

    def _make_plan(self, k: Kernel, spec: dict[str, Any]) -> Callable[..., None]:
        """A function (grid, stream, per tensor: ptr, shape, stride; scalars) that packs and launches k."""
        params: list[str] = []
        exprs: list[str] = []
        for i, (d, s) in enumerate(zip(self.decls, spec["args"], strict=True)):
            if d.kind == "tensor":
                params += [f"p{i}", f"s{i}", f"d{i}"]
                t = TensorArg(d.name, s["dtype"], tuple(s["shape"]), s["unit"], s["align"], s["index"])
                extents, strides = tensor_param_names(t)
                exprs += [f"p{i}"] + [f"s{i}[{m}]" for m, _ in extents] + [f"d{i}[{m}]" for m, _ in strides]
            elif d.kind == "scalar":
                params.append(f"v{i}")
                exprs.append(f"v{i}")
        buf = k._buffer
        ns: dict[str, Any] = {
            "pack_into": k.layout.struct.pack_into,
            "buf": buf.buffer,
            "base": buf.base,
            "get_ident": threading.get_ident,
            "owner": k._owner,
            "checked": k._launch_checked,
            "grid3": _grid3,
            "streams": _stream,
            "stream_handle": _stream.stream_handle,
            "cu": k._launch_fn,
            "f": k._f,
            "BX": k.block[0],
            "BY": k.block[1],
            "BZ": k.block[2],
            "BLOCK": k.block,
            "SMEM": k.dynamic_smem,
            "KP": buf.kernel_params,
            "BUF": buf,
            "failed": k._launch_failed,
            "cluster": k._launch_cluster,
            "dev": k.device,
        }
        values = ", ".join(exprs)
        if k._config is None:
            launch = (
                "try:\n"
                "        err = cu(f, gx, gy, gz, BX, BY, BZ, SMEM, s, KP, 0)[0]\n"
                "    except (OverflowError, TypeError):\n"
                "        grid3((gx, gy, gz))\n"
                "        raise\n"
                "    if err:\n"
                "        failed(err, (gx, gy, gz), BLOCK, SMEM, s, BUF)"
            )
        else:
            launch = "cluster((gx, gy, gz), BLOCK, SMEM, s, BUF)"
        src = f"""def plan(grid, stream, {', '.join(params)}):
    if get_ident() != owner:
        return checked(grid, [{values}], stream, None, None)
    try:
        pack_into(buf, base, {values})
    except Exception:
        return checked(grid, [{values}], stream, None, None)
    if type(grid) is int:
        gx = grid
        gy = gz = 1
    elif type(grid) is tuple and len(grid) == 2:
        gx, gy = grid
        gz = 1
    elif type(grid) is tuple and len(grid) == 3:
        gx, gy, gz = grid
    else:
        gx, gy, gz = grid3(grid)
    if stream is None:
        s = streams.current(dev)
    elif type(stream) is int:
        s = stream
    else:
        s = stream_handle(stream)
    {launch}
"""
        exec(compile(src, f"<cute_runtime plan of {entry_symbol(spec)}>", "exec"), ns)
        return ns["plan"]

    def _install_fast_call(self) -> None:
        """Give this instance a class whose generated __call__ is the fast path for this signature."""
        if type(self) is not JitKernel:
            return
        decls = self.decls
        ns: dict[str, Any] = {"plans": self._plans, "slow": self._slow_call}
        params, key, pargs, names = [], [], [], []
        for i, d in enumerate(decls):
            names.append(d.name)
            if d.default is inspect.Parameter.empty:
                params.append(d.name)
            else:
                ns[f"D{i}"] = d.default
                params.append(f"{d.name}=D{i}")
            if d.kind == "tensor":
                key += [
                    f"{d.name}.dtype", f"s{i}", f"d{i}", f"p{i} & 15", f"{d.name}.get_device()"
                ]
                pargs += [f"p{i}", f"s{i}", f"d{i}"]
            elif d.kind == "const":
                key.append(d.name)
            else:
                pargs.append(d.name)
        fetch = "".join(
            f"            p{i} = {d.name}.data_ptr()\n            s{i} = {d.name}.shape\n"
            f"            d{i} = {d.name}.stride()\n"
            for i, d in enumerate(decls)
            if d.kind == "tensor"
        )
        sep = ", " if params else ""
        src = f"""def __call__(self{sep}{', '.join(params)}, *, grid, stream=None, smem=None):
    if smem is None:
        try:
{fetch}            plan = plans[({', '.join(key)},)]
        except Exception:
            return slow(({', '.join(names)}{',' if names else ''}), {{}}, grid, stream, smem)
        return plan(grid, stream{', ' if pargs else ''}{', '.join(pargs)})
    return slow(({', '.join(names)}{',' if names else ''}), {{}}, grid, stream, smem)
"""
        exec(compile(src, f"<cute_runtime call of {self.name}>", "exec"), ns)
        call = ns["__call__"]
        call.__doc__ = JitKernel.__call__.__doc__
        self.__class__ = type(f"JitKernel_{self.name}", (JitKernel,), {"__call__": call})

"""The kernel-definition API: parameters, launch shape, dynamic shared memory, cluster shape.

    from cute_ir.kernel import KernelDef, Param

    kd = KernelDef("scale_f32",
                   params=[Param("x", "ptr", dtype="float32", noalias=True), Param("n", "i32")],
                   block=(128, 1, 1), cluster=(1, 1, 1), dynamic_smem=0, target="sm_90a")
    with kd.body() as k:    # Context, Location, module, gpu.module (nvvm target), gpu.func, insertion point
        x, n = k.arg("x"), k.arg("n")         # ptr -> ir.Value !llvm.ptr<1>; i32/i64 -> cute_ir.values.Int
        i = k.block_idx(0) * 128 + k.thread_idx(0)   # Int (i32) arithmetic
        ...                                   # any builder; gpu.return is appended on exit
    kd.module   # the built ir.Module; stages: cute_ir.stages.lower / to_ptx / to_cubin, or cute_ir.compile

Everything emitted inside `body()` goes to `ir.InsertionPoint.current`; builders never need a KernelDef.
The free functions `thread_idx`, `block_idx`, `grid_dim`, `cluster_ctarank`, `block_idx_in_cluster`,
`cluster_idx`, `lane_idx`, `warp_idx`, `dynamic_smem`, `barrier` (defined in `cute_ir.special`, re-exported
here) emit at the caller's insertion point too.

Parameters lower to plain PTX parameters, in order (no memref descriptors); their kinds are cute-nvarch's
`PARAM_KINDS` (sizes, alignments), lowered here:
  kind "ptr"  -> `!llvm.ptr<1>` (attrs: llvm.noalias / llvm.readonly / llvm.align from Param), `.param .u64`
  kind "i32"/"u32"/"i64"/"u64" -> i32/i64, wrapped as `Int`;  "f32"/"f64" -> f32/f64 (raw ir.Value)
Other kinds plug in through `register_param_kind(ParamKind(...))`: the kind "tma" (128-byte CUtensorMap by
value, __grid_constant__) is registered by `cute_ir.hopper` (imported on first use of the kind).

The single `ir.Context` per thread (`shared_context()`) is reused by every KernelDef, so building a kernel
pays no context creation.
"""

from __future__ import annotations

import contextlib
import re
import threading

from cute_nvarch.entry import KernelEntry, Launch
from cute_nvarch.kernel_spec import check_spec
from cute_nvarch.params import PARAM_KINDS
from cute_nvarch.params import Param as EntryParam
from cute_nvarch.target import TARGETS, Target
from mlir import ir
from mlir.dialects import gpu, llvm

from . import dtypes as _dtypes
from .special import (
    barrier,
    block_idx,
    block_idx_in_cluster,
    cluster_ctarank,
    cluster_idx,
    dynamic_smem,
    grid_dim,
    lane_idx,
    thread_idx,
    warp_idx,
)
from .values import Int

__all__ = [
    "KernelBuilder",
    "KernelDef",
    "Param",
    "ParamKind",
    "barrier",
    "block_idx",
    "block_idx_in_cluster",
    "cluster_ctarank",
    "cluster_idx",
    "dynamic_smem",
    "grid_dim",
    "lane_idx",
    "param_kind",
    "register_param_kind",
    "shared_context",
    "thread_idx",
    "warp_idx",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

# the newest PTX ISA version the bundled NVVM backend and ptxas accept, in units of 0.1
_PTX_MAX = 90
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_tls = threading.local()


def shared_context() -> ir.Context:
    """The MLIR Context this thread's kernels are built in (created once per thread)."""
    ctx = getattr(_tls, "ctx", None)
    if ctx is None:
        ctx = ir.Context()
        _tls.ctx = ctx
    return ctx


# --- parameter kinds -------------------------------------------------------------------------------------


class ParamKind:
    """How one of cute-nvarch's parameter kinds lowers: MLIR argument type, argument attributes, and what
    `k.arg()` returns.

    `finalize(kd, indices)`, when given, runs once on a built KernelDef before `cute_ir.stages.lower` (with
    the indices of the parameters of this kind), for kinds that need attributes only an `llvm.func` carries.
    """

    __slots__ = ("arg_attrs", "finalize", "mlir_type", "name", "wrap")

    def __init__(
        self,
        name: str,
        mlir_type: Callable[[Param], ir.Type],
        arg_attrs: Callable[[Param], dict[str, ir.Attribute]] | None = None,
        wrap: Callable[[ir.Value, Param], object] | None = None,
        finalize: Callable[[KernelDef, list[int]], None] | None = None,
    ) -> None:
        self.name = name
        self.mlir_type = mlir_type
        self.arg_attrs = arg_attrs or (lambda p: {})
        self.wrap = wrap or (lambda v, p: v)
        self.finalize = finalize


_KINDS: dict[str, ParamKind] = {}
# kinds registered by a module imported on first use
_LAZY_KINDS = {"tma": "cute_ir.hopper"}


def register_param_kind(kind: ParamKind) -> None:
    """Make a parameter kind available to `Param` (replaces a kind of the same name)."""
    if not isinstance(kind, ParamKind):
        raise TypeError(f"register_param_kind: kind must be a ParamKind, got {type(kind).__name__}")
    if kind.name not in PARAM_KINDS:
        raise ValueError(
            f"register_param_kind: {kind.name!r} is not one of cute-nvarch's PARAM_KINDS {sorted(PARAM_KINDS)}"
        )
    _KINDS[kind.name] = kind


def param_kind(name: str) -> ParamKind:
    """The registered ParamKind called `name` (importing its provider module on first use)."""
    kind = _KINDS.get(name)
    if kind is None and name in _LAZY_KINDS:
        import importlib

        try:
            importlib.import_module(_LAZY_KINDS[name])
        except ImportError as e:
            raise ValueError(
                f"param kind {name!r} needs module {_LAZY_KINDS[name]}, which failed: {e}"
            ) from e
        kind = _KINDS.get(name)
    if kind is None:
        raise ValueError(f"param kind must be one of {sorted(set(_KINDS) | set(_LAZY_KINDS))}, got {name!r}")
    return kind


def _ptr_attrs(p: Param) -> dict[str, ir.Attribute]:
    attrs: dict[str, ir.Attribute] = {}
    if p.noalias:
        attrs["llvm.noalias"] = ir.UnitAttr.get()
    if p.readonly:
        attrs["llvm.readonly"] = ir.UnitAttr.get()
    if p.align:
        attrs["llvm.align"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), p.align)
    return attrs


def _int_kind(name: str, bits: int) -> ParamKind:
    return ParamKind(name, lambda p: ir.IntegerType.get_signless(bits), wrap=lambda v, p: Int(v))


register_param_kind(ParamKind("ptr", lambda p: llvm.PointerType.get(1), _ptr_attrs))
for _name, _bits in (("i32", 32), ("u32", 32), ("i64", 64), ("u64", 64)):
    register_param_kind(_int_kind(_name, _bits))
register_param_kind(ParamKind("f32", lambda p: ir.F32Type.get()))
register_param_kind(ParamKind("f64", lambda p: ir.F64Type.get()))


class Param:
    """One kernel parameter: name, kind (see module doc) and kind-specific options.

    `dtype` (ptr): element type name or object (see cute_ir.dtypes); `noalias`/`readonly` (ptr): promise that
    the memory is reached through no other parameter / is only read (together they enable ld.global.nc);
    `align` (ptr): guaranteed byte alignment of the address; `extra`: options for registered kinds (e.g. tma).
    """

    __slots__ = ("align", "dtype", "extra", "kind", "name", "noalias", "readonly")

    def __init__(
        self,
        name: str,
        kind: str,
        *,
        dtype: object = None,
        noalias: bool = False,
        readonly: bool = False,
        align: int | None = None,
        **extra: object,
    ) -> None:
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(f"Param name must be an identifier, got {name!r}")
        if not isinstance(kind, str):
            raise TypeError(f"Param {name!r}: kind must be a str, got {type(kind).__name__}")
        param_kind(kind)  # validates
        if dtype is not None:
            _dtypes.canonical_dtype(dtype)
        if align is not None and (not isinstance(align, int) or align <= 0 or align & (align - 1)):
            raise ValueError(f"Param {name!r}: align must be a positive power of two, got {align!r}")
        self.name = name
        self.kind = kind
        self.dtype = dtype
        self.noalias = bool(noalias)
        self.readonly = bool(readonly)
        self.align = align
        self.extra = extra

    def __repr__(self) -> str:
        return f"Param({self.name!r}, {self.kind!r})"

    def schema(self) -> EntryParam:
        """This parameter as a kernel entry's parameter (name and kind)."""
        return EntryParam(self.name, self.kind)


def _dim3(value: object, what: str) -> tuple[int, int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= 3:
        raise ValueError(f"{what} must be an int or a tuple of 1 to 3 positive ints, got {value!r}")
    out = [*value] + [1] * (3 - len(value))
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{what} must hold positive ints, got {value!r}")
    return out[0], out[1], out[2]


# --- the kernel definition -------------------------------------------------------------------------------


class KernelDef:
    """A GPU kernel to build: entry name, parameters, block and cluster shape, dynamic smem, target."""

    def __init__(
        self,
        name: str,
        params: Sequence[Param],
        *,
        block: int | Sequence[int] = (128, 1, 1),
        cluster: int | Sequence[int] = (1, 1, 1),
        dynamic_smem: int = 0,
        target: str = "sm_90a",
        ptx_version: int | None = None,
        spec: dict | None = None,
        max_registers: int | None = None,
        min_blocks_per_sm: int | None = None,
    ) -> None:
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(
                f"KernelDef name must be an identifier (it is the PTX entry symbol), got {name!r}"
            )
        tgt: Target | None = TARGETS.get(target) if isinstance(target, str) else None
        if tgt is None:
            raise ValueError(f"KernelDef {name!r}: target must be one of {sorted(TARGETS)}, got {target!r}")
        params = list(params)
        seen = set()
        for p in params:
            if not isinstance(p, Param):
                raise TypeError(f"KernelDef {name!r}: params must be Param objects, got {type(p).__name__}")
            if p.name in seen:
                raise ValueError(f"KernelDef {name!r}: duplicate parameter name {p.name!r}")
            seen.add(p.name)
        self.block = _dim3(block, f"KernelDef {name!r}: block")
        self.cluster = _dim3(cluster, f"KernelDef {name!r}: cluster")
        if self.block[0] * self.block[1] * self.block[2] > 1024:
            raise ValueError(f"KernelDef {name!r}: block {self.block} has more than 1024 threads")
        if self.cluster != (1, 1, 1) and not tgt.cluster_support:
            raise ValueError(f"KernelDef {name!r}: a cluster shape needs a target with clusters, target is {target}")
        if isinstance(dynamic_smem, bool) or not isinstance(dynamic_smem, int) or dynamic_smem < 0:
            raise ValueError(
                f"KernelDef {name!r}: dynamic_smem must be a non-negative int, got {dynamic_smem!r}"
            )
        floor = tgt.ptx_isa_floor[0] * 10 + tgt.ptx_isa_floor[1]
        ptx = tgt.ptx_isa[0] * 10 + tgt.ptx_isa[1] if ptx_version is None else ptx_version
        if isinstance(ptx, bool) or not isinstance(ptx, int) or not floor <= ptx <= _PTX_MAX:
            raise ValueError(
                f"KernelDef {name!r}: ptx_version must be an int in [{floor}, {_PTX_MAX}] "
                f"(e.g. 80 for PTX ISA 8.0), got {ptx_version!r}"
            )
        for what, v in (("max_registers", max_registers), ("min_blocks_per_sm", min_blocks_per_sm)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"KernelDef {name!r}: {what} must be a positive int, got {v!r}")
        self.name = name
        self.params = params
        self.dynamic_smem = dynamic_smem
        self.target = target
        self.ptx_version = ptx
        self.spec = check_spec(dict(spec)) if spec is not None else {"kernel": name}
        self.max_registers = max_registers
        self.min_blocks_per_sm = min_blocks_per_sm
        self.module: ir.Module | None = None
        self.func: gpu.GPUFuncOp | None = None
        self.finalized = False

    def __repr__(self) -> str:
        return f"KernelDef({self.name!r}, target={self.target!r})"

    def finalize(self) -> None:
        """Run the `finalize` hooks of the parameter kinds used (once; `cute_ir.stages.lower` calls this)."""
        if self.finalized or self.module is None:
            return
        self.finalized = True
        by_kind: dict[str, list[int]] = {}
        for i, p in enumerate(self.params):
            by_kind.setdefault(p.kind, []).append(i)
        for kind_name, indices in by_kind.items():
            hook = param_kind(kind_name).finalize
            if hook is not None:
                hook(self, indices)

    @property
    def context(self) -> ir.Context:
        """The Context the module lives in."""
        return shared_context() if self.module is None else self.module.context

    @property
    def num_threads(self) -> int:
        """Threads per block."""
        return self.block[0] * self.block[1] * self.block[2]

    def target_attr(self) -> ir.Attribute:
        """The `#nvvm.target` attribute of the gpu.module (chip, PTX features, O3)."""
        return ir.Attribute.parse(
            f'#nvvm.target<O = 3, chip = "{self.target}", features = "+ptx{self.ptx_version}">'
        )

    def entry(self) -> KernelEntry:
        """The kernel entry known before compiling: name, target, params, launch, spec (no resources yet)."""
        return KernelEntry(
            self.name,
            self.target,
            tuple(p.schema() for p in self.params),
            Launch(self.block, self.cluster, self.dynamic_smem),
            self.spec,
        )

    @contextlib.contextmanager
    def body(self) -> Iterator[KernelBuilder]:
        """Create module, gpu.module and gpu.func; yield a KernelBuilder, insertion point in the func."""
        if self.module is not None:
            raise RuntimeError(f"KernelDef {self.name!r}: body() was already built")
        ctx = shared_context()
        with ctx, ir.Location.name(self.name):
            module = ir.Module.create()
            module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
            with ir.InsertionPoint(module.body):
                gmod = gpu.GPUModuleOp(f"{self.name}_module", targets=ir.ArrayAttr.get([self.target_attr()]))
                gblock = gmod.bodyRegion.blocks.append()
            kinds = [param_kind(p.kind) for p in self.params]
            arg_types = [k.mlir_type(p) for k, p in zip(kinds, self.params, strict=True)]
            with ir.InsertionPoint(gblock):
                func = gpu.GPUFuncOp(
                    ir.FunctionType.get(arg_types, []),
                    sym_name=self.name,
                    kernel=True,
                    known_block_size=list(self.block),
                )
            arg_attrs = [ir.DictAttr.get(k.arg_attrs(p)) for k, p in zip(kinds, self.params, strict=True)]
            func.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
            if self.cluster != (1, 1, 1):
                func.attributes["nvvm.cluster_dim"] = ir.DenseI32ArrayAttr.get(list(self.cluster))
            if self.max_registers is not None:
                func.attributes["nvvm.maxnreg"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(32), self.max_registers
                )
            if self.min_blocks_per_sm is not None:
                func.attributes["nvvm.minctasm"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(32), self.min_blocks_per_sm
                )
            entry = func.add_entry_block()
            self.module = module
            self.func = func
            builder = KernelBuilder(self, func, entry, gblock, kinds)
            with ir.InsertionPoint(entry):
                yield builder
                ops = entry.operations
                if len(ops) == 0 or ops[len(ops) - 1].name != "gpu.return":
                    gpu.return_([])


class KernelBuilder:
    """Handle to the kernel being built: arguments, special registers, shared memory (emits at current IP)."""

    def __init__(
        self,
        kernel: KernelDef,
        func: gpu.GPUFuncOp,
        entry: ir.Block,
        module_block: ir.Block,
        kinds: list[ParamKind],
    ) -> None:
        self.kernel = kernel
        self.func = func
        self.entry_block = entry
        self.module_block = module_block
        self.args: dict[str, object] = {
            p.name: kind.wrap(entry.arguments[i], p)
            for i, (p, kind) in enumerate(zip(kernel.params, kinds, strict=True))
        }
        self.params = {p.name: p for p in kernel.params}

    def arg(self, name: str) -> object:
        """The argument called `name` (ptr: ir.Value !llvm.ptr<1>; ints: Int; floats: ir.Value)."""
        try:
            return self.args[name]
        except KeyError:
            raise KeyError(
                f"kernel {self.kernel.name!r} has no parameter {name!r}; has {list(self.args)}"
            ) from None

    def thread_idx(self, dim: int = 0) -> Int:
        """threadIdx.{x,y,z} as an i32 Int with its known range."""
        return thread_idx(dim, self.kernel.block[dim])

    def block_idx(self, dim: int = 0) -> Int:
        """blockIdx.{x,y,z} as an i32 Int."""
        return block_idx(dim)

    def block_dim(self, dim: int = 0) -> int:
        """blockDim.{x,y,z}: a static Python int (the block shape is part of the kernel)."""
        return self.kernel.block[dim]

    def grid_dim(self, dim: int = 0) -> Int:
        """gridDim.{x,y,z} as an i32 Int."""
        return grid_dim(dim)

    def linear_thread_idx(self) -> Int:
        """x + y*bx + z*bx*by for the kernel's block shape (folds to threadIdx.x for 1-D blocks)."""
        bx, by, bz = self.kernel.block
        t = self.thread_idx(0)
        if by > 1:
            t = t + self.thread_idx(1) * bx
        if bz > 1:
            t = t + self.thread_idx(2) * (bx * by)
        return t

    def warp_idx(self) -> Int:
        """Linear thread index // 32 (uniform within a warp)."""
        return self.linear_thread_idx() // 32

    def lane_idx(self) -> Int:
        """%laneid as an i32 Int."""
        return lane_idx()

    def cluster_ctarank(self) -> Int:
        """%cluster_ctarank as an i32 Int."""
        return cluster_ctarank()

    def block_idx_in_cluster(self, dim: int = 0) -> Int:
        """%cluster_ctaid.{x,y,z} as an i32 Int."""
        return block_idx_in_cluster(dim)

    def cluster_idx(self, dim: int = 0) -> Int:
        """%clusterid.{x,y,z} as an i32 Int."""
        return cluster_idx(dim)

    def dynamic_smem(self, align: int = 16) -> ir.Value:
        """The dynamic shared memory base as `!llvm.ptr<3>`, rounded up in-kernel to `align` bytes when > 16.

        Reserve `align - 16` bytes of slack in `dynamic_smem` when asking for more than 16-byte alignment.
        """
        return dynamic_smem(align, self.module_block)

    def barrier(self) -> None:
        """__syncthreads() (bar.sync 0)."""
        barrier()

"""Compilation stages, named after their artifacts: build -> lower (LLVM/NVVM dialects) -> to_ptx -> to_cubin.

    kd = KernelDef(...); with kd.body() as k: ...      # build: kd.module (gpu/nvvm/arith/scf/llvm ops)
    lower(kd.module, kernel=kd.name)                     # in place: gpu.module -> llvm + nvvm dialects
    ptx = to_ptx(kd.module, kernel=kd.name)              # gpu-module-to-binary{format=isa}
    cubin, report, log = to_cubin(ptx, "sm_90a", kd.name)    # ptxas -v, report: registers/smem/spills/stack
    art = compile(kd)                                    # all of it, timed, dumped (CUTE_DUMP_DIR); no cache

Each stage re-raises MLIR and ptxas failures as `cute_ir.errors.CompileError(kernel, stage, diagnostics)`.
`lower` and `to_ptx` also accept a caller's own module (any `gpu.module` with one `#nvvm.target`).
`to_ptx` links libdevice (`versions.find_libdevice`) into every gpu.module that declares `__nv_*` functions (the
accurate `cute_ir.math` functions call them): it adds the file to the module's `#nvvm.target<link = [...]>`,
and the serializer links only the functions used, internalizes and inlines them (no call is left in the PTX).
With CUTE_DUMP_DIR set, `compile` writes <kernel>.mlir (as built), <kernel>.nvvm.mlir (lowered), <kernel>.ptx,
<kernel>.cubin, <kernel>.ptxas.txt and <kernel>.json (the entry).
"""

from __future__ import annotations

import json
import os
import time

from mlir import ir, passmanager
from mlir.dialects import gpu

from . import config
from .artifact import Artifact
from .errors import CompileError, format_mlir_error
from .files import atomic_write
from .kernel import KernelDef
from .ptxas import assemble
from .versions import find_libdevice, versions

__all__ = ["LOWER_PIPELINE", "compile", "dump", "lower", "to_cubin", "to_ptx", "verify"]

# Lean pipeline: scf -> cf, then gpu/arith/cf/nvvm -> llvm inside each gpu.module, then tidy.
LOWER_PIPELINE = (
    "builtin.module(gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm{index-bitwidth=64},"
    "convert-nvvm-to-llvm,canonicalize,cse),reconcile-unrealized-casts)"
)
TO_PTX_PIPELINE = "builtin.module(gpu-module-to-binary{format=isa})"

_PM_CACHE: dict[tuple[int, str], passmanager.PassManager] = {}


def _pass_manager(ctx: ir.Context, pipeline: str) -> passmanager.PassManager:
    key = (id(ctx), pipeline)
    pm = _PM_CACHE.get(key)
    if pm is None:
        with ctx:
            pm = passmanager.PassManager.parse(pipeline)
        _PM_CACHE[key] = pm
    return pm


def _module_of(obj: KernelDef | ir.Module) -> ir.Module:
    if isinstance(obj, KernelDef):
        if obj.module is None:
            raise ValueError(
                f"KernelDef {obj.name!r} has no module yet: build it with `with kd.body() as k:`"
            )
        return obj.module
    if isinstance(obj, ir.Module):
        return obj
    raise TypeError(f"expected a KernelDef or an ir.Module, got {type(obj).__name__}")


def _kernel_name(obj: KernelDef | ir.Module, kernel: str | None) -> str:
    if kernel is not None:
        return kernel
    return obj.name if isinstance(obj, KernelDef) else "<module>"


def verify(obj: KernelDef | ir.Module, *, kernel: str | None = None) -> None:
    """Run the MLIR verifier; failures raise CompileError(stage="verify")."""
    module = _module_of(obj)
    name = _kernel_name(obj, kernel)
    with module.context:
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            raise CompileError(name, "verify", format_mlir_error(e)) from None


def lower(obj: KernelDef | ir.Module, *, kernel: str | None = None, pipeline: str = LOWER_PIPELINE) -> None:
    """Lower every gpu.module of the module in place to the LLVM and NVVM dialects."""
    module = _module_of(obj)
    name = _kernel_name(obj, kernel)
    if isinstance(obj, KernelDef):
        with module.context:
            try:
                obj.finalize()
            except ir.MLIRError as e:
                raise CompileError(name, "lower", format_mlir_error(e)) from None
    verify(module, kernel=name)
    ctx = module.context
    with ctx:
        try:
            _pass_manager(ctx, pipeline).run(module.operation)
        except ir.MLIRError as e:
            raise CompileError(name, "lower", format_mlir_error(e)) from None


def _link_libdevice(module: ir.Module, name: str) -> None:
    """Add libdevice to the `#nvvm.target` link list of each gpu.module that declares `__nv_*` functions."""
    for gmod in module.body.operations:
        if gmod.name != "gpu.module" or "targets" not in gmod.attributes:
            continue
        uses = any(
            op.name == "llvm.func"
            and ir.StringAttr(op.attributes["sym_name"]).value.startswith("__nv_")
            and len(op.regions[0].blocks) == 0
            for op in gmod.regions[0].blocks[0].operations
        )
        if not uses:
            continue
        path = find_libdevice()
        if path is None:
            raise CompileError(
                name, "to_ptx", "the kernel calls libdevice (__nv_* functions, e.g. the accurate cute_ir.math "
                "functions) but libdevice.10.bc was not found: install nvidia-nvvm (a dependency of "
                "nvidia-cuda-nvcc) or set CUTE_LIBDEVICE",
            )
        if '"' in path or "\\" in path:
            raise CompileError(name, "to_ptx", f"libdevice path {path!r}: quotes and backslashes are not supported")
        targets = []
        for t in ir.ArrayAttr(gmod.attributes["targets"]):
            text = str(t)
            if text.startswith("#nvvm.target") and "link" not in text:
                inner = text[len("#nvvm.target") :].strip()
                fields = inner[1:-1].strip() if inner.startswith("<") else ""
                t = ir.Attribute.parse(f'#nvvm.target<{fields + ", " if fields else ""}link = ["{path}"]>')
            targets.append(t)
        gmod.attributes["targets"] = ir.ArrayAttr.get(targets)


def to_ptx(obj: KernelDef | ir.Module, *, kernel: str | None = None) -> str:
    """Serialize the lowered module's gpu.module to PTX text (gpu-module-to-binary{format=isa}), linking
    libdevice where the module calls it."""
    module = _module_of(obj)
    name = _kernel_name(obj, kernel)
    ctx = module.context
    with ctx:
        _link_libdevice(module, name)
        try:
            _pass_manager(ctx, TO_PTX_PIPELINE).run(module.operation)
        except ir.MLIRError as e:
            raise CompileError(name, "to_ptx", format_mlir_error(e)) from None
        binaries = [op for op in module.body.operations if op.name == "gpu.binary"]
        if len(binaries) != 1:
            raise CompileError(
                name, "to_ptx", f"expected one gpu.binary after serialization, got {len(binaries)}"
            )
        objects = binaries[0].attributes["objects"]
        if len(objects) != 1:
            raise CompileError(
                name,
                "to_ptx",
                f"the gpu.module carries {len(objects)} targets; attach exactly one #nvvm.target",
            )
        return gpu.ObjectAttr(objects[0]).object.decode()


def to_cubin(ptx: str, arch: str, kernel: str, *, opt_level: int = 3) -> tuple[bytes, dict[str, int], str]:
    """Assemble PTX with ptxas for `arch`; return (cubin, resource report, ptxas log)."""
    return assemble(ptx, arch, kernel, opt_level=opt_level)


def dump(directory: str, kernel: str, suffix: str, data: str | bytes) -> str:
    """Write one stage's artifact as DIRECTORY/<kernel><suffix> (atomically); return the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{kernel}{suffix}")
    atomic_write(path, data.encode() if isinstance(data, str) else data)
    return path


def compile(kd: KernelDef, *, build_ms: float = 0.0) -> Artifact:  # noqa: A001 - the stage is called compile
    """Run every stage on a built KernelDef (no cache): lower, to_ptx, to_cubin; timed; dumped when asked."""
    dump_dir = config.dump_dir()
    module = _module_of(kd)
    timings = {"build_ms": build_ms}
    built_text = None
    if dump_dir:
        with module.context:
            built_text = str(module)
        dump(dump_dir, kd.name, ".mlir", built_text)
    t = time.perf_counter()
    lower(kd)
    timings["lower_ms"] = (time.perf_counter() - t) * 1e3
    lowered_text = None
    if dump_dir:
        with module.context:
            lowered_text = str(module)
        dump(dump_dir, kd.name, ".nvvm.mlir", lowered_text)
    t = time.perf_counter()
    ptx = to_ptx(kd)
    timings["to_ptx_ms"] = (time.perf_counter() - t) * 1e3
    if dump_dir:
        dump(dump_dir, kd.name, ".ptx", ptx)
    t = time.perf_counter()
    cubin, report, log = to_cubin(ptx, kd.target, kd.name)
    timings["to_cubin_ms"] = (time.perf_counter() - t) * 1e3
    compile_ms = sum(timings.values())
    resources = {
        "registers": report["registers"],
        "shared_memory": report["shared_memory"] + kd.dynamic_smem,
        "spill_stores": report["spill_stores"],
        "spill_loads": report["spill_loads"],
        "local_memory": report["local_memory"],
        "compile_ms": round(compile_ms, 3),
    }
    entry = kd.entry().with_build(resources, versions())
    art = Artifact(entry, cubin, ptx, mlir=lowered_text, timings=timings, ptxas_log=log)
    if dump_dir:
        dump(dump_dir, kd.name, ".cubin", cubin)
        dump(dump_dir, kd.name, ".ptxas.txt", log)
        dump(dump_dir, kd.name, ".json", json.dumps(entry.to_dict(), indent=1, sort_keys=True))
    return art

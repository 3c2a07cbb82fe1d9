"""Every kernel configuration the examples, their GPU tests and benchmarks use, for the main job and AOT bundles."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from cute_nvarch.bundle_format import file_stem

from .elementwise_add.kernel import DTYPES
from .math_check import math_jobs
from .report import KernelTable, artifact_location

__all__ = ["LEGEND", "artifacts", "compile_catalogue", "jit_kernels", "jobs"]

# the parts of the labels below, explained once wherever they are listed (the main job's report)
LEGEND = (
    "elementwise_add <dtype> <vec = 128-bit accesses | strided = any strides> <i32/i64: offset bits>",
    "elementwise_add <dtype> <1-D | 2-D> u<unit-stride mode of a/b/c> a<byte alignment of a/b/c> i<offset bits>",
    "transpose <dtype> <swizzled | naive> x/y: a<byte alignment>u<unit-stride mode> p<elements per 32-bit word>",
    "transpose_vec <dtype> x/y: as transpose, p<elements per 16-byte unit> (the tutorial's vector step)",
    "math_check <accurate | fast>: every cute_ir.math function of the family (the math GPU test)",
)

Job = tuple[str, Callable[[], Any]]
VARIANTS = ("vec", "strided")


def _legacy(dtype: str, variant: str, index: int) -> list[Any]:
    """Stand-ins of the 2-D kernels the main job has always listed: vec (unit N-stride, 16-byte aligned rows) or
    strided (no unit stride), with 32- or 64-bit offsets."""
    from cute_runtime import Placeholder

    row = 2**31 if index == 64 else 3 * 1024
    strides = (row, 1) if variant == "vec" else (row, 3)
    return [Placeholder((2, 1024), dtype, strides=strides)] * 3


def _spec_label(spec: dict[str, Any]) -> str:
    """elementwise_add <dtype> <rank>-D u<unit mode of a/b/c> a<alignment of a/b/c> i<index bits>."""
    ts = [t for t in spec["args"] if t["kind"] == "tensor"]
    units = "/".join("-" if t["unit"] is None else str(t["unit"]) for t in ts)
    aligns = "/".join(str(t["align"]) for t in ts)
    return f"elementwise_add {ts[0]['dtype']} {len(ts[0]['shape'])}-D u{units} a{aligns} i{max(t['index'] for t in ts)}"


def _elementwise(target: str) -> list[Job]:
    """The add's kernels: the vec/strided x i32/i64 rows, then every specialization of the add's calls
    (elementwise_add.cases: GPU tests, checks, benchmark, CLI) not already listed."""
    from cute_nvarch.kernel_spec import canonical_spec
    from cute_nvarch.numeric import numeric_type

    from .elementwise_add.cases import cases
    from .elementwise_add.kernel import add_kernel
    from .elementwise_add.modes import standins

    jobs: list[Job] = []
    seen: set[str] = set()

    def add(label: str | None, args: list[Any]) -> None:
        spec = add_kernel.specialize(*args)[0]
        key = canonical_spec(spec)
        if key not in seen:
            seen.add(key)
            jobs.append((label or _spec_label(spec), functools.partial(add_kernel.artifact, *args, target=target)))

    for dtype in DTYPES:
        for variant in VARIANTS:
            for index in (32, 64):
                add(f"elementwise_add {dtype} {variant} i{index}", _legacy(dtype, variant, index))
    for case in cases():
        if 0 in case.out.shape:
            continue
        nbytes = numeric_type(case.dtype).width // 8
        align = min(t.address_align(nbytes) for t in (case.a, case.b, case.out))
        add(None, standins(case.dtype, case.out.shape, [t.stride for t in (case.a, case.b, case.out)], align)[1])
    return jobs


def jit_kernels() -> dict[str, Any]:
    """The JIT kernels whose signatures bundles store (the tutorial transpose, the host-overhead bench's add, the
    dense GEMM, its fused-epilogue form, its device-scale (FP8) form and the split-K / stream-K forms of the plain,
    fused-epilogue and device-scale kernels)."""
    from .bench_jit import add
    from .dense_gemm.kernel import (
        dense_gemm,
        dense_gemm_fused,
        dense_gemm_scaled,
        dense_gemm_split,
        dense_gemm_split_fused,
        dense_gemm_split_scaled,
    )
    from .transpose import transpose, transpose_vec

    kernels = (transpose, transpose_vec, add, dense_gemm, dense_gemm_fused, dense_gemm_scaled, dense_gemm_split,
               dense_gemm_split_fused, dense_gemm_split_scaled)
    return {k.name: k for k in kernels}


def _jit(target: str) -> list[Job]:
    """The tutorial transpose (and its vector step) for every call of its GPU tests, tutorial, benchmark and ncu
    run (one job per specialization), and the bench's add; other specializations compile where cute-ir is
    installed."""
    from cute_nvarch.kernel_spec import canonical_spec
    from cute_runtime import Placeholder

    from .bench_jit import add
    from .transpose import pack_for, transpose, transpose_vec, vector_pack_for
    from .transpose_cases import cases

    jobs, seen = [], set()
    for case in cases():
        x, y = case.x.placeholder(case.dtype), case.y.placeholder(case.dtype)
        pack = pack_for(x, y)
        for swizzle in case.swizzles:
            spec = transpose.specialize(x, y, pack, swizzle)[0]
            key = canonical_spec(spec)
            if key in seen:
                continue
            seen.add(key)
            xs, ys = (f"a{a['align']}u{a['unit']}" + ("" if a["index"] == 32 else "i64") for a in spec["args"][:2])
            jobs.append((f"transpose {case.dtype} {'swizzled' if swizzle else 'naive'} {xs}/{ys} p{pack}",
                         functools.partial(transpose.artifact, x, y, pack, swizzle, target=target)))
        vpack = vector_pack_for(x, y)
        if vpack is not None:
            spec = transpose_vec.specialize(x, y, vpack)[0]
            key = canonical_spec(spec)
            if key not in seen:
                seen.add(key)
                xs, ys = (f"a{a['align']}u{a['unit']}" + ("" if a["index"] == 32 else "i64") for a in spec["args"][:2])
                jobs.append((f"transpose_vec {case.dtype} {xs}/{ys} p{vpack}",
                             functools.partial(transpose_vec.artifact, x, y, vpack, target=target)))
    ts = [Placeholder((4096,), "float32") for _ in range(3)]
    jobs.append(("add float32 (jit host-overhead bench)", functools.partial(add.artifact, *ts, target=target)))
    return jobs


def jobs(target: str, *, gemm: bool = True) -> list[Job]:
    """(label, compile) for every example kernel on target; compile() gives the cute_ir Artifact (cached)."""
    out = _elementwise(target) + _jit(target) + math_jobs(target)
    if gemm and target == "sm_90a":
        from .dense_gemm.aot import aot_configs
        from .dense_gemm.configs import gpu_test_configs
        from .dense_gemm.kernel import compile_gemm

        # aot_configs, then the multicast-split and random-problem GPU tests' configs (issue 9)
        configs = {cfg.name: cfg for cfg in aot_configs() + gpu_test_configs()}
        out += [(name, functools.partial(compile_gemm, cfg, target)) for name, cfg in configs.items()]
    return out


def artifacts(target: str, *, gemm: bool = True) -> Iterator[tuple[str, Any]]:
    """(label, cute_ir Artifact) for every example kernel on target, compiled through cute-ir's cache."""
    for label, compile_fn in jobs(target, gemm=gemm):
        yield label, compile_fn()


def recorded_jobs(path: str, target_list: Sequence[str]) -> dict[str, list[Job]]:
    """(label, compile) per target for the specs a bundle-only host recorded in CUTE_RECORD_MISSES's file (one
    JSON object per line: kernel, spec, target); a kernel name that no example defines is a ValueError."""
    import json

    from cute_runtime.compilers import compiler

    from .elementwise_add.kernel import add_kernel

    known = {**jit_kernels(), add_kernel.name: add_kernel}
    out: dict[str, list[Job]] = {t: [] for t in target_list}
    seen: set[str] = set()
    with open(path) as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            k = known.get(rec.get("kernel"))
            if k is None:
                raise ValueError(f"{path}:{i}: kernel {rec.get('kernel')!r} is none of {sorted(known)}")
            key = json.dumps(rec["spec"], sort_keys=True) + "@" + rec["target"]
            if rec["target"] not in out or key in seen:
                continue
            seen.add(key)
            label = f"{k.name} (recorded, {len(seen)})"
            out[rec["target"]].append((label, functools.partial(compiler(), k.fn, rec["spec"], rec["target"])))
    return out


def compile_catalogue(target_list: Sequence[str], *, gemm: bool = True, recorded: str | None = None) -> list[Any]:
    """Compile the example kernels for each target (cute_ir Artifacts), printing each one's row as it finishes;
    `recorded` names a CUTE_RECORD_MISSES file whose specs are compiled too (those it repeats, once)."""
    work = {t: jobs(t, gemm=gemm) for t in target_list}
    if recorded is not None:
        for t, extra in recorded_jobs(recorded, target_list).items():
            work[t] += extra
    arts = _compile(work)
    # a recorded spec the catalogue already holds is compiled (a cache hit) but written once
    unique: dict[str, Any] = {}
    for art in arts:
        unique.setdefault(file_stem(art.entry.spec, art.entry.target), art)
    return list(unique.values())


def _compile(work: dict[str, list[Job]]) -> list[Any]:
    """Compile every job, printing each one's row as it finishes; the artifacts in job order."""
    from .dense_gemm.spec import NAME_LEGEND
    from .progress import Progress

    table = KernelTable([label for js in work.values() for label, _ in js])
    total = sum(len(js) for js in work.values())
    print(f"== compile: {total} example kernels to PTX and cubin, ptxas's resource report for each")
    print("names: " + LEGEND[0])
    for line in (*LEGEND[1:], *NAME_LEGEND):
        print(f"       {line}")
    print("compile: this run's time (build, lower, PTX, ptxas); (cached): served by cute-ir's disk cache")
    arts = []
    with Progress(total) as progress:
        for target, js in work.items():
            progress.row(f"\n-- {target}: {len(js)} kernels\n{table.header()}", step=False)
            for label, compile_fn in js:
                progress.start(label)
                art = compile_fn()
                arts.append(art)
                progress.row(table.row(label, art))
        elapsed = progress.elapsed
    cached = sum(bool(getattr(a, "cached", False)) for a in arts)
    print(f"\n{total} kernels in {elapsed:.1f} s ({cached} from the cache, {total - cached} compiled)")
    for line in artifact_location():
        print(line)
    return arts

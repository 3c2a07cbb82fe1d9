"""KernelDef / Param / KernelBuilder and the stages: PTX signature, launch attributes, clean errors."""

from __future__ import annotations

import re

import pytest
from cute_ir import CompileError, stages
from cute_ir.control import for_, if_, if_values
from cute_ir.kernel import KernelDef, Param, ParamKind, param_kind, register_param_kind
from cute_ir.values import Int
from mlir import ir
from mlir.dialects import arith, llvm


def _params(ptx: str, name: str) -> list[str]:
    m = re.search(rf"\.entry {name}\((.*?)\)", ptx, re.S)
    assert m, ptx[:500]
    return [line.strip().rstrip(",") for line in m.group(1).strip().splitlines()]


def test_ptx_signature_is_exactly_the_params_in_order() -> None:
    """ptr -> .u64 global pointer, i32/u32 -> .u32, i64/u64 -> .u64, f32/f64 -> .f32/.f64; no descriptors."""
    kinds = ["ptr", "i32", "u32", "i64", "u64", "f32", "f64", "ptr"]
    kd = KernelDef(
        "sig",
        [Param(f"p{i}", k, dtype="float32" if k == "ptr" else None) for i, k in enumerate(kinds)],
        block=(64, 2, 1),
        target="sm_80",
    )
    with kd.body():
        pass
    art = stages.compile(kd)
    params = _params(art.ptx, "sig")
    assert len(params) == len(kinds)
    want = [".u64", ".u32", ".u32", ".u64", ".u64", ".f32", ".f64", ".u64"]
    for p, w in zip(params, want, strict=True):
        assert p.startswith(f".param {w}"), (p, w)
    assert ".maxntid 64, 2, 1" in art.ptx
    assert art.entry.to_dict()["params"] == [{"name": f"p{i}", "kind": k} for i, k in enumerate(kinds)]
    assert art.entry.to_dict()["launch"] == {"block": [64, 2, 1], "cluster": [1, 1, 1], "dynamic_smem": 0}
    assert art.entry.versions["mlir"] and art.entry.versions["ptxas"].count(".") == 2


def test_cluster_registers_dynamic_smem_and_special_registers() -> None:
    """Cluster dims, maxnreg, dynamic shared memory (aligned in-kernel) and sreg reads reach the PTX."""
    kd = KernelDef(
        "feat",
        [Param("out", "ptr", dtype="int32")],
        block=128,
        cluster=(2, 1, 1),
        dynamic_smem=2048,
        max_registers=64,
        target="sm_90a",
    )
    with kd.body() as k:
        smem = k.dynamic_smem(align=1024)
        tid = k.linear_thread_idx()
        v = k.cluster_ctarank() + k.block_idx_in_cluster(0) + k.lane_idx() + k.warp_idx() + k.block_idx(1)
        p = llvm.getelementptr(
            llvm.PointerType.get(3), smem, [tid.value], [-2147483648], ir.IntegerType.get_signless(32), None
        )
        llvm.store(v.value, p)
        k.barrier()
        x = llvm.load(ir.IntegerType.get_signless(32), p)
        q = llvm.getelementptr(
            llvm.PointerType.get(1),
            k.arg("out"),
            [tid.value],
            [-2147483648],
            ir.IntegerType.get_signless(32),
            None,
        )
        llvm.store(x, q)
    art = stages.compile(kd)
    ptx = art.ptx
    assert ".reqnctapercluster 2, 1, 1" in ptx and ".maxnreg 64" in ptx
    assert "%cluster_ctarank" in ptx and "%laneid" in ptx and "bar.sync" in ptx
    assert ".extern .shared .align 16 .b8 __cute_dynamic_smem[]" in ptx
    assert art.entry.launch.cluster == (2, 1, 1)
    assert art.resources["shared_memory"] >= 2048


def test_control_flow_helpers() -> None:
    """if_/if_values/for_ emit scf ops (folding Python bools) that lower and assemble."""
    kd = KernelDef("ctl", [Param("out", "ptr", dtype="int32"), Param("n", "i32")], block=32, target="sm_80")
    i32 = None
    with kd.body() as k:
        i32 = ir.IntegerType.get_signless(32)
        n = k.arg("n")
        t = k.thread_idx(0)

        def body(i: Int, acc: Int) -> list:
            return [acc + i * t]

        (total,) = for_(0, n, 1, body, init=[Int(arith.constant(i32, 0))])
        (picked,) = if_values(total > 100, [i32], lambda: [total], lambda: [Int(arith.constant(i32, 7))])
        assert if_values(True, [i32], lambda: [picked], lambda: [total])[0] is picked

        def store() -> None:
            q = llvm.getelementptr(llvm.PointerType.get(1), k.arg("out"), [t.value], [-2147483648], i32, None)
            llvm.store(picked.value, q)

        if_(t < n, store)
        if_(False, lambda: pytest.fail("a False condition must not build its body"))
    art = stages.compile(kd)
    assert "ctl" in art.ptx and art.resources["spill_stores"] == 0


def test_kerneldef_rejects_bad_input() -> None:
    """Names, targets, shapes, params and PTX versions are validated with errors naming the rule."""
    ok = [Param("a", "ptr", dtype="float32")]
    with pytest.raises(ValueError, match="identifier"):
        KernelDef("bad-name", ok)
    with pytest.raises(ValueError, match="target"):
        KernelDef("k", ok, target="sm_70")
    with pytest.raises(ValueError, match="1024"):
        KernelDef("k", ok, block=(1024, 2, 1))
    with pytest.raises(ValueError, match="cluster"):
        KernelDef("k", ok, cluster=(2, 1, 1), target="sm_80")
    with pytest.raises(ValueError, match="duplicate"):
        KernelDef("k", ok + ok)
    with pytest.raises(ValueError, match="ptx_version"):
        KernelDef("k", ok, ptx_version=91)
    with pytest.raises(ValueError, match="kind"):
        Param("x", "pointer")
    with pytest.raises(ValueError, match="dtype"):
        Param("x", "ptr", dtype="float128")
    with pytest.raises(ValueError, match="align"):
        Param("x", "ptr", align=12)
    with pytest.raises(TypeError):
        KernelDef("k", ["a"])  # type: ignore[list-item]
    kd = KernelDef("k", ok)
    with kd.body():
        pass
    with pytest.raises(RuntimeError):
        with kd.body():
            pass


def test_register_param_kind_replaces_a_lowering() -> None:
    """A registered lowering of a contract kind (as cute_ir.hopper registers "tma") brings its own type, wrapper
    and hook; a kind outside cute-nvarch's PARAM_KINDS (which cute-runtime could not pack) is refused."""
    seen = []
    original = param_kind("u32")
    register_param_kind(
        ParamKind(
            "u32",
            lambda p: ir.IntegerType.get_signless(32),
            wrap=lambda v, p: ("wrapped", v),
            finalize=lambda kd, idx: seen.append((kd.name, idx)),
        )
    )
    try:
        kd = KernelDef("ext", [Param("n", "i32"), Param("h", "u32")], target="sm_80")
        with kd.body() as k:
            assert k.arg("h")[0] == "wrapped"
        art = stages.compile(kd)
        assert ".param .u32" in art.ptx or ".param .b32" in art.ptx
        assert seen == [("ext", [1])]
    finally:
        register_param_kind(original)
    with pytest.raises(ValueError, match="PARAM_KINDS"):
        register_param_kind(ParamKind("test_i16", lambda p: ir.IntegerType.get_signless(16)))


def test_mlir_verification_failure_is_a_compile_error() -> None:
    """An invalid op surfaces as CompileError naming kernel and stage, with the diagnostic, no traceback."""
    kd = KernelDef("broken", [Param("n", "i32"), Param("m", "i64")], target="sm_80")
    with kd.body() as k:
        ir.Operation.create(
            "arith.addi",
            results=[ir.IntegerType.get_signless(32)],
            operands=[k.arg("n").value, k.arg("m").value],
        )
    with pytest.raises(CompileError) as info:
        stages.compile(kd)
    e = info.value
    assert e.kernel == "broken" and e.stage == "verify"
    assert "broken" in str(e) and "verify" in str(e) and "arith.addi" in e.diagnostics
    assert e.__cause__ is None and e.__suppress_context__


def test_lowering_failure_is_a_compile_error() -> None:
    """An op nothing lowers to LLVM fails at a lowering stage with a clean CompileError."""
    from mlir.dialects import tensor

    kd = KernelDef("unlowerable", [Param("out", "ptr", dtype="float32")], target="sm_80")
    with kd.body() as k:
        t = tensor.empty([4], ir.F32Type.get())
        x = tensor.extract(t, [arith.constant(ir.IndexType.get(), 0)])
        llvm.store(x, k.arg("out"))
    with pytest.raises(CompileError) as info:
        stages.compile(kd)
    assert info.value.stage in ("lower", "to_ptx") and info.value.kernel == "unlowerable"
    assert info.value.diagnostics


def test_ptxas_failure_is_a_compile_error() -> None:
    """Invalid PTX fails at to_cubin with ptxas's message."""
    with pytest.raises(CompileError) as info:
        stages.to_cubin(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus; }\n", "sm_80", "k"
        )
    assert info.value.stage == "to_cubin" and "ptxas" in str(info.value)


def test_stages_work_on_a_callers_module() -> None:
    """lower/to_ptx accept any module holding a gpu.module with one nvvm target (no KernelDef)."""
    from cute_ir.kernel import shared_context, thread_idx

    with shared_context(), ir.Location.unknown():
        module = ir.Module.parse(
            """module attributes {gpu.container_module} {
              gpu.module @m [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
                gpu.func @mine(%p: !llvm.ptr<1>) kernel { gpu.return } } }"""
        )
        fn = module.body.operations[0].regions[0].blocks[0].operations[0]
        block = fn.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(block):
            t = thread_idx(0, 32) * 4 + 1
            llvm.store(t.value, block.arguments[0])
    stages.lower(module, kernel="mine")
    ptx = stages.to_ptx(module, kernel="mine")
    assert ".entry mine" in ptx and "%tid.x" in ptx

"""Barriers, fences, identity registers, setmaxnreg, stmatrix and the shared-memory plan."""

from __future__ import annotations

import pytest
from cute_ir import hopper as H


def test_sync_builders_ptx(compile_kernel, ptx_lines):
    def body(k):
        H.named_barrier_sync(1, 256)
        H.named_barrier_arrive(2, 128)
        H.fence_proxy_async_shared()
        H.fence_mbarrier_init()
        H.cluster_arrive(relaxed=True)
        H.cluster_wait()
        H.cluster_sync()
        H.grid_dependency_wait()
        H.launch_dependents()
        e = H.elect_one()
        r = H.cluster_cta_rank()
        w = H.warp_idx(uniform=True)
        from cute_ir.values import select
        from mlir.dialects import llvm

        v = r + w + select(e, 1, 0)
        v = v + H.block_in_cluster(1) + H.cluster_id(0)
        v = v + H.num_clusters(0) + H.lane_idx()
        llvm.store(v.value, k.arg("out"))

    lines = ptx_lines(
        compile_kernel("sync", [("out", "ptr")], body, block=(256, 1, 1), cluster=(2, 2, 1)).ptx
    )
    for want in (
        "bar.sync 1, 256;",
        "fence.proxy.async.shared::cta;",
        "fence.mbarrier_init.release.cluster;",
        "barrier.cluster.arrive.relaxed.aligned;",
        "barrier.cluster.wait.aligned;",
        "barrier.cluster.arrive.aligned;",
        "griddepcontrol.wait;",
        "griddepcontrol.launch_dependents;",
    ):
        assert want in lines, want
    assert any(
        ln.startswith("bar.arrive 2, 128") or ln.startswith("barrier.arrive 2, 128") or "bar.arrive" in ln
        for ln in lines
    )
    text = "\n".join(lines)
    for reg in ("%cluster_ctarank", "%cluster_ctaid.y", "%clusterid.x", "%nclusterid.x", "%laneid"):
        assert reg in text, reg
    assert any(ln.startswith("elect.sync") for ln in lines)
    assert any(ln.startswith("shfl.sync.idx.b32") for ln in lines)  # warp-uniform warp index


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: H.named_barrier_sync(16, 128), "barrier_id"),
        (lambda: H.named_barrier_arrive(1, 100), "multiple of 32"),
        (lambda: H.setmaxnreg_inc(20), "multiple of 8"),
        (lambda: H.setmaxnreg_dec(250), "multiple of 8"),
        (lambda: H.setmaxnreg_inc(264), "multiple of 8"),
        (lambda: H.check_register_split(40, 240, 2), "registers"),
        (lambda: H.mbarrier_init(None, 0), "arrival count"),
        (lambda: H.mbarrier_arrive_expect_tx(None, 1 << 20), "byte count"),
    ],
)
def test_argument_rules(call, match):
    from mlir import ir

    with ir.Context(), ir.Location.unknown(), pytest.raises(ValueError, match=match):
        call()


def test_register_split_fits():
    H.check_register_split(40, 232, 2)  # 128 * (40 + 2 * 232) = 64512 <= 65536
    H.check_register_split(40, 256, 1)


def test_setmaxnreg_and_stmatrix_ptx(compile_kernel, ptx_lines):
    from cute_ir.control import if_
    from mlir import ir
    from mlir.dialects import arith

    def body(k):
        base = H.dynamic_smem_base(1024)

        def consumer():
            H.setmaxnreg_inc(232)
            x = arith.constant(ir.F32Type.get(), 1.5)
            regs = [H.pack_b16x2(x, x, ir.BF16Type.get()) for _ in range(4)]
            H.stmatrix(base, regs)
            H.stmatrix(base, regs[:2], trans=True)
            H.stmatrix(base, regs[:1])

        if_(H.thread_idx(0) // 128 == 0, lambda: H.setmaxnreg_dec(40), consumer)

    art = compile_kernel("regs", [], body, block=(384, 1, 1), dynamic_smem=2048)
    lines = ptx_lines(art.ptx)
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in lines
    assert "setmaxnreg.inc.sync.aligned.u32 232;" in lines
    st = [ln.split(" [")[0] for ln in lines if ln.startswith("stmatrix")]
    assert st == [
        "stmatrix.sync.aligned.m8n8.x4.shared.b16",
        "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "stmatrix.sync.aligned.m8n8.x1.shared.b16",
    ]
    assert "C7508" not in art.ptxas_log  # setmaxnreg was not ignored


def test_stmatrix_argument_checks():
    from mlir import ir
    from mlir.dialects import arith

    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse("llvm.func @f(%s: !llvm.ptr<3>) { llvm.return }")
        blk = m.body.operations[0].regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(blk):
            r = arith.constant(ir.IntegerType.get_signless(32), 0)
            with pytest.raises(ValueError, match="1, 2 or 4"):
                H.stmatrix(blk.arguments[0], [r] * 3)
            with pytest.raises(TypeError, match="i32"):
                H.stmatrix(blk.arguments[0], [arith.constant(ir.IntegerType.get_signless(64), 0)])
            with pytest.raises(TypeError, match="f16 or bf16"):
                H.pack_b16x2(r, r, ir.F32Type.get())


def test_smem_plan_places_aligned_buffers():
    plan = H.SmemPlan(1024)
    a = plan.add("bars", 96, 8)
    b = plan.add("a", 16384, 1024)
    c = plan.add("x", 10, 16)
    assert (a.offset, b.offset, c.offset) == (0, 1024, 17408)
    assert plan.nbytes == 17418
    assert plan.dynamic_smem_bytes == 17418 + 1008
    assert plan["a"] is b
    with pytest.raises(ValueError, match="already placed"):
        plan.add("a", 16)
    with pytest.raises(ValueError, match="power of two"):
        plan.add("y", 16, 48)
    with pytest.raises(ValueError, match="positive"):
        plan.add("z", 0)
    with pytest.raises(ValueError, match="base_align"):
        H.SmemPlan(8)


def test_dynamic_smem_base_is_rounded_up_in_kernel(compile_kernel, ptx_lines):
    """The extern array is declared 16-byte aligned, and the kernel rounds its address up to 1024."""

    def body(k):
        base = H.dynamic_smem_base(1024)
        H.mbarrier_init(base, 1)
        H.mbarrier_init(H.dynamic_smem_base(16), 1)

    art = compile_kernel("smem_base", [], body, dynamic_smem=2048)
    assert ".extern .shared .align 16 .b8 __cute_dynamic_smem[];" in art.ptx
    lines = ptx_lines(art.ptx)
    # pad = (-addr) & 1023, which LLVM narrows to & 1008 since the array is 16-byte aligned
    assert any(ln.startswith("and.b32") and ln.endswith(", 1008;") for ln in lines)
    assert any(ln.startswith("neg.s32") for ln in lines)
    with pytest.raises(ValueError, match="power of two"):
        from mlir import ir

        with ir.Context(), ir.Location.unknown():
            H.dynamic_smem_base(48)


def test_gmem_sync_builders_ptx(compile_kernel, ptx_lines):
    """The fix-up's global-memory builders: acquire load, release store and add, the bounded spin, L2 vectors."""
    from cute_ir.hopper import gmem_sync as G
    from cute_ir.values import Int
    from mlir import ir
    from mlir.dialects import llvm

    def body(k):
        i64 = ir.IntegerType.get_signless(64)
        addr = Int(llvm.ptrtoint(i64, k.arg("flags")))
        G.red_release_gpu_add(addr, 1)
        G.st_release_gpu(addr + 4, 0)
        G.spin_until_eq(addr + 8, 3, max_polls=1000)
        v = G.ld_acquire_gpu(addr + 12)
        quad = G.ld_global_cg_v4_f32(addr + 16)
        G.st_global_cg_v4_f32(addr + 32, quad)
        G.st_release_gpu(addr, v)

    text = "\n".join(ptx_lines(compile_kernel("gsync", [("flags", "ptr")], body, block=(128, 1, 1)).ptx))
    for want in ("red.release.gpu.global.add.u32", "st.release.gpu.global.u32", "ld.acquire.gpu.global.u32",
                 "nanosleep.u32 32", "setp.ge.u32", "trap;", "ld.global.cg.v4.f32", "st.global.cg.v4.f32"):
        assert want in text, want
    with pytest.raises(ValueError, match="max_polls must be an int"):
        G.spin_until_eq(0, 0, max_polls=0)
    with pytest.raises(ValueError, match="stores 4 values"):
        G.st_global_cg_v4_f32(0, [])

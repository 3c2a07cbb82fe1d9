"""TMA builders and the `tma` parameter kind: by-value __grid_constant__ CUtensorMap, loads, stores, PTX."""

from __future__ import annotations

import re

import pytest
from cute_ir import hopper as H


def test_tma_param_is_a_128_byte_grid_constant(compile_kernel, ptx_lines):
    """`.param .align 64 .b8 p[128]`, addressed with cvta.param (no local copy, no stack frame)."""

    def body(k):
        base = H.dynamic_smem_base(1024)
        bar = H.smem_offset(base, 4096)
        H.mbarrier_init(bar, 1)
        H.tma_prefetch_descriptor(k.arg("desc"))
        H.tma_load(k.arg("desc"), base, bar, [k.arg("x"), 7])
        H.mbarrier_wait(bar, 0)

    art = compile_kernel("tma_param", [("x", "i32"), ("desc", "tma"), ("y", "i64")], body, dynamic_smem=5120)
    sig = re.search(r"\.entry tma_param\((.*?)\)", art.ptx, re.S).group(1)
    params = [p.strip() for p in sig.split(",")]
    assert params[0] == ".param .u32 tma_param_param_0"
    assert params[1] == ".param .align 64 .b8 tma_param_param_1[128]"
    assert params[2] == ".param .u64 tma_param_param_2"
    lines = ptx_lines(art.ptx)
    assert any(ln.startswith("cvta.param.u64") for ln in lines)
    assert not any(".local" in ln for ln in lines)
    assert art.resources["local_memory"] == 0
    load = [ln for ln in lines if ln.startswith("cp.async.bulk.tensor")]
    assert len(load) == 1
    assert load[0].startswith(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes ["
    )
    assert art.entry.to_dict()["params"][1] == {"name": "desc", "kind": "tma"}


@pytest.mark.parametrize("rank", [1, 3, 5])
def test_tma_load_ranks_and_multicast(compile_kernel, ptx_lines, rank):
    def body(k):
        base = H.dynamic_smem_base(128)
        bar = H.smem_offset(base, 1024)
        H.tma_load(k.arg("d"), base, bar, [k.arg("x")] * rank, multicast_mask=0b11)

    art = compile_kernel(
        f"tma_mc{rank}", [("d", "tma"), ("x", "i32")], body, cluster=(2, 1, 1), dynamic_smem=2048
    )
    load = [ln for ln in ptx_lines(art.ptx) if ln.startswith("cp.async.bulk.tensor")]
    assert load and load[0].startswith(
        f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
    )


def test_tma_store_commit_wait(compile_kernel, ptx_lines):
    def body(k):
        base = H.dynamic_smem_base(1024)
        H.fence_proxy_async_shared()
        H.tma_store(k.arg("d"), base, [1, 2, 3])
        H.tma_store_commit()
        H.tma_store_wait(0, read=True)
        H.tma_store_wait(1, read=False)

    lines = ptx_lines(compile_kernel("tma_st", [("d", "tma")], body, dynamic_smem=2048).ptx)
    i = lines.index("fence.proxy.async.shared::cta;")
    st = next(
        j for j, ln in enumerate(lines) if ln.startswith("cp.async.bulk.tensor.3d.global.shared::cta.tile")
    )
    assert i < st
    assert lines[st + 1 : st + 4] == [
        "cp.async.bulk.commit_group;",
        "cp.async.bulk.wait_group.read 0;",
        "cp.async.bulk.wait_group 1;",
    ]


def test_tma_argument_checks():
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse("llvm.func @f(%p: !llvm.ptr, %s: !llvm.ptr<3>) { llvm.return }")
        f = m.body.operations[0]
        blk = f.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(blk):
            p, s = blk.arguments
            with pytest.raises(ValueError, match="1 to 5"):
                H.tma_load(p, s, s, [])
            with pytest.raises(ValueError, match="1 to 5"):
                H.tma_store(p, s, [0] * 6)
            with pytest.raises(ValueError, match="multicast_mask"):
                H.tma_load(p, s, s, [0], multicast_mask=1 << 16)
            with pytest.raises(ValueError, match="pending"):
                H.tma_store_wait(64)
        with pytest.raises(ValueError, match="no llvm.func named"):
            H.apply_tma_param_attrs(m, "g", [0])
        H.apply_tma_param_attrs(m, "f", [0])
        attrs = str(f.attributes["arg_attrs"])
        assert "llvm.byval = !llvm.array<128 x i8>" in attrs and "nvvm.grid_constant" in attrs
        assert "llvm.align = 64" in attrs


def test_tma_kind_is_registered_with_kerneldef():
    from cute_ir.kernel import param_kind

    kind = param_kind("tma")
    assert kind.name == "tma"


def test_multicast_mask_matches_nvarch_on_the_cpu(host_int):
    """The run-time multicast mask equals cute-nvarch's `cluster_multicast_mask` for every CTA and axis."""
    from cute_ir import Int, as_value
    from cute_ir.types import I32
    from cute_nvarch.tma import cluster_multicast_mask

    for shape in ((2, 1), (1, 2), (2, 2), (4, 2), (2, 4), (4, 4), (2, 2, 2)):
        cx, cy = shape[0], shape[1]
        cz = shape[2] if len(shape) == 3 else 1
        for axis in range(len(shape)):
            run = host_int(
                3, [32], lambda x, y, z, shape=shape, axis=axis: [as_value(
                    H.multicast_mask(shape, (Int(x), Int(y), Int(z))[: len(shape)], axis), I32())]
            )
            for rank in range(cx * cy * cz):
                x, y, z = rank % cx, (rank // cx) % cy, rank // (cx * cy)
                assert run(x, y, z) == (cluster_multicast_mask(shape, rank, axis),), (shape, axis, rank)
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        with pytest.raises(ValueError, match="axis"):
            H.multicast_mask((2, 2), (0, 0), 3)
        with pytest.raises(ValueError, match="at most 16 CTAs"):
            H.multicast_mask((4, 8), (0, 0), 0)

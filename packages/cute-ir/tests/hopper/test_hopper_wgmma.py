"""WGMMA builders: descriptors against cute-nvarch, instruction forms against its atoms, PTX and SASS."""

from __future__ import annotations

import random

import pytest
from cute_ir import hopper as H

nvarch = pytest.importorskip("cute_nvarch.mma_sm90")
from cute_nvarch.gmma_desc import GmmaDescriptor  # noqa: E402
from cute_nvarch.gmma_smem import make_gmma_smem_layout  # noqa: E402
from cute_nvarch.numeric import numeric_type  # noqa: E402
from cute_nvarch.tiled_mma import make_tiled_mma  # noqa: E402

_NV = {
    "f16": "Float16",
    "bf16": "BFloat16",
    "tf32": "TFloat32",
    "e4m3": "Float8E4M3FN",
    "e5m2": "Float8E5M2",
    "s8": "Int8",
    "u8": "Uint8",
    "f32": "Float32",
    "s32": "Int32",
}


@pytest.mark.parametrize(
    ("dtype", "major", "mn", "k"),
    [
        ("Float16", "K", 128, 64),
        ("Float16", "MN", 128, 64),
        ("BFloat16", "K", 64, 32),
        ("Float16", "MN", 64, 32),
        ("Float16", "K", 64, 16),
        ("TFloat32", "K", 64, 32),
    ],
)
def test_gmma_descriptor_matches_nvarch_for_any_address(host_int, dtype, major, mn, k):
    """The in-kernel descriptor (nvarch halves + address >> 4) equals nvarch's descriptor at that address."""
    t = numeric_type(dtype)
    atom = (
        nvarch.make_wgmma_atom(dtype, dtype, "Float32", 64, "K", "K")
        if t.width != 16 or major == "K"
        else nvarch.make_wgmma_atom(dtype, dtype, "Float32", 64, major, "K")
    )
    tiled = make_tiled_mma(atom, (1, 1, 1))
    layout = make_gmma_smem_layout(t, major, mn, k, 2)
    d = tiled.smem_desc_A(layout)
    assert d.desc.start_address == 0
    offsets = [0, d.k_block_offsets[-1], d.stage_offsets[-1], d.k_block_offsets[-1] + d.stage_offsets[-1]]
    run = host_int(
        1,
        [64] * len(offsets),
        lambda addr: [H.gmma_descriptor(addr, d.desc.lo, d.desc.hi, off) for off in offsets],
    )
    rng = random.Random(1)
    for addr in [0, 1024, 2048 + 1024 * 7] + [1024 * rng.randrange(0, 200) for _ in range(20)]:
        got = run(addr)
        want = tuple(GmmaDescriptor.from_value(d.desc.value).advance(addr + off).value for off in offsets)
        assert got == want


@pytest.mark.parametrize(("dtype", "major"), [("BFloat16", "K"), ("Float16", "MN"), ("TFloat32", "K")])
def test_gmma_descriptor_base_advances_like_a_rebuilt_descriptor(host_int, dtype, major):
    """A descriptor base advanced by run-time stage units and build-time K-block / atom bytes equals the descriptor
    rebuilt at that address (nvarch's), across shared memory (no carry out of the start field)."""
    t = numeric_type(dtype)
    atom = nvarch.make_wgmma_atom(dtype, dtype, "Float32", 64, major if t.width == 16 else "K", "K")
    layout = make_gmma_smem_layout(t, major if t.width == 16 else "K", 128, 64, 4)
    d = make_tiled_mma(atom, (1, 1, 1)).smem_desc_A(layout)
    offsets = sorted({0, *d.k_block_offsets, 1024 + d.k_block_offsets[-1]})
    run = host_int(
        2,
        [64] * len(offsets),
        lambda addr, units: [H.gmma_descriptor_base(addr, d.desc.lo, d.desc.hi).plus(units).at(off) for off in offsets],
    )
    rng = random.Random(2)
    cases = [(0, 0), (1024, 1024 * 3), (227 * 1024 - 32768, 1024)]
    cases += [(1024 * rng.randrange(0, 100), 64 * rng.randrange(0, 100)) for _ in range(20)]  # below 228 KB
    for addr, units in cases:
        want = tuple(GmmaDescriptor.from_value(d.desc.value).advance(addr + 16 * units + off).value for off in offsets)
        assert run(addr, units) == want


def test_gmma_descriptor_base_rejects_bad_offsets():
    from mlir import ir

    with pytest.raises(ValueError, match="multiple of 16"):
        H.GmmaDescriptorBase(None, 0x40000040).at(8)  # checked before any op is built
    with ir.Context(), ir.Location.unknown():
        with pytest.raises(ValueError, match="start-address field"):
            H.gmma_descriptor_base(0, 0x10001, 0x40000040)


def test_gmma_descriptor_rejects_bad_halves():
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        with pytest.raises(ValueError, match="start-address field"):
            H.gmma_descriptor(0, 0x10001, 0x40000040)
        with pytest.raises(ValueError, match="unsigned 32-bit"):
            H.gmma_descriptor(0, 0, 1 << 32)


def _forms():
    out = []
    for a, acc in (
        ("f16", "f32"),
        ("f16", "f16"),
        ("bf16", "f32"),
        ("tf32", "f32"),
        ("e4m3", "f32"),
        ("e5m2", "f16"),
        ("s8", "s32"),
    ):
        for n in nvarch.wgmma_allowed_n(_NV[a]):
            out.append((a, acc, n))
    return out


def test_accumulator_registers_match_every_nvarch_atom():
    """Every PTX-allowed N of every type family: the accumulator struct has the atom's register count."""
    from mlir import ir
    from mlir.dialects import llvm

    forms = _forms()
    assert len(forms) > 150
    with ir.Context(), ir.Location.unknown():
        for a, acc, n in forms:
            atom = nvarch.make_wgmma_atom(_NV[a], _NV[a], _NV[acc], n)
            body = llvm.StructType(H.accumulator_type(atom)).body
            assert len(body) == atom.c_registers  # one 32-bit register per struct member
        # a TiledMma stands for its atom
        atom = nvarch.make_wgmma_atom("Float16", "Float16", "Float32", 128)
        assert H.accumulator_type(make_tiled_mma(atom, (2, 1, 1))) == H.accumulator_type(atom)


def test_wgmma_builders_take_only_smem_wgmma_atoms():
    from cute_nvarch.mma_sm80 import make_mma_sync_atom
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        with pytest.raises(ValueError, match="is not a wgmma atom"):
            H.accumulator_type(make_mma_sync_atom("Float16", "Float16", "Float32"))
        rs = nvarch.make_wgmma_atom("Float16", "Float16", "Float32", 64, a_source="rmem")
        with pytest.raises(ValueError, match="A from shared memory"):
            H.zero_accumulator(rs)
        with pytest.raises(TypeError, match="MmaAtom or TiledMma"):
            H.accumulator_type((64, "f16"))


@pytest.mark.parametrize(
    ("a_major", "b_major", "tnsp"),
    [("k", "k", "0, 0"), ("mn", "k", "1, 0"), ("k", "mn", "0, 1"), ("mn", "mn", "1, 1")],
)
def test_wgmma_chain_ptx_and_sass(compile_kernel, ptx_lines, a_major, b_major, tnsp):
    """fence; D = A*B (scale-d 0); D += A*B; commit; wait 0 -- with the transpose immediates of the majors."""
    from cute_ir.hopper import sass

    atom = nvarch.make_wgmma_atom("BFloat16", "BFloat16", "Float32", 256, a_major.upper(), b_major.upper())

    def body(k):
        base = H.dynamic_smem_base(1024)
        addr = H.smem_address(base)
        da = H.gmma_descriptor(addr, 0x10000, 0x40000040)
        db = H.gmma_descriptor(addr, 0x10000, 0x40000040, 16384)
        acc = H.zero_accumulator(atom)
        H.wgmma_fence()
        acc = H.wgmma_mma_async(atom, acc, da, db, accumulate=False)
        acc = H.wgmma_mma_async(atom, acc, da, db)
        H.wgmma_commit_group()
        H.wgmma_wait_group(0)
        vals = H.accumulator_values(acc, atom)
        from mlir.dialects import llvm

        out = k.arg("out")
        for i in (0, 127):
            p = llvm.getelementptr(out.type, out, [], [i], vals[i].type, None)
            llvm.store(vals[i], p)

    art = compile_kernel(
        f"wg_{a_major}{b_major}", [("out", "ptr")], body, block=(128, 1, 1), dynamic_smem=33792
    )
    lines = ptx_lines(art.ptx)
    mma = [ln for ln in lines if ln.startswith("wgmma.mma_async")]
    assert len(mma) == 2
    assert all(ln.startswith(atom.ptx + " {") for ln in mma)
    assert all(ln.endswith(f"p, 1, 1, {tnsp};") for ln in mma)
    preds = [ln for ln in lines if ln.startswith("setp.ne.b32 p,")]
    assert preds == ["setp.ne.b32 p, 0, 0;", "setp.ne.b32 p, 1, 0;"]
    order = [ln.split()[0] for ln in lines if ln.startswith("wgmma")]
    assert order == [
        "wgmma.fence.sync.aligned;",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "wgmma.commit_group.sync.aligned;",
        "wgmma.wait_group.sync.aligned",
    ]
    assert art.resources["spill_stores"] == 0 and art.resources["local_memory"] == 0
    assert "injected" not in art.ptxas_log and "serializ" not in art.ptxas_log
    if sass.find_disassembler() is None:
        pytest.skip("no SASS disassembler (install nvidia-cuda-nvdisasm)")
    ops = sass.opcode_counts(sass.disassemble(art.cubin))
    assert ops["HGMMA"] == 2
    assert ops["STL"] == 0 and ops["LDL"] == 0


def test_wait_group_range():
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        with pytest.raises(ValueError, match="pending"):
            H.wgmma_wait_group(8)


def test_accumulator_elements_split_f16_pairs_where_used():
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            f16 = nvarch.make_wgmma_atom("Float16", "Float16", "Float16", 64)
            f32 = nvarch.make_wgmma_atom("Float16", "Float16", "Float32", 64)
            e16 = H.accumulator_elements(H.zero_accumulator(f16), f16)
            e32 = H.accumulator_elements(H.zero_accumulator(f32), f32)
            assert len(e16) == len(e32) == 32 == f16.num_c_values
            assert str(e16[5].type) == "f16" and e16[5].owner.name == "llvm.extractelement"
            assert str(e32[5].type) == "f32" and e32[5].owner.name == "llvm.extractvalue"
            with pytest.raises(IndexError):
                e16[32]

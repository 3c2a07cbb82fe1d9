"""CPU CI for the Hopper GEMM: IR builds, ptxas assembles for sm_90a, SASS has HGMMA, no spills/local memory.

Every dtype x major combination at the 128x128x64 tile, and every tile x cluster shape at one dtype (the
in-kernel tile schedule's arithmetic is checked on the CPU in cute-ir's test_hopper_scheduler). Needs MLIR;
the SASS checks need a disassembler (nvidia-cuda-nvdisasm; cuobjdump -sass runs it).
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("mlir")

from cute_examples.dense_gemm.aot import dtype_major_configs, tile_cluster_configs, variant_configs  # noqa: E402
from cute_examples.dense_gemm.bench import bench_config  # noqa: E402
from cute_examples.dense_gemm.kernel import (  # noqa: E402
    PARAMS,  # noqa: E402
    compile_gemm,
    gemm_spec,
)
from cute_examples.dense_gemm.spec import GemmConfig  # noqa: E402
from cute_ir.hopper import sass  # noqa: E402
from cute_nvarch.jit_spec import entry_symbol  # noqa: E402


def _check_artifact(cfg, art, with_sass=True):
    r = art.resources
    assert r["spill_stores"] == 0 and r["spill_loads"] == 0 and r["local_memory"] == 0, r
    assert r["shared_memory"] == cfg.smem_bytes(cfg.num_stages)
    assert "injected" not in art.ptxas_log and "serializ" not in art.ptxas_log.lower(), art.ptxas_log
    assert "C7508" not in art.ptxas_log  # setmaxnreg honoured
    ent = art.entry
    assert [p.name for p in ent.params] == list(PARAMS)
    assert [p.kind for p in ent.params] == ["tma"] * 3 + ["i32"] * 6
    assert ent.launch.block == (cfg.num_threads, 1, 1)
    assert ent.launch.cluster == (cfg.cluster_m, cfg.cluster_n, 1)
    assert ent.spec == gemm_spec(cfg) and ent.name == entry_symbol(ent.spec)
    ptx = re.sub(r"[ \t]+", " ", art.ptx)
    assert ptx.count(".param .align 64 .b8") == 3
    k_blocks = cfg.tile_k // 16
    # K-tile 0 is peeled out of the K loop: two chains of k_blocks wgmmas (tile_m 256: for each of a warpgroup's two
    # 64-row atoms)
    chains = 2 * cfg.atoms_m
    mma = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.(\w+)\.(\w+)\.(\w+)", ptx)
    short = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}
    form = (str(cfg.tile_n), short[cfg.acc_dtype], short[cfg.a_dtype], short[cfg.b_dtype])
    assert mma == [form] * chains * k_blocks
    tnsp = f"p, 1, 1, {int(cfg.a_major == 'm')}, {int(cfg.b_major == 'n')};"
    assert ptx.count(tnsp) == chains * k_blocks
    _check_speed_options(cfg, ptx)
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in ptx and "setmaxnreg.inc.sync.aligned.u32 232;" in ptx
    loads = re.findall(
        r"cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes"
        r"(\.multicast::cluster)?",
        ptx,
    )
    assert loads and all(bool(m) == (cfg.cluster_size > 1) for m in loads) or cfg.cluster_size > 1
    assert "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group" in ptx
    assert "fence.proxy.async.shared::cta;" in ptx
    if cfg.c_bytes == 2:
        assert ("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx) == (cfg.c_major == "m")
    if not with_sass:
        return
    if sass.find_disassembler() is None:
        pytest.skip("no SASS disassembler: install nvidia-cuda-nvdisasm (cuobjdump -sass needs it)")
    text = sass.disassemble(art.cubin)
    ops = sass.opcode_counts(text)
    assert ops["HGMMA"] == chains * k_blocks
    # scale-d 0 shows as an HGMMA whose accumulator input is RZ with the !UPT predicate; ptxas folds the
    # zeroed accumulators of acc_init="zero" into the peeled first K-block the same way
    zero_d = re.findall(r"HGMMA\.\S+ R\d+, gdesc\[UR\d+\](?:\.tnsp[AB])*, RZ, !UPT", text)
    assert len(zero_d) == cfg.atoms_m, zero_d
    waits = re.findall(r"WARPGROUP\.DEPBAR\.LE gsb0, (0x[01])", text)
    assert sorted(set(waits)) == (["0x0", "0x1"] if cfg.k_pipe_mmas else ["0x0"])
    assert ops["UTMALDG"] >= 2 and ops["UTMASTG"] >= 1
    assert ops["STL"] == 0 and ops["LDL"] == 0
    assert ops["USETMAXREG"] == 2
    _check_no_gpu_fence_in_k_loop(cfg, text)


def _check_no_gpu_fence_in_k_loop(cfg, text):
    """No `MEMBAR.ALL.GPU` outside the exit cluster barrier (a per-K-tile one starves the tensor cores).

    ptxas turns a `.release.cluster` mbarrier arrive (and `barrier.cluster.arrive` with release) into
    MEMBAR.ALL.GPU; the stage releases must be plain CTA-scope arrives, so the only GPU fence left is
    the one right before the cluster barrier at exit (clusters only). The "cluster_release" control
    variant keeps the fence before each remote release.
    """
    instrs = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", text)
    fences = [i for i, ins in enumerate(instrs) if "MEMBAR.ALL.GPU" in ins]
    at_exit = [i for i in fences if any("UCGABAR_ARV" in x for x in instrs[i + 1 : i + 5])]
    if cfg.cluster_size == 1:
        assert fences == [], [instrs[i] for i in fences]
    elif cfg.release_scope == "cta":
        assert fences == at_exit and len(at_exit) == 1, [instrs[i] for i in fences]
    else:
        # fenced remote releases: inside the K loop, after the peeled K-tile and after the last one
        in_loop = [i for i in fences if i not in at_exit]
        assert len(in_loop) >= 2 and all("SYNCS.ARRIVE" in " ".join(instrs[i : i + 4]) for i in in_loop)


def _check_speed_options(cfg, ptx):
    """The PTX of the speed options: wgmma waits, scale-d of the first K-block, epilogue store waits."""
    waits = re.findall(r"wgmma\.wait_group\.sync\.aligned (\d);", ptx)
    if cfg.k_pipe_mmas == 1:
        # one group kept in flight inside the K loop, everything retired after it
        assert waits == ["1", "0"], waits
    else:
        assert waits == ["0", "0"], waits  # after the peeled K-tile and inside the loop
    scale_d = re.findall(r"setp\.ne\.b32 p, ([01]), 0;\s*wgmma", ptx)
    want_zero = cfg.atoms_m if cfg.acc_init == "scale_d" else 0
    assert scale_d.count("0") == want_zero and len(scale_d) == 2 * cfg.atoms_m * cfg.tile_k // 16
    chunks = cfg.tile_n // cfg.epi_n * cfg.atoms_m  # tile_m 256: a warpgroup stores its two slabs in turn
    store_waits = re.findall(r"cp\.async\.bulk\.wait_group\.read (\d);", ptx)
    if cfg.epi_buffers == 2:
        # before each chunk's writes: at most one store (the other buffer's) pending; all done at exit
        assert store_waits == ["1"] * chunks + ["0"], store_waits
    else:
        assert store_waits == ["0"] * (chunks + 1), store_waits
    assert ptx.count("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group") >= chunks


_DTYPE_MAJOR = dtype_major_configs()


@pytest.mark.parametrize("index", range(len(_DTYPE_MAJOR)), ids=lambda i: _DTYPE_MAJOR[i].name)
def test_every_dtype_and_major_assembles_with_hgmma(index):
    # the disassembler costs about a second per cubin: read the SASS of every third configuration (every
    # dtype combination and every major is still covered; the PTX checks run on all of them)
    cfg = _DTYPE_MAJOR[index]
    _check_artifact(cfg, compile_gemm(cfg), with_sass=index % 3 == 0)


@pytest.mark.parametrize("cfg", tile_cluster_configs(), ids=lambda c: c.name)
def test_every_tile_and_cluster_assembles_with_hgmma(cfg):
    art = compile_gemm(cfg)
    _check_artifact(cfg, art)
    if cfg.cluster_size > 1:
        ptx = re.sub(r"[ \t]+", " ", art.ptx)
        assert ".multicast::cluster" in ptx
        # CTA-scope remote stage releases (CUTLASS's ClusterBarrier::arrive), no .release.cluster
        assert "mbarrier.arrive.shared::cluster.b64" in ptx
        assert "mbarrier.arrive.release.cluster" not in ptx
        assert "barrier.cluster.arrive.relaxed.aligned;" in ptx and "barrier.cluster.wait.aligned;" in ptx
        assert f".reqnctapercluster {cfg.cluster_m}, {cfg.cluster_n}, 1" in ptx


# the "base" variant of the GPU-tested configs, each speed option on its own, and a benchmark config
_OPTION_CONFIGS = variant_configs() + [
    GemmConfig(k_pipe_mmas=0, acc_init="scale_d", epi_buffers=2),
    GemmConfig(tile_n=64, k_pipe_mmas=1, acc_init="zero", epi_buffers=1, c_major="m"),
    GemmConfig(tile_n=256, k_pipe_mmas=0, acc_init="zero", epi_buffers=2, c_dtype="float32"),
    bench_config((8192, 8192, 8192, 1), "bfloat16"),
    bench_config((8192, 8192, 8192, 1), "float16", "cluster_release"),
]


@pytest.mark.parametrize("cfg", _OPTION_CONFIGS, ids=lambda c: c.name)
def test_speed_options_assemble_as_specified(cfg):
    """wait_group 1 / 0, scale-d 0 on the first K-block, one or two epilogue buffers, release scope."""
    art = compile_gemm(cfg)
    _check_artifact(cfg, art)
    if cfg.cluster_size > 1:
        ptx = re.sub(r"[ \t]+", " ", art.ptx)
        remote = re.findall(r"mbarrier\.arrive\.(release\.cluster\.)?shared::cluster\.b64", ptx)
        assert remote and all(bool(m) == (cfg.release_scope == "cluster") for m in remote), remote

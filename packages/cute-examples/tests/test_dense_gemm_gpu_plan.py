"""The multicast and random-problem GPU tests' kernels are planned here, into the bundle, without MLIR.

`configs.gemm_call_configs` names the kernels `gemm()` asks for; here it is checked against the host's own
steps (majors from strides, `plan_pick`, the staged N-major output) on stand-in tensors, every such config
is in the catalogue that `python -m cute_examples.build_bundle` writes, and a bundle miss on a host without a
compiler raises CompilerError (what the GPU test turns into a failure).
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest
import torch
from cute_examples.catalogue import jobs
from cute_examples.dense_gemm import host
from cute_examples.dense_gemm.aot import BENCH_NUM_SMS
from cute_examples.dense_gemm.configs import (
    FORMERLY_FAILING,
    gemm_call_configs,
    gpu_test_configs,
    multicast_split_configs,
    random_problem_configs,
    random_problems,
)
from cute_examples.dense_gemm.kernel import dense_gemm, gemm_spec, kernel_of
from cute_examples.dense_gemm.launch_plan import plan_config, plan_pick
from cute_examples.dense_gemm.spec import TILE_N, TILES, GemmConfig, padded_ld
from cute_runtime import CompilerError

_TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


class FakeCuda:
    """A stand-in for a CUDA tensor: shape, strides, dtype, a 16-byte aligned address."""

    is_cuda = True

    def __init__(self, shape, stride, dtype):
        self.shape, self._stride, self.dtype = tuple(shape), tuple(stride), dtype

    def dim(self):
        return len(self.shape)

    def stride(self):
        return self._stride

    def data_ptr(self):
        return 1 << 20


def _tensor(l, rows, cols, contiguous_cols, dtype, batched):
    """An (l, rows, cols) tensor with a 16-byte padded leading dimension, as the GPU tests allocate it."""
    e = torch.empty((), dtype=_TORCH[dtype]).element_size()
    inner, outer = (cols, rows) if contiguous_cols else (rows, cols)
    ld = padded_ld(inner, e)
    stride = (outer * ld, ld, 1) if contiguous_cols else (outer * ld, 1, ld)
    shape = (l, rows, cols)
    if not batched:
        shape, stride = shape[1:], stride[1:]
    return FakeCuda(shape, stride, _TORCH[dtype])


@pytest.mark.parametrize("sms", BENCH_NUM_SMS)
def test_gemm_call_configs_follow_the_host_steps(sms):
    for p in random_problems():
        a = _tensor(p.l, p.m, p.k, p.a_major == "k", p.ab_dtype, p.batched)
        b = _tensor(p.l, p.k, p.n, p.b_major == "n", p.ab_dtype, p.batched)
        c = _tensor(p.l, p.m, p.n, p.c_major == "n", p.c_dtype, p.batched)
        problem = host.problem_of(a, b, c)
        assert (problem.a_major, problem.b_major, problem.c_major) == (p.a_major, p.b_major, p.c_major), p
        problems = [problem]
        if host._store_spills_past(problem):  # gemm() stages C through an N-major scratch output
            problems.append(host.problem_of(a, b, _tensor(p.l, p.m, p.n, True, p.c_dtype, p.batched)))
        for decomposed in (False, True):
            want = []
            for q in problems:
                options, loadable = (p.c_dtype, "float32", None, None, None), (lambda _c, d=decomposed: d)
                (direct, _), t_pick = plan_pick(q, options, None, sms, loadable)
                assert direct == plan_config(q, options, None, sms, loadable)[0]
                # the transposed pick, and the direct one where staging keeps a call on it
                names = [direct.name] if t_pick is None else [t_pick[0].name, direct.name]
                want += list(dict.fromkeys(names))
            assert [x.name for x in gemm_call_configs(p, sms, decomposed=decomposed)] == want, p


def test_random_problems_are_seeded_and_varied():
    ps = random_problems()
    assert ps == random_problems() and len(ps) == 48
    assert {p.ab_dtype for p in ps} == {"float16", "bfloat16"} and "float32" in {p.c_dtype for p in ps}
    assert {(p.a_major, p.b_major) for p in ps} == set(itertools.product("km", "kn"))
    assert {p.c_major for p in ps if p.out_given} == {"n", "m"}
    assert {p.batched for p in ps} == {True, False} and max(p.l for p in ps) > 1
    assert any(p.m % 8 or p.n % 8 or p.k % 8 for p in ps)
    chosen = random_problem_configs()
    assert any(c.cluster_size > 1 for c in chosen) and len({(c.tile_m, c.tile_n) for c in chosen}) >= 4


def test_multicast_configs_cover_every_formerly_failing_class_at_every_tile():
    mc = multicast_split_configs()
    for name, in_class in FORMERLY_FAILING:  # each class at every tile it has
        tiles = {(c.tile_m, c.tile_n) for c in mc if in_class(c)}
        if name.startswith("A"):
            assert tiles == {(128, tn) for tn in TILE_N}, name
        else:
            assert tiles == {(tm, tn) for tm, tn in TILES if tn >= 128}, name
    for ab, (tm, tn) in itertools.product(("float16", "bfloat16"), TILES):
        here = [c for c in mc if c.a_dtype == ab and (c.tile_m, c.tile_n) == (tm, tn)]
        assert any(c.a_major == "m" and c.cluster_n == 2 for c in here)
        assert any(c.b_major == "n" and c.cluster_m == 2 for c in here)


def test_the_bundle_catalogue_holds_every_gpu_test_config():
    labels = {label for label, _ in jobs("sm_90a")}
    missing = [c.name for c in gpu_test_configs() if c.name not in labels]
    assert not missing
    for p in random_problems():
        for sms in BENCH_NUM_SMS:
            assert all(c.name in labels for c in gemm_call_configs(p, sms)), p
    for c in multicast_split_configs():
        assert dataclasses.replace(c, c_major="n").name in labels


def _write_bundle(directory, cfg):
    """A bundle of one (fake) GEMM kernel, written with cute-nvarch's bundle format (no MLIR, no cute-ir)."""
    from cute_nvarch.bundle_format import dump_manifest, make_manifest, manifest_kernel
    from cute_nvarch.entry import KernelEntry, Launch
    from cute_nvarch.jit_spec import entry_symbol, kernel_params

    spec = gemm_spec(cfg)
    launch = Launch((cfg.num_threads, 1, 1), (cfg.cluster_m, cfg.cluster_n, 1), cfg.smem_bytes(cfg.num_stages))
    entry = KernelEntry(entry_symbol(spec), "sm_90a", kernel_params(spec), launch, spec)
    ptx = f".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry {entry.name}()\n{{\n ret;\n}}\n"
    kernel, files = manifest_kernel(entry, b"\x7fELF not a real cubin", ptx.encode())
    directory.mkdir()
    for name, data in files.items():
        (directory / name).write_bytes(data)
    (directory / "manifest.json").write_bytes(dump_manifest(make_manifest([kernel])))
    return directory


def test_a_bundle_serves_its_kernels_and_a_miss_without_a_compiler_is_an_error(tmp_path, monkeypatch):
    """CUTE_BUNDLE_DIR serves the GEMM's specializations; a spec it lacks goes to the registered compiler, and on
    a host without one (the GPU host: no cute-ir) that is a CompilerError naming the kernel."""
    from cute_runtime import jit

    bundled, other = GemmConfig(a_major="m", cluster_n=2), GemmConfig(b_major="n", cluster_m=2)
    monkeypatch.setenv("CUTE_BUNDLE_DIR", str(_write_bundle(tmp_path / "b", bundled)))
    monkeypatch.setattr(dense_gemm, "_kernels", {})

    def no_compiler():
        raise CompilerError("no compiler is registered (install cute-ir)")

    monkeypatch.setattr(jit, "compiler", no_compiler)
    kernel = kernel_of(bundled, (9, 0))
    assert kernel.entry.spec == gemm_spec(bundled) and dense_gemm.compiles == 0
    with pytest.raises(CompilerError, match="no compiler"):
        kernel_of(other, (9, 0))


@pytest.mark.parametrize("name", [n for n, _ in FORMERLY_FAILING])
def test_host_encodes_the_plans_box_for_the_multicast_classes(monkeypatch, name):
    """tensor_maps() encodes each operand with the box extents of cute-nvarch's (multicast) plan."""
    from cute_examples.dense_gemm.plan import tma_boxes

    cfg = next(c for c in multicast_split_configs() if dict(FORMERLY_FAILING)[name](c))
    calls = []
    monkeypatch.setattr("cute_runtime.tma.encode_tiled", lambda *args, owner=None: calls.append(args) or args)
    p = random_problems()[0]
    p = dataclasses.replace(p, ab_dtype=cfg.a_dtype, c_dtype=cfg.c_dtype, a_major=cfg.a_major,
                            b_major=cfg.b_major, c_major=cfg.c_major, m=300, n=200, k=136, l=2, batched=True)
    a = _tensor(p.l, p.m, p.k, p.a_major == "k", p.ab_dtype, True)
    b = _tensor(p.l, p.k, p.n, p.b_major == "n", p.ab_dtype, True)
    c = _tensor(p.l, p.m, p.n, p.c_major == "n", p.c_dtype, True)
    host.tensor_maps(host.problem_of(a, b, c), cfg)
    plans = tma_boxes(cfg)
    assert [tuple(x[5]) for x in calls] == [(*op.box_dims, 1) for op in plans]
    assert [x[8] for x in calls] == [op.swizzle for op in plans]
    shared = plans[0] if name.startswith("A") else plans[1]
    assert shared.box_dims == (64, 64) and shared.multicast == 2

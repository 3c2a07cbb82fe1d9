"""gemm()'s launch-plan cache on CPU: keys, hits for rotated buffers, per-device plans, staging decisions."""

from __future__ import annotations

import pytest
import torch
from cute_examples.dense_gemm import launch_plan
from cute_examples.dense_gemm.any_shape_cases import ANY_SHAPE_CASES, case_layouts
from cute_examples.dense_gemm.launch_plan import PlanCache, plan_key, staged_layouts, staged_problem
from gemm_fakes import FakeCuda, GemmKernel  # the tests' CPU stand-ins

OPTIONS = (None, "float32", None, None, None)


def _key(a, b, out):
    return plan_key(a, a.data_ptr(), b, b.data_ptr(), out, 0 if out is None else out.data_ptr(), OPTIONS)


def _triple(**change):
    a = FakeCuda((256, 128), address=change.get("pa", 1 << 20), dtype=change.get("dtype", torch.float16),
                 device=change.get("device", 0), stride=change.get("a_stride"))
    b = FakeCuda((128, 64), address=1 << 24, dtype=change.get("dtype", torch.float16), device=change.get("device", 0))
    out = FakeCuda((256, 64), address=1 << 26, device=change.get("device", 0))
    return a, b, out

def _fake_plans(monkeypatch, tmp_path, make_kernel, driver):
    """A fresh plan cache for gemm() on stand-ins: a 132-SM sm_90 device, `driver` as the driver module,
    `make_kernel(cfg)` as kernel_of, placeholder descriptors, no tune cache."""
    from types import SimpleNamespace

    import cute_runtime
    from cute_examples.dense_gemm import kernel as gemm_kernel
    from cute_examples.dense_gemm import tune_cache
    from cute_runtime import TensorMap

    monkeypatch.setenv("CUTE_TUNE_CACHE", str(tmp_path / "none.json"))
    monkeypatch.setattr(tune_cache, "_once", {})
    props = SimpleNamespace(compute_capability=(9, 0), sm_count=132, name="Fake H100")
    monkeypatch.setattr(cute_runtime, "device_properties", lambda device: props)
    monkeypatch.setattr(cute_runtime.driver, "init", lambda: driver)
    monkeypatch.setattr(gemm_kernel, "kernel_of", lambda cfg, cc, device=None: make_kernel(cfg))
    monkeypatch.setattr(launch_plan, "tensor_maps", lambda p, cfg: [TensorMap(bytes(128)) for _ in range(3)])
    cache = PlanCache(launch_plan._build)
    monkeypatch.setattr(launch_plan, "_get", cache.get)
    return cache



def test_rotated_buffers_share_a_plan_and_every_key_field_makes_a_new_one():
    built = []
    cache = PlanCache(lambda *args: built.append(args) or object())
    base = _key(*_triple())
    plan = cache.get(base, "args")
    assert cache.get(_key(*_triple(pa=(1 << 20) + 4096)), "args") is plan  # a rotated buffer: a hit
    assert _key(*_triple(pa=(1 << 20) + 4096)) == base
    changed = {
        "dtype": _key(*_triple(dtype=torch.bfloat16)),
        "stride": _key(*_triple(a_stride=(136, 1))),
        "alignment": _key(*_triple(pa=(1 << 20) + 2)),
        "device": _key(*_triple(device=1)),
        "options": plan_key(*(lambda a, b, o: (a, a.data_ptr(), b, b.data_ptr(), o, o.data_ptr()))(*_triple()),
                            (None, "float32", (128, 128, 64), (1, 1), None)),
        "out=None": _key(*_triple()[:2], None),
    }
    plans = {name: cache.get(key, name) for name, key in changed.items()}
    assert len({id(p) for p in plans.values()} | {id(plan)}) == len(changed) + 1
    assert len(built) == len(changed) + 1
    assert len(set(changed.values()) | {base}) == len(changed) + 1


def test_gemm_looks_plans_up_per_device_and_per_thread(monkeypatch):
    import threading

    calls = []

    class FakePlan:
        def __init__(self, a, b, out, options):
            self.device = a.device.index
            calls.append(self.device)

        def __call__(self, a, pa, b, pb, out, pc, stream):
            return (self, pa, pb, pc)

    cache = PlanCache(FakePlan)
    monkeypatch.setattr(launch_plan, "_get", cache.get)
    p0, *_ = launch_plan.gemm(*_triple(device=0))
    p0b, pa, _, _ = launch_plan.gemm(*_triple(device=0, pa=(1 << 20) + 512))
    p1, *_ = launch_plan.gemm(*_triple(device=1))
    assert p0b is p0 and pa == (1 << 20) + 512  # a hit, with this call's address
    assert p1 is not p0 and calls == [0, 1] and (p0.device, p1.device) == (0, 1)
    other = []
    t = threading.Thread(target=lambda: other.append(launch_plan.gemm(*_triple(device=0))[0]))
    t.start()
    t.join()
    assert other[0] is not p0 and calls == [0, 1, 0]  # a thread's plans (and parameter blocks) are its own


def test_each_device_gets_its_own_kernel(monkeypatch):
    from cute_examples.dense_gemm.kernel import dense_gemm, kernel_of
    from cute_examples.dense_gemm.spec import GemmConfig

    class FakeKernel:
        def __init__(self, device):
            self.device = device

    monkeypatch.setattr(dense_gemm, "_kernels", {})
    monkeypatch.setattr(dense_gemm, "_fallback", lambda spec, target, device: FakeKernel(device))
    cfg = GemmConfig()
    k0, k1 = kernel_of(cfg, (9, 0), 0), kernel_of(cfg, (9, 0), 1)
    assert (k0.device, k1.device) == (0, 1)
    assert kernel_of(cfg, (9, 0), 1) is k1


STAGED = {
    "k127": (True, False, False),
    "n1001": (False, True, True),
    "n1001_bf16": (False, True, True),
    "m999_m_major": (True, False, True),
    "broadcast_b": (False, True, False),
    "m1": (False, False, False),
    "k1": (False, False, False),
    "n1": (False, False, False),
    "no_unit_stride": (True, True, True),
    "misaligned_a": (True, False, False),
    "batch_stride_odd": (True, False, False),
    "m5_batched": (False, False, False),
    "m13_batched_k200": (False, False, False),
}


@pytest.mark.parametrize("case", ANY_SHAPE_CASES, ids=lambda c: c.name)
def test_staging_makes_every_case_tma_readable(case):
    a, b, out = case_layouts(case)
    *layouts, stages = staged_layouts(a, b, out, None)
    assert stages == STAGED[case.name]
    p = staged_problem(a, b, out)  # problem_of accepts the staged operands: TMA can read them
    assert (p.m, p.n, p.k) == (a.shape[-2], b.shape[-1], a.shape[-1])
    for t, staged, src in zip(layouts, stages, (a, b, out), strict=True):
        if staged:  # a padded row-major copy: leading dimension a multiple of 16 bytes
            e = torch.empty((), dtype=t.dtype).element_size()
            assert t.stride()[-1] == 1 and t.stride()[-2] * e % 16 == 0 and t.data_ptr() % 16 == 0
            assert t.shape == src.shape
        else:
            assert t is src


def test_default_output_is_never_staged():
    a, b, _ = case_layouts(ANY_SHAPE_CASES[1])  # N = 1001: gemm()'s own padded output takes the chunk stores
    *_, stages = staged_layouts(a, b, None, torch.float16)
    assert stages == (False, True, False)


@pytest.mark.parametrize(
    "a, b, out, match",
    [
        (FakeCuda((64, 72)), FakeCuda((64, 64)), None, r"b has 64 rows but a has K = 72"),
        (FakeCuda((64, 64), dtype=torch.float32), FakeCuda((64, 64), dtype=torch.float32), None, r"float16 or"),
        (FakeCuda((64, 64)), FakeCuda((64, 64), dtype=torch.bfloat16), None, r"same dtype"),
        (FakeCuda((64, 64)), FakeCuda((64, 64), device=1), None, r"one device"),
        (FakeCuda((64, 64)), FakeCuda((64, 64)), FakeCuda((64, 65)), r"out must be \(64, 64\)"),
        (FakeCuda((2, 64, 64)), FakeCuda((3, 64, 64)), None, r"same batch size"),
        (FakeCuda((64, 64)), FakeCuda((2, 64, 64)), None, r"both be 2-D or both 3-D"),
        (FakeCuda((64, 64)), FakeCuda((64, 64)), FakeCuda((64, 64), (0, 1)), r"out has a stride-0 mode"),
    ],
)
def test_what_no_gemm_can_do_is_a_value_error(a, b, out, match):
    with pytest.raises(ValueError, match=match):
        launch_plan._check(a, b, out, None)


def test_cpu_tensors_are_a_value_error():
    with pytest.raises(ValueError, match=r"a must be a CUDA tensor"):
        launch_plan._check(torch.zeros(4, 4, dtype=torch.float16), torch.zeros(4, 4, dtype=torch.float16), None, None)


def test_any_shape_configs_are_in_the_bundle_catalogue():
    from cute_examples.dense_gemm.configs import any_shape_configs, gpu_test_configs

    names = {c.name for c in gpu_test_configs()}
    assert {c.name for c in any_shape_configs()} <= names


def test_tuned_table_is_read_once_per_process(tmp_path, monkeypatch):
    from cute_examples.dense_gemm import tune_cache
    from cute_examples.dense_gemm.choice import GemmShape
    from cute_examples.dense_gemm.spec import GemmConfig

    path = tmp_path / "tune.json"
    monkeypatch.setenv("CUTE_TUNE_CACHE", str(path))
    monkeypatch.setattr(tune_cache, "_once", {})
    shape = GemmShape(512, 512, 512)
    choice = tune_cache.TunedChoice(GemmConfig(tile_n=256), 1, 2, 10.0)
    tune_cache.store_tuned(shape, "float32", "GPU X", choice)
    assert tune_cache.lookup_tuned_once(shape, "float32", "GPU X").config.name == choice.config.name
    path.unlink()  # no file access after the first read
    assert tune_cache.lookup_tuned_once(shape, "float32", "GPU X").config.name == choice.config.name
    other = GemmShape(256, 256, 256)
    tune_cache.store_tuned(other, "float32", "GPU X", choice)  # this process's own store refreshes it
    assert tune_cache.lookup_tuned_once(other, "float32", "GPU X") is not None


def test_a_plan_hit_re_points_the_descriptors_in_its_parameter_block(monkeypatch, tmp_path):
    """GemmPlan on fakes (device, kernel, driver): built once, then per call only address updates and a launch."""
    import ctypes
    import struct

    launches, replaced = [], []

    class FakeDriver:
        class CUtensorMap:
            def __init__(self, _ptr):
                self.ptr = _ptr

        @staticmethod
        def cuTensorMapReplaceAddress(tm, address):  # the real one rewrites the opaque map; a stand-in field
            replaced.append(address)
            ctypes.memmove(tm.ptr, struct.pack("<Q", address), 8)
            return (0,)

    cache = _fake_plans(monkeypatch, tmp_path, lambda cfg: GemmKernel(
        cfg, lambda grid, stream, block: launches.append((grid, stream, block))), FakeDriver)
    a, b, c = _triple()
    assert launch_plan.gemm(a, b, c, stream=7) is c
    (plan,) = cache.table().values()
    assert replaced == [] and len(launches) == 1  # the plan was encoded for these very addresses
    a2, b2, c2 = (FakeCuda(t.shape, t.stride(), t.dtype, t.data_ptr() + 4096) for t in (a, b, c))
    assert launch_plan.gemm(a2, b2, c2, stream=7) is c2
    assert list(cache.table().values()) == [plan]
    assert replaced == [a2.data_ptr(), b2.data_ptr(), c2.data_ptr()]
    grid, stream, block = launches[-1]
    assert stream == 7 and grid == plan.grid
    offsets = plan.kernel.layout.offsets
    assert [struct.unpack_from("<Q", block, o)[0] for o in offsets[:3]] == replaced
    assert struct.unpack_from("<4i", block, offsets[3]) == (256, 64, 128, 1)
    with pytest.raises(ValueError, match="overlaps an input"):
        launch_plan.gemm(a, b, FakeCuda(c.shape, c.stride(), c.dtype, a.data_ptr() + 1024))


@pytest.mark.parametrize(("cluster", "active", "clusters"), [((2, 2), 30, 30), ((2, 1), 66, 66), ((2, 1), 61, 61),
                                                             ((1, 1), 0, 132)])
def test_the_persistent_grid_holds_the_clusters_that_fit(monkeypatch, tmp_path, cluster, active, clusters):
    """The plan's persistent grid asks for the clusters the device runs at once (Kernel.max_active_clusters: 30
    2x2 clusters on a 132-SM H200, where 33 left three waiting for a whole share of the work); a kernel without a
    cluster fills every SM."""
    from gemm_fakes import Driver

    cache = _fake_plans(monkeypatch, tmp_path, lambda cfg: GemmKernel(cfg, lambda *_: None, active), Driver)
    a = FakeCuda((4096, 4096))
    b, c = FakeCuda((4096, 4096), address=1 << 28), FakeCuda((4096, 4096), address=1 << 30)
    launch_plan.gemm(a, b, c, tile_shape_mnk=(128, 128, 64), cluster_shape_mn=cluster, stream=1)
    (plan,) = cache.table().values()
    assert plan.grid == (cluster[0] * clusters, cluster[1], 1)


def test_the_2x2_cluster_gpu_case_is_in_the_bundle_catalogue():
    from cute_examples.dense_gemm.aot import aot_configs
    from cute_examples.dense_gemm.choice import GemmShape
    from cute_examples.dense_gemm.host import choose_config
    from test_dense_gemm_any_shape_gpu import CLUSTER_2X2_CASE as c

    shape = GemmShape(c["m"], c["n"], c["k"], ab_dtype="float16", c_dtype="float16")
    cfg = choose_config(shape, tile_shape_mnk=c["tile_shape_mnk"], cluster_shape_mn=c["cluster_shape_mn"])
    assert cfg.name in {x.name for x in aot_configs()}


def test_the_chain_gpu_case_is_in_the_bundle_catalogue():
    from cute_examples.dense_gemm.aot import aot_configs
    from cute_examples.dense_gemm.choice import GemmShape
    from cute_examples.dense_gemm.host import choose_config
    from test_dense_gemm_any_shape_gpu import CHAIN_CASE as c

    names = {x.name for x in aot_configs()}
    for m, n, k in ((c["m"], c["n1"], c["k"]), (c["m"], c["n2"], c["n1"])):
        shape = GemmShape(m, n, k, ab_dtype="float16", c_dtype="float16")
        cfg = choose_config(shape, tile_shape_mnk=c["tile_shape_mnk"], cluster_shape_mn=c["cluster_shape_mn"])
        assert cfg.name in names


def test_plans_launch_programmatically(monkeypatch, tmp_path):
    """gemm()'s plans ask for programmatic stream serialization (PDL; safe because of the kernels' grid
    dependency wait, test_dense_gemm_pdl.py)."""
    from gemm_fakes import Driver

    asked = []

    class Recording(GemmKernel):
        def bound_launch(self, grid, params, programmatic=False):
            asked.append(programmatic)
            return super().bound_launch(grid, params)

    _fake_plans(monkeypatch, tmp_path, lambda cfg: Recording(cfg, lambda *_: None), Driver)
    a, b, c = _triple()
    launch_plan.gemm(a, b, c, stream=1)
    assert asked == [True]


def test_a_plan_of_few_rows_runs_the_transposed_problem(monkeypatch, tmp_path):
    """`transposed.transposes`: 139 rows of a Llama-3 8B down projection (K 14336 -> N 4096) run C^T = B^T A^T on
    128x160 (139 in one 160-column tile where 128-row tiles pad it to 256): the plan's kernel reads b as A' and a as
    B' and writes out M-major; with out=None it writes gemm()'s own (M, N) allocation. A call that would stage an
    operand, and one with an input addend, keep the direct problem."""
    import struct

    from cute_examples.dense_gemm import decomposed
    from cute_examples.dense_gemm.choice import GemmShape
    from cute_examples.dense_gemm.launch_plan import plan_config, plan_pick
    from cute_examples.dense_gemm.transposed import MIN_TILE, transposed_shape
    from gemm_fakes import Driver

    launches = []
    cache = _fake_plans(monkeypatch, tmp_path, lambda cfg: GemmKernel(
        cfg, lambda grid, stream, block: launches.append(block)), Driver)
    monkeypatch.setattr(decomposed.Workspace, "pointers", lambda self, cfg, sch, device, stream: (1 << 40, 1 << 44))
    m, n, k = 139, 4096, 14336
    a = FakeCuda((m, k), dtype=torch.bfloat16, address=1 << 20)
    b = FakeCuda((k, n), (1, k), dtype=torch.bfloat16, address=1 << 28)  # W.t() of a contiguous (N, K) weight
    out = FakeCuda((m, n), dtype=torch.bfloat16, address=1 << 32)
    assert launch_plan.gemm(a, b, out, stream=1) is out
    (plan,) = cache.table().values()
    direct = GemmShape(m, n, k, 1, "bfloat16", "bfloat16")
    _, (t_cfg, t_splits) = plan_pick(direct, ("bfloat16", "float32", None, None, None), None, 132)
    assert plan.transposed and plan.config == t_cfg
    assert (t_cfg.tile_m, t_cfg.tile_n, t_cfg.c_major) == (128, 160, "m")
    assert plan_config(transposed_shape(direct), ("bfloat16", "float32", None, None, None), None, 132,
                       min_tile=MIN_TILE)[0] == t_cfg
    offsets = plan.kernel.layout.offsets
    assert struct.unpack_from("<4i", launches[-1], offsets[3]) == (n, m, k, 1)  # M' = N, N' = M
    assert plan.addresses[:3] == [b.data_ptr(), a.data_ptr(), out.data_ptr()]
    own = launch_plan._build(a, b, None, ("bfloat16", "float32", None, None, None))  # gemm()'s own (M, N) out
    assert own.transposed and own.config == t_cfg and own.out_shape == (m, n)
    # with an input addend it keeps the direct problem
    launch_plan.gemm(a, b, out, input=FakeCuda((m, n), dtype=torch.bfloat16, address=1 << 36), stream=1)
    assert not list(cache.table().values())[-1].transposed
    # an out whose M-major form would be staged (N ends inside a 16-byte chunk) keeps the direct problem too
    n2 = n - 4
    b2 = FakeCuda((k, n2), (1, k), dtype=torch.bfloat16, address=1 << 28)
    staged = launch_plan._build(a, b2, FakeCuda((m, n2), (n, 1), dtype=torch.bfloat16, address=1 << 32),
                                ("bfloat16", "float32", None, None, None))
    assert staged.staged and not staged.transposed
    assert plan_pick(GemmShape(m, n2, k, 1, "bfloat16", "bfloat16"), ("bfloat16", "float32", None, None, None), None,
                     132)[1] is not None  # the pick alone would transpose it

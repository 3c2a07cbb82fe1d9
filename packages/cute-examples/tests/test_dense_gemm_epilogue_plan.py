"""gemm()'s fused-epilogue launch plans on CPU fakes (device, kernel, driver): the config carries the epilogue,
the parameter block holds the bias/input addresses, strides and alpha/beta, a hit rewrites only those, the key
separates what changes the kernel, and the plain call keeps its plain key."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest
import torch
from cute_examples.dense_gemm import launch_plan
from cute_examples.dense_gemm.kernel import FUSED_PARAMS
from cute_examples.dense_gemm.launch_plan import PlanCache
from gemm_fakes import Driver, FakeCuda, GemmKernel, block_fields  # the tests' CPU stand-ins


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    """gemm() on fakes; returns (cache, launches, kernels built (their configs))."""
    import cute_runtime
    from cute_examples.dense_gemm import kernel as gemm_kernel
    from cute_examples.dense_gemm import tune_cache
    from cute_runtime import TensorMap

    launches, configs = [], []

    def kernel_of(cfg, cc, device=None):
        configs.append(cfg)
        return GemmKernel(cfg, lambda grid, stream, block: launches.append(block))

    monkeypatch.setenv("CUTE_TUNE_CACHE", str(tmp_path / "none.json"))
    monkeypatch.setattr(tune_cache, "_once", {})
    props = SimpleNamespace(compute_capability=(9, 0), sm_count=132, name="Fake H100")
    monkeypatch.setattr(cute_runtime, "device_properties", lambda device: props)
    monkeypatch.setattr(cute_runtime.driver, "init", lambda: Driver)
    monkeypatch.setattr(gemm_kernel, "kernel_of", kernel_of)
    monkeypatch.setattr(launch_plan, "tensor_maps", lambda p, cfg: [TensorMap(bytes(128)) for _ in range(3)])
    monkeypatch.setattr(launch_plan, "aux_tensor_map", lambda cfg, op, m: TensorMap(bytes(128)))
    cache = PlanCache(launch_plan._build)
    monkeypatch.setattr(launch_plan, "_get", cache.get)
    return cache, launches, configs


def _fields(block, plan):
    """The fused kernel's scalar parameters in a launch's block, and the address its pre-activation descriptor
    points at (the fake driver's `cuTensorMapReplaceAddress` writes it into the descriptor's first 8 bytes)."""
    names = [n for n in FUSED_PARAMS if n != "aux_desc"]
    got = block_fields(block, plan.kernel.layout, names)
    offsets = dict(zip((p.name for p in plan.kernel.layout.params), plan.kernel.layout.offsets, strict=True))
    got["aux_address"] = struct.unpack_from("<Q", block, offsets["aux_desc"])[0]
    return got


def test_bias_gelu_plan_and_its_hits(fakes):
    cache, launches, configs = fakes
    a, b, c = FakeCuda((256, 128)), FakeCuda((128, 64), address=1 << 24), FakeCuda((256, 64), address=1 << 26)
    bias = FakeCuda((64,), address=1 << 28)
    assert launch_plan.gemm(a, b, c, bias=bias, activation="gelu", stream=1) is c
    (plan,) = cache.table().values()
    cfg = configs[-1]
    assert (cfg.activation, cfg.bias, cfg.has_input, cfg.has_alpha) == ("gelu", "n", False, False)
    assert cfg.name.endswith("_gelu_bn")
    got = _fields(launches[-1], plan)
    assert (got["bias_ptr"], got["input_ptr"], got["alpha"]) == (1 << 28, 0, 1.0)
    # a hit with a rotated bias: same plan, the new address in the block
    launch_plan.gemm(a, b, c, bias=bias.moved(4096), activation="gelu", stream=1)
    assert list(cache.table().values()) == [plan] and _fields(launches[-1], plan)["bias_ptr"] == (1 << 28) + 4096
    # alpha != 1 is another kernel (has_alpha); its value is rewritten per call
    launch_plan.gemm(a, b, c, bias=bias, activation="gelu", alpha=0.5)
    launch_plan.gemm(a, b, c, bias=bias, activation="gelu", alpha=2.0)
    assert len(cache.table()) == 2 and configs[-1].has_alpha
    assert _fields(launches[-1], list(cache.table().values())[-1])["alpha"] == 2.0
    # the plain call keeps its own key and kernel
    launch_plan.gemm(a, b, c)
    assert len(cache.table()) == 3 and not configs[-1].fused


def test_input_strides_beta_and_row_bias(fakes):
    cache, launches, configs = fakes
    a, b, c = FakeCuda((2, 256, 128)), FakeCuda((2, 128, 64), address=1 << 24), \
        FakeCuda((2, 256, 64), address=1 << 26)
    inp = FakeCuda((256, 1), address=1 << 28)  # broadcast along N and the batch
    bias = FakeCuda((1, 256, 1), address=1 << 29)
    launch_plan.gemm(a, b, c, input=inp, beta=0.25, bias=bias, activation="relu")
    (plan,) = cache.table().values()
    assert (configs[-1].has_input, configs[-1].bias) == (True, "m")
    got = _fields(launches[-1], plan)
    assert (got["input_ptr"], got["input_stride_m"], got["input_stride_n"], got["input_stride_l"]) == \
        (1 << 28, 1, 0, 0)
    assert (got["bias_ptr"], got["beta"]) == (1 << 29, 0.25)
    launch_plan.gemm(a, b, c, input=inp.moved(512), beta=3.0, bias=bias, activation="relu")
    got = _fields(launches[-1], plan)
    assert (got["input_ptr"], got["beta"], len(cache.table())) == ((1 << 28) + 512, 3.0, 1)
    # beta 0 never reads input: another kernel without it
    launch_plan.gemm(a, b, c, input=inp, beta=0.0, bias=bias, activation="relu")
    assert not configs[-1].has_input and len(cache.table()) == 2
    with pytest.raises(ValueError, match="out overlaps input"):
        launch_plan.gemm(a, b, c, input=FakeCuda((256, 64), address=(1 << 26) + 64), bias=bias, activation="relu")


def test_swiglu_plan_writes_half_the_columns(fakes):
    cache, launches, configs = fakes
    a, w = FakeCuda((300, 128)), FakeCuda((256, 128), address=1 << 24)
    b = FakeCuda((128, 256), stride=(1, 128), address=1 << 24)  # w.t(): K-major B
    out = launch_plan.gemm(a, b, FakeCuda((300, 128), address=1 << 26), activation="swiglu")
    cfg = configs[-1]
    assert cfg.activation == "swiglu" and cfg.c_tile_n == cfg.tile_n // 2 and cfg.c_tile_n % cfg.epi_n == 0
    assert out.shape == (300, 128) and w.shape[0] == 256
    with pytest.raises(ValueError, match=r"out must be \(300, 128\) per batch, got \(300, 256\).*SwiGLU"):
        launch_plan.gemm(a, b, FakeCuda((300, 256), address=1 << 26), activation="swiglu")
    # a float32 C stages 32-column chunks (128-byte rows): SwiGLU's tile N must be a multiple of 64 there
    with pytest.raises(ValueError, match="multiple of 64"):
        launch_plan.gemm(a, b, FakeCuda((300, 128), dtype=torch.float32, address=1 << 26), activation="swiglu",
                         tile_shape_mnk=(128, 96, 64))


def test_bad_epilogue_arguments_fail_before_any_kernel(fakes):
    cache, launches, configs = fakes
    a, b, c = FakeCuda((256, 128)), FakeCuda((128, 64), address=1 << 24), FakeCuda((256, 64), address=1 << 26)
    cases = [
        (dict(activation="tanh"), ValueError, "activation must be None or one of"),
        (dict(bias=FakeCuda((63,), address=1 << 28)), ValueError, "bias must be a vector"),
        (dict(bias=FakeCuda((64,), dtype=torch.float32, address=1 << 28)), ValueError, "bias.dtype"),
        (dict(alpha="2"), TypeError, "alpha must be a real number"),
        (dict(beta=1.0), ValueError, "beta scales input"),
        (dict(input=FakeCuda((3, 64), address=1 << 28)), ValueError, "input must broadcast"),
    ]
    for kw, exc, match in cases:
        with pytest.raises(exc, match=match):
            launch_plan.gemm(a, b, c, **kw)
    assert configs == [] and launches == [] and cache.table() == {}


def test_a_misaligned_bias_is_staged_per_call(fakes, monkeypatch):
    cache, launches, configs = fakes
    copies = []
    monkeypatch.setattr(launch_plan, "_bias_vector", lambda bias, length, storage: copies.append(
        (length, storage)) or FakeCuda((storage,), address=1 << 30))
    a, b, c = FakeCuda((256, 128)), FakeCuda((128, 64), address=1 << 24), FakeCuda((256, 64), address=1 << 26)
    launch_plan.gemm(a, b, c, bias=FakeCuda((64,), address=1 << 28), activation="relu")
    assert copies == []
    launch_plan.gemm(a, b, c, bias=FakeCuda((64,), address=(1 << 28) + 2), activation="relu")  # off 4 bytes
    (plan,) = cache.table().values()
    assert copies == [(64, 64)] and _fields(launches[-1], plan)["bias_ptr"] == 1 << 30


def test_which_bias_is_staged():
    from cute_examples.dense_gemm.epilogue_args import check_epilogue
    from cute_examples.dense_gemm.launch_plan import bias_length_to_stage

    a, b = FakeCuda((256, 128)), FakeCuda((128, 64))

    def staged(bias):
        e = check_epilogue(a, b, None, "float16", bias=bias)
        return bias_length_to_stage(e, 256, 64)

    assert staged(FakeCuda((64,))) is None and staged(FakeCuda((1, 64))) is None
    assert staged(FakeCuda((256, 1))) is None
    assert staged(FakeCuda((64,), stride=(2,))) == (64, 64)  # every other element of a longer vector
    assert staged(FakeCuda((1,))) == (64, 64)  # one value over N
    assert staged(FakeCuda((256, 1), stride=(3, 1))) == (256, 256)
    b63 = FakeCuda((128, 63))
    e = check_epilogue(a, b63, None, "float16", bias=FakeCuda((63,)))
    assert bias_length_to_stage(e, 256, 63) == (63, 64)  # odd N: the last column's pair stays inside


def test_pre_activation_out_plan_and_its_hits(fakes):
    cache, launches, configs = fakes
    a, b = FakeCuda((2, 256, 128)), FakeCuda((2, 128, 64), address=1 << 24)
    c, bias = FakeCuda((2, 256, 64), address=1 << 26), FakeCuda((64,), address=1 << 28)
    aux = FakeCuda((2, 256, 64), stride=(300 * 64, 64, 1), address=1 << 29)  # row-major, batches 300 rows apart
    assert launch_plan.gemm(a, b, c, bias=bias, activation="gelu", pre_activation_out=aux) is c
    (plan,) = cache.table().values()
    assert configs[-1].has_aux and configs[-1].name.endswith("_gelu_bn_aux") and plan.aux_copy is None
    assert _fields(launches[-1], plan)["aux_address"] == 1 << 29
    # a hit re-points its descriptor; without it the call is another kernel
    launch_plan.gemm(a, b, c, bias=bias, activation="gelu", pre_activation_out=aux.moved(1 << 20))
    assert len(cache.table()) == 1 and _fields(launches[-1], plan)["aux_address"] == (1 << 29) + (1 << 20)
    launch_plan.gemm(a, b, c, bias=bias, activation="gelu")
    assert len(cache.table()) == 2 and not configs[-1].has_aux
    # the identity's pre-activation is the output's value: a fused plan of its own
    launch_plan.gemm(a, b, c, pre_activation_out=aux)
    assert configs[-1].has_aux and configs[-1].activation == "identity"
    # a row of any pitch when M is 1 (its stride is never followed)
    a1, c1 = FakeCuda((1, 128)), FakeCuda((1, 64), address=1 << 26)
    launch_plan.gemm(a1, FakeCuda((128, 64), address=1 << 24), c1, activation="relu",
                     pre_activation_out=FakeCuda((1, 64), stride=(3, 1), address=1 << 29))
    assert list(cache.table().values())[-1].aux_copy is None


def test_pre_activation_out_may_not_overlap_anything(fakes):
    cache, launches, configs = fakes
    a, b = FakeCuda((256, 128)), FakeCuda((128, 64), address=1 << 24)
    c, bias = FakeCuda((256, 64), address=1 << 26), FakeCuda((64,), address=1 << 28)
    inp = FakeCuda((256, 64), address=1 << 27)
    for where, what in (((1 << 26) + 128, "out"), ((1 << 20) + 256, "a"), ((1 << 24) + 64, "b"),
                        ((1 << 28) - 64, "bias"), ((1 << 27) + 4096, "input")):
        with pytest.raises(ValueError, match=f"pre_activation_out overlaps {what};"):
            launch_plan.gemm(a, b, c, bias=bias, input=inp, activation="relu",
                             pre_activation_out=FakeCuda((256, 64), address=where))
    n = len(launches)
    launch_plan.gemm(a, b, c, bias=bias, input=inp, activation="relu",
                     pre_activation_out=FakeCuda((256, 64), address=1 << 29))
    assert len(launches) == n + 1


def test_bad_pre_activation_out_fails_before_any_kernel(fakes):
    cache, launches, configs = fakes
    a, b, c = FakeCuda((256, 128)), FakeCuda((128, 64), address=1 << 24), FakeCuda((256, 64), address=1 << 26)
    w = FakeCuda((128, 64), stride=(1, 128), address=1 << 24)
    cases = [
        (dict(pre_activation_out=FakeCuda((256, 63), address=1 << 29)), "pre_activation_out must have out's shape"),
        (dict(pre_activation_out=FakeCuda((64,), address=1 << 29)), "pre_activation_out must have out's shape"),
        (dict(pre_activation_out=FakeCuda((256, 64), dtype=torch.float32, address=1 << 29)),
         r"pre_activation_out.dtype must be float16 \(C's dtype"),
        (dict(pre_activation_out=FakeCuda((256, 64), stride=(0, 1), address=1 << 29)),
         "pre_activation_out's elements overlap"),
        (dict(pre_activation_out=FakeCuda((256, 64), stride=(32, 1), address=1 << 29)),
         "pre_activation_out's elements overlap"),
        (dict(pre_activation_out=FakeCuda((256, 64), address=1 << 29, device=1)), "pre_activation_out must be on"),
        (dict(pre_activation_out=[0.0]), "pre_activation_out must be a torch.Tensor"),
    ]
    for kw, match in cases:
        with pytest.raises((ValueError, TypeError), match=match):
            launch_plan.gemm(a, b, c, activation="gelu", **kw)
    with pytest.raises(ValueError, match="pre_activation_out is not supported with activation='swiglu'"):
        launch_plan.gemm(a, w, FakeCuda((256, 32), address=1 << 26), activation="swiglu",
                         pre_activation_out=FakeCuda((256, 32), address=1 << 29))
    a8 = FakeCuda((256, 128), dtype=torch.float8_e4m3fn)
    b8 = FakeCuda((128, 64), stride=(1, 128), dtype=torch.float8_e4m3fn, address=1 << 24)
    with pytest.raises(ValueError, match="pre_activation_out needs a 16- or 32-bit C"):
        launch_plan.gemm(a8, b8, FakeCuda((256, 64), dtype=torch.float8_e4m3fn, address=1 << 26),
                         pre_activation_out=FakeCuda((256, 64), dtype=torch.float8_e4m3fn, address=1 << 29))
    assert configs == [] and launches == [] and cache.table() == {}


def test_swiglu_takes_the_fastest_tile_it_can_halve():
    """SwiGLU's C columns per tile (tile N / 2) must be whole epilogue chunks: a 16-bit N-major C's 16-column ones
    take every tile (512 x 6144 x 4096 keeps 128x192, 512 x 10240 x 8192 128x160, 512 x 28672 x 4096 128x224); an
    M-major C's 64-column ones need tile N 128 or 256, so its pick is re-chosen among the ranked tiles whose half
    is."""
    from cute_examples.dense_gemm.choice import GemmShape, rank_configs
    from cute_examples.dense_gemm.host import choose_config, choose_epilogue_config

    for (m, n, k), tile_n in (((512, 6144, 4096), 192), ((512, 10240, 8192), 160), ((512, 28672, 4096), 224)):
        shape = GemmShape(m, n, k, ab_dtype="bfloat16", c_dtype="bfloat16")
        assert choose_config(shape).tile_n == tile_n
        cfg = choose_epilogue_config(shape, {"activation": "swiglu"})
        assert cfg.tile_n == tile_n and cfg.c_tile_n % cfg.epi_n == 0
    shape = GemmShape(512, 10240, 8192, ab_dtype="bfloat16", c_dtype="bfloat16", c_major="m")
    assert choose_config(shape).tile_n % 128
    cfg = choose_epilogue_config(shape, {"activation": "swiglu"})
    want = next(t for t, _ in rank_configs(shape) if t[1] % 128 == 0)
    assert (cfg.tile_m, cfg.tile_n) == want and cfg.c_tile_n % cfg.epi_n == 0
    cfg = choose_epilogue_config(shape, {"activation": "swiglu"}, cluster_shape_mn=(2, 1))
    assert cfg.tile_n % 128 == 0 and (cfg.cluster_m, cfg.cluster_n) == (2, 1)


def test_pre_activation_out_the_kernel_cannot_store_is_staged():
    from cute_examples.dense_gemm.launch_plan import aux_layout

    def copy(shape, stride, c_major="n"):
        return aux_layout(FakeCuda(shape, stride=stride), c_major)[0]

    assert copy((256, 64), (64, 1)) is None  # row-major: C's TMA stores take it
    assert copy((256, 64), (72, 1)) is None  # rows padded to a 16-byte pitch
    assert copy((256, 64), (1, 256), "m") is None  # M-major under an M-major C
    assert copy((2, 256, 64), (300 * 64, 64, 1)) is None
    assert copy((256, 64), (65, 1)) == ((256, 64), "n")  # a pitch off 16 bytes: a padded row-major copy
    assert copy((256, 64), (1, 256)) == ((256, 64), "n")  # M-major under an N-major C
    assert copy((256, 64), (128, 2)) == ((256, 64), "n")  # every other column
    assert copy((256, 63), (64, 1)) == ((256, 64), "n")  # rows that end inside a 16-byte chunk
    assert copy((2, 256, 64), (256 * 64 + 1, 64, 1)) == ((2, 256, 64), "n")  # a batch pitch off 16 bytes
    assert copy((256, 64), (64, 1), "m") == ((64, 256), "m")  # N-major under an M-major C: a padded M-major copy
    # every staged copy's padded layout is one the kernel's TMA stores take (aux_layout returns its operand)
    from cute_examples.dense_gemm.launch_plan import Layout

    copies = set()
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        for lead in ((), (3,)):
            for rows, cols in ((1, 1), (1, 7), (7, 1), (127, 201), (256, 63)):
                batch = (rows * (cols + 1),) if lead else ()
                for c_major, stride in (("n", (*batch, cols + 1, 1)), ("m", (*batch, cols + 1, 1))):
                    got, op = aux_layout(Layout((*lead, rows, cols), stride, dtype, 16), c_major)
                    assert op is not None, (dtype, lead, rows, cols, c_major)
                    if got is not None:
                        copies.add((dtype, c_major))
    assert len(copies) == 6  # the staged branch ran for every dtype and major
    _, op = aux_layout(FakeCuda((256, 63), stride=(64, 1)), "n")
    assert (op.rows, op.cols, op.stride_rows, op.stride_cols) == (256, 63, 64, 1)
    _, op = aux_layout(FakeCuda((100, 60), stride=(60, 1)), "m")  # the copy's columns hold 104 rows
    assert (op.rows, op.cols, op.stride_rows, op.stride_cols) == (100, 60, 1, 104)

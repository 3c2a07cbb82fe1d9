"""CPU CI for the fused epilogue: every epilogue kind (`epilogue_cases.EPILOGUE_KINDS`) compiles through ptxas on
one of the representative tiles with no spills and no local memory, no call, the math instructions its
activation needs, exactly the predicated `ld.global` loads its bias and input need per thread and, with the
pre-activation output, the predicated `st.global` stores of each value pair (one 2-element store and two 1-element
stores, of which a run takes either the first or the others).
`python3 -m nox -s configs` compiles every kind on every representative tile (`epilogue_cases.kind_configs`)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("mlir")

from cute_examples.dense_gemm import configs  # noqa: E402
from cute_examples.dense_gemm.epilogue_cases import EPILOGUE_KINDS, kind_configs  # noqa: E402
from cute_examples.dense_gemm.kernel import (  # noqa: E402
    FUSED_PARAMS,
    INPUT_PREFETCH_CALLS,
    PARAMS,
    compile_gemm,
    dense_gemm,
    dense_gemm_fused,
    gemm_spec,
)
from cute_examples.dense_gemm.spec import DTYPE_BYTES, GemmConfig  # noqa: E402

# kind i on representative tile i % 3 (kind_configs() lists the kinds per tile, tile-major)
_ALL = kind_configs()
CASES = [_ALL[(i % 3) * len(EPILOGUE_KINDS) + i] for i in range(len(EPILOGUE_KINDS))] + [
    # SwiGLU's 96 C columns of tile N 192: three 32-column chunks (the pick at 512 tokens of Llama-3 8B's gate/up)
    GemmConfig(a_dtype="bfloat16", b_dtype="bfloat16", c_dtype="bfloat16", tile_n=192, activation="swiglu", bias="n"),
]


def _expected_loads(cfg: GemmConfig) -> dict[int, int]:
    """Predicated ld.global per consumer thread by width: one 2-element bias load per accumulator 8-column group
    or 2 bias rows, and one input element per output value (64 x c_tile_n values over 128 threads)."""
    bits = 8 * cfg.c_bytes
    out = {bits: 0, 2 * bits: 0}
    if cfg.bias == "n":
        out[2 * bits] += cfg.tile_n // 8
    out[bits] += (2 if cfg.bias == "m" else 0) + (64 * cfg.c_tile_n // 128 if cfg.has_input else 0)
    return out


def _expected_stores(cfg: GemmConfig) -> dict[int, int]:
    """Predicated st.global per consumer thread by width: none (C and the pre-activation output leave through TMA
    stores)."""
    bits = 8 * cfg.c_bytes
    return {bits: 0, 2 * bits: 0}


@pytest.mark.parametrize("cfg", CASES, ids=lambda c: c.name)
def test_epilogue_kind_compiles(cfg):
    res = configs.compile_config(cfg)
    assert res.error is None, res.error
    assert res.spill_bytes == 0
    art = compile_gemm(cfg)
    ptx = art.ptx
    assert ".entry dense_gemm_fused_" in ptx and "__nv_" not in ptx and ".local" not in ptx
    assert "ld.global.nc" not in ptx
    for bits, count in _expected_loads(cfg).items():
        assert len(re.findall(rf"@%p\d+ ld\.global\.b{bits}", ptx)) == count, bits
    for bits, count in _expected_stores(cfg).items():
        assert len(re.findall(rf"@%p\d+ st\.global\.b{bits}", ptx)) == count, bits
    assert len(re.findall(r"st\.global", ptx)) == sum(_expected_stores(cfg).values())
    act = cfg.activation
    # silu (and swiglu's) through tanh: one tanh.approx per value; GELU's erfc: one ex2.approx per value of a
    # polynomial, then max(x, 0) - |x|/2 erfc (max.NaN); no libdevice call, no rcp
    assert ("tanh.approx.f32" in ptx) == (act in ("gelu_tanh", "silu", "swiglu"))
    assert "rcp.approx" not in ptx
    assert ("ex2.approx" in ptx) == (act == "gelu")
    assert ("max.NaN.f32" in ptx) == (act in ("relu", "gelu"))
    assert not re.search(r"^\s+call", ptx, re.M)
    first_chunk = re.search(r"bar\.sync\s+%r\d+, 128;", ptx).start()
    # the data-parallel cooperative kernel issues a unit's first epilogue loads once its last wgmmas are issued,
    # before their final wait, so that they fly beside them (`kernel._start_fused`)
    early = not (cfg.pingpong or cfg.shares_k or cfg.mma_promotion_interval)
    first_use = ptx.index("wgmma.wait_group.sync.aligned \t0") if early else first_chunk
    # with an input (or the pre-activation output) the bias pairs come with the input's loads, INPUT_PREFETCH_CALLS
    # `values` calls ahead; otherwise the tile's bias pairs are all loaded then (loading them chunk by chunk behind
    # each barrier cost 1-3% of fused/plain on an H200)
    step = 2 if cfg.c_bytes == 2 else 1
    if cfg.bias == "n":
        pair = rf"@%p\d+ ld\.global\.b{16 * DTYPE_BYTES[cfg.epilogue_dtype]}"
        ahead = INPUT_PREFETCH_CALLS * step if cfg.has_input or cfg.has_aux else cfg.tile_n // 8
        assert len(re.findall(pair, ptx[:first_use])) == ahead
    if cfg.has_input:
        # the input loads of the first INPUT_PREFETCH_CALLS `values` calls go ahead of the first chunk's barrier
        elem = rf"@%p\d+ ld\.global\.b{8 * DTYPE_BYTES[cfg.epilogue_dtype]}\s"
        row_bias = 2 if cfg.bias == "m" else 0  # the thread's two rows' bias, of the same width
        assert len(re.findall(elem, ptx[:first_use])) == 4 * step * INPUT_PREFETCH_CALLS + row_bias


def test_plain_and_fused_kernels_refuse_each_others_configs():
    fused = GemmConfig(activation="gelu", bias="n")
    assert gemm_spec(fused)["kernel"] != gemm_spec(GemmConfig())["kernel"]
    with pytest.raises(ValueError, match="use dense_gemm_fused"):
        dense_gemm.artifact(*(None,) * 9, config=fused, target="sm_90a")
    with pytest.raises(ValueError, match="use dense_gemm"):
        dense_gemm_fused.artifact(*(None,) * len(PARAMS + FUSED_PARAMS), config=GemmConfig(), target="sm_90a")


def test_config_rules_and_names():
    assert not GemmConfig().fused and GemmConfig().epilogue_label == ""
    cfg = GemmConfig(activation="relu", bias="m", has_input=True, has_alpha=True)
    assert cfg.fused and cfg.name.endswith("_relu_bm_in_al")
    assert GemmConfig(activation="swiglu", tile_n=256).c_tile_n == 128
    with pytest.raises(ValueError, match="activation must be one of"):
        GemmConfig(activation="tanh")
    with pytest.raises(ValueError, match="bias must be one of"):
        GemmConfig(bias="k")
    with pytest.raises(ValueError, match="has_input must be a bool"):
        GemmConfig(has_input=1)
    with pytest.raises(ValueError, match="swiglu' takes no input"):
        GemmConfig(activation="swiglu", has_input=True)
    with pytest.raises(ValueError, match=r"tile_n / 2 = 48 columns .* m-major C \(tile_n a multiple of 128\)"):
        GemmConfig(activation="swiglu", tile_n=96, c_major="m")
    assert GemmConfig(activation="swiglu", tile_n=192).epi_n == 32  # three 32-column chunks of C
    assert GemmConfig(activation="swiglu", tile_n=224).epi_n == 16  # seven 16-column chunks (32-byte rows)
    assert GemmConfig(activation="swiglu", tile_n=64, c_dtype="float32").c_tile_n == 32
    assert GemmConfig(has_input=True, tile_n=256).has_input  # cooperative: an input at every tile N
    with pytest.raises(ValueError, match=r"has_input with schedule 'pingpong' needs .* <= 64 accumulators"):
        GemmConfig(has_input=True, tile_m=64, tile_n=256, schedule="pingpong")


def test_pre_activation_output_config():
    cfg = GemmConfig(activation="gelu", bias="n", has_aux=True)
    assert cfg.fused and cfg.name.endswith("_gelu_bn_aux")
    assert GemmConfig(has_aux=True).fused  # the identity's pre-activation is the output itself: still fused
    assert gemm_spec(cfg) != gemm_spec(GemmConfig(activation="gelu", bias="n"))
    assert gemm_spec(cfg)["kernel"] == gemm_spec(GemmConfig(activation="gelu"))["kernel"]  # dense_gemm_fused
    with pytest.raises(ValueError, match="has_aux must be a bool"):
        GemmConfig(has_aux=1)
    with pytest.raises(ValueError, match="has_aux .* not supported with activation 'swiglu'"):
        GemmConfig(activation="swiglu", has_aux=True)
    with pytest.raises(ValueError, match="has_aux .* needs a 16- or 32-bit C"):
        GemmConfig(a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn", c_dtype="float8_e4m3fn", has_aux=True)


def test_every_kind_is_in_the_sweep():
    names = {c.name for c in configs.sweep_configs()}
    assert {c.name for c in kind_configs()} <= names
    assert len(kind_configs()) == 3 * len(EPILOGUE_KINDS)


def test_cli_epilogue_flag_maps_to_the_config(capsys):
    from cute_examples.dense_gemm.__main__ import config_of, epilogue_of, parse_args

    cfg = config_of(parse_args(["--epilogue", "gelu,bias_n", "--tile_shape_mnk", "128,256,64"]))
    assert (cfg.activation, cfg.bias, cfg.has_input, cfg.has_alpha) == ("gelu", "n", False, False)
    e = epilogue_of("bias_m, input, alpha=0.5, beta=2")
    assert e == {"activation": None, "bias": "m", "input": True, "alpha": 0.5, "beta": 2.0}
    cfg = config_of(parse_args(["--epilogue", "bias_m,input,alpha=0.5,beta=0"]))
    assert cfg.bias == "m" and not cfg.has_input and cfg.has_alpha  # beta 0 never reads input
    for bad, msg in (("gelu,relu", "is not one of"), ("beta=2", "needs input"), ("alpha=x", "must be a number"),
                     ("swiglu", "tile_n a multiple of 128")):
        with pytest.raises(SystemExit) as exc:
            parse_args(["--epilogue", bad, "--tile_shape_mnk", "128,96,64", "--c_major", "m"])
        assert exc.value.code == 2 and msg in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--epilogue", "gelu", "--tune"])
    assert "--tune times plain GEMM configs" in capsys.readouterr().err


def test_cli_pre_activation_flag(capsys):
    from cute_examples.dense_gemm.__main__ import config_of, parse_args

    cfg = config_of(parse_args(["--epilogue", "relu,bias_m,input", "--pre_activation"]))
    assert (cfg.activation, cfg.bias, cfg.has_input, cfg.has_aux) == ("relu", "m", True, True)
    assert not config_of(parse_args(["--epilogue", "relu"])).has_aux
    for argv, msg in ((["--pre_activation"], "it needs --epilogue"),
                      (["--epilogue", "swiglu", "--pre_activation"], "not supported with activation 'swiglu'")):
        with pytest.raises(SystemExit) as exc:
            parse_args(argv)
        assert exc.value.code == 2 and msg in capsys.readouterr().err

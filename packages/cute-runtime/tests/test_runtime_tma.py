from __future__ import annotations

from dataclasses import dataclass

import pytest
from cute_runtime import NoDeviceError, TensorMap, encode_tiled, gpu_available
from cute_runtime.tma import check_tiled, plan_arguments

no_gpu_only = pytest.mark.skipif(gpu_available(), reason="checks the no-driver path; a GPU is present")
ADDR = 0x7F0000000000

GOOD = dict(
    data_type="f16",
    rank=2,
    global_address=ADDR,
    global_dims=[256, 128],
    global_strides_bytes=[512],
    box_dims=[64, 32],
    element_strides=[1, 1],
    interleave=0,
    swizzle="128B",
    l2_promotion="L2_128B",
    oob_fill="none",
)


def test_check_normalises() -> None:
    out = check_tiled(**GOOD)
    assert out == (6, 2, ADDR, [256, 128], [512], [64, 32], [1, 1], 0, 3, 2, 0)
    enum_names = dict(GOOD, data_type="CU_TENSOR_MAP_DATA_TYPE_FLOAT16", swizzle="CU_TENSOR_MAP_SWIZZLE_128B")
    assert check_tiled(**enum_names) == out
    assert check_tiled(**dict(GOOD, data_type=6, swizzle=3, l2_promotion=2))[0] == 6


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(rank=0), "rank must be an int in"),
        (dict(rank=6), "rank must be an int in"),
        (dict(global_address=ADDR + 8), "16-byte aligned"),
        (dict(global_address=0), "non-null"),
        (dict(global_dims=[256]), "global_dims must have 2 entries"),
        (dict(global_dims=[0, 128]), r"global_dims\[0\] = 0"),
        (dict(global_dims=[(1 << 32) + 1, 1]), r"global_dims\[0\]"),
        (dict(global_strides_bytes=[520]), "multiple of 16"),
        (dict(global_strides_bytes=[1 << 40]), r"global_strides_bytes\[0\]"),
        (dict(box_dims=[64, 257]), r"box_dims\[1\] = 257"),
        (dict(box_dims=[4, 32]), "multiple of 16"),
        (dict(box_dims=[128, 32]), "exceeds the 128-byte swizzle span"),
        (dict(swizzle="32B"), "exceeds the 32-byte swizzle span"),
        (dict(element_strides=[1, 9]), r"element_strides\[1\] = 9"),
        (dict(data_type="f8"), "data_type 'f8'"),
        (dict(data_type=13), "data_type 13 is not a valid value"),
        (dict(swizzle=7), "swizzle 7"),
        (dict(oob_fill="nan", data_type="u16", box_dims=[64, 32], swizzle="128B"), "floating-point"),
        (
            dict(
                interleave="32B",
                rank=3,
                global_dims=[1, 2, 3],
                global_strides_bytes=[32, 64],
                box_dims=[16, 1, 1],
                element_strides=[1, 1, 1],
            ),
            "interleave 32B requires swizzle 32B",
        ),
        (dict(interleave="16B"), "rank must be >= 3"),
    ],
)
def test_check_rejects(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_tiled(**dict(GOOD, **change))


def test_check_types() -> None:
    with pytest.raises(TypeError, match="global_address"):
        check_tiled(**dict(GOOD, global_address=float(ADDR)))
    with pytest.raises(TypeError, match=r"box_dims\[0\] must be an int"):
        check_tiled(**dict(GOOD, box_dims=[64.0, 32]))
    with pytest.raises(TypeError, match="swizzle must be"):
        check_tiled(**dict(GOOD, swizzle=None))


def test_tensor_map_value() -> None:
    raw = bytes(range(128))
    tm = TensorMap(raw)
    assert bytes(tm) == raw and tm == TensorMap(bytearray(raw)) and hash(tm) == hash(TensorMap(raw))
    with pytest.raises(ValueError, match="128 bytes"):
        TensorMap(b"\0" * 64)
    with pytest.raises(TypeError):
        TensorMap("x" * 128)  # type: ignore[arg-type]


@dataclass(frozen=True)
class FakePlan:
    data_type: str = "bf16"
    rank: int = 2
    global_dims: tuple[int, ...] = (64, 64)
    global_strides_bytes: tuple[int, ...] = (128,)
    box_dims: tuple[int, ...] = (64, 8)
    element_strides: tuple[int, ...] = (1, 1)
    interleave: int = 0
    swizzle: str = "128B"
    l2_promotion: int = 0
    oob_fill: int = 0


def test_plan_arguments() -> None:
    args = plan_arguments(FakePlan(), ADDR)
    assert args == ("bf16", 2, ADDR, (64, 64), (128,), (64, 8), (1, 1), 0, "128B", 0, 0)
    check_tiled(*args)
    with pytest.raises(TypeError, match="is not a TMA plan"):
        plan_arguments(object(), ADDR)


@no_gpu_only
def test_encode_without_driver() -> None:
    with pytest.raises(NoDeviceError, match="no NVIDIA driver/GPU found"):
        encode_tiled(**GOOD)
    with pytest.raises(NoDeviceError):
        TensorMap.from_plan(FakePlan(), ADDR)


def test_encode_checks_before_driver() -> None:
    with pytest.raises(ValueError, match="multiple of 16"):
        encode_tiled(**dict(GOOD, global_strides_bytes=[8]))


def test_nvarch_plan_arguments() -> None:
    tma = pytest.importorskip("cute_nvarch.tma")
    from cute_layout import Layout

    plan = tma.make_tma_plan((64, 64), (64, 1), "f32", Layout((8, 32), (32, 1)))
    args = plan_arguments(plan, ADDR)
    assert check_tiled(*args) == (7, 2, ADDR, [64, 64], [256], [32, 8], [1, 1], 0, 0, 2, 0)
    with pytest.raises(ValueError):
        plan_arguments(plan, ADDR + 4)  # the plan itself checks the alignment

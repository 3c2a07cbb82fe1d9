from __future__ import annotations

import ctypes
import math
import struct

import numpy as np
import pytest
from cute_nvarch.params import PARAM_KINDS
from cute_runtime.params import Param, ParamBuffer, ParamLayout, convert_arg, make_packer, parse_params
from cute_runtime.pointers import device_pointer
from cute_runtime.tma import TensorMap
from hypothesis import given, settings
from hypothesis import strategies as st

ALL_KINDS = [
    Param("p", "ptr"),
    Param("i", "i32"),
    Param("u", "u32"),
    Param("q", "i64"),
    Param("Q", "u64"),
    Param("f", "f32"),
    Param("d", "f64"),
    Param("t", "tma"),
]


class FakeCudaArray:
    """An object exposing __cuda_array_interface__ only."""

    def __init__(self, address: int) -> None:
        self.__cuda_array_interface__ = {
            "data": (address, False),
            "shape": (4,),
            "typestr": "<f4",
            "version": 3,
        }


class FakeDLPackCuda:
    """A DLPack producer claiming CUDA device 0 whose capsule comes from a numpy array."""

    def __init__(self, array: np.ndarray, device_id: int = 0) -> None:
        self.array = array
        self.device_id = device_id

    def __dlpack__(self, stream: object = None) -> object:
        return self.array.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self.device_id)


def test_layout_offsets_every_kind() -> None:
    layout = ParamLayout(ALL_KINDS)
    # ptr@0, i32@8, u32@12, i64@16, u64@24, f32@32, f64@40, tma@64 (64-aligned), 192 bytes in all
    assert layout.offsets == (0, 8, 12, 16, 24, 32, 40, 64)
    assert layout.size == 192


def test_pack_bytes_every_kind() -> None:
    layout = ParamLayout(ALL_KINDS)
    raw = bytes(range(128))
    blob = layout.pack(
        [0x1122334455667788, -2, 0xFFFFFFFF, -(1 << 63), (1 << 64) - 1, 1.5, -0.25, TensorMap(raw)]
    )
    assert len(blob) == 192
    assert blob[0:8] == (0x1122334455667788).to_bytes(8, "little")
    assert blob[8:12] == (-2).to_bytes(4, "little", signed=True)
    assert blob[12:16] == b"\xff\xff\xff\xff"
    assert blob[16:24] == (1 << 63).to_bytes(8, "little")
    assert blob[24:32] == b"\xff" * 8
    assert blob[32:36] == struct.pack("<f", 1.5)
    assert blob[36:40] == b"\0" * 4
    assert blob[40:48] == struct.pack("<d", -0.25)
    assert blob[48:64] == b"\0" * 16
    assert blob[64:192] == raw


def test_layout_alignment_padding() -> None:
    layout = ParamLayout(
        [Param("a", "i32"), Param("b", "ptr"), Param("c", "f32"), Param("t", "tma"), Param("d", "i32")]
    )
    assert layout.offsets == (0, 8, 16, 64, 192)
    assert layout.size == 196


def test_param_buffer_pointer_array() -> None:
    layout = ParamLayout(ALL_KINDS)
    buf = ParamBuffer(layout)
    assert buf.address % 64 == 0
    n = len(ALL_KINDS)
    pointers = (ctypes.c_uint64 * n).from_address(buf.kernel_params)
    assert [pointers[i] - buf.address for i in range(n)] == list(layout.offsets)
    values = layout.convert([1, 2, 3, 4, 5, 6.0, 7.0, TensorMap(b"\x07" * 128)])
    buf.write(values)
    assert buf.packed() == layout.pack([1, 2, 3, 4, 5, 6.0, 7.0, TensorMap(b"\x07" * 128)])
    # the pointer for param i reads back what was packed there
    assert ctypes.c_int32.from_address(pointers[1]).value == 2
    assert ctypes.c_double.from_address(pointers[6]).value == 7.0


def test_empty_signature() -> None:
    layout = ParamLayout([])
    buf = ParamBuffer(layout)
    assert layout.size == 0 and buf.kernel_params == 0
    make_packer(layout, buf, None)()


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("i32", 1 << 31),
        ("i32", -(1 << 31) - 1),
        ("u32", -1),
        ("u32", 1 << 32),
        ("i64", 1 << 63),
        ("u64", -1),
        ("u64", 1 << 64),
        ("f32", 1e39),
        ("ptr", -1),
        ("ptr", 1 << 64),
    ],
)
def test_range_checks(kind: str, value: object) -> None:
    with pytest.raises(ValueError, match=r"argument 'x' \(" + kind):
        convert_arg(Param("x", kind), value, kernel="k")


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("i32", 1.5),
        ("u64", "3"),
        ("f32", "1.0"),
        ("f64", None),
        ("ptr", 1.0),
        ("ptr", True),
        ("ptr", "0x10"),
        ("ptr", object()),
        ("tma", b"\0" * 128),
        ("tma", 3),
        ("i64", None),
    ],
)
def test_wrong_types_name_the_param(kind: str, value: object) -> None:
    with pytest.raises(TypeError, match=r"'x' \(" + kind):
        convert_arg(Param("x", kind), value, kernel="k")


def test_scalar_conversions() -> None:
    assert convert_arg(Param("x", "i32"), np.int16(-5)) == -5
    assert convert_arg(Param("x", "f64"), 3) == 3.0
    assert convert_arg(Param("x", "f32"), np.float32(0.5)) == 0.5
    assert math.isinf(convert_arg(Param("x", "f32"), float("inf")))
    assert math.isnan(convert_arg(Param("x", "f32"), float("nan")))


def test_count_mismatch() -> None:
    layout = ParamLayout([Param("a", "ptr"), Param("n", "i32")])
    with pytest.raises(TypeError, match=r"kernel 'k' takes 2 arguments \(a, n\), got 1"):
        layout.convert([0], kernel="k")


def test_ptr_sources() -> None:
    assert device_pointer(0x7F0000001000) == 0x7F0000001000
    assert device_pointer(FakeCudaArray(0xDEAD0000)) == 0xDEAD0000
    arr = np.arange(16, dtype=np.float32)
    assert device_pointer(FakeDLPackCuda(arr)) == arr.ctypes.data
    assert device_pointer(FakeDLPackCuda(arr[4:])) == arr.ctypes.data + 16
    with pytest.raises(ValueError, match="cuda:1, but the kernel runs on cuda:0"):
        device_pointer(FakeDLPackCuda(arr, device_id=1), "a", device=0)
    with pytest.raises(ValueError, match="DLPack device type 1"):
        device_pointer(arr, "a")  # a host array: kDLCPU


def test_torch_cpu_tensor_rejected() -> None:
    torch = pytest.importorskip("torch")
    t = torch.zeros(4)
    with pytest.raises(ValueError, match=r"argument 'a' \(ptr\): tensor is on cpu"):
        convert_arg(Param("a", "ptr"), t, kernel="k")


def test_parse_params_rules() -> None:
    assert parse_params([{"name": "a", "kind": "ptr"}]) == (Param("a", "ptr"),)
    with pytest.raises(ValueError, match="kind 'f16'"):
        parse_params([{"name": "a", "kind": "f16"}])
    with pytest.raises(ValueError, match="repeated"):
        parse_params([{"name": "a", "kind": "ptr"}, {"name": "a", "kind": "i32"}])
    with pytest.raises(ValueError, match="identifier"):
        parse_params([{"name": "1a", "kind": "ptr"}])
    with pytest.raises(ValueError, match="list"):
        parse_params("a:ptr")


def test_packer_matches_slow_path() -> None:
    layout = ParamLayout(ALL_KINDS)
    buf = ParamBuffer(layout)
    pack = make_packer(layout, buf, None, "k")
    args = [0xABC0, -7, 7, -(1 << 40), 1 << 40, 2.5, 1e300, TensorMap(bytes(range(128, 256)))]
    pack(*args)
    assert buf.packed() == layout.pack(args)


def test_packer_rejects_what_the_slow_path_rejects() -> None:
    layout = ParamLayout(ALL_KINDS)
    buf = ParamBuffer(layout)
    pack = make_packer(layout, buf, None, "k")
    good = [0, 0, 0, 0, 0, 0.0, 0.0, TensorMap(b"\0" * 128)]
    for i, bad in [
        (0, 1.5),
        (1, 1 << 31),
        (2, -1),
        (5, 1e39),
        (6, "x"),
        (7, b"\0" * 128),
        (0, FakeDLPackCuda),
    ]:
        args = list(good)
        args[i] = bad
        with pytest.raises((TypeError, ValueError, struct.error, OverflowError)):
            pack(*args)
        with pytest.raises((TypeError, ValueError)):
            layout.convert(args)
    with pytest.raises(TypeError):
        pack(*good[:-1])


@settings(max_examples=60, deadline=None)
@given(
    i32=st.integers(-(1 << 31), (1 << 31) - 1),
    u32=st.integers(0, (1 << 32) - 1),
    i64=st.integers(-(1 << 63), (1 << 63) - 1),
    u64=st.integers(0, (1 << 64) - 1),
    f32=st.floats(width=32, allow_nan=False),
    f64=st.floats(allow_nan=False),
    ptr=st.integers(0, (1 << 64) - 1),
)
def test_pack_roundtrip(i32: int, u32: int, i64: int, u64: int, f32: float, f64: float, ptr: int) -> None:
    layout = ParamLayout(ALL_KINDS[:7])
    buf = ParamBuffer(layout)
    make_packer(layout, buf, None)(ptr, i32, u32, i64, u64, f32, f64)
    blob = buf.packed()
    assert blob == layout.pack([ptr, i32, u32, i64, u64, f32, f64])
    assert struct.unpack("<QiIqQf4xd", blob) == (ptr, i32, u32, i64, u64, f32, f64)


def test_kind_table() -> None:
    assert set(PARAM_KINDS) == {"ptr", "i32", "u32", "i64", "u64", "f32", "f64", "tma"}
    assert (PARAM_KINDS["tma"].size, PARAM_KINDS["tma"].align) == (128, 64)

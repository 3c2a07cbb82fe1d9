"""Numeric types: widths, MLIR/PTX spellings, and the cuTensorMap data-type enum."""

from __future__ import annotations

import subprocess
import sys

import cute_nvarch as nv
import pytest

# Oracle: MLIR builtin type names, PTX ISA type suffixes, cuda.h CUtensorMapDataType (8-bit types travel as
# UINT8, as CUTLASS's to_CUtensorMapDataType does).
TABLE = [
    ("Float16", 16, "f16", "f16", 6),
    ("BFloat16", 16, "bf16", "bf16", 9),
    ("Float32", 32, "f32", "f32", 7),
    ("Float64", 64, "f64", "f64", 8),
    ("TFloat32", 32, "tf32", "tf32", 11),
    ("Float8E4M3FN", 8, "f8E4M3FN", "e4m3", 0),
    ("Float8E5M2", 8, "f8E5M2", "e5m2", 0),
    ("Int8", 8, "i8", "s8", 0),
    ("Uint8", 8, "i8", "u8", 0),
    ("Int16", 16, "i16", "s16", 1),
    ("Uint16", 16, "i16", "u16", 1),
    ("Int32", 32, "i32", "s32", 3),
    ("Uint32", 32, "i32", "u32", 2),
    ("Int64", 64, "i64", "s64", 5),
    ("Uint64", 64, "i64", "u64", 4),
    ("Boolean", 8, "i1", "pred", 0),
]


@pytest.mark.parametrize("name,width,mlir,ptx,tma", TABLE)
def test_numeric_table(name: str, width: int, mlir: str, ptx: str, tma: int) -> None:
    t = getattr(nv, name)
    assert (t.name, t.width, t.mlir_type, t.ptx_type, t.tensor_map_data_type) == (name, width, mlir, ptx, tma)
    assert t.bytes * 8 == width
    assert nv.numeric_type(name) is t
    assert str(t) == name


def test_all_types_listed() -> None:
    assert [t.name for t in nv.NUMERIC_TYPES] == [row[0] for row in TABLE]


def test_memory_type_of_boolean_is_a_byte() -> None:
    assert nv.Boolean.mlir_memory_type == "i8"
    assert nv.TFloat32.mlir_memory_type == "f32"
    assert nv.Float16.mlir_memory_type == "f16"


def test_float_and_sign_flags() -> None:
    assert [t.name for t in nv.NUMERIC_TYPES if t.is_float] == [
        "Float16",
        "BFloat16",
        "Float32",
        "Float64",
        "TFloat32",
        "Float8E4M3FN",
        "Float8E5M2",
    ]
    assert not nv.Uint8.signed and nv.Int8.signed and nv.Int8.is_integer


@pytest.mark.parametrize(
    "alias,name",
    [
        ("float16", "Float16"),
        ("torch.bfloat16", "BFloat16"),
        ("e4m3", "Float8E4M3FN"),
        ("f32", "Float32"),
        ("tf32", "TFloat32"),
        ("u8", "Uint8"),
        ("bool", "Boolean"),
        ("FLOAT8_E5M2", "Float8E5M2"),
    ],
)
def test_numeric_type_aliases(alias: str, name: str) -> None:
    assert nv.numeric_type(alias).name == name


@pytest.mark.parametrize(
    "name,canonical,short",
    [
        # Oracle: torch's dtype names (boolean, tfloat32: CuTe's), CuTeDSL kernel-symbol short names.
        ("Float16", "float16", "f16"),
        ("BFloat16", "bfloat16", "bf16"),
        ("Float8E4M3FN", "float8_e4m3fn", "e4m3"),
        ("TFloat32", "tfloat32", "tf32"),
        ("Int32", "int32", "i32"),
        ("Uint16", "uint16", "u16"),
        ("Boolean", "boolean", "bool"),
    ],
)
def test_canonical_and_short_names(name: str, canonical: str, short: str) -> None:
    t = getattr(nv, name)
    assert (t.canonical, t.short) == (canonical, short)
    assert nv.numeric_type(canonical) is t and nv.numeric_type(short) is t


def test_every_spelling_names_one_type() -> None:
    for t in nv.NUMERIC_TYPES:
        for key in (t.name, t.canonical, t.short, t.ptx_type, "torch." + t.canonical):
            assert nv.numeric_type(key) is t, key


def test_numeric_type_errors() -> None:
    with pytest.raises(ValueError, match="unknown type name 'float128'"):
        nv.numeric_type("float128")
    with pytest.raises(TypeError, match="must be a str"):
        nv.numeric_type(16)  # type: ignore[arg-type]


def test_tensor_map_enum_matches_cuda_bindings() -> None:
    driver = pytest.importorskip("cuda.bindings.driver")
    E = driver.CUtensorMapDataType
    assert nv.Float16.tensor_map_data_type == int(E.CU_TENSOR_MAP_DATA_TYPE_FLOAT16)
    assert nv.BFloat16.tensor_map_data_type == int(E.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16)
    assert nv.Float32.tensor_map_data_type == int(E.CU_TENSOR_MAP_DATA_TYPE_FLOAT32)
    assert nv.TFloat32.tensor_map_data_type == int(E.CU_TENSOR_MAP_DATA_TYPE_TFLOAT32)
    assert nv.Int32.tensor_map_data_type == int(E.CU_TENSOR_MAP_DATA_TYPE_INT32)
    assert nv.Int64.tensor_map_data_type == int(E.CU_TENSOR_MAP_DATA_TYPE_INT64)
    for t in (nv.Int8, nv.Uint8, nv.Float8E4M3FN, nv.Float8E5M2, nv.Boolean):
        assert t.tensor_map_data_type == int(E.CU_TENSOR_MAP_DATA_TYPE_UINT8)
    for name in (
        "UINT8",
        "UINT16",
        "UINT32",
        "INT32",
        "UINT64",
        "INT64",
        "FLOAT16",
        "FLOAT32",
        "FLOAT64",
        "BFLOAT16",
        "FLOAT32_FTZ",
        "TFLOAT32",
        "TFLOAT32_FTZ",
    ):
        assert getattr(nv.TensorMapDataType, name) == int(getattr(E, f"CU_TENSOR_MAP_DATA_TYPE_{name}"))


def test_import_needs_neither_cuda_nor_mlir() -> None:
    code = (
        "import sys, cute_nvarch\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('cuda', 'mlir', 'torch', 'numpy')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

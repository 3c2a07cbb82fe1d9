"""The compiled-kernel contract as data: param kinds, kernel entry, canonical spec, bundle manifest, targets."""

from __future__ import annotations

import hashlib
import json
import struct

import cute_nvarch as nv
import pytest
from cute_nvarch.bundle_format import (
    FORMAT,
    MANIFEST_KEYS,
    VERSION,
    check_writable,
    dump_manifest,
    make_manifest,
    manifest_kernel,
    parse_manifest,
)
from cute_nvarch.entry import ENTRY_FIELDS, KernelEntry, Launch
from cute_nvarch.params import PARAM_KINDS, TMA_DESCRIPTOR_ALIGN, TMA_DESCRIPTOR_BYTES, Param, parse_params

ENTRY = KernelEntry(
    "scale_f32",
    "sm_90a",
    (Param("x", "ptr"), Param("n", "i32"), Param("desc", "tma")),
    Launch((128, 1, 1), (2, 1, 1), 1024),
    {"kernel": "scale", "dtype": "float32", "tile": [1, 512]},
    {"registers": 32},
    {"ptxas": "13.0.88"},
)


def test_param_kinds_pack_as_their_struct_codes() -> None:
    """Oracle: the PTX parameter space (.u64 pointers, .s32/.u32/.s64/.u64, .f32/.f64, a 128-byte
    CUtensorMap aligned to 64 bytes)."""
    assert set(PARAM_KINDS) == {"ptr", "i32", "u32", "i64", "u64", "f32", "f64", "tma"}
    assert (TMA_DESCRIPTOR_BYTES, TMA_DESCRIPTOR_ALIGN) == (128, 64)
    for kind in PARAM_KINDS.values():
        assert struct.calcsize("<" + kind.struct_code) == kind.size, kind
        assert kind.size % kind.align == 0 or kind.name == "tma"
        if kind.int_range is not None:
            lo, hi = kind.int_range
            struct.pack("<" + kind.struct_code, lo)
            struct.pack("<" + kind.struct_code, hi)
            with pytest.raises(struct.error):
                struct.pack("<" + kind.struct_code, hi + 1)
    assert [k.name for k in PARAM_KINDS.values() if k.is_float] == ["f32", "f64"]


def test_parse_params_names_the_field() -> None:
    assert parse_params([{"name": "a", "kind": "ptr"}, Param("n", "u32")]) == (Param("a", "ptr"), Param("n", "u32"))
    with pytest.raises(ValueError, match=r"params\[0\] \('a'\).kind 'half'"):
        parse_params([{"name": "a", "kind": "half"}])
    with pytest.raises(ValueError, match="repeated"):
        parse_params([{"name": "a", "kind": "ptr"}, {"name": "a", "kind": "i32"}])
    with pytest.raises(ValueError, match="identifier"):
        parse_params([{"name": "class", "kind": "ptr"}])
    with pytest.raises(ValueError, match="one of"):
        nv.param_kind("i16")


def test_entry_round_trip_and_fields() -> None:
    d = ENTRY.to_dict()
    assert tuple(d) == ENTRY_FIELDS
    again = KernelEntry.from_dict(json.loads(json.dumps(d)))
    assert again == ENTRY and again.spec == ENTRY.spec and again.resources == ENTRY.resources
    assert again.launch.is_cluster_launch and again.launch.num_threads == 128
    assert ENTRY.key == '{"dtype":"float32","kernel":"scale","tile":[1,512]}'


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("launch"), "lacks the required field 'launch'"),
        (lambda d: d.update(arch="sm90"), r"entry.arch"),
        (lambda d: d.update(name="1bad"), "not a valid kernel symbol"),
        (lambda d: d["launch"].update(block=[1024, 2, 1]), "more than 1024 threads"),
        (lambda d: d["launch"].update(cluster=[0, 1, 1]), "3 ints >= 1"),
        (lambda d: d["launch"].update(dynamic_smem=True), "dynamic_smem"),
        (lambda d: d.update(resources=[]), "resources must be an object"),
    ],
)
def test_entry_errors(change: object, message: str) -> None:
    d = ENTRY.to_dict()
    change(d)  # type: ignore[operator]
    with pytest.raises(ValueError, match=message):
        KernelEntry.from_dict(d)


def test_spec_identity() -> None:
    spec = {"b": [1, 2], "a": True, "kernel": "k"}
    assert nv.canonical_spec(spec) == '{"a":true,"b":[1,2],"kernel":"k"}'
    assert nv.spec_digest(spec) == hashlib.sha256(nv.canonical_spec(spec).encode()).hexdigest()
    assert nv.file_stem(spec, "sm_90a") == nv.spec_digest(spec)[:16] + "-sm_90a"
    assert nv.check_spec(spec) is spec
    for bad in ({"layout": "(4,32):(32,1)"}, {"grid": "ceil(M/tile[0])"}, {"x": float("nan")}, {"x": object()}):
        with pytest.raises(ValueError):
            nv.check_spec(bad)
    with pytest.raises(TypeError):
        nv.check_spec([1])


def test_manifest_round_trip() -> None:
    kernel, files = manifest_kernel(ENTRY, b"cubin", b"ptx")
    stem = nv.file_stem(ENTRY.spec, ENTRY.target)
    assert files == {stem + ".cubin": b"cubin", stem + ".ptx": b"ptx"}
    sha = {"cubin": hashlib.sha256(b"cubin").hexdigest(), "ptx": hashlib.sha256(b"ptx").hexdigest()}
    assert kernel["sha256"] == sha
    manifest = make_manifest([kernel])
    assert tuple(manifest) == MANIFEST_KEYS and (manifest["format"], manifest["version"]) == (FORMAT, VERSION)
    parsed, kernels = parse_manifest(dump_manifest(manifest))
    assert parsed == manifest and len(kernels) == 1
    k = kernels[0]
    assert (k.entry, k.cubin, k.ptx) == (ENTRY, stem + ".cubin", stem + ".ptx")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(format="zip"), "not a cute bundle"),
        (lambda m: m.update(version=True), "format version True is not supported"),
        (lambda m: m.update(kernels={}), "'kernels' must be a list"),
        (
            lambda m: m["kernels"].append(dict(m["kernels"][0])),
            r"kernels\[1\] repeats the spec and arch of kernels\[0\]",
        ),
        (lambda m: m["kernels"][0].update(ptx="../x.ptx"), "plain file name"),
        (lambda m: m["kernels"][0].update(ptx="manifest.json"), "plain file name"),
        (lambda m: (m["kernels"][0].pop("ptx"), m["kernels"][0].pop("cubin")), "neither a cubin nor a PTX"),
        (lambda m: m["kernels"][0].update(sha256=None), "sha256 must be an object"),
    ],
)
def test_manifest_errors(change: object, message: str) -> None:
    manifest = make_manifest([manifest_kernel(ENTRY, b"c", b"p")[0]])
    change(manifest)  # type: ignore[operator]
    with pytest.raises(ValueError, match=message):
        parse_manifest(dump_manifest(manifest))
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_manifest(b"{")


def test_writer_needs_a_compiled_entry() -> None:
    assert check_writable(ENTRY, "a") is ENTRY
    with pytest.raises(ValueError, match="lacks"):
        check_writable(KernelEntry("k", "sm_80", (), Launch((1, 1, 1))), "artifacts[0]")
    with pytest.raises(TypeError):
        check_writable({"name": "k"}, "artifacts[0]")


@pytest.mark.parametrize(
    ("cc", "target"),
    [
        ((9, 0), "sm_90a"),
        ((8, 9), "sm_89"),
        ((8, 6), "sm_80"),
        ((8, 0), "sm_80"),
        ((10, 0), "sm_80"),
        ((12, 0), "sm_80"),
    ],
)
def test_compile_target(cc: tuple[int, int], target: str) -> None:
    """The newest target whose cubin loads on the device, else the oldest whose PTX the driver JITs there."""
    t = nv.compile_target(cc)
    assert t.name == target
    assert nv.cubin_runs_on(t.name, cc) or nv.ptx_runs_on(t.name, cc)


def test_compile_target_refuses_old_devices() -> None:
    with pytest.raises(ValueError, match="sm_80 or newer"):
        nv.compile_target((7, 5))


def test_emitted_ptx_isa_is_at_least_the_floor() -> None:
    for t in nv.TARGETS.values():
        assert t.ptx_isa >= t.ptx_isa_floor
        assert nv.parse_arch(t.name).compute_capability == t.compute_capability

from __future__ import annotations

import copy
import hashlib
import json
import zipfile
from pathlib import Path

import pytest
import runtime_kernels as rk
from cute_runtime import (
    ArchMismatchError,
    BundleError,
    Kernel,
    KernelNotFoundError,
    canonical_spec,
    file_stem,
    load_bundle,
)

FAKE_CUBIN = b"\x7fELF fake cubin bytes for a bundle test"


def _bundle(tmp_path: Path) -> Path:
    sm90 = copy.deepcopy(rk.ADD_F32_ENTRY)
    sm90["arch"] = "sm_90a"
    return rk.write_bundle(
        tmp_path / "b",
        [
            (rk.ADD_F32_ENTRY, FAKE_CUBIN + b"80", rk.ADD_F32_PTX),
            (sm90, FAKE_CUBIN + b"90a", rk.ADD_F32_PTX),
            (rk.DUMP_ENTRY, None, rk.DUMP_PTX),
        ],
    )


def test_round_trip(tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    bundle = load_bundle(path)
    assert len(bundle) == 3
    spec = rk.ADD_F32_ENTRY["spec"]
    assert bundle.find(spec)["arch"] == "sm_80"
    assert bundle.find(spec, "sm_90a")["arch"] == "sm_90a"
    assert bundle.find(spec, "sm_86")["arch"] == "sm_80"  # the sm_80 cubin runs on an sm_86 device
    assert bundle.find(spec, "sm_120") is None
    assert bundle.find({"kernel": "nope"}) is None
    # spec key order does not matter
    assert bundle.find(dict(reversed(list(spec.items()))))["name"] == "add_f32"
    item = bundle.item(spec, "sm_90a")
    assert item.cubin == FAKE_CUBIN + b"90a" and item.ptx == rk.ADD_F32_PTX and item.ptx_arch == "sm_80"
    assert item.entry.params[3].kind == "u32"
    assert [e["name"] for e in bundle] == ["add_f32", "add_f32", "dump_params"]


def test_file_stem_matches_schema(tmp_path: Path) -> None:
    spec = rk.ADD_F32_ENTRY["spec"]
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert file_stem(spec, "sm_80") == f"{digest[:16]}-sm_80"
    assert canonical_spec(spec) == '{"dtype":"f32","kernel":"add_f32","test":true}'
    manifest = json.loads((_bundle(tmp_path) / "manifest.json").read_text())
    assert manifest["kernels"][0]["cubin"] == f"{digest[:16]}-sm_80.cubin"


def test_select_prefers_cubin_then_ptx(tmp_path: Path) -> None:
    bundle = load_bundle(_bundle(tmp_path))
    spec = rk.ADD_F32_ENTRY["spec"]
    assert bundle.select(spec, (9, 0)).entry.target == "sm_90a"
    assert bundle.select(spec, (8, 9)).entry.target == "sm_80"
    # no cubin runs on sm_100 or sm_120; the sm_80 PTX JITs there
    chosen = bundle.select(spec, "sm_120")
    assert chosen.ptx_arch == "sm_80"
    kernel = bundle.load_kernel(spec, "sm_120")
    assert isinstance(kernel, Kernel) and kernel.cubin is None and kernel.ptx == rk.ADD_F32_PTX
    kernel = bundle.load_kernel(spec, (9, 0))
    assert kernel.cubin == FAKE_CUBIN + b"90a"
    kernel = bundle.load_kernel(spec, "sm_86")
    assert kernel.cubin == FAKE_CUBIN + b"80"


def test_arch_mismatch_names_both(tmp_path: Path) -> None:
    entry = copy.deepcopy(rk.TMA_LOAD_ENTRY)
    path = rk.write_bundle(tmp_path / "b", [(entry, FAKE_CUBIN, rk.TMA_LOAD_PTX)])
    bundle = load_bundle(path)
    with pytest.raises(ArchMismatchError, match=r"sm_90a.*sm_80 \(compute capability 8.0\)"):
        bundle.select(entry["spec"], (8, 0))
    with pytest.raises(ArchMismatchError, match="sm_100"):
        bundle.load_kernel(entry["spec"], "sm_100")


def test_missing_spec(tmp_path: Path) -> None:
    bundle = load_bundle(_bundle(tmp_path))
    with pytest.raises(KernelNotFoundError, match="no kernel for spec"):
        bundle.select({"kernel": "nope"}, (9, 0))


def _manifest(path: Path) -> dict:
    return json.loads((path / "manifest.json").read_text())


def _write_manifest(path: Path, manifest: dict) -> None:
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_bad_sha(tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    name = _manifest(path)["kernels"][0]["cubin"]
    (path / name).write_bytes(FAKE_CUBIN + b"tampered")
    with pytest.raises(BundleError, match=f"{name}' is corrupt: its sha256"):
        load_bundle(path)


def test_bad_json(tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    (path / "manifest.json").write_text('{"format": "cute-bundle", ')
    with pytest.raises(BundleError, match="manifest.json is not valid JSON"):
        load_bundle(path)


def test_missing_payload(tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    name = _manifest(path)["kernels"][2]["ptx"]
    (path / name).unlink()
    with pytest.raises(BundleError, match=f"kernels\\[2\\] names '{name}', which is missing"):
        load_bundle(path)


def test_missing_manifest_and_path(tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    (path / "manifest.json").unlink()
    with pytest.raises(BundleError, match="manifest.json is missing"):
        load_bundle(path)
    with pytest.raises(BundleError, match="no such directory"):
        load_bundle(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("version", 3, "format version 3 is not supported"),
        ("version", "1", "format version '1' is not supported"),
        ("format", "other", "not a cute bundle"),
        ("kernels", {}, "'kernels' must be a list"),
    ],
)
def test_bad_header(tmp_path: Path, field: str, value: object, message: str) -> None:
    path = _bundle(tmp_path)
    manifest = _manifest(path)
    manifest[field] = value
    _write_manifest(path, manifest)
    with pytest.raises(BundleError, match=message):
        load_bundle(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda e: e.update(params=[{"name": "a", "kind": "half"}]),
            r"kernels\[0\].params\[0\] \('a'\).kind",
        ),
        (lambda e: e.update(arch="sm90"), r"kernels\[0\].arch"),
        (lambda e: e.pop("launch"), "lacks the required field 'launch'"),
        (lambda e: e["launch"].update(block=[2048, 1, 1]), "more than 1024 threads"),
        (lambda e: e["launch"].update(dynamic_smem=-1), "dynamic_smem"),
        (lambda e: e.update(cubin="../escape.cubin"), "plain file name"),
        (lambda e: e.update(sha256="abc"), "sha256 must be an object"),
        (lambda e: e["sha256"].update(cubin="12"), "no valid sha256"),
        (lambda e: e.update(name="other_name"), r"declares no `.entry other_name`"),
        (lambda e: (e.pop("cubin"), e.pop("ptx")), "neither a cubin nor a PTX"),
    ],
)
def test_bad_entry(tmp_path: Path, change: object, message: str) -> None:
    path = _bundle(tmp_path)
    manifest = _manifest(path)
    change(manifest["kernels"][0])  # type: ignore[operator]
    _write_manifest(path, manifest)
    with pytest.raises(BundleError, match=message):
        load_bundle(path)


def test_duplicate_entry(tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    manifest = _manifest(path)
    manifest["kernels"].append(copy.deepcopy(manifest["kernels"][0]))
    _write_manifest(path, manifest)
    with pytest.raises(BundleError, match=r"kernels\[3\] repeats the spec and arch of kernels\[0\]"):
        load_bundle(path)


def test_zip_bundle(tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in path.iterdir():
            zf.write(f, f.name)
    bundle = load_bundle(archive)
    assert len(bundle) == 3
    assert bundle.item(rk.DUMP_ENTRY["spec"]).ptx == rk.DUMP_PTX
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(BundleError, match="not a directory and not a valid zip"):
        load_bundle(tmp_path / "junk.zip")


def test_real_cubin_bundle(tmp_path: Path) -> None:
    if rk.find_ptxas() is None:
        pytest.skip("ptxas not found")
    cubin = rk.assemble(rk.ADD_F32_PTX, "sm_80")
    path = rk.write_bundle(tmp_path / "b", [(rk.ADD_F32_ENTRY, cubin, rk.ADD_F32_PTX)])
    item = load_bundle(path).item(rk.ADD_F32_ENTRY["spec"])
    assert item.cubin == cubin and item.cubin[:4] == b"\x7fELF"

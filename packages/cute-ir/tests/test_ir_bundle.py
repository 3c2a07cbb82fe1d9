"""AOT bundles in cute-nvarch's bundle format (docs/bundle.md): manifest, payloads named by spec hash and arch,
sha256, atomic replacement. (That cute-runtime reads them back is tests/test_bundle_roundtrip.py.)"""

from __future__ import annotations

import hashlib
import json
import os

import _ir_kernels as K
import cute_ir
import pytest
from cute_ir import cache
from cute_ir.artifact import Artifact
from cute_ir.bundle import write_bundle
from cute_nvarch.entry import KernelEntry, Launch
from cute_nvarch.kernel_spec import file_stem


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> list[Artifact]:  # noqa: ANN001
    os.environ["CUTE_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    try:
        cache.clear_memory_cache()
        return [
            cute_ir.compile_kernel(K.spec_for(2), K.builder(2, "sm_80"), "sm_80"),
            cute_ir.compile_kernel(K.spec_for(2), K.builder(2, "sm_90a"), "sm_90a"),
            cute_ir.compile_kernel(K.spec_for(3), K.builder(3, "sm_90a"), "sm_90a"),
        ]
    finally:
        del os.environ["CUTE_CACHE_DIR"]


def test_manifest_follows_the_schema(tmp_path, artifacts) -> None:  # noqa: ANN001
    """format/version/kernels; each kernel is its entry plus payload names and their sha256."""
    out = tmp_path / "bundle"
    manifest_path = write_bundle(out, artifacts)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest_path == str(out / "manifest.json")
    assert manifest["format"] == "cute-bundle" and manifest["version"] == 2 and manifest["signatures"] == {}
    assert len(manifest["kernels"]) == 3
    for k, art in zip(manifest["kernels"], artifacts, strict=True):
        for field in ("spec", "name", "arch", "params", "launch", "resources", "versions"):
            assert k[field] == art.entry.to_dict()[field]
        canon = json.dumps(art.spec, sort_keys=True, separators=(",", ":"))
        stem = hashlib.sha256(canon.encode()).hexdigest()[:16] + "-" + art.arch
        assert stem == file_stem(art.spec, art.arch)
        assert k["cubin"] == stem + ".cubin" and k["ptx"] == stem + ".ptx"
        assert (out / k["cubin"]).read_bytes() == art.cubin
        assert (out / k["ptx"]).read_text() == art.ptx
        assert k["sha256"]["cubin"] == hashlib.sha256(art.cubin).hexdigest()
        assert k["sha256"]["ptx"] == hashlib.sha256(art.ptx.encode()).hexdigest()
    assert sorted(os.listdir(out)) == sorted(
        ["manifest.json"] + [k[f] for k in manifest["kernels"] for f in ("cubin", "ptx")]
    )


def test_rewrite_replaces_the_whole_bundle(tmp_path, artifacts) -> None:  # noqa: ANN001
    """Writing again swaps the directory: old payloads disappear, no temporary directories are left."""
    out = tmp_path / "b"
    write_bundle(out, artifacts)
    write_bundle(out, artifacts[:1])
    manifest = json.loads((out / "manifest.json").read_text())
    assert [k["arch"] for k in manifest["kernels"]] == ["sm_80"]
    assert len(os.listdir(out)) == 3
    assert sorted(os.listdir(tmp_path)) == ["b"]


def test_bad_input_is_refused(tmp_path, artifacts) -> None:  # noqa: ANN001
    """Empty lists, duplicates (same spec and arch) and non-artifacts raise; nothing is written."""
    with pytest.raises(ValueError):
        write_bundle(tmp_path / "x", [])
    with pytest.raises(ValueError, match="repeats"):
        write_bundle(tmp_path / "x", [artifacts[0], artifacts[0]])
    with pytest.raises(TypeError):
        write_bundle(tmp_path / "x", [object()])
    bad = Artifact(KernelEntry("k", "sm_80", (), Launch((1, 1, 1)), {"kernel": "k"}), b"", "")
    with pytest.raises(ValueError, match="lacks"):
        write_bundle(tmp_path / "x", [bad])
    assert not (tmp_path / "x").exists() and os.listdir(tmp_path) == []

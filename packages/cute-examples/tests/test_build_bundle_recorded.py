"""build_bundle --add-specs: the specs a bundle-only host recorded (CUTE_RECORD_MISSES) become compile jobs."""

from __future__ import annotations

import json

import pytest
from cute_examples.catalogue import recorded_jobs
from cute_examples.dense_gemm.kernel import dense_gemm, gemm_spec
from cute_examples.dense_gemm.spec import GemmConfig


def test_recorded_specs_become_jobs_once_per_target(tmp_path):
    spec = gemm_spec(GemmConfig(tile_n=256, cluster_m=2))
    rec = {"kernel": dense_gemm.name, "spec": spec, "target": "sm_90a"}
    path = tmp_path / "misses.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (rec, rec, dict(rec, target="sm_80"))) + "\n")
    jobs = recorded_jobs(str(path), ["sm_90a"])
    (label, job), = jobs["sm_90a"]
    assert label.startswith("dense_gemm (recorded") and job.args == (dense_gemm.fn, spec, "sm_90a")
    path.write_text(json.dumps(dict(rec, kernel="nope")) + "\n")
    with pytest.raises(ValueError, match="kernel 'nope' is none of"):
        recorded_jobs(str(path), ["sm_90a"])

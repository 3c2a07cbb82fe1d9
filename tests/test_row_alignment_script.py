"""`scripts/row_alignment.py` is what wrote the tests' `data/row_alignment_h200.json` (its cases, tiles and columns),
and its `--specs` lists a kernel for every (dtype, majors) x tile x cluster it times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "packages" / "cute-examples" / "tests" / "data" / "row_alignment_h200.json"


@pytest.fixture(scope="module")
def script(load_script):  # noqa: ANN001, ANN201
    return load_script("row_alignment")


def test_the_data_rows_are_the_scripts_cases(script):  # noqa: ANN001
    with open(DATA) as f:
        rows = json.load(f)["rows"]
    want = [[dtype, script.M, script.N, k, am, bm, a_ld, b_ld, *tile]
            for dtype, k, am, bm, a_ld, b_ld in script.CASES.values() for tile in script.TILES]
    assert [r[:10] for r in rows] == want
    assert all(len(r) == 13 and min(r[10:]) > 0 for r in rows)  # no cluster, 2x1 cluster, the peer: microseconds


def test_specs_cover_every_timed_kernel(script, tmp_path):  # noqa: ANN001
    kinds = {(dtype, am, bm) for dtype, _k, am, bm, _a, _b in script.CASES.values()}
    path = tmp_path / "specs.jsonl"
    assert script.write_specs(str(path)) == len(kinds) * len(script.TILES) * len(script.CLUSTERS)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {line["target"] for line in lines} == {"sm_90a"}
    assert len({json.dumps(line["spec"], sort_keys=True) for line in lines}) == len(lines)

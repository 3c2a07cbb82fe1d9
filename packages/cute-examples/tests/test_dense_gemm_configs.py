"""CPU CI for the 6,048 GEMM configs: a seeded sample of 24 compiles through ptxas without spills.

The sample (`configs.sample_configs()`, seed 9) always holds one config of each class issue 9 found failing
(A m-major x tile_m 128 x cluster_n 2, B n-major x tile_n >= 128 x cluster_m 2; float16 and bfloat16). Each
kernel issues one guarded TMA load per box of the plan. `python3 -m nox -s configs` compiles all 6,048.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("mlir")

from cute_examples.dense_gemm import configs  # noqa: E402
from cute_examples.dense_gemm.kernel import compile_gemm  # noqa: E402
from cute_examples.dense_gemm.plan import tma_boxes  # noqa: E402

SAMPLE = configs.sample_configs()
_LOAD = re.compile(
    r"cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes"
    r"(\.multicast::cluster)? \[[^\]]+\], \[(%rd\d+),"
)


@pytest.mark.parametrize("cfg", SAMPLE, ids=lambda c: c.name)
def test_sample_compiles_without_spills_and_loads_every_box(cfg):
    res = configs.compile_config(cfg)
    assert res.error is None, res.error
    assert res.spill_bytes == 0
    art = compile_gemm(cfg)  # the same artifact (the compile cache)
    assert art.resources["shared_memory"] == cfg.smem_bytes(cfg.num_stages)
    a, b, _ = tma_boxes(cfg)
    loads = _LOAD.findall(art.ptx)
    assert len(loads) == len(a.boxes) + len(b.boxes), (len(loads), a.boxes, b.boxes)
    if cfg.cluster_size > 1:
        assert sum(bool(m) for m, _ in loads) == len(a.boxes) * (a.multicast > 1) + len(b.boxes) * (b.multicast > 1)


def test_sweep_command_counts_compiled_configs_and_spills(capsys):
    assert configs.main(["--sample", "4", "--jobs", "1"]) == 0  # the four class picks: compile-cache hits
    out = capsys.readouterr().out
    assert "4 of 4 configs compiled, 0 with spills" in out and "per config" in out


def test_sweep_runs_workers():
    got = configs.sweep(SAMPLE[:2], 2, report=lambda r: None)
    assert [r.name for r in got] == [c.name for c in SAMPLE[:2]] and all(r.error is None for r in got)

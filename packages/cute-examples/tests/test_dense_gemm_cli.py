"""The dense_gemm CLI: flags of CuTeDSL's dense_gemm.py; without a GPU it compiles, reports and exits 0."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from cute_examples.dense_gemm.__main__ import config_of, parse_args

RESOURCE_LINE = re.compile(
    r"^registers: \d+, shared memory: \d+ bytes, spill stores: 0 bytes, spill loads: 0 bytes, "
    r"compile: (\d+ ms|\(cached\))$",
    re.M,
)


def test_flags_map_to_the_config():
    args = parse_args(
        [
            "--mnkl",
            "127,255,72,3",
            "--tile_shape_mnk",
            "64,256,64",
            "--cluster_shape_mn",
            "1,2",
            "--a_dtype",
            "BFloat16",
            "--b_dtype",
            "bfloat16",
            "--c_dtype",
            "Float32",
            "--acc_dtype",
            "Float32",
            "--a_major",
            "m",
            "--b_major",
            "n",
            "--c_major",
            "m",
            "--tolerance",
            "0.01",
            "--warmup_iterations",
            "1",
            "--iterations",
            "3",
            "--skip_ref_check",
            "--use_cold_l2",
            "--benchmark",
        ]
    )
    cfg = config_of(args)
    assert args.mnkl == (127, 255, 72, 3) and args.tolerance == 0.01
    assert (cfg.tile_m, cfg.tile_n, cfg.cluster_m, cfg.cluster_n) == (64, 256, 1, 2)
    assert (cfg.a_dtype, cfg.c_dtype, cfg.a_major, cfg.b_major, cfg.c_major) == (
        "bfloat16",
        "float32",
        "m",
        "n",
        "m",
    )
    assert args.skip_ref_check and args.use_cold_l2 and args.benchmark


@pytest.mark.parametrize("argv", [["--mnkl", "1,2,3"], ["--a_major", "n"], ["--mnkl", "0,1,1,1"],
                                  ["--mnkl", "-128,128,128,1"], ["--tolerance", "-1"], ["--tolerance", "0"],
                                  ["--a_dtype", "Float32"], ["--iterations", "0"]])
def test_bad_flags_exit_2(argv):
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2


def test_bad_config_is_a_one_line_usage_error(capsys):
    from cute_examples.dense_gemm.__main__ import main

    with pytest.raises(SystemExit) as e:
        main(["--tile_shape_mnk", "96,128,64"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tile_m must be one of" in err


def test_cli_without_gpu_compiles_reports_and_exits_0(tmp_path):
    pytest.importorskip("mlir")
    from cute_runtime import gpu_available

    if gpu_available():
        pytest.skip("a GPU is present: the no-GPU path is not taken")
    env = dict(os.environ, CUTE_DUMP_DIR=str(tmp_path / "dump"), CUTE_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cute_examples.dense_gemm",
            "--mnkl",
            "1000,1000,1000,1",
            "--tile_shape_mnk",
            "128,128,64",
            "--cluster_shape_mn",
            "2,1",
            "--c_dtype",
            "BFloat16",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert RESOURCE_LINE.search(proc.stdout), proc.stdout
    assert "\nno GPU found.\n" in proc.stdout and "skipped (needs an NVIDIA GPU): the launch" in proc.stdout
    assert "python -m cute_examples.dense_gemm --mnkl 1000,1000,1000,1" in proc.stdout  # the command to run there
    names = sorted(p.name for p in (tmp_path / "dump").iterdir())
    assert any(n.endswith(".cubin") for n in names) and any(n.endswith(".ptx") for n in names)
    assert any(n.endswith(".mlir") for n in names)

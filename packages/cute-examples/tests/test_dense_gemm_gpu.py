"""The Hopper GEMM on an sm_90 GPU (served from an AOT bundle where MLIR is absent): correctness everywhere.

Random normal inputs, a float32 reference, the normwise relative error within the dtype's bound; the output is
poisoned with NaN and surrounded by a guard region (and padding columns) that must stay untouched.
Every dtype x major combination on shapes that divide the tile and shapes that do not (1x1x8, 127x255x72 with
padded leading dimensions, 1000x1000x1000), batch L=3, every tile x cluster shape; compute-sanitizer memcheck
and racecheck on a small case (strides that break TMA's 16-byte rule: test_dense_gemm_any_shape_gpu).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from cute_examples.dense_gemm.aot import dtype_major_configs, tile_cluster_configs, variant_configs
from cute_examples.dense_gemm.spec import padded_ld
from cute_runtime.testing import requires_sm90

torch = pytest.importorskip("torch")

SHAPES = [(1, 1, 8, 1), (127, 255, 72, 1), (1000, 1000, 1000, 1)]
GUARD = 256  # elements (a multiple of 16 bytes for every dtype)


def tolerance(acc_dtype: str, c_dtype: str) -> float:
    """Normwise relative error bound: C's rounding (and f16 accumulation's, growing with K)."""
    if acc_dtype == "float16":
        return 1e-2
    return {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5}[c_dtype]


def _tdt(name):
    return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[name]


def _guarded(l, rows, cols, contiguous_cols, dtype, fill):
    """(buffer, view): an (l, rows, cols) view with padded leading dimension inside a guarded buffer."""
    e = torch.empty((), dtype=dtype).element_size()
    inner, outer = (cols, rows) if contiguous_cols else (rows, cols)
    ld = padded_ld(inner, e)
    buf = torch.full((2 * GUARD + l * outer * ld,), -7.25, dtype=dtype, device="cuda")
    body = buf[GUARD : GUARD + l * outer * ld].view(l, outer, ld)[:, :, :inner]
    if fill == "randn":
        body.normal_()
    else:
        body.fill_(float("nan"))
    view = body if contiguous_cols else body.transpose(1, 2)
    return buf, view


def _mask_of(buf, view):
    """Bool mask over buf of the elements the view covers."""
    mask = torch.zeros_like(buf, dtype=torch.bool)
    base = view.data_ptr() - buf.data_ptr()
    e = buf.element_size()
    offs = torch.zeros(view.shape, dtype=torch.long, device="cuda")
    for d, (n, s) in enumerate(zip(view.shape, view.stride(), strict=True)):
        shape = [1] * view.dim()
        shape[d] = n
        offs = offs + (torch.arange(n, device="cuda") * s).view(shape)
    mask[(base // e) + offs.flatten()] = True
    return mask


def run_case(cfg, m, n, k, l, tile=None, cluster=None):
    from cute_examples.dense_gemm import gemm

    ab = _tdt(cfg.a_dtype)
    _, a = _guarded(l, m, k, cfg.a_major == "k", ab, "randn")
    _, b = _guarded(l, k, n, cfg.b_major == "n", ab, "randn")
    cbuf, c = _guarded(l, m, n, cfg.c_major == "n", _tdt(cfg.c_dtype), "nan")
    untouched = cbuf.clone()
    mask = _mask_of(cbuf, c)
    squeeze = l == 1 and (m, n, k) == (1, 1, 8)  # the 2-D path too
    if squeeze:
        a, b, c = a[0], b[0], c[0]
    out = gemm(
        a,
        b,
        c,
        acc_dtype=cfg.acc_dtype,
        tile_shape_mnk=tile or (cfg.tile_m, cfg.tile_n, cfg.tile_k),
        cluster_shape_mn=cluster or (cfg.cluster_m, cfg.cluster_n),
        variant=cfg.variant,
    )
    torch.cuda.synchronize()
    assert out is c
    ref = torch.matmul(a.float(), b.float())
    got = c.float()
    assert bool(torch.isfinite(got).all()), "output not fully written (NaN poison left)"
    err = float((got - ref).norm() / ref.norm().clamp_min(1e-30))
    assert err <= tolerance(cfg.acc_dtype, cfg.c_dtype), f"{cfg.name} {m}x{n}x{k}x{l}: error {err:.3e}"
    assert torch.equal(cbuf[~mask], untouched[~mask]), "guard region or padding written"


_DM = dtype_major_configs()


@requires_sm90
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("index", range(len(_DM)), ids=lambda i: _DM[i].name)
def test_every_dtype_and_major(index, shape):
    run_case(_DM[index], *shape)


@requires_sm90
@pytest.mark.parametrize("cfg", tile_cluster_configs(), ids=lambda c: c.name)
@pytest.mark.parametrize(
    "shape",
    [(1000, 1000, 1000, 1), (127, 255, 72, 1), (257, 130, 100, 3), (1536, 1536, 200, 2)],
    ids=lambda s: "x".join(map(str, s)),
)
def test_every_tile_and_cluster(cfg, shape):
    # 1536 x 1536 x 2 gives every CTA several work units (pipeline phases and epilogue buffers carry over)
    run_case(cfg, *shape)


@requires_sm90
@pytest.mark.parametrize("cfg", variant_configs(), ids=lambda c: c.name)
@pytest.mark.parametrize(
    "shape",
    [(1000, 1000, 1000, 1), (127, 255, 72, 1), (1536, 1536, 200, 2)],
    ids=lambda s: "x".join(map(str, s)),
)
def test_base_variant(cfg, shape):
    """The unpipelined variant the benchmark compares against is correct too."""
    run_case(cfg, *shape)


@requires_sm90
@pytest.mark.parametrize("index", [0, 9, 22, 45, 63, 71], ids=lambda i: _DM[i].name)
def test_batched(index):
    run_case(_DM[index], 300, 200, 136, 3)


@requires_sm90
@pytest.mark.parametrize("cfg", tile_cluster_configs(), ids=lambda c: c.name)
def test_edge_tiles_write_what_their_neighbours_do(cfg):
    """`GemmConfig.clamped_edges`: an edge tile shifted back inside M and N writes rows and columns its neighbours
    also write; every launch leaves the same bits there, those of the same rows and columns computed as interior
    tiles of a padded problem."""
    from cute_examples.dense_gemm import gemm

    m, n, k = 400, 1000, 512
    tm, tn = cfg.tile_m, cfg.tile_n
    pm, pn = -(-m // tm) * tm + tm, -(-n // tn) * tn + tn  # padded: the same rows and columns in interior tiles
    ab = _tdt(cfg.a_dtype)
    torch.manual_seed(0)
    a_pad = torch.randn(pm, k, dtype=ab, device="cuda")
    w_pad = torch.randn(pn, k, dtype=ab, device="cuda")
    a, b = a_pad[:m], w_pad[:n].t()
    opts = dict(acc_dtype=cfg.acc_dtype, tile_shape_mnk=(tm, tn, cfg.tile_k),
                cluster_shape_mn=(cfg.cluster_m, cfg.cluster_n))
    c_dtype = _tdt(cfg.c_dtype)
    runs = [gemm(a, b, torch.full((m, n), float("nan"), dtype=c_dtype, device="cuda"), **opts) for _ in range(3)]
    padded = gemm(a_pad, w_pad.t(), torch.empty(pm, pn, dtype=c_dtype, device="cuda"), **opts)
    torch.cuda.synchronize()
    for c in runs:
        assert torch.equal(c, padded[:m, :n]), f"{cfg.name}: an edge tile wrote other bits than an interior tile"


@requires_sm90
def test_default_output_is_allocated_padded():
    from cute_examples.dense_gemm import gemm

    a = torch.randn(127, 72, dtype=torch.float16, device="cuda")
    b = torch.randn(72, 255, dtype=torch.float16, device="cuda")
    b = torch.empty(72, 256, dtype=torch.float16, device="cuda")[:, :255].copy_(b)
    out = gemm(a, b, tile_shape_mnk=(128, 128, 64), cluster_shape_mn=(1, 1))
    assert out.shape == (127, 255) and out.stride() == (256, 1) and out.dtype == torch.float16
    ref = a.float() @ b.float()
    assert float((out.float() - ref).norm() / ref.norm()) <= 2e-3


@requires_sm90
def test_tune_stores_the_fastest_and_gemm_uses_it(tmp_path, monkeypatch):
    from cute_examples.dense_gemm import gemm
    from cute_examples.dense_gemm.spec import GemmConfig
    from cute_examples.dense_gemm.tune import tune
    from cute_examples.dense_gemm.tune_cache import load_tune_cache

    monkeypatch.setenv("CUTE_TUNE_CACHE", str(tmp_path / "tune.json"))
    a = torch.randn(768, 512, dtype=torch.float16, device="cuda")
    b = torch.randn(640, 512, dtype=torch.float16, device="cuda").t()
    c = torch.empty(768, 640, dtype=torch.float16, device="cuda")
    cands = [GemmConfig(), GemmConfig(tile_n=256, cluster_m=2)]  # bundled configurations
    best, rows = tune(a, b, c, iterations=3, candidates=cands)
    assert best.config in cands and best.us > 0
    assert sum("TFLOP/s" in r for r in rows) >= 2 * 5 and rows[-1].startswith("best: ")
    assert len(load_tune_cache()) == 1
    out = gemm(a, b)  # no tile/cluster/variant: the tuned entry
    ref = a.float() @ b.float()
    assert float((out.float() - ref).norm() / ref.norm()) <= 2e-3


_SANITIZER_CASE = """
import torch
from cute_examples.dense_gemm import gemm
for tile, cluster in (((128, 128, 64), (1, 1)), ((64, 64, 64), (2, 2))):
    a = torch.randn(200, 136, dtype=torch.float16, device="cuda")
    b = torch.randn(96, 136, dtype=torch.float16, device="cuda").t()  # k-major B: a bundled configuration
    c = gemm(a, b, tile_shape_mnk=tile, cluster_shape_mn=cluster)
    torch.cuda.synchronize()
    assert float((c.float() - a.float() @ b.float()).norm() / (a.float() @ b.float()).norm()) < 2e-3
print("case ok")
"""


@requires_sm90
@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_compute_sanitizer_is_clean(tool):
    exe = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(exe):
        pytest.skip("CUDA compute-sanitizer not installed")
    proc = subprocess.run(
        [exe, "--tool", tool, "--report-api-errors", "no", "--error-exitcode", "3",
         sys.executable, "-c", _SANITIZER_CASE],
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "case ok" in out, out[-4000:]
    if tool == "memcheck":
        assert "ERROR SUMMARY: 0 errors" in out, out[-4000:]
    else:
        assert "RACECHECK SUMMARY: 0 hazards" in out or "ERROR SUMMARY: 0 errors" in out, out[-4000:]


@requires_sm90
def test_cli_checks_and_benchmarks_on_the_gpu():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cute_examples.dense_gemm",
            "--mnkl",
            "512,384,200,2",
            "--benchmark",
            "--use_cold_l2",
            "--warmup_iterations",
            "1",
            "--iterations",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "registers: " in out and "spill stores: 0 bytes" in out
    assert "reference check: normwise relative error" in out and "PASS" in out
    assert "TFLOP/s" in out and "ratio to torch" in out

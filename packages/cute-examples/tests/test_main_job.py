"""The main job's report: rows within 120 columns, names explained once, `(cached)` for kernels the disk cache
served, progress as kernels compile, the artifacts' location, and the ending printed where no GPU is found."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from cute_examples import catalogue, report
from cute_examples.dense_gemm.spec import ACC_INITS, NAME_LEGEND
from cute_examples.progress import Progress


class _Entry:
    def __init__(self, **resources: float) -> None:
        self.resources = resources


class _Art:
    """The fields of a cute_ir Artifact the table reads."""

    def __init__(self, cached: bool, compile_ms: float = 394.0) -> None:
        self.entry = _Entry(registers=168, shared_memory=232448, spill_stores=0, spill_loads=0,
                            compile_ms=compile_ms)
        self.ptx, self.cubin, self.cached = "x" * 300_000, b"y" * 200_000, cached


def test_rows_fit_120_columns_for_every_catalogue_label() -> None:
    labels = [label for t in ("sm_90a", "sm_80") for label, _ in catalogue.jobs(t)]
    assert any(label.startswith("dense_gemm_") for label in labels)
    table = report.KernelTable(labels)
    rows = [table.header(), *(table.row(label, _Art(cached=False, compile_ms=12345.0)) for label in labels)]
    assert max(len(r) for r in rows) <= report.WIDTH
    assert all(label in row for label, row in zip(labels, rows[1:], strict=True))  # no label is cut


def test_cached_kernel_shows_cached_not_its_old_compile_time() -> None:
    table = report.KernelTable(["k"])
    assert table.row("k", _Art(cached=True)).endswith("(cached)") and "394" not in table.row("k", _Art(True))
    assert table.row("k", _Art(cached=False)).endswith("394 ms")
    resources = _Art(cached=True).entry.resources
    assert report.resource_line(resources, cached=True).endswith("compile: (cached)")
    assert report.resource_line(resources).endswith("compile: 394 ms")


def test_legend_explains_the_name_suffixes() -> None:
    text = " ".join(NAME_LEGEND)
    for init in ACC_INITS:
        assert f"{init[0]} = {init}" in text
    assert "_rc" in text and "p<k_pipe_mmas>" in text and "c<cluster MxN>" in text
    assert all(len(line) <= report.WIDTH for line in (*NAME_LEGEND, *catalogue.LEGEND))


def test_progress_lines_without_a_terminal_and_a_bar_on_one() -> None:
    plain = io.StringIO()
    with Progress(2, plain, tty=False) as p:
        for label in ("a", "b"):
            p.start(label)
            p.row(f"row {label}")
    assert plain.getvalue() == "row a\nrow b\n"
    term = io.StringIO()
    with Progress(2, term, tty=True) as p:
        p.start("kernel_a")
        p.row("row a")
    out = term.getvalue()
    assert "[" in out and "0/2 kernels" in out and "kernel_a" in out and "1/2 kernels" in out
    assert "row a\n" in out and out.endswith("\r\x1b[K")


def test_no_gpu_ending_says_done_skipped_and_how() -> None:
    lines = report.no_gpu_ending("3 kernels compiled for sm_80", "running each kernel")
    assert lines[0] == "no GPU found." and lines[1] == "done: 3 kernels compiled for sm_80"
    assert lines[2].startswith("skipped (needs an NVIDIA GPU): running each kernel")
    text = "\n".join(lines)
    assert "python -m cute_examples.build_bundle build/aot" in text and "bash scripts/gpu_session.sh all" in text
    for path in ("scripts/gpu_session.sh", "docs/bundle.md"):  # what the ending names is in the repository
        assert os.path.exists(os.path.join(os.path.dirname(__file__), "..", "..", "..", path))
    assert all(len(line) <= report.WIDTH for line in lines)


def test_main_job_without_gpu(tmp_path) -> None:
    """The main job on two kernels (catalogue cut down): rows, the cache's location and the no-GPU ending; the
    second run says `(cached)`."""
    pytest.importorskip("mlir")
    import torch

    if torch.cuda.is_available():
        pytest.skip("requires_no_gpu: a GPU is present, the no-GPU ending is not printed")
    code = (
        "import sys\n"
        "from cute_examples import __main__ as job, catalogue\n"
        "jobs = catalogue.jobs\n"
        "catalogue.jobs = lambda target, gemm=True: jobs(target, gemm=False)[:2]\n"
        "sys.exit(job.main(['--targets', 'sm_80']))\n"
    )
    env = dict(os.environ, CUTE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("CUTE_DUMP_DIR", None)
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
            for _ in range(2)]
    for out in runs:
        assert out.returncode == 0, out.stderr
        assert "\x1b" not in out.stdout  # no terminal: plain lines, no bar
        # every line but the one naming the cache directory (as long as its path) fits the width
        lines = [line for line in out.stdout.splitlines() if not line.startswith("PTX and cubin: ")]
        assert max(len(line) for line in lines) <= report.WIDTH
    first, second = runs[0].stdout, runs[1].stdout
    rows = [[line for line in out.stdout.splitlines() if line.startswith("elementwise_add ")] for out in runs]
    assert len(rows[0]) == len(rows[1]) == 2 and rows[0][0].startswith("elementwise_add float32 vec i32")
    assert all(row.endswith(" ms") for row in rows[0]) and all(row.endswith(" (cached)") for row in rows[1])
    assert "(0 from the cache, 2 compiled)" in first and "(2 from the cache, 0 compiled)" in second
    assert f"PTX and cubin: {tmp_path / 'cache'}/kernels/" in first
    ending = first[first.index("no GPU found."):]
    assert "done: 2 kernels compiled for sm_80" in ending
    assert "skipped (needs an NVIDIA GPU): running each kernel, checking it against torch" in ending
    assert "bash scripts/gpu_session.sh all" in ending


def test_kernel_for_knows_whether_this_process_compiled_it(tmp_path, monkeypatch) -> None:
    """The GPU paths of the CLIs print `(cached)` for a kernel this process did not compile."""
    pytest.importorskip("mlir")
    from cute_examples import _compiled
    from cute_examples.elementwise_add.kernel import add_kernel
    from cute_ir import cache
    from cute_runtime import Placeholder
    from cute_runtime.compilers import compiler

    monkeypatch.setenv("CUTE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUTE_DUMP_DIR", raising=False)
    monkeypatch.delenv("CUTE_BUNDLE_DIR", raising=False)
    spec = add_kernel.specialize(*[Placeholder((4, 5), "int32", strides=(15, 3))] * 3)[0]
    seen = []
    for _ in range(2):
        cache.clear_memory_cache()
        _compiled.use_bundle(None)
        kernel = _compiled.kernel_for(spec, lambda target: compiler()(add_kernel.fn, spec, target), (8, 0))
        seen.append(_compiled.compiled_here(kernel))
    assert seen == [True, False]

"""Programmatic dependent launch (PDL) of the GEMM: gemm()'s plans launch with programmatic stream serialization,
which is only safe because every GEMM kernel runs `griddepcontrol.wait` before its first global memory access.
CPU: that order in the PTX of each kernel form (plain, fused, scaled FP8 with an E4M3 C and amax, split-K, FP8
split-K), and the plan's launch flag. (GPU: chained gemm() calls in `test_dense_gemm_gpu_plan.py`.)"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("mlir")

from cute_examples.dense_gemm.kernel import compile_gemm  # noqa: E402
from cute_examples.dense_gemm.spec import GemmConfig  # noqa: E402
from cute_examples.dense_gemm.split_k_cases import FP8_SPLIT_GPU_CASES, SPLIT_GPU_CASES  # noqa: E402

E4M3 = "float8_e4m3fn"
FORMS = {
    "plain": GemmConfig(),
    "plain_cluster": GemmConfig(cluster_m=2),
    "fused": GemmConfig(activation="gelu", bias="n", has_input=True, has_aux=True),
    "scaled_e4m3_c": GemmConfig(a_dtype=E4M3, b_dtype=E4M3, c_dtype=E4M3, scale_a="tensor", scale_b="tensor"),
    "split_k": SPLIT_GPU_CASES[3].config,
    "fp8_split_k": FP8_SPLIT_GPU_CASES[2].config,
}
# global memory: TMA loads and stores, loads, stores, atomics and reductions, prefetches of global lines
GLOBAL = re.compile(r"^\s*(@%p\d+\s+)?(cp\.async\.bulk|ld\.global|st\.global|atom\.|red\.|prefetch\.global)", re.M)


@pytest.mark.parametrize("form", FORMS)
def test_every_global_access_follows_the_grid_dependency_wait(form):
    ptx = compile_gemm(FORMS[form]).ptx
    wait = ptx.find("griddepcontrol.wait")
    first = GLOBAL.search(ptx)
    assert wait >= 0 and first is not None and first.start() > wait, first
    # the trigger is the consumers' (after their setmaxnreg), once per CTA's last unit: never in the prologue
    trigger = ptx.find("griddepcontrol.launch_dependents")
    assert trigger > ptx.find("setmaxnreg.inc") > wait

"""`python -m cute_examples.transpose_ncu`: run every tutorial transpose step for Nsight Compute.

Each step (naive, swizzled, vector; float32 and float16) runs three times on the "ncu" matrices of
transpose_cases (4096 x 4096); the kernel names (`transpose_<spec digest>`, `transpose_vec_<spec digest>`) are
printed with their step and configuration. Profile the shared-memory bank
conflicts with:

    ncu --kernel-name regex:transpose_ --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum python -m cute_examples.transpose_ncu
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run every tutorial step; print each kernel name with its dtype, step and configuration."""
    import torch
    from cute_nvarch.jit_spec import entry_symbol

    from .bench_transpose import steps
    from .transpose_cases import cases

    if argv:
        print(f"usage: python -m cute_examples.transpose_ncu (no arguments), got {argv}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("transpose_ncu: no CUDA device; run it on a GPU host under ncu", file=sys.stderr)
        return 1
    for case in cases():
        if case.label != "ncu":
            continue
        x = case.x.make(getattr(torch, case.dtype))
        y = torch.empty(case.y.shape, device="cuda", dtype=x.dtype)
        for name, config, launch in steps(x, y):
            for _ in range(3):
                launch()
            torch.cuda.synchronize()
            assert torch.equal(y, x.t())
            spec = launch.func.specialize(*launch.args)[0]
            print(f"{entry_symbol(spec)}: {case.dtype}, {name}: {config}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

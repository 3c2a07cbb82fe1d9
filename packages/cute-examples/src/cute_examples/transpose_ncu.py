"""`python -m cute_examples.transpose_ncu`: run the tutorial transpose, swizzled and naive, for Nsight Compute.

Each variant (float32 and float16; swizzled and naive) runs twice on a 4096 x 4096 matrix after one warm-up;
the kernel names (`transpose_<spec digest>`) are printed with their variant. Profile the shared-memory bank
conflicts with:

    ncu --kernel-name regex:transpose_ --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum python -m cute_examples.transpose_ncu
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run every variant; print each kernel name with its dtype and layout."""
    import torch
    from cute_nvarch.jit_spec import entry_symbol

    from .transpose import TILE, pack_for, transpose

    if argv:
        print(f"usage: python -m cute_examples.transpose_ncu (no arguments), got {argv}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("transpose_ncu: no CUDA device; run it on a GPU host under ncu", file=sys.stderr)
        return 1
    side = 4096
    for dtype in (torch.float32, torch.float16):
        x = torch.randn(side, side, device="cuda").to(dtype)
        y = torch.empty_like(x)
        pack = pack_for(x, y)
        grid = (side // (TILE * pack), side // (TILE * pack))
        for swizzle in (True, False):
            for _ in range(3):
                transpose(x, y, pack, swizzle, grid=grid)
            torch.cuda.synchronize()
            assert torch.equal(y, x.t())
            spec = transpose.specialize(x, y, pack, swizzle)[0]
            print(f"{entry_symbol(spec)}: {str(dtype).removeprefix('torch.')}, "
                  f"{'swizzled' if swizzle else 'naive'} shared tile")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

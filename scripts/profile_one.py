"""Launch one GEMM config on one shape a few times (for a profiler such as ncu to capture), after a correctness check.

    python3 scripts/profile_one.py 4097x4104x4096 dense_gemm_bf16_f32_bf16_kkn_128x256x64_c1x1_s4_p1s2_streamk
    python3 scripts/profile_one.py 512x4096x4096 dense_gemm_bf16_f32_bf16_kkn_128x256x64_c1x1_s4_p1s2_splitk --splits 2

The config is found by name among the ones `gemm_sweep.py --decompositions split_k,stream_k` runs for the shape.
"""

from __future__ import annotations

import argparse
import sys

from gemm_sweep import _shape, configs

DTYPE = "bfloat16"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("shape", help="MxNxK")
    p.add_argument("config", help=f"a kernel name the bundle holds ({DTYPE}, K-major A and B)")
    p.add_argument("--splits", type=int, default=1)
    p.add_argument("--launches", type=int, default=3)
    args = p.parse_args()
    import torch
    from cute_examples.dense_gemm.bench_models import prepare_row
    from cute_examples.dense_gemm.bench_run import operands
    from cute_runtime import device_properties

    mnk = _shape(args.shape)
    sms = device_properties(0).sm_count
    found = [cfg for cfg, _ in configs(mnk, DTYPE, ["cooperative", "pingpong"], sms, ("split_k", "stream_k"))
             if cfg.name == args.config]
    if not found:
        print(f"no config named {args.config} for {args.shape}")
        return 1
    a, b, c = operands((*mnk, 1), DTYPE)
    ref = torch.matmul(a, b)
    fn, err, label = prepare_row(found[0], args.splits, a, b, c, ref, sms)
    print(found[0].name, label, f"error {err:.1e}")
    for _ in range(args.launches):
        fn()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())

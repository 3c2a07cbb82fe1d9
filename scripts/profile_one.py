"""Launch one GEMM config on one shape a few times (for a profiler such as ncu to capture), after a correctness check.

    python3 scripts/profile_one.py 4097x4104x4096 dense_gemm_bf16_f32_bf16_kkn_128x256x64_c1x1_s4_p1s2_streamk
    python3 scripts/profile_one.py 512x4096x4096 dense_gemm_bf16_f32_bf16_kkn_128x256x64_c1x1_s4_p1s2_splitk --splits 2
    python3 scripts/profile_one.py 1x4096x4096 dense_gemm_e4m3_f32_bf16_kkn_64x128x128_c1x1_s8_p1s2_stt \
        --dtype float8_e4m3fn
    python3 scripts/profile_one.py 1x4096x4096 peer --dtype float8_e4m3fn     # the peer (torch.matmul, _scaled_mm)

The config is found by name among the ones `gemm_sweep.py --decompositions split_k,stream_k` runs for the shape.
"""

from __future__ import annotations

import argparse
import sys

from gemm_sweep import _operands, _prepare, _shape, configs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("shape", help="MxNxK")
    p.add_argument("config", help="a kernel name the bundle holds (K-major A and B), or 'peer'")
    p.add_argument("--dtype", default="bfloat16", help="A and B (gemm_sweep's --dtype)")
    p.add_argument("--promotion", type=int, default=0, help="FP8: promote every N k-blocks (0: never)")
    p.add_argument("--splits", type=int, default=1)
    p.add_argument("--launches", type=int, default=3)
    p.add_argument("--order", default=None, metavar="R,S",
                   help="a data-parallel launch's raster_along_n (0/1) and swizzle_log (default: the host's)")
    args = p.parse_args()
    import torch
    from cute_runtime import device_properties

    mnk = _shape(args.shape)
    sms = device_properties(0).sm_count
    ops = _operands(mnk, args.dtype, args.promotion)
    if args.config == "peer":
        fn = ops[4]
        print(ops[5])
    else:
        found = [cfg for cfg, _ in configs(mnk, args.dtype, ["cooperative", "pingpong"], sms, ("split_k", "stream_k"),
                                           args.promotion) if cfg.name == args.config]
        if not found:
            print(f"no config named {args.config} for {args.shape}")
            return 1
        order = tuple(int(x) for x in args.order.split(",")) if args.order else (None, None)
        fn, err, label = _prepare(found[0], args.splits, ops, sms, order)
        print(found[0].name, label, f"error {err:.1e}")
    for _ in range(args.launches):
        fn()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Refresh the decomposition model's constants (`k_calibration.json`) from measured runs on this GPU.

    python -m cute_examples.dense_gemm.calibrate [--write] [--bundle DIR]

Probes (float16, K-major A and B, each timed with `timing.median_ms` after a correctness check):
- DRAM: a 1 GiB device-to-device copy (bytes read plus written per microsecond);
- tensor cores: 8192^3 data-parallel on 128x256 tiles, cluster 1x1 (every SM busy, compute bound): the time per
  round over K tiles gives one K tile's time, hence the per-SM FLOP rate at that tile's efficiency;
- SM loads: 64 x 2048 x 65536 on 64x256 tiles (8 SMs, each streaming its operands alone over 1024 K tiles):
  operand bytes per K tile over its time;
- fix-up: split-K with 8 parts of 256 x 256 x 65536 on 128x128 tiles (32 units, one round): what the time
  exceeds the modelled K loop, epilogue and unit overhead by, over the 8 partial-tile transfers on a final
  part's path (the slowest other part's store, then its 7 reads: k_choice's model of the parallel fix-up).
The unit overhead and `min_gain` are kept. Without `--write` the fitted constants are printed only; with it
they replace the file's (with the device name, SM count and date), which is what the cost model reads.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from collections.abc import Sequence
from typing import Any

from ..cli import Parser, add_bundle_flag, make_parser, switch
from .bench_run import no_gpu_ends
from .spec import GemmConfig

__all__ = ["fit", "main", "parser"]

PROBE_DTYPE = "float16"


def _time_us(cfg: GemmConfig, splits: int, mnkl: tuple[int, int, int, int], num_sms: int) -> float:
    """Median microseconds of our launch of cfg on fresh operands (after a check against torch.matmul)."""
    import torch

    from ..timing import median_ms
    from .bench_models import prepare_row
    from .bench_run import operands
    from .spec import TOLERANCE

    a, b, c = operands(mnkl, PROBE_DTYPE)
    ref = torch.matmul(a, b)
    fn, err, label = prepare_row(cfg, splits, a, b, c, ref, num_sms)
    if err > TOLERANCE[PROBE_DTYPE]:
        raise RuntimeError(f"calibration probe {cfg.name} ({label}) is wrong: relative error {err:.2e}")
    t = median_ms(fn, warmup=3, iterations=20) * 1e3
    print(f"  probe {mnkl[0]}x{mnkl[1]}x{mnkl[2]} {cfg.name} | {label}: {t:.1f} us")
    return t


def _copy_bytes_per_us() -> float:
    import torch

    from ..timing import median_ms

    src = torch.empty(1 << 29, dtype=torch.float16, device="cuda")
    dst = torch.empty_like(src)
    t = median_ms(lambda: dst.copy_(src), warmup=3, iterations=20) * 1e3
    return 2 * src.numel() * src.element_size() / t


def fit(num_sms: int) -> dict[str, Any]:
    """Measure the probes on the current GPU and return the constants (the file's fields)."""
    from .calibration import calibration
    from .choice import TILE_EFFICIENCY

    old = calibration()
    out = dataclasses.asdict(old)
    out["hbm_bytes_per_us"] = _copy_bytes_per_us()
    print(f"  DRAM copy: {out['hbm_bytes_per_us'] / 1e3:.0f} GB/s")
    # tensor cores: 8192^3 on 128x256, one CTA per SM
    big = GemmConfig(tile_m=128, tile_n=256)
    sched = big.tile_scheduler
    tiles_m, tiles_n, kt = sched.problem_tiles(8192, 8192, 8192)
    rounds = -(-tiles_m * tiles_n // sched.max_clusters(num_sms))
    epi = 128 * 256 * 2 / old.sm_store_bytes_per_us
    t_k = (_time_us(big, 1, (8192, 8192, 8192, 1), num_sms) / rounds - epi - old.unit_fixed_us) / kt
    out["sm_flop_per_us"] = 2.0 * 128 * 256 * 64 / (t_k * TILE_EFFICIENCY[(128, 256)])
    # SM loads: 8 SMs streaming 64x256 tiles' operands over 1024 K tiles
    narrow = GemmConfig(tile_m=64, tile_n=256)
    t_k = (_time_us(narrow, 1, (64, 2048, 65536, 1), num_sms) - 64 * 256 * 2 / old.sm_store_bytes_per_us) / 1024
    out["sm_load_bytes_per_us"] = (64 + 256) * 64 * 2 / t_k
    # fix-up: split-K 8 parts of 4 tiles of 128x128, 128 K tiles per part, 8 transfers on the final part's path
    split = GemmConfig(tile_m=128, tile_n=128, decomposition="split_k")
    probe = dataclasses.replace(old, **{k: out[k] for k in ("sm_flop_per_us", "sm_load_bytes_per_us")})
    eff = TILE_EFFICIENCY[(128, 128)]
    t_k = max(2.0 * 128 * 128 * 64 / (probe.sm_flop_per_us * eff), 256 * 64 * 2 / probe.sm_load_bytes_per_us)
    t = _time_us(split, 8, (256, 256, 65536, 1), num_sms)
    extra = t - 128 * t_k - old.unit_fixed_us - 128 * 128 * 2 / old.sm_store_bytes_per_us
    if extra > 0:
        out["sm_fixup_bytes_per_us"] = 8 * 128 * 128 * 4 / extra
    return out


def parser() -> Parser:
    """The command line of the calibration."""
    p = make_parser("python -m cute_examples.dense_gemm.calibrate", (__doc__ or "").split("\n")[0], [
        "python -m cute_examples.dense_gemm.calibrate",
        "python -m cute_examples.dense_gemm.calibrate --write --bundle build/aot",
    ])
    switch(p, "--write", help="replace the constants in k_calibration.json with the fitted ones")
    add_bundle_flag(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Fit the constants on this GPU; print them, and with --write store them."""
    args = parser().parse_args(argv)
    if no_gpu_ends(args, "nothing (the calibration measures GEMM launches)", "the GEMM calibration"):
        return 0
    import torch
    from cute_runtime import device_properties

    from .calibration import CALIBRATION_FILE, calibration

    props = device_properties(torch.cuda.current_device())
    name = torch.cuda.get_device_name()
    print(f"device: {name}, {props.sm_count} SMs")
    consts = fit(props.sm_count)
    consts.update(device=name, num_sms=props.sm_count, date=datetime.date.today().isoformat())
    for k, v in consts.items():
        print(f"{k}: {v}")
    if args.write:
        with open(CALIBRATION_FILE) as f:
            data = json.load(f)
        data.update(consts)
        with open(CALIBRATION_FILE, "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        calibration.cache_clear()
        print(f"written: {CALIBRATION_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

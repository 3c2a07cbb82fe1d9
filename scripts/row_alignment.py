"""Rows off 32-byte sectors against a partial K tile: one shape, operands of chosen leading dimensions and majors.

    python3 scripts/row_alignment.py --specs FILE    # here (MLIR host): its kernels, for build_bundle --add-specs
    python3 scripts/row_alignment.py --json rows.json   # on the GPU host: the table, every row also to a file

M x N x K (3775 x 9776) in bfloat16 (and two E4M3 cases, bfloat16 C) with A and B given as slices of wider tensors
where a leading dimension is not the dense one; per case and tile (128x256, 128x192) gemm() without a cluster and with
a 2x1 cluster and the peer (torch.matmul; for E4M3 torch._scaled_mm with use_fast_accum), each replayed from its own
CUDA graph in alternating rounds on identical tensors, every output checked against the peer's first.
`choice.OFF_SECTOR_K_TILE_US` and the tests' `data/row_alignment_h200.json` come from it.
"""

from __future__ import annotations

import argparse
import json
import sys

M, N = 3775, 9776
TILES = ((128, 256), (128, 192))
CLUSTERS = ((1, 1), (2, 1))
# name: (dtype, K, A's major, B's major, A's leading dimension, B's leading dimension), in elements
CASES = {
    "K7040": ("bfloat16", 7040, "k", "k", 7040, 7040),
    "K7096": ("bfloat16", 7096, "k", "k", 7096, 7096),
    "K7088": ("bfloat16", 7088, "k", "k", 7088, 7088),
    "K7104": ("bfloat16", 7104, "k", "k", 7104, 7104),
    "K7040 ld7048": ("bfloat16", 7040, "k", "k", 7048, 7048),
    "K7096 ld7104": ("bfloat16", 7096, "k", "k", 7104, 7104),
    "K7040 lda7048": ("bfloat16", 7040, "k", "k", 7048, 7040),
    "K7040 ldb7048": ("bfloat16", 7040, "k", "k", 7040, 7048),
    "K7040 ld7056": ("bfloat16", 7040, "k", "k", 7056, 7056),
    "K7040 Bn ldb9776": ("bfloat16", 7040, "k", "n", 7040, 9776),
    "K7040 Bn ldb9784": ("bfloat16", 7040, "k", "n", 7040, 9784),
    "K7040 Am lda3776": ("bfloat16", 7040, "m", "k", 3776, 7040),
    "K7040 Am lda3784": ("bfloat16", 7040, "m", "k", 3784, 7040),
    "e4m3 K7040": ("float8_e4m3fn", 7040, "k", "k", 7040, 7040),
    "e4m3 K7056": ("float8_e4m3fn", 7056, "k", "k", 7056, 7056),
}


def _tile_k(dtype: str) -> int:
    """One row of an operand per K tile (`spec.TILE_K_BYTES`, as GemmConfig's default tile K)."""
    from cute_examples.dense_gemm.spec import TILE_K_BYTES
    from cute_nvarch.numeric import numeric_type

    return TILE_K_BYTES // numeric_type(dtype).bytes


def write_specs(path: str) -> int:
    """Write the kernels the cases run as CUTE_RECORD_MISSES lines (build_bundle --add-specs FILE)."""
    from cute_examples.dense_gemm.choice import GemmShape
    from cute_examples.dense_gemm.host import choose_config
    from cute_examples.dense_gemm.kernel import _kernel_fn, gemm_spec

    lines: dict[str, str] = {}
    for dtype, k, am, bm, _, _ in CASES.values():
        shape = GemmShape(M, N, k, 1, dtype, "bfloat16", am, bm, "n")
        for tile in TILES:
            for cluster in CLUSTERS:
                cfg = choose_config(shape, "float32", (*tile, _tile_k(dtype)), cluster)
                spec = gemm_spec(cfg)
                lines[json.dumps(spec, sort_keys=True)] = json.dumps(
                    {"kernel": _kernel_fn(cfg).name, "spec": spec, "target": "sm_90a"})
    with open(path, "w") as fh:
        fh.write("\n".join(lines.values()) + "\n")
    return len(lines)


def _operands(dtype: str, k: int, a_major: str, b_major: str, a_ld: int, b_ld: int) -> tuple:
    """A (M, K) and B (K, N) of `dtype` with those majors and leading dimensions."""
    import torch

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, device="cuda").to(getattr(torch, dtype))

    a = rand(M, a_ld)[:, :k] if a_major == "k" else rand(k, a_ld)[:, :M].t()
    b = rand(N, b_ld)[:, :k].t() if b_major == "k" else rand(k, b_ld)[:, :N]
    return a, b


def _peer(a: object, b: object, out: object) -> object:
    """torch.matmul into out; for 8-bit operands torch._scaled_mm (unit scales, bfloat16 out, fast accumulation)."""
    import torch

    if a.element_size() == 2:
        return lambda: torch.matmul(a, b, out=out)
    one = torch.ones((), device="cuda")
    return lambda: out.copy_(torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                              use_fast_accum=True))


def _time_case(name: str, a: object, b: object, tile: tuple[int, int, int]) -> list[float]:
    """us of gemm() without a cluster, with a 2x1 cluster and of the peer on a, b (outputs checked first)."""
    import torch
    from cute_examples.dense_gemm import gemm
    from cute_examples.timing import interleaved_graph_ms

    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(3)]

    def ours(c: torch.Tensor, cluster: tuple[int, int]) -> object:
        return lambda: gemm(a, b, c, c_dtype=torch.bfloat16, tile_shape_mnk=tile, cluster_shape_mn=cluster)

    fns = [ours(c, cluster) for c, cluster in zip(outs, CLUSTERS, strict=False)]
    fns.append(_peer(a, b, outs[2]))
    fns[2]()
    ref = outs[2].float()
    for fn, c in zip(fns[:2], outs, strict=False):
        fn()
        err = float((c.float() - ref).norm() / ref.norm())
        if err > 1e-2:
            raise SystemExit(f"{name} {tile}: normwise error {err:.2e}")
    return [ms * 1e3 for ms in interleaved_graph_ms(fns, calls=10, iterations=8, rounds=3)]


def run(json_path: str | None) -> None:
    """Time every case and print the table (every row also to `json_path`)."""
    import torch

    torch.manual_seed(0)
    rows = []
    print("case | tile | no cluster us | 2x1 us | peer us | no cluster / 2x1")
    for name, (dtype, k, am, bm, a_ld, b_ld) in CASES.items():
        a, b = _operands(dtype, k, am, bm, a_ld, b_ld)
        for tile in TILES:
            t = _time_case(name, a, b, (*tile, _tile_k(dtype)))
            print(f"{name} | {tile[0]}x{tile[1]} | {t[0]:.1f} | {t[1]:.1f} | {t[2]:.1f} | {t[0] / t[1]:.3f}",
                  flush=True)
            rows.append([dtype, M, N, k, am, bm, a_ld, b_ld, *tile, *(round(x, 2) for x in t)])
    if json_path:
        with open(json_path, "w") as fh:
            json.dump({"rows": rows}, fh)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--specs", metavar="FILE", help="write the kernels the cases run (build_bundle --add-specs)")
    p.add_argument("--json", metavar="FILE", help="write every measured row here")
    args = p.parse_args()
    if args.specs:
        print(f"{write_specs(args.specs)} specs -> {args.specs}")
        return 0
    run(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

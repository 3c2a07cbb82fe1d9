"""Which out-of-bound TMA access slows a launch: A's box rows past M, or C's store rows past M (one process, CUDA
graphs, alternating rounds, one bfloat16 problem per argument).

    python3 scripts/edge_tiles.py 400x4096x4096:128x64:1x1:512 520x4096x4096:128x192:1x1:640

Each argument is `MxNxK:TILE_MxTILE_N:CLUSTER_MxCLUSTER_N:PADDED_M`. A and C are the first M rows of PADDED_M-row
buffers; the same kernel runs four ways: as gemm() launches it, with A's tensor map over the padded rows (its
boxes in bounds), with C's over them (its stores unclipped), and the whole padded problem. Every output is checked
against torch first. Since `GemmConfig.clamped_edges` the first three run the same (the edge tile's boxes are in
bounds); before it, A's out-of-bound rows were the whole cost (docs/performance.md).
"""

from __future__ import annotations

import argparse


def _run(m: int, n: int, k: int, tile: tuple[int, int], cluster: tuple[int, int], padded: int) -> None:
    import torch
    from cute_examples.dense_gemm.choice import GemmShape
    from cute_examples.dense_gemm.host import choose_config, problem_of, resident_sms, schedule, tensor_maps
    from cute_examples.dense_gemm.kernel import kernel_of
    from cute_examples.timing import interleaved_graph_ms
    from cute_nvarch.target import SM90A

    torch.manual_seed(0)
    a_pad = torch.randn(padded, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()  # (K, N), K contiguous: F.linear's weight
    c_pad = torch.empty(padded, n, device="cuda", dtype=torch.bfloat16)
    a, c = a_pad[:m], c_pad[:m]
    cfg = choose_config(GemmShape(m, n, k, 1, "bfloat16", "bfloat16"), "float32", (*tile, 64), cluster, 132)
    kern = kernel_of(cfg, SM90A.compute_capability)
    small, big = problem_of(a, b, c), problem_of(a_pad, b, c_pad)
    (a_small, b_map, c_small), (a_big, _, c_big) = tensor_maps(small, cfg), tensor_maps(big, cfg)
    sms = resident_sms(kern, cfg, 132)
    grid, raster, swz = schedule(small, cfg, sms)
    grid_p, raster_p, swz_p = schedule(big, cfg, sms)

    def launch(a_map, c_map, rows, g, r, s):  # noqa: ANN001, ANN202
        return lambda: kern.launch(g, a_map, b_map, c_map, rows, n, k, 1, r, s)

    ways = {
        "as gemm() launches it": launch(a_small, c_small, m, grid, raster, swz),
        "A's boxes in bounds": launch(a_big, c_small, m, grid, raster, swz),
        "C's stores unclipped": launch(a_small, c_big, m, grid, raster, swz),
        f"the padded problem (M = {padded})": launch(a_big, c_big, padded, grid_p, raster_p, swz_p),
    }
    ref = a.float() @ b.float()
    for name, fn in ways.items():
        c_pad.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        err = float((c.float() - ref).norm() / ref.norm())
        if not err <= 2e-2:
            raise SystemExit(f"{m}x{n}x{k} {name}: normwise error {err:.1e}")
    us = [t * 1e3 for t in interleaved_graph_ms(list(ways.values()), calls=30, iterations=10, rounds=3)]
    print(f"{m}x{n}x{k} {cfg.name} grid={grid}:")
    for name, t in zip(ways, us, strict=True):
        print(f"  {t:8.2f} us  {name}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("cases", nargs="+", help="MxNxK:TILE_MxTILE_N:CLUSTER_MxCLUSTER_N:PADDED_M")
    for case in p.parse_args().cases:
        mnk, tile, cluster, padded = case.split(":")
        m, n, k = (int(x) for x in mnk.lower().split("x"))
        tm, tn = (int(x) for x in tile.split("x"))
        cm, cn = (int(x) for x in cluster.split("x"))
        _run(m, n, k, (tm, tn), (cm, cn), int(padded))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

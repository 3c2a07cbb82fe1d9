"""Fused bias rows: gemm()'s pick (split-K / stream-K where the plain call splits, deep stages) against the
data-parallel config a fused call ran before `dense_gemm_split_fused` (choose_epilogue_config's, given as tile and
cluster), our plain GEMM and eager torch.addmm (+ the residual), on the same tensors in one process, alternating,
in CUDA graphs and back to back.

    python3 scripts/fused_decompose_ab.py --specs FILE   # here (MLIR host): the old configs' specs
    python -m cute_examples.build_bundle build/aot --add-specs FILE
    python3 scripts/fused_decompose_ab.py                # there (GPU host, CUTE_BUNDLE_DIR=build/aot)

Rows: bench_epilogue's decode-like shapes (`epilogue_cases.DECODE_SHAPES`) and the 512-token down-projection,
bfloat16, each with a bias and with a bias and the residual stream as the input addend (docs/performance.md, the
thirteenth session).
"""

from __future__ import annotations

import argparse
import json
import sys


def _shapes() -> tuple:
    from cute_examples.dense_gemm.epilogue_cases import DECODE_SHAPES, DOWN_SHAPES

    return DECODE_SHAPES + DOWN_SHAPES[:1]


KINDS = {"bias": {"bias": "n"}, "bias+residual": {"bias": "n", "has_input": True}}


def _old_config(t: int, k: int, n: int, fields: dict):  # noqa: ANN202
    """The data-parallel config a fused call of the row took before its split form existed."""
    from cute_examples.dense_gemm.epilogue_cases import bench_problem
    from cute_examples.dense_gemm.host import choose_epilogue_config

    return choose_epilogue_config(bench_problem(t, k, n), fields)


def write_specs(path: str) -> int:
    """The old configs' JIT specs as CUTE_RECORD_MISSES lines (build_bundle --add-specs FILE)."""
    from cute_examples.dense_gemm.kernel import _kernel_fn, gemm_spec

    lines = []
    for t, k, n in _shapes():
        for fields in KINDS.values():
            cfg = _old_config(t, k, n, fields)
            lines.append(json.dumps({"kernel": _kernel_fn(cfg).name, "spec": gemm_spec(cfg), "target": "sm_90a"}))
    lines = list(dict.fromkeys(lines))
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return len(lines)


def _calls(gemm, abcb: tuple, res, old) -> list:  # noqa: ANN001
    """Now's gemm(), the old config's, our plain GEMM and eager torch on the row's tensors (a, b, out, bias)."""
    import torch

    a, b, out, bias = abcb
    extra = {} if res is None else {"input": res}
    tile, cluster = (old.tile_m, old.tile_n, old.tile_k), (old.cluster_m, old.cluster_n)
    return [
        lambda: gemm(a, b, out, bias=bias, **extra),
        lambda: gemm(a, b, out, bias=bias, tile_shape_mnk=tile, cluster_shape_mn=cluster, **extra),
        lambda: gemm(a, b, out),
        (lambda: torch.addmm(bias, a, b)) if res is None else (lambda: torch.addmm(bias, a, b).add_(res)),
    ]


def rows() -> list[str]:
    """The table (see the module doc)."""
    import torch
    from cute_examples.dense_gemm import gemm
    from cute_examples.timing import interleaved_graph_ms, interleaved_median_ms

    td = torch.bfloat16
    out_rows = [f"device: {torch.cuda.get_device_name()}",
                f"{'row':30} {'timer':5} {'now us':>7} {'old us':>7} {'old/now':>7} {'plain':>7} {'eager':>7} "
                f"{'eager/now':>9}"]
    for t, k, n in _shapes():
        a = torch.randn(t, k, device="cuda", dtype=td)
        w = torch.randn(n, k, device="cuda", dtype=td) / k**0.5
        b, bias = w.t(), torch.randn(n, device="cuda", dtype=td)
        out, res = torch.empty(t, n, device="cuda", dtype=td), torch.randn(t, n, device="cuda", dtype=td)
        for kind, fields in KINDS.items():
            old = _old_config(t, k, n, fields)
            fns = _calls(gemm, (a, b, out, bias), res if fields.get("has_input") else None, old)
            ref = fns[3]()
            for fn in fns[:2]:
                fn()
                err = float((out.float() - ref.float()).norm() / ref.float().norm())
                if err > 1.6e-2:
                    raise AssertionError(f"{kind} {t}x{k}->{n}: relative error {err:.2e}")
            for timer, ms in (("graph", interleaved_graph_ms(fns, iterations=40)),
                              ("b2b", interleaved_median_ms(fns, iterations=40))):
                us = [x * 1e3 for x in ms]
                out_rows.append(f"{kind + f' {t}x{k}->{n}':30} {timer:5} {us[0]:7.1f} {us[1]:7.1f} "
                                f"{us[1] / us[0]:7.3f} {us[2]:7.1f} {us[3]:7.1f} {us[3] / us[0]:8.3f}x")
            out_rows.append(f"  old: {old.name}")
    return out_rows


def main(argv: list[str] | None = None) -> int:
    """Print the table, or write the old configs' specs with --specs."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--specs", metavar="FILE", help="write the old configs' specs (for build_bundle --add-specs)")
    args = p.parse_args(argv)
    if args.specs:
        print(f"{write_specs(args.specs)} specs written to {args.specs}")
        return 0
    for row in rows():
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m cute_examples.dense_gemm`: run (and check, and time) the Hopper GEMM with dense_gemm.py's flags.

    python -m cute_examples.dense_gemm --mnkl 8192,8192,8192,1 --tile_shape_mnk 128,256,64 \\
        --cluster_shape_mn 2,1 --a_dtype Float16 --b_dtype Float16 --c_dtype Float16 --acc_dtype Float32 \\
        --a_major k --b_major k --c_major n --benchmark

Every run compiles (or loads) the kernel and prints its resource line; without a GPU it then prints
`no GPU found` and exits 0. With one it checks the result against a float32 torch reference (normwise
relative error <= --tolerance, unless --skip_ref_check) and with --benchmark prints the time, TFLOP/s and
the ratio to torch.matmul on the same tensors in the same process. --use_cold_l2 cycles through enough
copies of the operands to defeat the L2 cache between timed calls. --variant picks the speed options
("fast": pipelined wgmma, scale-d 0 start, double-buffered epilogue; "base": the first, unpipelined kernel).
--tune times the cost model's best few configurations (and tile orders) for the shape on the GPU, keeps the
fastest in the tune cache (cute_examples.config.tune_cache_path(); gemm() then uses it for that shape) and
runs the check and benchmark with it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..cli import add_bundle_flag, apply_bundle_flag
from ..report import NO_GPU, resource_line
from .spec import VARIANTS, GemmConfig, canonical_dtype, tolerance

__all__ = ["main", "make_operands", "parse_args", "reference_error"]

def _ints(text: str, n: int, what: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{what} must be {n} comma-separated integers, got {text!r}"
        ) from None
    if len(vals) != n:
        raise argparse.ArgumentTypeError(f"{what} must be {n} comma-separated integers, got {text!r}")
    return vals


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line of dense_gemm.py."""
    p = argparse.ArgumentParser(prog="python -m cute_examples.dense_gemm", description=__doc__.split("\n")[0])
    p.add_argument("--mnkl", type=lambda s: _ints(s, 4, "--mnkl"), default=(4096, 4096, 4096, 1))
    p.add_argument("--tile_shape_mnk", type=lambda s: _ints(s, 3, "--tile_shape_mnk"), default=(128, 128, 64))
    p.add_argument("--cluster_shape_mn", type=lambda s: _ints(s, 2, "--cluster_shape_mn"), default=(1, 1))
    p.add_argument("--a_dtype", default="Float16")
    p.add_argument("--b_dtype", default="Float16")
    p.add_argument("--c_dtype", default="Float16")
    p.add_argument("--acc_dtype", default="Float32")
    p.add_argument("--a_major", choices=("k", "m"), default="k")
    p.add_argument("--b_major", choices=("k", "n"), default="k")
    p.add_argument("--c_major", choices=("n", "m"), default="n")
    p.add_argument("--tolerance", type=float, default=None)
    p.add_argument("--warmup_iterations", type=int, default=2)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--skip_ref_check", action="store_true")
    p.add_argument("--use_cold_l2", action="store_true")
    p.add_argument("--benchmark", action="store_true")
    add_bundle_flag(p)
    p.add_argument("--variant", choices=tuple(VARIANTS), default="fast", help="speed options of the kernel")
    p.add_argument(
        "--tune", action="store_true", help="time candidate configs for this shape and cache the fastest"
    )
    args = p.parse_args(argv)
    m, n, k, l = args.mnkl
    if min(m, n, k, l) < 1:
        p.error(f"--mnkl values must be >= 1, got {args.mnkl}")
    if args.iterations < 1 or args.warmup_iterations < 0:
        p.error("--iterations must be >= 1 and --warmup_iterations >= 0")
    return args


def config_of(args: argparse.Namespace) -> GemmConfig:
    """The kernel configuration the flags ask for (ValueError naming a bad flag)."""
    tm, tn, tk = args.tile_shape_mnk
    cm, cn = args.cluster_shape_mn
    return GemmConfig(
        a_dtype=canonical_dtype(args.a_dtype, "--a_dtype"),
        b_dtype=canonical_dtype(args.b_dtype, "--b_dtype"),
        c_dtype=canonical_dtype(args.c_dtype, "--c_dtype"),
        acc_dtype=canonical_dtype(args.acc_dtype, "--acc_dtype"),
        a_major=args.a_major,
        b_major=args.b_major,
        c_major=args.c_major,
        tile_m=tm,
        tile_n=tn,
        tile_k=tk,
        cluster_m=cm,
        cluster_n=cn,
    ).with_variant(args.variant)


def _torch_dtype(name: str) -> Any:
    from ..torch_types import torch_dtype

    return torch_dtype(name)


def _matrix(l: int, rows: int, cols: int, contiguous_cols: bool, dtype: Any, device: Any, fill: str) -> Any:
    """An (l, rows, cols) tensor, contiguous along cols (else rows), leading dimension padded to 16 bytes."""
    import torch

    e = torch.empty((), dtype=dtype).element_size()
    inner, outer = (cols, rows) if contiguous_cols else (rows, cols)
    ld = -(-inner * e // 16) * 16 // e
    storage = torch.empty((l, outer, ld), dtype=dtype, device=device)
    if fill == "randn":
        storage.normal_()
    else:
        storage.fill_(float("nan") if dtype.is_floating_point else 0)
    view = storage[:, :, :inner]
    return view if contiguous_cols else view.transpose(1, 2)


def make_operands(
    cfg: GemmConfig, m: int, n: int, k: int, l: int, device: Any = "cuda"
) -> tuple[Any, Any, Any]:
    """Random normal A (l,m,k) and B (l,k,n) and a NaN-poisoned C (l,m,n) with the config's majors."""
    ab = _torch_dtype(cfg.a_dtype)
    a = _matrix(l, m, k, cfg.a_major == "k", ab, device, "randn")
    b = _matrix(l, k, n, cfg.b_major == "n", ab, device, "randn")
    c = _matrix(l, m, n, cfg.c_major == "n", _torch_dtype(cfg.c_dtype), device, "nan")
    return a, b, c


def reference_error(a: Any, b: Any, c: Any) -> float:
    """Normwise relative error ||C - A@B||_F / ||A@B||_F with a float32 reference."""
    import torch

    ref = torch.matmul(a.float(), b.float())
    diff = (c.float() - ref).norm()
    scale = ref.norm()
    if scale == 0:
        return float(diff)
    return float(diff / scale)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = parse_args(argv)
    try:
        cfg = config_of(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    m, n, k, l = args.mnkl
    from cute_runtime import gpu_available

    apply_bundle_flag(args)
    if not gpu_available():
        from .host import compile_gemm

        art = compile_gemm(cfg, cfg.target)
        print(f"kernel: {cfg.name}")
        print(resource_line(art.entry["resources"]))
        print(NO_GPU)
        return 0
    return _run_on_gpu(args, cfg, m, n, k, l)


def _run_on_gpu(args: argparse.Namespace, cfg: GemmConfig, m: int, n: int, k: int, l: int) -> int:
    import torch
    from cute_runtime import device_properties

    from .._compiled import kernel_for
    from ..timing import interleaved_median_ms
    from .host import compile_gemm, launch_gemm, problem_of, schedule, tensor_maps

    props = device_properties(torch.cuda.current_device())
    cc = tuple(props.compute_capability)
    order: tuple[int | None, int | None] = (None, None)
    if args.tune and cc == (9, 0):
        from .tune import tune

        torch.manual_seed(0)
        ta, tb, tc = make_operands(cfg, m, n, k, l)
        best, rows = tune(ta, tb, tc, cfg.acc_dtype, iterations=max(args.iterations, 10))
        del ta, tb, tc
        for row in rows:
            print(f"tune: {row}")
        cfg, order = best.config, (best.raster_along_n, best.swizzle_log)
    kernel = kernel_for(cfg.spec(), lambda target: compile_gemm(cfg, target), cc)
    print(f"kernel: {cfg.name}")
    print(resource_line(kernel.entry.resources))
    if cc != (9, 0):
        print(f"this kernel needs an sm_90 GPU; found compute capability {cc[0]}.{cc[1]}")
        return 0
    torch.manual_seed(0)
    a, b, c = make_operands(cfg, m, n, k, l)
    problem = problem_of(a, b, c)
    launch_gemm(kernel, problem, cfg, props.sm_count, None, *order)
    torch.cuda.synchronize()
    status = 0
    if not args.skip_ref_check:
        tol = args.tolerance if args.tolerance is not None else tolerance(cfg.acc_dtype, cfg.c_dtype)
        err = reference_error(a, b, c)
        ok = err <= tol and bool(torch.isfinite(c.float()).all())
        print(
            f"reference check: normwise relative error {err:.3e} (tolerance {tol:.1e}): "
            f"{'PASS' if ok else 'FAIL'}"
        )
        status = 0 if ok else 1
    if args.benchmark:
        sets = [(a, b, c)]
        if args.use_cold_l2:
            bytes_per = sum(t.untyped_storage().nbytes() for t in (a, b, c))
            copies = (
                max(1, -(-2 * props.l2_cache_bytes // bytes_per)) if hasattr(props, "l2_cache_bytes") else 4
            )
            sets += [make_operands(cfg, m, n, k, l) for _ in range(min(copies, 16))]
        probs = [problem_of(*s) for s in sets]
        # encode the descriptors once: the timed loop only launches
        grid, raster_n, swz = schedule(probs[0], cfg, props.sm_count, *order)
        launches = [(*tensor_maps(p, cfg), p.m, p.n, p.k, p.l, raster_n, swz) for p in probs]
        i = [0]

        def ours() -> None:
            kernel.launch(grid, *launches[i[0] % len(launches)])
            i[0] += 1

        j = [0]

        def theirs() -> None:
            x, y, _ = sets[j[0] % len(sets)]
            torch.matmul(x, y)
            j[0] += 1

        t_ours, t_torch = interleaved_median_ms(
            [ours, theirs], warmup=args.warmup_iterations, iterations=max(args.iterations, 4)
        )
        flops = 2.0 * m * n * k * l
        print(
            f"time: {t_ours * 1e3:.1f} us, {flops / t_ours / 1e9:.1f} TFLOP/s; "
            f"torch.matmul: {t_torch * 1e3:.1f} us, "
            f"{flops / t_torch / 1e9:.1f} TFLOP/s; ratio to torch: {t_torch / t_ours:.3f}"
        )
    return status


if __name__ == "__main__":
    sys.exit(main())

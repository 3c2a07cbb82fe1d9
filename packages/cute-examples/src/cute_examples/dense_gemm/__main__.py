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
runs the check and benchmark with it. --schedule pingpong builds CUTLASS's ping-pong consumer schedule (two
consumer warpgroups take whole tiles alternately, one's epilogue overlapping the other's mainloop).

8-bit inputs: `--a_dtype Float8E4M3FN --b_dtype Float8E5M2 --c_dtype BFloat16` (A and B K-major; the tile's K
is 128 unless --tile_shape_mnk says otherwise); `--mma_promotion_interval 4` adds two-level accumulation. The
benchmark compares with torch._scaled_mm on the same tensors: use_fast_accum=True against ours without
promotion, False against ours with it. `--c_dtype Float8E4M3FN` (8-bit inputs, --c_major n) stores
satfinite(D * --out_scale) as E4M3 and writes amax = max |D|: the check compares with torch float32's D scaled,
clamped to +-448 and rounded to E4M3, and amax with max |D|; the benchmark compares with
torch._scaled_mm(..., out_dtype=float8_e4m3fn, scale_result=out_scale).

--epilogue adds the fused epilogue `C = act(alpha * A @ B + beta * input + bias)`: a comma list of an
activation (relu, gelu, gelu_tanh, silu, swiglu), `bias_n` / `bias_m` (a random vector along N / M), `input`
(a random (L, M, N) addend), `alpha=X`, `beta=X`; e.g. `--epilogue gelu,bias_n` or `--epilogue
bias_m,input,alpha=0.5,beta=2`. With swiglu, N is B's (interleaved gate/up) width and C has N/2 columns.
The check compares with torch float32 of the same function; --benchmark times it against eager torch
(`act(torch.addmm(...))`, SwiGLU `silu(a @ wg) * (a @ wu)`). `--pre_activation` (with --epilogue, not swiglu)
also stores the pre-activation `alpha * A @ B + beta * input + bias` into a second (L, M, N) tensor of C's dtype
(gemm()'s `pre_activation_out`), checked against torch float32 the same way (a second report line); eager torch
materializes it anyway (`pre = torch.addmm(...); act(pre)`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from ..cli import (
    Parser,
    add_bundle_flag,
    apply_bundle_flag,
    dtype_of,
    int_list,
    make_parser,
    number,
    option,
    switch,
)
from ..report import no_gpu_ending, resource_line
from . import spec
from .spec import (
    AB_DTYPES,
    ACC_DTYPES,
    C_DTYPES,
    FP8_C_DTYPES,
    FP8_DTYPES,
    VARIANTS,
    GemmConfig,
    canonical_dtype,
    padded_ld,
    runs_on,
    tolerance,
)

__all__ = ["epilogue_of", "main", "make_operands", "parse_args", "parser", "reference_error"]


_DEFAULT_TILE = (128, 128, 64)


def parser() -> Parser:
    """The command line of dense_gemm.py."""
    p = make_parser("python -m cute_examples.dense_gemm", (__doc__ or "").split("\n")[0], [
        "python -m cute_examples.dense_gemm --mnkl 8192,8192,8192,1 --tile_shape_mnk 128,256,64 "
        "--cluster_shape_mn 2,1 --benchmark",
        "python -m cute_examples.dense_gemm --mnkl 1000,1000,1000,1 --a_major m --c_dtype BFloat16",
        "python -m cute_examples.dense_gemm --mnkl 4096,4096,4096,1 --tune",
    ])
    option(p, "--mnkl", type=int_list(4), default=(4096, 4096, 4096, 1), example="8192,8192,8192,1",
           metavar="M,N,K,L", help="problem shape: C (M x N) = A (M x K) B (K x N), L batches")
    option(p, "--tile_shape_mnk", type=int_list(3), default=_DEFAULT_TILE, example="128,256,64",
           metavar="M,N,K", help=f"CTA tile (M in {spec.TILE_M}, N in {spec.TILE_N}, K = {spec.TILE_K_BYTES} "
                                 "bytes of A: 64 for 16-bit, 128 for 8-bit inputs)")
    option(p, "--cluster_shape_mn", type=int_list(2), default=(1, 1), example="2,1", metavar="M,N",
           help=f"thread-block cluster shape, one of {' '.join(f'{m},{n}' for m, n in spec.CLUSTER_SHAPES)}")
    for flag, allowed, default, what in (("--a_dtype", AB_DTYPES + FP8_DTYPES, "Float16", "A"),
                                          ("--b_dtype", AB_DTYPES + FP8_DTYPES, "Float16",
                                           "B (the same as A; 8-bit A and B may mix E4M3 and E5M2)"),
                                          ("--c_dtype", C_DTYPES + FP8_C_DTYPES, "Float16",
                                           "C (8-bit: 8-bit inputs, N-major C)"),
                                          ("--acc_dtype", ACC_DTYPES, "Float32", "the accumulator")):
        option(p, flag, type=dtype_of(allowed, flag), default=default, example="BFloat16" if "32" not in default
               else "Float16", shown=default, metavar="DTYPE",
               help=f"element type of {what}: {', '.join(allowed)} (CuTeDSL or torch spelling)")
    for flag, choices, what in (("--a_major", ("k", "m"), "A"), ("--b_major", ("k", "n"), "B"),
                                ("--c_major", ("n", "m"), "C")):
        option(p, flag, choices=choices, default=choices[0], example=choices[1],
               help=f"contiguous mode of {what} ({' or '.join(choices)})")
    option(p, "--tolerance", type=number(float, 0.0, exclusive=True), default=None, example="1e-2",
           shown="the rule for the acc and C dtypes (spec.tolerance)", metavar="X",
           help="largest normwise relative error the reference check accepts, > 0")
    option(p, "--warmup_iterations", type=number(int, 0), default=2, example="5", metavar="N",
           help="untimed calls before timing (--benchmark)")
    option(p, "--iterations", type=number(int, 1), default=10, example="100", metavar="N",
           help="timed calls per measurement (--benchmark, --tune)")
    switch(p, "--skip_ref_check", help="do not compare with the float32 torch reference")
    switch(p, "--use_cold_l2", help="cycle through copies of the operands so that L2 holds none (--benchmark)")
    switch(p, "--benchmark", help="time ours and torch.matmul on the same tensors")
    add_bundle_flag(p)
    option(p, "--variant", choices=tuple(VARIANTS), default="fast", example="base",
           help="speed options of the kernel (spec.VARIANTS)")
    option(p, "--mma_promotion_interval", type=number(int, 0), default=0, example="4", metavar="N",
           help="two-level accumulation: add the wgmma accumulator into a second float32 one every N k-blocks "
                "(a multiple of 4; 0: off; tile N <= 128)")
    option(p, "--schedule", choices=spec.SCHEDULES, default="cooperative", example="pingpong",
           help="consumer schedule: cooperative (warpgroups split a tile's rows) or pingpong (two warpgroups take "
                "whole tiles alternately; tile M*N <= 16384, e.g. 64,256 or 128,128)")
    switch(p, "--tune", help="time candidate configs for this shape on the GPU and cache the fastest")
    option(p, "--out_scale", type=float, default=None, example="0.5", metavar="X", shown="1",
           help="an 8-bit C's factor: C = satfinite(D * X) as E4M3 (torch._scaled_mm's scale_result)")
    option(p, "--epilogue", type=epilogue_of, default=None, example="gelu,bias_n", metavar="LIST", shown="none",
           help="fused epilogue: an activation (relu, gelu, gelu_tanh, silu, swiglu), bias_n or bias_m, input, "
                "alpha=X, beta=X")
    switch(p, "--pre_activation", help="with --epilogue: also store the pre-activation (gemm()'s pre_activation_out)")
    return p


def epilogue_of(text: str) -> dict:
    """The --epilogue list as {activation, bias, input, alpha, beta} (argparse error naming the bad item)."""
    from .activation import ACTIVATIONS

    out: dict = {"activation": None, "bias": None, "input": False, "alpha": 1.0, "beta": None}
    for item in (t.strip() for t in text.split(",") if t.strip()):
        key, _, value = item.partition("=")
        if item in ACTIVATIONS and out["activation"] is None:
            out["activation"] = item
        elif item in ("bias_n", "bias_m") and out["bias"] is None:
            out["bias"] = item[-1]
        elif item == "input":
            out["input"] = True
        elif key in ("alpha", "beta") and value:
            try:
                out[key] = float(value)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{key} must be a number, got {value!r}") from None
        else:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not one of: an activation ({', '.join(ACTIVATIONS)}; one), bias_n or bias_m (one), "
                "input, alpha=X, beta=X"
            )
    if out["beta"] is not None and not out["input"]:
        raise argparse.ArgumentTypeError("beta=X needs input")
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The parsed command line; a flag set no kernel configuration accepts is a usage error (exit status 2)."""
    p = parser()
    args = p.parse_args(argv)
    try:
        config_of(args)
    except ValueError as e:
        p.error(str(e))
    if args.pre_activation and args.epilogue is None:
        p.error("--pre_activation stores the fused epilogue's pre-activation: it needs --epilogue")
    if args.schedule != "cooperative" and args.tune:
        p.error("--tune times its own candidates (both schedules); leave out --schedule")
    if args.epilogue is not None and args.tune:
        p.error("--tune times plain GEMM configs; leave out --epilogue")
    fp8_out = config_of(args).fp8_out
    if args.out_scale is not None and not fp8_out:
        p.error("--out_scale is only for an 8-bit C (--c_dtype Float8E4M3FN)")
    if fp8_out and args.tune:
        p.error("--tune times 16/32-bit C configs; leave out --tune with an 8-bit C")
    if config_of(args).is_fp8 and args.benchmark and args.mnkl[3] != 1:
        p.error("--benchmark of 8-bit inputs compares with torch._scaled_mm, which takes 2-D tensors: use L = 1")
    return args


def config_of(args: argparse.Namespace) -> GemmConfig:
    """The kernel configuration the flags ask for (ValueError naming a bad flag)."""
    tm, tn, tk = args.tile_shape_mnk
    cm, cn = args.cluster_shape_mn
    return GemmConfig(
        a_dtype=canonical_dtype(args.a_dtype, "--a_dtype", AB_DTYPES + FP8_DTYPES),
        b_dtype=canonical_dtype(args.b_dtype, "--b_dtype", AB_DTYPES + FP8_DTYPES),
        c_dtype=canonical_dtype(args.c_dtype, "--c_dtype", C_DTYPES + FP8_C_DTYPES),
        acc_dtype=canonical_dtype(args.acc_dtype, "--acc_dtype"),
        a_major=args.a_major,
        b_major=args.b_major,
        c_major=args.c_major,
        tile_m=tm,
        tile_n=tn,
        # the default tile's K is the dtype's (one 128-byte row of A: 64 16-bit, 128 8-bit elements)
        tile_k=None if tuple(args.tile_shape_mnk) == _DEFAULT_TILE else tk,
        cluster_m=cm,
        cluster_n=cn,
        mma_promotion_interval=args.mma_promotion_interval,
        schedule=getattr(args, "schedule", "cooperative"),
        **_epilogue_fields(getattr(args, "epilogue", None)),
        has_aux=bool(getattr(args, "pre_activation", False)),
    ).with_variant(args.variant)


def _epilogue_fields(e: dict | None) -> dict:
    """The GemmConfig fields of a parsed --epilogue."""
    if e is None:
        return {}
    return {"activation": e["activation"] or "identity", "bias": e["bias"],
            "has_input": e["input"] and e["beta"] != 0, "has_alpha": e["alpha"] != 1}


def _torch_dtype(name: str) -> Any:
    from ..torch_types import torch_dtype

    return torch_dtype(name)


def _matrix(l: int, rows: int, cols: int, contiguous_cols: bool, dtype: Any, device: Any, fill: str) -> Any:
    """An (l, rows, cols) tensor, contiguous along cols (else rows), leading dimension padded to 16 bytes."""
    import torch

    e = torch.empty((), dtype=dtype).element_size()
    inner, outer = (cols, rows) if contiguous_cols else (rows, cols)
    ld = padded_ld(inner, e)
    storage = torch.empty((l, outer, ld), dtype=dtype, device=device)
    if fill == "randn" and storage.element_size() == 1:  # 8-bit floats: normal values rounded to the type
        storage.copy_(torch.randn(storage.shape, device=device))
    elif fill == "randn":
        storage.normal_()
    else:
        storage.fill_(float("nan") if dtype.is_floating_point else 0)
    view = storage[:, :, :inner]
    return view if contiguous_cols else view.transpose(1, 2)


def make_operands(
    cfg: GemmConfig, m: int, n: int, k: int, l: int, device: Any = "cuda"
) -> tuple[Any, Any, Any]:
    """Random normal A (l,m,k) and B (l,k,n) and a NaN-poisoned C (l,m,n) with the config's majors."""
    a = _matrix(l, m, k, cfg.a_major == "k", _torch_dtype(cfg.a_dtype), device, "randn")
    b = _matrix(l, k, n, cfg.b_major == "n", _torch_dtype(cfg.b_dtype), device, "randn")
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
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    cfg = config_of(args)
    m, n, k, l = args.mnkl
    from cute_runtime import gpu_available

    apply_bundle_flag(args)
    if not gpu_available():
        from .kernel import compile_gemm

        art = compile_gemm(cfg, cfg.target)
        print(f"kernel: {cfg.name}")
        print(resource_line(art.entry.resources, cached=art.cached))
        skipped = "the launch" + ("" if args.skip_ref_check else ", the check against torch") + (
            ", the timing (--benchmark)" if args.benchmark else "") + (", --tune" if args.tune else "")
        rest = (f"python -m cute_examples.dense_gemm {shlex.join(argv)}",
                "(without MLIR there: python -m cute_examples.build_bundle build/aot here, then --bundle build/aot)")
        for line in no_gpu_ending(f"compiled the kernel for {cfg.target} (resource report above)", skipped, rest):
            print(line)
        return 0
    return _run_on_gpu(args, cfg, m, n, k, l)


def _run_on_gpu(args: argparse.Namespace, cfg: GemmConfig, m: int, n: int, k: int, l: int) -> int:
    import torch
    from cute_runtime import device_properties

    from ..timing import interleaved_median_ms
    from .host import launch_gemm, problem_of, resident_sms, schedule, tensor_maps
    from .kernel import _kernel_fn, kernel_of

    props = device_properties(torch.cuda.current_device())
    cc = tuple(props.compute_capability)
    order: tuple[int | None, int | None] = (None, None)
    if args.tune and runs_on(cc):
        from .tune import tune

        torch.manual_seed(0)
        ta, tb, tc = make_operands(cfg, m, n, k, l)
        best, rows = tune(ta, tb, tc, cfg.acc_dtype, iterations=max(args.iterations, 10))
        del ta, tb, tc
        for row in rows:
            print(f"tune: {row}")
        cfg, order = best.config, (best.raster_along_n, best.swizzle_log)
    print(f"kernel: {cfg.name}")
    if not runs_on(cc):
        print(f"this kernel needs an sm_90 GPU; found compute capability {cc[0]}.{cc[1]}")
        return 0
    kernel = kernel_of(cfg, cc)
    fn = _kernel_fn(cfg)
    print(resource_line(kernel.entry.resources, cached=not fn.compiled_here(kernel)))
    torch.manual_seed(0)
    a, b, c = make_operands(cfg, m, n, k, l)
    if args.epilogue is not None or cfg.fp8_out:
        return _run_epilogue(args, cfg, kernel, props, a, b, c, order)
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
        grid, raster_n, swz = schedule(probs[0], cfg, resident_sms(kernel, cfg, props.sm_count), *order)
        launches = [(*tensor_maps(p, cfg), p.m, p.n, p.k, p.l, raster_n, swz) for p in probs]
        i = [0]

        def ours() -> None:
            kernel.launch(grid, *launches[i[0] % len(launches)])
            i[0] += 1

        j = [0]
        theirs_name = "torch.matmul"
        if cfg.is_fp8:
            # torch._scaled_mm (cuBLASLt) on the same 2-D tensors, unit scales; fast accumulation against ours
            # without promotion, the accurate mode against ours with it
            fast = cfg.mma_promotion_interval == 0
            theirs_name = f"torch._scaled_mm(use_fast_accum={fast})"
            one = torch.ones((), device=a.device)
            cdt = _torch_dtype(cfg.c_dtype)

        def theirs() -> None:
            x, y, _ = sets[j[0] % len(sets)]
            if cfg.is_fp8:
                torch._scaled_mm(x[0], y[0], scale_a=one, scale_b=one, out_dtype=cdt, use_fast_accum=fast)
            else:
                torch.matmul(x, y)
            j[0] += 1

        t_ours, t_torch = interleaved_median_ms(
            [ours, theirs], warmup=args.warmup_iterations, iterations=max(args.iterations, 4)
        )
        flops = 2.0 * m * n * k * l
        print(
            f"time: {t_ours * 1e3:.1f} us, {flops / t_ours / 1e9:.1f} TFLOP/s; "
            f"{theirs_name}: {t_torch * 1e3:.1f} us, "
            f"{flops / t_torch / 1e9:.1f} TFLOP/s; ratio to torch: {t_torch / t_ours:.3f}"
        )
    return status


def _epilogue_operands(e: dict, cfg: GemmConfig, a: Any, b: Any, c: Any) -> tuple[Any, Any, Any]:
    """(C with N/2 columns for SwiGLU else c, bias, input) of a parsed --epilogue, random normal."""
    import torch

    l, m, n = c.shape
    if e["activation"] == "swiglu":
        c = _matrix(l, m, n // 2, cfg.c_major == "n", _torch_dtype(cfg.c_dtype), c.device, "nan")
    cd = _torch_dtype(cfg.epilogue_dtype)  # C's, bfloat16 for an 8-bit C
    bias = None
    if e["bias"] == "n":
        bias = torch.randn(n + n % 2, device=c.device, dtype=cd)[:n]  # even storage: the kernel reads pairs
    elif e["bias"] == "m":
        bias = torch.randn(m, 1, device=c.device, dtype=cd)
    inp = torch.randn(c.shape, device=c.device, dtype=cd) if e["input"] else None
    return c, bias, inp


def _pre_activation_reference(e: dict, a: Any, b: Any, bias: Any, inp: Any) -> Any:
    """torch float32 of the fused function's pre-activation alpha * a @ b + beta * input + bias."""
    x = e["alpha"] * (a.float() @ b.float())
    if inp is not None:
        x = x + (1.0 if e["beta"] is None else e["beta"]) * inp.float()
    if bias is not None:
        x = x + bias.float()
    return x


def _epilogue_reference(e: dict, a: Any, b: Any, bias: Any, inp: Any) -> Any:
    """torch float32 of the fused function."""
    from .activation import reference

    return reference(_pre_activation_reference(e, a, b, bias, inp), e["activation"] or "identity")


def _normwise(x: Any, ref: Any) -> float:
    """||x - ref||_F / ||ref||_F (the difference's norm when ref is 0)."""
    diff, scale = float((x.float() - ref).norm()), float(ref.norm())
    return diff / scale if scale else diff


def _run_epilogue(args: argparse.Namespace, cfg: GemmConfig, kernel: Any, props: Any, a: Any, b: Any, c: Any,
                  order: tuple) -> int:
    """The --epilogue run: launch the fused kernel, check it against torch float32, time it against eager torch."""
    import torch

    from ..timing import interleaved_median_ms
    from .epilogue_args import check_epilogue
    from .host import launch_gemm, problem_of, tensor_maps
    from .launch_plan import _fused_values

    e = args.epilogue or epilogue_of("")
    c, bias, inp = _epilogue_operands(e, cfg, a, b, c)
    # the pre-activation output: C's layout (L, M, N), rows or columns padded to 16 bytes, NaN-poisoned
    aux = _matrix(*c.shape, cfg.c_major == "n", c.dtype, c.device, "nan") if cfg.has_aux else None
    checked = check_epilogue(a, b, c, cfg.epilogue_dtype, bias=bias, input=inp, alpha=e["alpha"], beta=e["beta"],
                             activation=e["activation"], pre_activation_out=aux)
    problem = problem_of(a, b, c, checked.n_out)
    # its TMA descriptor: C's stores bound to it (C's own without it: never read)
    aux_map = tensor_maps(problem_of(a, b, c if aux is None else aux, checked.n_out), cfg)[2]
    fused = _fused_values(checked, True, aux_map)
    out_scale = 1.0 if args.out_scale is None else args.out_scale
    amax = torch.zeros((), device=a.device)
    if cfg.scaled:  # SCALE_PARAMS: no device scales of A and B; an 8-bit C's by-value out_scale and amax
        fused += (0, 0, 0, amax.data_ptr() if cfg.fp8_out else 0, out_scale)
    launch_gemm(kernel, problem, cfg, props.sm_count, None, *order, fused=fused)
    torch.cuda.synchronize()
    status = 0
    if not args.skip_ref_check:
        tol = args.tolerance if args.tolerance is not None else tolerance(cfg.acc_dtype, cfg.c_dtype)
        ref = _epilogue_reference(e, a, b, bias, inp)
        ok = True
        if cfg.fp8_out:
            dmax = float(ref.abs().max())
            ok = abs(float(amax) - dmax) <= 1e-2 * dmax  # float32 D (8-bit tensor-core sums) vs float32 torch
            print(f"amax: {float(amax):.6g} (reference max |D| {dmax:.6g}): {'PASS' if ok else 'FAIL'}")
            limit = torch.finfo(torch.float8_e4m3fn).max
            ref = (ref * out_scale).clamp(-limit, limit)
        err = _normwise(c, ref)
        ok = ok and err <= tol and bool(torch.isfinite(c.float()).all())
        print(f"reference check: normwise relative error {err:.3e} (tolerance {tol:.1e}): {'PASS' if ok else 'FAIL'}")
        if aux is not None:
            err = _normwise(aux, _pre_activation_reference(e, a, b, bias, inp))
            aux_ok = err <= tol and bool(torch.isfinite(aux.float()).all())
            print(f"pre-activation check: normwise relative error {err:.3e} (tolerance {tol:.1e}): "
                  f"{'PASS' if aux_ok else 'FAIL'}")
            ok = ok and aux_ok
        status = 0 if ok else 1
    if args.benchmark:
        m, n, k, l = args.mnkl

        def ours() -> None:
            launch_gemm(kernel, problem, cfg, props.sm_count, None, *order, fused=fused)

        theirs_name = "torch (eager, same epilogue)"
        if cfg.is_fp8 and args.epilogue is None:
            # an 8-bit C: torch._scaled_mm's, unit scales and the same out_scale (use_fast_accum as the check above)
            fast = cfg.mma_promotion_interval == 0
            theirs_name = f"torch._scaled_mm(out_dtype=float8_e4m3fn, use_fast_accum={fast})"
            one, so = torch.ones((), device=a.device), torch.full((), out_scale, device=a.device)
            cdt = _torch_dtype(cfg.c_dtype)

        def theirs() -> None:
            if cfg.is_fp8 and args.epilogue is None:
                torch._scaled_mm(a[0], b[0], scale_a=one, scale_b=one, scale_result=so, out_dtype=cdt,
                                 use_fast_accum=fast)
            else:
                _epilogue_reference_eager(e, a, b, bias, inp)

        t_ours, t_torch = interleaved_median_ms(
            [ours, theirs], warmup=args.warmup_iterations, iterations=max(args.iterations, 4)
        )
        flops = 2.0 * m * n * k * l
        print(
            f"time: {t_ours * 1e3:.1f} us, {flops / t_ours / 1e9:.1f} TFLOP/s; "
            f"{theirs_name}: {t_torch * 1e3:.1f} us, "
            f"{flops / t_torch / 1e9:.1f} TFLOP/s; ratio to torch: {t_torch / t_ours:.3f}"
        )
    return status


def _epilogue_reference_eager(e: dict, a: Any, b: Any, bias: Any, inp: Any) -> Any:
    """The fused function as eager torch in the operands' dtype (act(baddbmm/addmm) or SwiGLU's two matmuls)."""
    import torch

    from .activation import reference, split_gate_up

    if e["activation"] == "swiglu":
        g, u = split_gate_up(b, -1)
        return torch.nn.functional.silu(a @ g) * (a @ u)
    x = torch.matmul(a, b)
    if e["alpha"] != 1:
        x = x * e["alpha"]
    if inp is not None:
        x = x + (1.0 if e["beta"] is None else e["beta"]) * inp
    if bias is not None:
        x = x + bias
    return reference(x, e["activation"] or "identity")


if __name__ == "__main__":
    sys.exit(main())

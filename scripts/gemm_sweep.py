"""Every data-parallel (tile, cluster, schedule) of the GEMM on a list of shapes, against torch.matmul.

    python3 scripts/gemm_sweep.py [--dtype bfloat16] [--shapes 512x6144x4096,...] [--schedules cooperative,pingpong]
    python3 scripts/gemm_sweep.py --decompositions split_k,stream_k   # also the shared-K kinds (k_choice's tiles)
    python3 scripts/gemm_sweep.py --decompositions stream_k,split_k --around-pick   # the pick vs those on its tile
    python3 scripts/gemm_sweep.py --specs FILE     # here (MLIR host): the specs it runs, for build_bundle --add-specs
    python3 scripts/gemm_sweep.py --dtype float8_e4m3fn --promotion 4   # FP8 (bfloat16 C, per-tensor device scales)
    python3 scripts/gemm_sweep.py --tiles 128x256,256x128 --json rows.json   # those tiles only; every row to a file
    python3 scripts/gemm_sweep.py --tiles 128x256 --orders   # also every swizzle_log of each data-parallel launch
    python3 scripts/gemm_sweep.py --decompositions stream_k --around-pick --rasters   # shared-K kinds on both rasters

FP8 rows (E4M3 A and B, both K-major, tile K 128) run the scaled kernel against torch._scaled_mm on the same
tensors and scales: with `--promotion N` (two-level accumulation every N k-blocks) against use_fast_accum=False,
without it against use_fast_accum=True.

What the cost model (`choice.py`) ranks is measured: per shape, each config's time inside a CUDA graph (launch cost
out of the figure) and torch.matmul's, in alternating rounds on identical tensors (A (M, K) row-major, B = W.t() of
a contiguous (N, K) weight, as F.linear has them); every config's output is checked against torch's first. Per
shape it prints the host's pick (for 16-bit operands `choose_config`'s data-parallel config, the one the tile model
ranks first, before gemm()'s `k_choice` and ping-pong steps: `scripts/pick_ab.py` and the suite judge those), the
`--top` fastest configs and the ratio cuBLAS / ours of each, so that the model's constants can be refitted from one
table. The default shapes mix the suite's weak rows with shapes outside it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import random
import statistics
import sys
from collections.abc import Callable, Iterator

SHAPES = (
    "1x6144x4096", "1x8192x28672", "16x6144x4096", "16x8192x8192", "128x8192x8192", "128x10240x8192",
    "256x4096x4096", "512x6144x4096",
    "512x4096x4096", "512x28672x4096", "512x4096x14336", "512x10240x8192", "768x3072x768", "1024x1024x1024",
    "1024x4096x4096", "1337x2056x1000", "2048x2048x2048", "3000x5000x4096", "4097x4104x4096", "4096x4096x1024",
)


def _shape(text: str) -> tuple[int, int, int]:
    m, n, k = (int(x) for x in text.lower().split("x"))
    return m, n, k


DEEP_STAGES = (12, 13)  # extra stage counts tried where a tile fits them (the default stops at 8)
# the fused A/B scripts' epilogue fields: a bias along N (the activation is the command line's)
FUSED = {"bias": "n", "has_input": False, "has_alpha": False, "has_aux": False, "scale_a": None, "scale_b": None}
SPLITS = (2, 3, 4, 6, 8)  # split-K part counts tried with --decompositions split_k


FP8_C_DTYPE = "bfloat16"  # an FP8 row's C (bench_fp8's)


def _is_fp8(dtype: str) -> bool:
    from cute_examples.dense_gemm.spec import FP8_DTYPES

    return dtype in FP8_DTYPES


def _problem(mnk: tuple[int, int, int], dtype: str):  # noqa: ANN202
    """The swept problem: bench_shape's, with a bfloat16 C for an FP8 A and B."""
    from cute_examples.dense_gemm.bench_run import bench_shape

    shape = bench_shape((*mnk, 1), dtype)
    return dataclasses.replace(shape, c_dtype=FP8_C_DTYPE) if _is_fp8(dtype) else shape


def graph_calls(mnk: tuple[int, int, int]) -> int:
    """How many launches of a shape one timed CUDA graph holds: about 20 ms of kernels, 3 to 50."""
    flops = 2.0 * mnk[0] * mnk[1] * mnk[2]
    return max(3, min(50, int(2e4 / max(1.0, flops / 5e8))))


def _config(shape, tile: tuple[int, int], cluster: tuple[int, int], num_sms: int, promotion: int, **fields):  # noqa: ANN001, ANN202
    """choose_config's config of the tile and cluster (tile K: one 128-byte row), FP8 with per-tensor device scales
    and two-level accumulation every `promotion` k-blocks; ValueError/TypeError where the combination is invalid."""
    from cute_examples.dense_gemm.host import choose_config

    fp8 = _is_fp8(shape.ab_dtype)
    cfg = choose_config(shape, "float32", (tile[0], tile[1], 128 if fp8 else 64), cluster, num_sms)
    if fp8:
        fields.update(scale_a="tensor", scale_b="tensor", mma_promotion_interval=promotion)
    return dataclasses.replace(cfg, **fields) if fields else cfg


def configs(mnk: tuple[int, int, int], dtype: str, schedules: list[str], num_sms: int = 132,
            decompositions: tuple[str, ...] = (), promotion: int = 0, around_pick: bool = False,
            tiles: tuple = ()) -> list:
    """(config, split-K parts) of every valid data-parallel config of the cost model's tiles and clusters in each
    schedule (plus deeper pipelines where they fit), then each of `decompositions` on k_choice's shared-K tiles;
    FP8 configs read per-tensor device scales and promote every `promotion` k-blocks (0: never). With
    `around_pick`, only the host's data-parallel pick, its tile without a cluster and stream-K / split-K (where in
    `decompositions`) on that tile (cluster 1x1) and on 128x256. `tiles`: these (tile_m, tile_n) instead of the
    cost model's."""
    from cute_examples.dense_gemm.choice import CLUSTER_CHOICES, TILE_EFFICIENCY

    shape = _problem(mnk, dtype)
    if around_pick:
        return _around_pick(mnk, dtype, shape, decompositions, num_sms, promotion)
    out = []
    for tile in tiles or TILE_EFFICIENCY:
        for cluster in CLUSTER_CHOICES:
            for sched in schedules:
                try:
                    fields = {} if sched == "cooperative" else {"schedule": sched}
                    cfg = _config(shape, tile, cluster, num_sms, promotion, **fields)
                except (ValueError, TypeError):
                    continue  # not a valid combination (e.g. a ping-pong tile past its register budget)
                out.append((cfg, 1))
                for stages in DEEP_STAGES:
                    try:
                        out.append((dataclasses.replace(cfg, stages=stages), 1))
                    except ValueError:
                        pass  # does not fit shared memory
    out += _decomposed(shape, decompositions, num_sms, promotion, tiles)
    return out


def _decomposed(shape, kinds: tuple[str, ...], num_sms: int, promotion: int, tiles: tuple = ()) -> list:  # noqa: ANN001
    """(config, parts) of each shared-K kind on k_choice's tiles for the operands (cluster 1x1), or on `tiles` x every
    cluster, whose partial tiles fit."""
    from cute_examples.dense_gemm.choice import CLUSTER_CHOICES
    from cute_examples.dense_gemm.decomposed import schedule_of
    from cute_examples.dense_gemm.k_choice import shared_k_config, shared_k_tiles
    from cute_examples.dense_gemm.spec import DTYPE_BYTES

    out = []
    for kind, tile, cluster in itertools.product(kinds, tiles or shared_k_tiles(DTYPE_BYTES[shape.ab_dtype]),
                                                 CLUSTER_CHOICES if tiles else ((1, 1),)):
        try:
            cfg = shared_k_config(_config(shape, tile, (1, 1), num_sms, promotion), tile, kind, cluster)
        except (ValueError, TypeError):
            continue
        for splits in SPLITS if kind == "split_k" else (1,):
            try:
                sched = schedule_of(shape, cfg, num_sms, splits)
            except ValueError:
                continue  # more partial tiles than the workspace bound
            if kind == "split_k" and sched.splits != splits:
                continue  # fewer K tiles than parts
            out.append((cfg, splits))
    return out


def _around_pick(mnk, dtype: str, shape, kinds: tuple[str, ...], num_sms: int, promotion: int) -> list:  # noqa: ANN001
    """The `around_pick` configs of `configs`: the host's data-parallel pick, its tile without a cluster, and on that
    tile and on 128x256 stream-K and split-K at the model's best part count and one more (no duplicates; combinations
    that are not valid left out)."""
    from cute_examples.dense_gemm.k_choice import choose_decomposition, shared_k_config

    pick = _host_pick(mnk, dtype, promotion, num_sms)
    rows = {(pick.name, 1): (pick, 1)}
    for tile in ((pick.tile_m, pick.tile_n), (128, 256)):
        try:
            dp = _config(shape, tile, (1, 1), num_sms, promotion)
        except (ValueError, TypeError):
            continue
        if tile == (pick.tile_m, pick.tile_n):
            rows.setdefault((dp.name, 1), (dp, 1))  # the pick's tile without a cluster
        for kind in ("stream_k", "split_k"):
            if kind not in kinds:
                continue
            try:
                cfg = shared_k_config(dp, tile, kind)
            except (ValueError, TypeError):
                continue
            parts = (1,)
            if kind == "split_k":  # the model's best part count and one more
                best = choose_decomposition(shape, dp, num_sms, kinds=("split_k",), min_gain=-1.0)
                parts = (best.splits, best.splits + 1) if best.kind == "split_k" else ()
            for s in parts:
                rows.setdefault((cfg.name, s), (cfg, s))
    return list(rows.values())


def write_specs(path: str, shapes: list, dtype: str, schedules: list[str], decompositions: tuple = (),
                promotion: int = 0, around_pick: bool = False, tiles: tuple = ()) -> int:
    """Write the JIT specs the sweep runs as CUTE_RECORD_MISSES lines (build_bundle --add-specs FILE)."""
    return write_config_specs(path, [cfg for mnk in shapes for cfg, _ in configs(
        mnk, dtype, schedules, decompositions=decompositions, promotion=promotion, around_pick=around_pick,
        tiles=tiles)])


def write_config_specs(path: str, cfgs: list) -> int:
    """Write the JIT specs of configs, each once, as CUTE_RECORD_MISSES lines (build_bundle --add-specs FILE); returns
    how many."""
    from cute_examples.dense_gemm.kernel import _kernel_fn, gemm_spec

    lines = list(dict.fromkeys(json.dumps({"kernel": _kernel_fn(c).name, "spec": gemm_spec(c), "target": "sm_90a"})
                               for c in cfgs))
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return len(lines)


def ab_summary(what: str, ratios: list[float]) -> str:
    """The A/B scripts' last line: the geometric mean of new / old time ratios, their range and how many are under 1."""
    return (f"{what}: geomean {statistics.geometric_mean(ratios):.4f} over {len(ratios)} rows "
            f"(min {min(ratios):.3f}, max {max(ratios):.3f}, {sum(r < 1 for r in ratios)} faster)")


def random_rows(count: int, seed: int, row: Callable, k_from: int = 256, narrow: bool = False) -> list:
    """The A/B scripts' random rows: `count` values of row(dtype, (m, n, k)) that are not None, over random shapes (M
    64..8191, N 256..16376 and K k_from..16376 in multiples of 8; `narrow`: M 1025..16383, N 8..64, K k_from..8184) and
    16-bit dtypes drawn with `seed`."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        if narrow:
            mnk = rng.randrange(1025, 16384), 8 * rng.randrange(1, 9), 8 * rng.randrange(k_from // 8, 1024)
        else:
            mnk = rng.randrange(64, 8192), 8 * rng.randrange(32, 2048), 8 * rng.randrange(k_from // 8, 2048)
        r = row(rng.choice(("bfloat16", "float16")), mnk)
        if r is not None:
            out.append(r)
    return out


def ab_arguments(doc: str, specs_help: str, count: int, seed: int,
                 baseline: tuple[str, tuple[str, ...], str] | None = None, layers: bool = False,
                 every: bool = False, epilogue: bool = False, new: str | None = None,
                 random: bool = False, b_major: bool = False, full: bool = False) -> argparse.Namespace:
    """The A/B scripts' command line: --specs FILE (write the specs, here), --count and --seed of the random shapes,
    --rounds; with `baseline` = (default, choices, help), --baseline; with `layers`, --layers; with `every`,
    --every; with `epilogue`, --epilogue ACT; with `new` (its help), --new; with `random`, --random, --narrow and
    --quantise; with `b_major`, --b-major; with `full`, --full."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--specs", metavar="FILE", help=f"write {specs_help} (for build_bundle --add-specs)")
    p.add_argument("--count", type=int, default=count)
    p.add_argument("--seed", type=int, default=seed)
    p.add_argument("--rounds", type=int, default=4)
    if baseline is not None:
        p.add_argument("--baseline", default=baseline[0], choices=baseline[1], help=baseline[2])
    if layers:
        p.add_argument("--layers", action="store_true", help="the model suite's layers at random token counts")
    if every:
        p.add_argument("--every", action="store_true", help="also the rows the model alone would move")
    if epilogue:
        p.add_argument("--epilogue", metavar="ACT", help="a bias along N and this activation, through gemm()'s plans")
    if new is not None:
        p.add_argument("--new", action="store_true", help=new)
    if random:
        p.add_argument("--random", action="store_true", help="random shapes instead of the model suite's layers")
        p.add_argument("--narrow", action="store_true", help="random shapes of N 8..64 (decode-like N) instead")
        p.add_argument("--quantise", action="store_true", help="rows that gemm() transposes by transposed.quantises")
    if b_major:
        p.add_argument("--b-major", default="k", choices=("k", "n"), help="b's contiguous mode (n: x @ W, W (K, N))")
    if full:
        p.add_argument("--full", action="store_true", help="gemm()'s whole picks (transposed where it runs that)")
    return p.parse_args()


def _operands(mnk: tuple[int, int, int], dtype: str, promotion: int) -> tuple:
    """(a, b, c, the reference, torch's launch writing its own output, the peer's name) of a shape."""
    import torch
    from cute_examples.dense_gemm.bench_run import operands

    if not _is_fp8(dtype):
        a, b, c = operands((*mnk, 1), dtype)
        peer_out = torch.empty_like(c)
        return a, b, c, torch.matmul(a, b), (lambda: torch.matmul(a, b, out=peer_out)), "torch.matmul", ()
    m, n, k = mnk
    td, cdt = getattr(torch, dtype), getattr(torch, FP8_C_DTYPE)
    a = torch.randn(m, k, device="cuda").to(td)
    b = torch.randn(n, k, device="cuda").to(td).t()  # (K, N), K contiguous
    c = torch.full((m, n), float("nan"), device="cuda", dtype=cdt)
    sa, sb = torch.full((), 0.75, device="cuda"), torch.full((), 1.25, device="cuda")
    ref = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=cdt, use_fast_accum=False)
    fast = promotion == 0

    def peer() -> None:
        torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=cdt, use_fast_accum=fast)

    return a, b, c, ref, peer, f"_scaled_mm(use_fast_accum={fast})", (sa, sb)


def _prepare(cfg, splits: int, ops: tuple, sms: int, order: tuple = (None, None)) -> tuple:  # noqa: ANN001
    """(launch, normwise error, schedule label) of one config on a shape's operands (a data-parallel one at `order`:
    (raster_along_n, swizzle_log), None for the host's pick)."""
    from cute_examples.dense_gemm.bench_fp8 import scaled_extra
    from cute_examples.dense_gemm.bench_models import prepare_row

    a, b, c, ref, _, _, scales = ops
    return prepare_row(cfg, splits, a, b, c, ref, sms, scaled_extra(*scales) if scales else (), order)


def transposed_operands(ops: tuple) -> tuple:
    """`_operands`' tuple for the transposed problem C^T = B^T A^T on the same tensors: A' = b^T, B' = a^T, C' = c^T."""
    a, b, c, ref, *_ = ops
    return (b.t(), a.t(), c.t(), ref.t(), None, None, ())


@contextlib.contextmanager
def direct_plans() -> Iterator[None]:
    """gemm()'s plans built inside run the direct problem (`transposed.may_transpose` off, restored on exit)."""
    from cute_examples.dense_gemm import transposed

    saved = transposed.may_transpose
    transposed.may_transpose = lambda shape: False
    try:
        yield
    finally:
        transposed.may_transpose = saved


def fused_graph_ab(mnk: tuple[int, int, int], dtype: str, activation: str | None, build: Callable, rounds: int,
                   b_major: str = "k") -> tuple:
    """The fused A/B scripts' timing of one shape: `build(a, b, outs, epi)` gives gemm() plans (`launch_plan.GemmPlan`)
    of a call with a bias along N and `activation` (None: a plain call, epi None) into each of `outs`, b = W.t() of a
    contiguous (N, K) W (`b_major` "n": a contiguous (K, N) b); each is checked against torch (AssertionError past a
    normwise error of 2e-2) and all are timed in CUDA graphs in alternating rounds on identical tensors (seed 0).
    Returns (microseconds per plan, the plans)."""
    import torch
    from cute_examples.dense_gemm.activation import reference
    from cute_examples.timing import interleaved_graph_ms

    m, n, k = mnk
    torch.manual_seed(0)
    td = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=td)
    b = torch.randn(n, k, device="cuda", dtype=td).t() if b_major == "k" else torch.randn(k, n, device="cuda", dtype=td)
    bias = torch.randn(n, device="cuda", dtype=td)
    outs = [torch.empty(m, n, device="cuda", dtype=td) for _ in range(2)]
    epi = None if activation is None else (bias, None, 1.0, None, activation, None)
    plans = build(a, b, outs, epi)
    calls = [lambda p=p, o=o: p(a, a.data_ptr(), b, b.data_ptr(), o, o.data_ptr(), None, epi)
             for p, o in zip(plans, outs, strict=True)]
    ref = a.float() @ b.float()
    ref = ref if activation is None else reference(ref + bias.float(), activation)
    for call, out in zip(calls, outs, strict=True):
        call()
        torch.cuda.synchronize()
        err = float((out.float() - ref).norm() / ref.norm())
        if not err <= 2e-2:
            raise AssertionError(f"{mnk}: normwise error {err:.1e}")
    us = [t * 1e3 for t in interleaved_graph_ms(calls, calls=graph_calls(mnk), iterations=5 * rounds, rounds=rounds)]
    return us, plans


def graph_ab(mnk: tuple[int, int, int], dtype: str, picks: list, rounds: int, keep_outputs: bool = False) -> tuple:
    """The A/B scripts' timing of one shape: each (config, split-K parts[, transposed]) of `picks` on the shape's
    operands (seed 0; transposed: launched on `transposed_operands`; each checked against torch's first: AssertionError
    past a normwise error of 2e-2) and torch.matmul, in CUDA graphs in alternating rounds on identical tensors. Returns
    (microseconds per pick then torch's, the picks' schedule labels, with `keep_outputs` each pick's output after one
    launch, else None)."""
    import torch
    from cute_examples.timing import interleaved_graph_ms

    torch.manual_seed(0)
    ops = _operands(mnk, dtype, 0)
    launches, labels, outs = [], [], []
    for cfg, splits, *transposed in picks:
        launch, err, label = _prepare(cfg, splits, transposed_operands(ops) if any(transposed) else ops, 132)
        if not err <= 2e-2:
            raise AssertionError(f"{cfg.name} S={splits} {mnk}: normwise error {err:.1e}")
        if keep_outputs:
            launch()
            torch.cuda.synchronize()
            outs.append(ops[2].clone())
        launches.append(launch)
        labels.append(label)
    us = [t * 1e3 for t in interleaved_graph_ms([*launches, ops[4]], calls=graph_calls(mnk), iterations=5 * rounds,
                                                  rounds=rounds)]
    return us, labels, (outs if keep_outputs else None)


def direct_pick(dtype: str, mnk: tuple[int, int, int], fields: dict | None = None, sms: int = 132) -> tuple:
    """(config, split-K parts) of gemm()'s direct pick (`launch_plan.plan_config`) for a call on a
    `sms`-SM GPU (`fields`: a fused epilogue's GemmConfig fields)."""
    from cute_examples.dense_gemm.bench_run import bench_shape
    from cute_examples.dense_gemm.launch_plan import plan_config

    return plan_config(bench_shape((*mnk, 1), dtype), (dtype, "float32", None, None, None), fields, sms)


def _host_pick(mnk: tuple[int, int, int], dtype: str, promotion: int, sms: int):  # noqa: ANN202 - a GemmConfig
    """The config the host picks for a shape (gemm()'s for FP8 with per-tensor device scales)."""
    from cute_examples.dense_gemm.bench_run import bench_config
    from cute_examples.dense_gemm.launch_plan import plan_config

    if not _is_fp8(dtype):
        return bench_config((*mnk, 1), dtype, num_sms=sms)
    options = (FP8_C_DTYPE, "float32", None, None, None, promotion)
    return plan_config(_problem(mnk, dtype), options, {"scale_a": "tensor", "scale_b": "tensor"}, sms)[0]


def run(shapes: list, dtype: str, schedules: list[str], rounds: int, top: int = 5,
        decompositions: tuple[str, ...] = (), promotion: int = 0, around_pick: bool = False,
        tiles: tuple = (), json_path: str | None = None, orders: bool = False, rasters: bool = False) -> int:
    """Sweep each shape on the GPU and print its table (every row also to `json_path`; with `orders` each
    data-parallel config also at every swizzle_log on its picked raster, with `rasters` each split-K / stream-K
    config also rastering along M and along N)."""
    import torch
    from cute_examples.timing import interleaved_graph_ms
    from cute_nvarch.tile_scheduler import MAX_SWIZZLE_LOG
    from cute_runtime import device_properties

    props = device_properties(0)
    sms = props.sm_count
    what = f", promotion every {promotion} k-blocks" if _is_fp8(dtype) and promotion else ""
    print(f"{props.name}, {sms} SMs, {dtype}{what}, schedules {','.join(schedules)}, {rounds} alternating rounds")
    summary, rows = [], []
    for mnk in shapes:
        torch.manual_seed(0)
        ops = _operands(mnk, dtype, promotion)
        peer_name = ops[5]
        calls = graph_calls(mnk)
        host_pick = _host_pick(mnk, dtype, promotion, sms).name
        fns, labels, picked = [], [], []
        for cfg, splits in configs(mnk, dtype, schedules, sms, decompositions, promotion, around_pick, tiles):
            extra = [(None, z) for z in range(MAX_SWIZZLE_LOG + 1)] if orders and not cfg.shares_k else []
            extra += [(r, None) for r in (0, 1)] if rasters and cfg.shares_k else []
            for order in [(None, None)] + extra:
                try:
                    launch, err, sched = _prepare(cfg, splits, ops, sms, order)
                except Exception as exc:  # noqa: BLE001 - a config the bundle lacks is reported, not fatal
                    print(f"  {cfg.name}: skipped ({type(exc).__name__}: {str(exc)[:90]})")
                    break
                if not err <= 2e-2:
                    print(f"  {cfg.name}: WRONG (normwise error {err:.1e})")
                    break
                if f"{cfg.name} {sched}" in labels:
                    continue  # the host's own order
                fns.append(launch)
                labels.append(f"{cfg.name} {sched}")
                picked.append(order == (None, None) and cfg.name == host_pick)
        fns.append(ops[4])
        labels.append(peer_name)
        # each config's graph captured once, 5 replays a round, the rounds in alternating order
        us = [t * 1e3 for t in interleaved_graph_ms(fns, calls=calls, iterations=5 * rounds, rounds=rounds)]
        peer = us[-1]
        rows += [{"shape": list(mnk), "dtype": dtype, "sms": sms, "config": labels[i], "us": us[i], "peer_us": peer,
                  "pick": picked[i]} for i in range(len(fns) - 1)]
        ranked = sorted(range(len(fns) - 1), key=lambda i: us[i])
        name = "x".join(map(str, mnk))
        print(f"\n{name} (graph of {calls}): {peer_name} {peer:.2f} us")
        for i in ranked[:top]:
            print(f"  {us[i]:9.2f} us  peer/ours {peer / us[i]:.3f}  {labels[i]}")
        pick = [i for i in range(len(fns) - 1) if picked[i]]
        if pick:
            i = pick[0]
            print(f"  host pick: {us[i]:9.2f} us  peer/ours {peer / us[i]:.3f}  {labels[i]}")
            summary.append((name, peer / us[i], peer / us[ranked[0]], labels[ranked[0]].split(" ")[0]))
    print("\nshape              host pick  best  (peer/ours)  best config")
    for name, host, best, label in summary:
        print(f"{name:18} {host:9.3f} {best:6.3f}  {label}")
    if summary:
        gm = lambda xs: statistics.geometric_mean(xs)  # noqa: E731
        print(f"geomean: host pick {gm([s[1] for s in summary]):.3f}, best {gm([s[2] for s in summary]):.3f}")
    if json_path:
        with open(json_path, "w") as fh:
            json.dump({"device": props.name, "rows": rows}, fh, indent=0)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dtype", default="bfloat16", choices=("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"))
    p.add_argument("--promotion", type=int, default=0, help="FP8: promote every N k-blocks (0: never)")
    p.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated MxNxK")
    p.add_argument("--schedules", default="cooperative,pingpong")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--top", type=int, default=5, help="rows printed per shape (fastest first)")
    p.add_argument("--decompositions", default="", help="shared-K kinds to add: split_k,stream_k")
    p.add_argument("--specs", metavar="FILE", help="write the specs the sweep runs (for build_bundle --add-specs)")
    p.add_argument("--around-pick", action="store_true",
                   help="only the host's pick, its tile without a cluster and stream-K on it and on 128x256")
    p.add_argument("--tiles", default="", help="comma-separated MxN tiles instead of the cost model's")
    p.add_argument("--json", metavar="FILE", help="write every measured row (shape, config, us, peer us) here")
    p.add_argument("--orders", action="store_true",
                   help="each data-parallel config also at every swizzle_log on its picked raster")
    p.add_argument("--rasters", action="store_true", help="each split-K / stream-K config also on both rasters")
    args = p.parse_args()
    tiles = tuple(tuple(int(x) for x in t.split("x")) for t in args.tiles.split(",") if t)
    shapes = [_shape(s) for s in args.shapes.split(",") if s]
    schedules = args.schedules.split(",")
    kinds = tuple(k for k in args.decompositions.split(",") if k)
    if args.specs:
        n = write_specs(args.specs, shapes, args.dtype, schedules, kinds, args.promotion, args.around_pick, tiles)
        print(f"{n} specs -> {args.specs}")
        return 0
    return run(shapes, args.dtype, schedules, args.rounds, args.top, kinds, args.promotion, args.around_pick, tiles,
               args.json, args.orders, args.rasters)


if __name__ == "__main__":
    sys.exit(main())

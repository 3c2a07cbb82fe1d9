"""When gemm() computes the transposed problem, C^T = B^T A^T: M and N trade places and C is written M-major.

A problem of few rows pads them to whole 128-row tiles (M = 139: 256 rows computed, 54% of them used), where the
transposed problem's N steps by 32 columns (`spec.TILE_N`: 139 in one 160-column tile). gemm() runs the transposed
problem where its pick among the tiles of sides `MIN_TILE` or more (`launch_plan.plan_config` on `transposed_shape`)
pads M by at least `MIN_PADDING_SAVED` of the direct pick's padded rows less, for 16-bit operands and SMALL_M < M <=
`MAX_M`, when the model (`k_choice.estimate_us`) also prices it faster; calls without a tile,
cluster, variant or tuned entry only (`launch_plan.plan_pick`), plain or with a bias, alpha and an activation
(`transposed_fields`), and only where neither launch stages an operand. The kernel is the same; only the operands'
roles move (A' is b transposed, B' is a transposed, C' is out transposed: no data moves).

H200, `scripts/swap_ab.py` (the model suite's Llama-3 layers at random token counts, CUDA graphs, both outputs checked
against torch's). Fitted on 89 rows, the transposed pick against the direct one: on the rows the rule takes 0.72-1.02;
not taken: transposed picks on 64-row tiles (1.03-1.11x on 6 of 10 rows), on 96-column tiles (0.999 on 17 rows,
0.90-1.09), decode-like M (1.7-1.9x), a padding that does not shrink (228 x 10240 x 8192: 1.11x). Then on 46 fresh rows
the rule takes: **0.871** of the direct pick's time, 41 faster, 0.725-1.034 (139 x 4096 x 14336: 61.1 -> 44.0 us);
cuBLAS / ours on them 0.801 -> 0.919. With a bias and SiLU (`swap_ab.py --epilogue silu`, gemm()'s own plans): 0.854 on
15 fresh rows, all faster. The pick among tiles of sides MIN_TILE or more, where the pick among all tiles had a narrower
one and the rule dropped the row (`swap_ab.py --new`: 144 x 8192 x 28672 on split-K 2 or stream-K on 128x160 instead of
64x160 on a 2x1 cluster): **0.852** on 42 fresh rows, all faster (cuBLAS / ours 0.727 -> 0.853), 0.854 on 22 fused
rows. M of 513..1024 (MAX_M was 512): **0.880** / **0.899** on 21 / 16 layer rows, all faster, 0.891 on 21 fused
rows; the whole rule on random shapes (`swap_ab.py --random`): **0.893** on 40 rows (35 faster, worst 1.069 at
264 x 5520 x 15952, a modelled tie) and **0.848** on 30 more, 0.889 on 24 fused rows (cuBLAS / ours 0.801 -> 0.917).

At any M (`quantises`, SMALL_M < M and N), gemm() also runs the transposed problem where its data-parallel pick is
modelled (`choice.estimate_us`) at least `QUANTISE_GAIN` faster than the direct data-parallel pick: the tile's fine N
side then runs along C's M, and its tile count fits the SMs' rounds better (about 3% of random shapes). H200,
`swap_ab.py --quantise` (fresh random shapes that this rule alone transposes): at 5% and M > 1024 **0.917** / **0.911**
of the direct pick's time (24 + 24 rows, 46 faster, worst 1.039; 6916 x 936 x 13880 367.1 -> 310.9 us, cuBLAS 368.4),
with a bias and SiLU 0.888 (16 rows); the rows a 2% gain adds 0.979 (24, 21 faster, worst 1.019), rows of M <= 1024
that the padding rule leaves 0.899 (24, 23 faster); the final rule **0.940** (24 rows, 21 faster, worst 1.008), with
a bias and tanh GELU 0.934 (16 rows, 15 faster), on layer rows 0.939 (24, 23 faster). Only with K-major A and B: with
a row-major b (`x @ W`: A' = b^T is M-major) 0.981 on 24 rows, but 1.25-1.27x on two of the three large multi-round
rows on 128x192 (3969 x 14288 x 13800: 2443 -> 3094 us).

A decode-like N (`narrow`: N <= SMALL_M, M > MAX_M) runs transposed too: M' = N rows on the decode rows' 64-row tiles
(`min_tile` 0 there, A' boxes of the rows there are), unless that pick splits K where the direct pick does not (6 of 32
shapes, 1.11-1.53x). `swap_ab.py --narrow` on fresh random shapes: **0.796** / **0.782** (24 + 24 rows, 44 faster,
worst 1.030), cuBLAS / ours 0.785 -> 0.995; with a bias and SiLU 0.677 (16 rows, all faster).
"""

from __future__ import annotations

from typing import Any

from cute_layout import round_up

from .choice import SMALL_M, GemmShape
from .choice import estimate_us as choice_estimate_us
from .k_choice import estimate_us
from .spec import DTYPE_BYTES, GemmConfig

__all__ = ["MAX_M", "MIN_PADDING_SAVED", "MIN_TILE", "QUANTISE_GAIN", "may_transpose", "min_tile", "narrow",
           "only_quantises", "quantises", "transposed_fields", "transposed_shape", "transposes"]

MAX_M = 1024  # the most rows of C the padding rule considers (past about 900 no pick pads 10% fewer rows)
MIN_PADDING_SAVED = 0.1  # of the direct pick's padded rows of M
MIN_TILE = 128  # the transposed pick's tile sides at least (narrower tiles cost what the padding saves)
# the share of the direct data-parallel pick's modelled time (`choice.estimate_us`) the transposed data-parallel pick
# must save (`quantises`)
QUANTISE_GAIN = 0.02


def transposed_shape(problem: Any) -> GemmShape:
    """The problem C^T = B^T A^T of `problem` (a GemmShape or GemmProblem): A' = B^T, B' = A^T, C' = C^T."""
    p = problem
    a_ld, b_ld = p.row_strides()
    return GemmShape(p.n, p.m, p.k, p.l, p.ab_dtype, p.c_dtype,
                     a_major="k" if p.b_major == "k" else "m",
                     b_major="k" if p.a_major == "k" else "n",
                     c_major="m" if p.c_major == "n" else "n",
                     a_ld=b_ld or None, b_ld=a_ld or None)


def transposed_fields(fields: dict) -> dict | None:
    """A fused epilogue's GemmConfig fields on the transposed problem (a bias along N runs along M' and the reverse;
    an activation and alpha apply to each element alike), or None where it cannot run transposed (an input addend,
    the pre-activation output, SwiGLU's column pairs, device scales)."""
    if fields.get("has_input") or fields.get("has_aux") or fields.get("activation") == "swiglu":
        return None
    if fields.get("scale_a") is not None or fields.get("scale_b") is not None:
        return None
    return {**fields, "bias": {"n": "m", "m": "n"}.get(fields.get("bias"))}


def narrow(shape: Any) -> bool:
    """Whether `shape` has a decode-like N and many rows (N <= SMALL_M, M > MAX_M): its transposed problem has the few
    rows of a decode."""
    return shape.n <= SMALL_M and shape.m > MAX_M


def may_transpose(shape: Any) -> bool:
    """Whether `shape` is one gemm() considers running transposed: 16-bit operands, and M > SMALL_M with N > SMALL_M
    (the transposed problem's M, which 128-row tiles need), or a `narrow` N."""
    return shape.m > SMALL_M and (shape.n > SMALL_M or narrow(shape)) and DTYPE_BYTES.get(shape.ab_dtype) == 2


def only_quantises(shape: Any) -> bool:
    """Whether `transposes` of `shape` is `quantises` alone: more than MAX_M rows (the padding rule's limit) and not a
    `narrow` N."""
    return shape.m > MAX_M and not narrow(shape)


def min_tile(shape: Any) -> int:
    """The least tile side of the transposed problem's pick: `MIN_TILE` for few rows, any for a `narrow` N (whose
    transposed problem runs on the decode rows' 64-row tiles)."""
    return 0 if narrow(shape) else MIN_TILE


def transposes(shape: Any, pick: tuple[GemmConfig, int], t_shape: Any, t_pick: tuple[GemmConfig, int],
               num_sms: int) -> bool:
    """Whether gemm() runs `t_pick` (config, split-K parts) on `t_shape` (`transposed_shape(shape)`) rather than
    `pick` on `shape`, for a shape `may_transpose` admits (see the module doc)."""
    (cfg, splits), (t_cfg, t_splits) = pick, t_pick
    if narrow(shape):
        # the decode rows' launch, unless it splits K where the direct pick does not (those ran 1.11-1.53x)
        return not (t_cfg.shares_k and not cfg.shares_k)
    if quantises(shape, cfg, t_shape, t_cfg, num_sms):
        return True
    if only_quantises(shape):
        return False
    if round_up(shape.m, t_cfg.tile_n) > round_up(shape.m, cfg.tile_m) * (1 - MIN_PADDING_SAVED):
        return False
    return (estimate_us(t_shape, t_cfg, num_sms, t_cfg.decomposition, t_splits)
            < estimate_us(shape, cfg, num_sms, cfg.decomposition, splits))


def quantises(shape: Any, cfg: GemmConfig, t_shape: Any, t_cfg: GemmConfig, num_sms: int) -> bool:
    """Whether the transposed problem's data-parallel pick `t_cfg` saves `QUANTISE_GAIN` of the direct data-parallel
    pick `cfg`'s modelled time (`choice.estimate_us`): its tiles fill the SMs' rounds better; only for K-major A and B
    (`F.linear`'s operands; a row-major b, A' M-major, ran up to 1.27x on 128x192)."""
    if shape.a_major != "k" or shape.b_major != "k":
        return False
    if cfg.decomposition != "data_parallel" or t_cfg.decomposition != "data_parallel":
        return False

    def us(s: Any, c: GemmConfig) -> float:
        return choice_estimate_us(s, (c.tile_m, c.tile_n), (c.cluster_m, c.cluster_n), num_sms)

    return us(t_shape, t_cfg) < (1 - QUANTISE_GAIN) * us(shape, cfg)

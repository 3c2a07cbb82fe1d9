"""The fused-epilogue calls the GPU tests, the CPU compile test, the config sweep and the benchmark use.

- `EPILOGUE_KINDS`: every epilogue kind (GemmConfig fields) the kernel has: each activation with a bias along
  N, SwiGLU with and without a bias, the addmm forms (input, alpha, bias along M) and the pre-activation output
  (with a bias along N, and with everything else); `kind_configs()` puts
  each on a representative tile set (not the cross product with every tile, dtype and major: the epilogue's
  code depends on C's dtype and major and on tile N, which the set covers).
- `GPU_CASES`: gemm() calls with their operand shapes and epilogue arguments; `gpu_case_configs(num_sms)` the configs
  gemm() picks for them on 132- and 114-SM GPUs (for the AOT bundle).
- `MLP_SHAPES`, `DOWN_SHAPES` (with `DOWN_EPILOGUES`), `SWIGLU_SHAPES`: the benchmark's (tokens, in, out) problems;
  `bench_epilogue_configs(num_sms, variant)` theirs.

No MLIR and no GPU here (plain data and config choice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .spec import GemmConfig

__all__ = [
    "BENCH_ACTIVATIONS",
    "DECODE_SHAPES",
    "DOWN_EPILOGUES",
    "DOWN_SHAPES",
    "EPILOGUE_KINDS",
    "GPU_CASES",
    "MLP_SHAPES",
    "SWIGLU_SHAPES",
    "EpilogueCase",
    "bench_epilogue_configs",
    "case_problem",
    "gpu_case_configs",
    "kind_configs",
]

EPILOGUE_KINDS: tuple[dict, ...] = (
    *({"activation": a, "bias": "n"} for a in ("identity", "relu", "gelu", "gelu_tanh", "silu")),
    {"activation": "swiglu"},
    {"activation": "swiglu", "bias": "n"},
    {"bias": "m", "has_input": True, "has_alpha": True},
    {"activation": "gelu", "has_input": True},
    {"activation": "silu", "has_alpha": True},
    # the pre-activation output (gemm()'s pre_activation_out)
    {"activation": "gelu", "bias": "n", "has_aux": True},
    {"activation": "relu", "bias": "m", "has_input": True, "has_alpha": True, "has_aux": True},
)

# the tiles each kind compiles on: the benchmark's 128x256 2x1 (16-bit C, n-major), a float32 m-major C on
# 64x64 (SwiGLU: 64x128, its narrowest), bfloat16 on 128x128 1x2
_KIND_TILES = (
    {"tile_m": 128, "tile_n": 256, "cluster_m": 2},
    {"tile_m": 64, "tile_n": 64, "c_dtype": "float32", "c_major": "m"},
    {"a_dtype": "bfloat16", "b_dtype": "bfloat16", "c_dtype": "bfloat16", "tile_m": 128, "tile_n": 128,
     "cluster_n": 2},
)


def kind_configs() -> list[GemmConfig]:
    """Every `EPILOGUE_KINDS` entry on every `_KIND_TILES` entry (SwiGLU at tile N 2 swiglu_chunk_n where its C
    columns are not whole chunks)."""
    out = []
    for base in _KIND_TILES:
        for kind in EPILOGUE_KINDS:
            tile = dict(base)
            cfg = GemmConfig(**tile)
            if kind.get("activation") == "swiglu" and (cfg.tile_n // 2) % cfg.swiglu_chunk_n:
                tile["tile_n"] = 2 * cfg.swiglu_chunk_n
            out.append(GemmConfig(**tile, **kind))
    return out


@dataclass(frozen=True)
class EpilogueCase:
    """One gemm() call: a (L, M, K) or (M, K), b (K, N) K-major, C's dtype and major, the epilogue arguments.

    `bias`: None, "n" or "m" (a vector of C's dtype); `bias_view`: "dense", "strided" (every other element of a
    longer vector), "one" (a single value broadcast) or "misaligned" (starting one element into its storage),
    the last three staged by gemm(); `input`: None, "full" (C's shape), "row" ((N,), broadcast along M), "col"
    ((M, 1)) or "out" (out itself); `alpha`, `beta` as gemm() takes them; `aux`: no pre_activation_out (None) or one
    of C's shape: "dense" (row-major), "col_major" (M contiguous) or "padded" (row-major with one element more per
    row: a row pitch off TMA's 16 bytes, so the kernel writes a staged copy, `launch_plan.aux_layout`).
    """

    name: str
    dtype: str
    c_dtype: str
    mnkl: tuple[int, int, int, int]
    activation: str | None = None
    bias: str | None = None
    input: str | None = None
    alpha: float = 1.0
    beta: float | None = None
    c_major: str = "n"
    bias_view: str = "dense"
    aux: str | None = None

    @property
    def n_out(self) -> int:
        """C's columns (SwiGLU: half of b's N)."""
        return self.mnkl[1] // 2 if self.activation == "swiglu" else self.mnkl[1]

    @property
    def fields(self) -> dict:
        """The GemmConfig fields gemm() derives from the call."""
        return {"activation": self.activation or "identity", "bias": self.bias,
                "has_input": self.input is not None and self.beta != 0, "has_alpha": self.alpha != 1,
                "has_aux": self.aux is not None}


GPU_CASES = (
    EpilogueCase("gelu_bias_f16", "float16", "float16", (300, 272, 1024, 1), "gelu", "n"),
    EpilogueCase("gelu_tanh_bias_bf16", "bfloat16", "bfloat16", (300, 272, 1024, 1), "gelu_tanh", "n"),
    EpilogueCase("silu_rowbias_alpha_f32", "float16", "float32", (300, 272, 1024, 1), "silu", "m", alpha=0.5),
    EpilogueCase("relu_input_f16", "float16", "float16", (300, 272, 1024, 1), "relu", input="full", alpha=2.0,
                 beta=0.5),
    EpilogueCase("addmm_row_input_bf16_f32", "bfloat16", "float32", (300, 272, 1024, 1), None, "m", "row"),
    EpilogueCase("identity_col_input_f16", "float16", "float16", (300, 272, 1024, 1), None, None, "col", beta=-1.0),
    EpilogueCase("gelu_f32_m_major", "float16", "float32", (300, 272, 1024, 1), "gelu", "n", c_major="m"),
    EpilogueCase("gelu_tanh_f32", "bfloat16", "float32", (300, 272, 1024, 1), "gelu_tanh", "n"),
    EpilogueCase("relu_f32", "float16", "float32", (300, 272, 1024, 1), "relu", "n"),
    EpilogueCase("relu_beta0_f16", "float16", "float16", (300, 272, 1024, 1), "relu", None, "full", beta=0.0),
    EpilogueCase("gelu_batched_input_f16", "float16", "float16", (300, 272, 512, 2), "gelu", "n", "full"),
    EpilogueCase("silu_partial_tiles_f16", "float16", "float16", (127, 200, 72, 1), "silu", "n", "full"),
    EpilogueCase("in_place_f16", "float16", "float16", (300, 272, 1024, 1), "gelu_tanh", input="out"),
    EpilogueCase("gelu_strided_bias_odd_n_f16", "float16", "float16", (300, 255, 256, 1), "gelu", "n",
                 bias_view="strided"),
    EpilogueCase("relu_one_bias_f32", "float16", "float32", (300, 272, 256, 1), "relu", "n", bias_view="one"),
    EpilogueCase("silu_misaligned_bias_bf16", "bfloat16", "bfloat16", (300, 272, 256, 1), "silu", "n",
                 bias_view="misaligned"),
    EpilogueCase("silu_strided_row_bias_f16", "float16", "float16", (300, 272, 256, 1), "silu", "m",
                 bias_view="strided"),
    EpilogueCase("swiglu_f16", "float16", "float16", (300, 544, 1024, 1), "swiglu"),
    EpilogueCase("swiglu_bias_bf16", "bfloat16", "bfloat16", (300, 544, 1024, 1), "swiglu", "n"),
    EpilogueCase("swiglu_f32", "float16", "float32", (300, 544, 1024, 1), "swiglu"),
    # tile N 192 (C's 96 columns: three 32-column chunks) on 132 SMs, 224 on 114
    EpilogueCase("swiglu_bias_tile192_bf16", "bfloat16", "bfloat16", (300, 8192, 512, 1), "swiglu", "n"),
    # C's 16-column chunks (32-byte rows) on 132 SMs: 128x224 (seven per tile, partial tiles along M and N), 128x160,
    # 128x96 with a 2x1 cluster, 64x96 with a 2x1 cluster and 64x160 with a 1x2 cluster
    EpilogueCase("swiglu_bias_tile224_bf16", "bfloat16", "bfloat16", (367, 9552, 512, 1), "swiglu", "n"),
    EpilogueCase("swiglu_tile160_f16", "float16", "float16", (1053, 4400, 256, 1), "swiglu"),
    EpilogueCase("swiglu_bias_tile96_f16", "float16", "float16", (235, 5392, 1024, 1), "swiglu", "n"),
    EpilogueCase("swiglu_bias_tile64x96_bf16", "bfloat16", "bfloat16", (426, 1488, 512, 1), "swiglu", "n"),
    EpilogueCase("swiglu_tile64x160_bf16", "bfloat16", "bfloat16", (146, 6176, 2048, 1), "swiglu"),
    # tile N 224 (the accumulators' seven 32-column chunks) on 132 SMs: an input, a pre-activation output, a row bias,
    # no bias; partial tiles along M and N
    EpilogueCase("gelu_bias_input_tile224_bf16", "bfloat16", "bfloat16", (213, 13480, 1024, 1), "gelu", "n", "full"),
    EpilogueCase("gelu_tanh_bias_aux_tile224_f16", "float16", "float16", (544, 10192, 256, 1), "gelu_tanh", "n",
                 aux="dense"),
    EpilogueCase("silu_rowbias_tile224_f16", "float16", "float16", (427, 6736, 1024, 1), "silu", "m"),
    EpilogueCase("relu_tile224_bf16", "bfloat16", "bfloat16", (429, 21952, 256, 1), "relu"),
    # pre_activation_out: the pre-activation and the output both checked
    EpilogueCase("gelu_bias_aux_f16", "float16", "float16", (300, 272, 1024, 1), "gelu", "n", aux="dense"),
    EpilogueCase("relu_input_alpha_aux_f32", "float16", "float32", (300, 272, 1024, 1), "relu", "m", "full",
                 alpha=2.0, beta=0.5, aux="dense"),
    EpilogueCase("gelu_batched_input_aux_bf16", "bfloat16", "bfloat16", (300, 272, 512, 2), "gelu", "n", "full",
                 aux="padded"),
    # odd N in rows of even length: rows that end inside a 16-byte chunk, a staged copy
    EpilogueCase("relu_odd_aux_f16", "float16", "float16", (127, 201, 72, 1), "relu", "n", "row", aux="padded"),
    EpilogueCase("gelu_m_major_aux_f32", "float16", "float32", (300, 272, 256, 1), "gelu", "n", c_major="m",
                 aux="col_major"),
    # an input on the wide tiles the cost model picks for larger shapes (128x160, 128x192, 128x256, 64x256 c1x2 on
    # 132 / 114 SMs), partial tiles along M and N
    EpilogueCase("gelu_bias_input_wide_bf16", "bfloat16", "bfloat16", (1000, 2050, 512, 1), "gelu", "n", "full"),
    EpilogueCase("relu_col_input_wide_f16", "float16", "float16", (1500, 3000, 256, 1), "relu", None, "col",
                 beta=-1.0),
    EpilogueCase("row_input_batched_wide_aux_bf16", "bfloat16", "bfloat16", (999, 4000, 256, 2), None, "m", "row",
                 aux="padded"),
    EpilogueCase("silu_input_alpha_wide_f16", "float16", "float16", (700, 2500, 384, 1), "silu", "n", "full",
                 alpha=2.0, beta=0.5),
    EpilogueCase("in_place_wide_bf16", "bfloat16", "bfloat16", (1100, 2304, 512, 1), "gelu_tanh", "n", "out"),
    # few tiles and a long K: gemm() splits K (dense_gemm_split_fused: the final part's epilogue after the fix-up)
    EpilogueCase("gelu_bias_aux_splitk_bf16", "bfloat16", "bfloat16", (128, 1024, 8192, 1), "gelu", "n", aux="dense"),
    EpilogueCase("relu_rowbias_input_alpha_splitk_f32", "float16", "float32", (100, 1000, 6000, 1), "relu", "m",
                 "full", alpha=2.0, beta=0.5),
    EpilogueCase("swiglu_bias_splitk_f16", "float16", "float16", (200, 1024, 8192, 1), "swiglu", "n"),
    EpilogueCase("gelu_m_major_aux_splitk_f32", "float16", "float32", (128, 1024, 8192, 1), "gelu", "n", c_major="m",
                 aux="col_major"),
    # stream-K on 132 SMs (data-parallel on 114)
    EpilogueCase("silu_input_streamk_bf16", "bfloat16", "bfloat16", (300, 1000, 8192, 1), "silu", "n", "full"),
    # one round of 128x256 tiles on 132 SMs: 256x128 with a 1x2 cluster (`choice.WIDE_M_SWAP`: two 64-row slabs per
    # warpgroup), 128x160 on 114
    EpilogueCase("gelu_bias_wide_m_f16", "float16", "float16", (512, 8192, 2048, 1), "gelu", "n"),
    EpilogueCase("silu_rowbias_aux_wide_m_bf16", "bfloat16", "bfloat16", (1024, 4096, 2048, 1), "silu", "m",
                 aux="dense"),
    EpilogueCase("gelu_tanh_alpha_wide_m_batched_f16", "float16", "float16", (512, 4096, 2048, 2), "gelu_tanh", "n",
                 alpha=0.5),
    EpilogueCase("swiglu_bias_wide_m_bf16", "bfloat16", "bfloat16", (512, 8192, 2048, 1), "swiglu", "n"),
    # few rows that gemm() runs as the transposed problem on 132 SMs (`transposed`: 290 rows in two 160-column tiles of
    # an M-major C'; a bias along N becomes one along M' and the reverse): a dense, a strided (staged) and a broadcast
    # bias along N, a bias along M with alpha
    EpilogueCase("transposed_silu_bias_bf16", "bfloat16", "bfloat16", (290, 8192, 1024, 1), "silu", "n"),
    EpilogueCase("transposed_gelu_tanh_strided_bias_f16", "float16", "float16", (290, 8192, 1024, 1), "gelu_tanh",
                 "n", bias_view="strided"),
    EpilogueCase("transposed_gelu_one_bias_bf16", "bfloat16", "bfloat16", (290, 8192, 1024, 1), "gelu", "n",
                 bias_view="one"),
    EpilogueCase("transposed_relu_rowbias_alpha_f16", "float16", "float16", (290, 8192, 1024, 1), "relu", "m",
                 alpha=0.5),
    # many rows whose transposed problem's tiles fill a 132-SM GPU's round better (`transposed.quantises`: 8 x 16
    # tiles of 128x224 where the direct launch took 28 x 4 of 128x256)
    EpilogueCase("quantised_silu_bias_f16", "float16", "float16", (3572, 936, 1696, 1), "silu", "n"),
)


def case_problem(case: EpilogueCase, base: int = 1 << 20) -> Any:
    """The GemmProblem gemm() runs for the case (dense operands at 16-byte aligned bases)."""
    from ..torch_types import torch_dtype
    from .launch_plan import Layout, staged_problem

    m, n, k, l = case.mnkl
    dt = torch_dtype(case.dtype)
    lead = (l,) if l > 1 else ()
    a = Layout((*lead, m, k), ((m * k,) if l > 1 else ()) + (k, 1), dt, base)
    b = Layout((*lead, k, n), ((n * k,) if l > 1 else ()) + (1, k), dt, base)  # (N, K) row-major, transposed
    nc = case.n_out
    if case.c_major == "n":
        out = Layout((*lead, m, nc), ((m * nc,) if l > 1 else ()) + (nc, 1), torch_dtype(case.c_dtype), base)
    else:
        out = Layout((*lead, m, nc), ((m * nc,) if l > 1 else ()) + (1, m), torch_dtype(case.c_dtype), base)
    return staged_problem(a, b, out, n_out=nc if case.activation == "swiglu" else None)


def gpu_case_configs(num_sms: Sequence[int]) -> list[GemmConfig]:
    """The configs gemm() picks for `GPU_CASES` on GPUs of these SM counts (`aot.BENCH_NUM_SMS`), split-K and
    stream-K ones and transposed ones (`launch_plan.loadable_picks`) included."""
    from .launch_plan import loadable_picks

    out = []
    for c in GPU_CASES:
        p = case_problem(c)
        out += [cfg for sms in num_sms for cfg in loadable_picks(p, (p.c_dtype, "float32", None, None, None), c.fields,
                                                                  sms)]
    return out


# the benchmark: GPT/BERT-style MLP up-projections with a bias (hidden 4096 -> 16384) and the Llama-3 8B
# gate/up projection (4096 -> 2 x 14336) at 512..8192 tokens; (tokens, K, N of b)
MLP_SHAPES = tuple((t, 4096, 16384) for t in (512, 2048, 8192))
# the same MLP's down-projection (hidden 16384 -> 4096): its bias alone (cuBLASLt's bias epilogue under torch.addmm),
# and the bias with the residual stream as the input addend (beta 1), each with its GemmConfig fields
DOWN_SHAPES = tuple((t, 16384, 4096) for t in (512, 2048, 8192))
DOWN_EPILOGUES = {"bias": {"bias": "n"}, "bias+residual": {"bias": "n", "has_input": True}}
# the bias rows at decode-like token counts, through the down- and the up-projection (few tiles: gemm() splits K)
DECODE_SHAPES = tuple((t, k, n) for t in (16, 128) for k, n in ((16384, 4096), (4096, 16384)))
SWIGLU_SHAPES = tuple((t, 4096, 2 * 14336) for t in (512, 2048, 8192))
BENCH_ACTIVATIONS = ("gelu", "gelu_tanh", "relu", "silu")
BENCH_DTYPE = "bfloat16"


def bench_problem(tokens: int, k: int, n: int, dtype: str = BENCH_DTYPE) -> Any:
    """The benchmark's problem shape: K-major A and B, n-major C in the input dtype."""
    from .choice import GemmShape

    return GemmShape(tokens, n, k, 1, ab_dtype=dtype, c_dtype=dtype, a_major="k", b_major="k", c_major="n")


def bench_epilogue_configs(num_sms: Sequence[int], variant: str = "fast") -> list[GemmConfig]:
    """The configs of the epilogue benchmark rows (fused and plain, as gemm() picks them with `variant`; "fast":
    gemm()'s default, which may split K of a plain row) for these SM counts."""
    from .launch_plan import plan_config

    out = []
    for sms in num_sms:
        def pick(p: Any, fields: dict | None = None, sms: int = sms) -> GemmConfig:
            options = (p.c_dtype, "float32", None, None, None if variant == "fast" else variant)
            return plan_config(p, options, fields, sms)[0]

        for t, k, n in MLP_SHAPES:
            p = bench_problem(t, k, n)
            out.append(pick(p))
            out += [pick(p, {"activation": a, "bias": "n"}) for a in BENCH_ACTIVATIONS]
            # the row that also stores the pre-activation (bench_epilogue.AUX_ROW)
            out.append(pick(p, {"activation": "gelu", "bias": "n", "has_aux": True}))
        for t, k, n in DOWN_SHAPES:
            p = bench_problem(t, k, n)
            out.append(pick(p))
            out += [pick(p, fields) for fields in DOWN_EPILOGUES.values()]
        for t, k, n in DECODE_SHAPES:
            p = bench_problem(t, k, n)
            out += [pick(p), pick(p, DOWN_EPILOGUES["bias"])]
        for t, k, n in SWIGLU_SHAPES:
            p = bench_problem(t, k, n)
            out.append(pick(p))
            out.append(pick(p, {"activation": "swiglu"}))
    return out

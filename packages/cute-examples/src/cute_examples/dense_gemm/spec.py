"""The static configuration of one Hopper dense-GEMM kernel: dtypes, majors, CTA tile, cluster, stages.

`GemmConfig` is validated on construction (ValueError naming the field and the rule) and turns into the
JSON-able kernel specification that keys the compile cache and AOT bundles (`spec()`).

Conventions (those of CuTeDSL's `dense_gemm.py`): A is M x K x L, B is N x K x L (as stored: "k" major means
K contiguous), C is M x N x L. `a_major` is "k" or "m", `b_major` "k" or "n", `c_major` "n" or "m".
Roles: warpgroup 0 is the TMA producer, the others are consumers, each owning 64 rows of the CTA tile
(cooperative over M), or at tile_m 256 (tile_n <= 128: CUTLASS's 256x128 cooperative tile) two consumers of 128 rows
each, two 64-row wgmma atoms per K-block (`atoms_m`), without promotion or an input addend.

Speed options (each selectable, so that one GPU run can compare them; `VARIANTS` names sets of them):
- `k_pipe_mmas`: wgmma groups left in flight when a K-tile's group is committed (CUTLASS's K_PIPE_MMAS).
  1 waits with `wgmma.wait_group 1` and releases the *previous* K-tile's stage; 0 waits for every group
  (`wait_group 0`) before releasing its stage.
- `acc_init`: "scale_d" issues the first K-block of every tile with scale-d = 0 (D = A*B, no zeroed
  registers); "zero" starts from zero-initialised accumulators.
- `epi_buffers`: C staging buffers per consumer warpgroup; 2 lets the TMA store of one subtile run while
  the next is written to shared memory.
- `release_scope`: memory scope of a consumer's remote stage release in a cluster (`mbarrier.arrive` on a
  peer CTA's empty barrier). "cta" is CUTLASS's `ClusterBarrier::arrive(cta_id, pred)` (a plain
  `SYNCS.ARRIVE`); "cluster" (`.release.cluster`, the first kernels' choice) makes ptxas put
  `MEMBAR.ALL.GPU` before every K-tile's release. Only "cluster_release" uses it: the control that measures
  what the fence costs. Left out of `spec()` when "cta", so default specs are unchanged.

Fused epilogue (`D = act(alpha * acc + beta * input + bias)`, see `activation` and `epilogue_fused`):
- `activation`: one of `activation.ACTIVATIONS` ("identity" stores the accumulators as they are); "swiglu"
  makes C tile_n / 2 columns wide per tile (gate/up pairs, `activation`), so tile_n / 2 must be a multiple of
  `epi_n` and there is no input;
- `bias`: None, "n" (a vector along N, one value per accumulator column) or "m" (along M);
- `has_input`: add `beta * input` (an addend tensor of C's dtype, read per element; tile_n <= 128: at 256
  its loads and 64-bit addresses spill next to the accumulators);
- `has_alpha`: scale the accumulators by the run-time `alpha`;
- `has_aux`: also store the pre-activation `alpha * acc + beta * input + bias` (cuBLASLt's EPILOGUE_AUX, CUTLASS's
  aux store; gemm()'s `pre_activation_out`) in C's dtype and layout through staging buffers of its own (as
  many as C's) and TMA stores of C's boxes (the host stages a tensor a TMA descriptor of C's major cannot
  take: `launch_plan.aux_layout`); not with SwiGLU (its pre-activation is twice C's width) nor an 8-bit C;
- `scale_a`, `scale_b` (`SCALE_A_MODES`, `SCALE_B_MODES`): multiply the accumulators by float32 device scales
  (one value, or per row of A / per column of B) before alpha: the kernel `dense_gemm_scaled`.
- an 8-bit C (`FP8_C_DTYPES`, 8-bit inputs, N-major C): the stored value is `satfinite(D * out_scale)` as E4M3,
  out_scale a run-time f32 times an optional float32 device scalar; the kernel may also write max |D| (before
  out_scale, cuBLASLt's amax_D) with an atomic max: the kernel `dense_gemm_scaled`; its bias and input are
  bfloat16 (`epilogue_dtype`).
A config with any of them (`fused`) is the kernel `dense_gemm_fused`, whose run-time parameters add the
bias/input addresses and strides and alpha/beta; without, the kernel is the plain one, unchanged.

Schedule (`schedule`, `SCHEDULES`): "cooperative" (CUTLASS's KernelTmaWarpSpecializedCooperative: the consumer
warpgroups split each CTA tile's rows, 64 each, and run the epilogue together) or "pingpong"
(KernelTmaWarpSpecializedPingpong: two consumer warpgroups each own whole CTA tiles, taking the CTA's work units
alternately, so that one's epilogue runs while the other's mainloop does; needs a data-parallel decomposition,
tile_m * tile_n / 128 <= `MAX_PINGPONG_ACC` float32 accumulators per thread and no accumulator promotion; a
warpgroup issues tile_m / 64 wgmma atoms per k-block, `atoms_m`). The name marks ping-pong with a "P" after the
speed options ("p1s2P"); "cooperative" is left out of it.

Two-level accumulation (`mma_promotion_interval`, CUTLASS's 2xAcc for FP8): every that many k-blocks (a multiple
of the K-tile's `k_blocks`) the wgmma accumulator is added into a second float32 accumulator and restarted, so
that the tensor cores' reduced-precision FP8 accumulation only ever sums a few K-tiles; 0 turns it off.

Decomposition of K (`decomposition`, cute-nvarch's `DECOMPOSITIONS`): "data_parallel" (every unit one whole
tile), "split_k" or "stream_k" (units share tiles and add their partial accumulators through a float32
workspace in an ordered fix-up, `split_k`). A shared-K config is the kernel `dense_gemm_split` (run-time
parameters add the workspace and flag addresses and split-K's part count), `dense_gemm_split_fused` with a fused
epilogue, or `dense_gemm_split_scaled` with device scales or an 8-bit C; it needs a float32 accumulator and the
cooperative schedule.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

from cute_nvarch.gmma_desc import GmmaLayoutType
from cute_nvarch.gmma_smem import select_gmma_layout_type
from cute_nvarch.numeric import BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32, numeric_type
from cute_nvarch.smem import SmemPlan
from cute_nvarch.target import SM90A, TARGETS, compile_target
from cute_nvarch.tile_scheduler import DECOMPOSITIONS, PY_OPS, TileScheduler

from .activation import ACTIVATIONS, BIAS_MODES

__all__ = [
    "DTYPE_BYTES",
    "FP8_C_DTYPES",
    "FP8_DTYPES",
    "TOLERANCE",
    "tolerance",
    "ACC_DTYPES",
    "AB_DTYPES",
    "C_DTYPES",
    "CLUSTER_SHAPES",
    "GemmConfig",
    "NAME_LEGEND",
    "RELEASE_SCOPES",
    "SCHEDULES",
    "SMEM_CAPACITY",
    "TILES",
    "VARIANTS",
    "canonical_dtype",
    "runs_on",
]

AB_DTYPES = tuple(t.canonical for t in (Float16, BFloat16))
# 8-bit inputs (E4M3, E5M2; A and B may differ): K-major only (wgmma's rule for 8-bit types), f32 accumulation
FP8_DTYPES = tuple(t.canonical for t in (Float8E4M3FN, Float8E5M2))
C_DTYPES = tuple(t.canonical for t in (Float16, BFloat16, Float32))
# 8-bit C (8-bit inputs only): satfinite(D * out_scale) rounded to E4M3, N-major, through `dense_gemm_scaled`
FP8_C_DTYPES = (Float8E4M3FN.canonical,)
ACC_DTYPES = tuple(t.canonical for t in (Float32, Float16))
# bytes per element of each C dtype, read off cute-nvarch's table once
DTYPE_BYTES = {t.canonical: t.bytes for t in (Float16, BFloat16, Float32, Float8E4M3FN)}
# the dtype of the bias and the input addend of an 8-bit C (torch._scaled_mm's bias dtype for an FP8 output)
FP8_C_EPILOGUE_DTYPE = BFloat16.canonical
TILE_M = (64, 128, 256)
TILE_N = (64, 96, 128, 144, 160, 176, 192, 224, 256)
# the most float32 accumulators per thread of a cooperative consumer warpgroup (64 x 256, or 128 x 128 as two 64-row
# atoms: tile_m 256 with tile_n <= 128 splits the tile's rows between two warpgroups, 128 each)
MAX_COOPERATIVE_ACC = 128
# cooperative consumer warpgroups: one per 64 rows of the tile, at most this many (tile_m 256: two atoms each)
MAX_CONSUMER_WARPGROUPS = 2


def cooperative_warpgroups(tile_m: int) -> int:
    """Consumer warpgroups of a cooperative tile of `tile_m` rows: one per 64 rows, at most MAX_CONSUMER_WARPGROUPS."""
    return min(tile_m // 64, MAX_CONSUMER_WARPGROUPS)


def cooperative_acc(tile_m: int, tile_n: int) -> int:
    """float32 accumulators per consumer thread of a cooperative tile (its warpgroups split the rows)."""
    return tile_m * tile_n // 128 // cooperative_warpgroups(tile_m)


# every (tile_m, tile_n) of the cooperative schedule: TILE_M x TILE_N within MAX_COOPERATIVE_ACC accumulators per
# consumer thread (256 x 64/96/128)
TILES = tuple((tm, tn) for tm in TILE_M for tn in TILE_N if cooperative_acc(tm, tn) <= MAX_COOPERATIVE_ACC)
# tile_k is one 128-byte swizzle row of A and B: 64 16-bit or 128 8-bit elements
TILE_K_BYTES = 128
TMA_STRIDE_BYTES = 16  # TMA's rule for a global stride: a multiple of 16 bytes


def padded_ld(extent: int, elem_bytes: int) -> int:
    """Elements of a row of `extent` elements with its end padded to TMA's stride rule (`TMA_STRIDE_BYTES`)."""
    return -(-extent * elem_bytes // TMA_STRIDE_BYTES) * TMA_STRIDE_BYTES // elem_bytes


CLUSTER_SHAPES = ((1, 1), (2, 1), (1, 2), (2, 2))
# sm_90: 227 KiB of dynamic shared memory per block (232448 bytes), cute-nvarch's target figure
SMEM_CAPACITY = SM90A.smem_per_block
# device scales of A and B (float32, read by the kernel): None, one value ("tensor"), or one per row of A ("m") /
# per column of B ("n"), torch._scaled_mm's per-tensor and rowwise scales
SCALE_A_MODES = (None, "tensor", "m")
SCALE_B_MODES = (None, "tensor", "n")
# an 8-bit C's tile N is a whole number of 64-byte staging rows (the 64-byte swizzle; 128-byte rows where it allows)
FP8_C_TILE_N_MULTIPLE = 64
# the widest tile whose consumers hold two float32 accumulators (mma_promotion_interval) without spilling (192:
# two 96-register halves of 64 x 192, 0 spills; 256 spills)
MAX_PROMOTION_TILE_N = 192
# the GemmConfig fields of the epilogue and the device scales (what a re-chosen tile keeps)
EPILOGUE_FIELDS = ("activation", "bias", "has_input", "has_alpha", "has_aux", "scale_a", "scale_b")
# the most accumulators per thread of a ping-pong warpgroup that also loads the input addend without spilling (one
# warpgroup holds the whole tile: 64 x 128); the cooperative tiles take an input at every tile N (docs/gemm.md: which
# combinations spill a few bytes)
MAX_PINGPONG_INPUT_ACC = 64
PRODUCER_REGS = 40
CONSUMER_REGS = 232
ACC_INITS = ("scale_d", "zero")
SCHEDULES = ("cooperative", "pingpong")
# a ping-pong consumer warpgroup holds a whole tile's accumulators: at most 128 float32 registers per thread
MAX_PINGPONG_ACC = 128
# the ping-pong tile rows: one or two 64-row wgmma atoms per warpgroup and k-block
PINGPONG_TILE_M = (64, 128)
RELEASE_SCOPES = ("cta", "cluster")
# named sets of the speed options: "fast" (the defaults), "cluster_release" ("fast" with the cluster-scope
# stage release of the first kernels: the benchmark's control for that fence), "base" (the first,
# unpipelined kernel, with the CTA-scope release) and "pingpong" ("fast" with the ping-pong schedule)
VARIANTS = {
    "fast": {"k_pipe_mmas": 1, "acc_init": "scale_d", "epi_buffers": 2, "release_scope": "cta",
             "schedule": "cooperative"},
    "cluster_release": {
        "k_pipe_mmas": 1,
        "acc_init": "scale_d",
        "epi_buffers": 2,
        "release_scope": "cluster",
        "schedule": "cooperative",
    },
    "base": {"k_pipe_mmas": 0, "acc_init": "zero", "epi_buffers": 1, "release_scope": "cta",
             "schedule": "cooperative"},
    # "fast" with the ping-pong schedule (`with_schedule`: a tile over its accumulator limit halves its M)
    "pingpong": {"k_pipe_mmas": 1, "acc_init": "scale_d", "epi_buffers": 2, "release_scope": "cta",
                 "schedule": "pingpong"},
}


def runs_on(cc: tuple[int, int]) -> bool:
    """Whether the GEMM kernels (wgmma, setmaxnreg, TMA multicast) run on a device of compute capability cc."""
    return compile_target(cc).has_wgmma


def canonical_dtype(dtype: object, what: str = "dtype", allowed: tuple[str, ...] = C_DTYPES) -> str:
    """'float16' / 'bfloat16' / 'float32' (or another of `allowed`) for CuTe (`Float16`), torch
    (`torch.float16`) or short names."""
    try:
        canon = numeric_type(dtype if isinstance(dtype, str) else str(dtype)).canonical
    except ValueError:
        canon = None
    if canon not in allowed:
        names = ", ".join(numeric_type(a).name for a in allowed)
        raise ValueError(f"{what} must be one of {names} (or torch's names), got {dtype!r}")
    return canon


# the parts of `GemmConfig.name`, explained once wherever names are listed (the main job's report)
NAME_LEGEND = (
    "dense_gemm_<A,B dtype (A then B when they differ)>_<acc dtype>_<C dtype>_<A,B,C majors>_<tile MxNxK>_",
    "  c<cluster MxN>_s<stages>_",
    "  p<k_pipe_mmas><acc_init: s = scale_d (scale-d 0 start), z = zero><epilogue C buffers>[P = ping-pong schedule]",
    "  [_rc = cluster-scope stage release][_<activation>][_bn|_bm = bias along N|M][_in = input][_al = alpha]",
    "  [_aux = the pre-activation also stored (pre_activation_out)]",
    "  [_s<t|m|x><t|n|x> = device scales of A (per tensor|row|none) and B (per tensor|column|none)]",
    "  [_splitk|_streamk = units share tiles' K loops][_pi<k-blocks between accumulator promotions>];",
    "  e.g. kkn = A, B K-major, C N-major; p1s2 = 1 wgmma group in flight, scale-d start, 2 C buffers",
)


@dataclass(frozen=True)
class GemmConfig:
    """One GEMM kernel's static parameters (see module doc); `stages=None` picks the most that fit."""

    a_dtype: str = "float16"
    b_dtype: str = "float16"
    c_dtype: str = "float16"
    acc_dtype: str = "float32"
    a_major: str = "k"
    b_major: str = "k"
    c_major: str = "n"
    tile_m: int = 128
    tile_n: int = 128
    tile_k: int | None = None
    cluster_m: int = 1
    cluster_n: int = 1
    stages: int | None = None
    target: str = SM90A.name
    k_pipe_mmas: int = 1
    acc_init: str = "scale_d"
    epi_buffers: int = 2
    release_scope: str = "cta"
    activation: str = "identity"
    bias: str | None = None
    has_input: bool = False
    has_alpha: bool = False
    has_aux: bool = False
    decomposition: str = "data_parallel"
    mma_promotion_interval: int = 0
    scale_a: str | None = None
    scale_b: str | None = None
    schedule: str = "cooperative"

    def __post_init__(self) -> None:
        for f in ("a_dtype", "b_dtype"):
            object.__setattr__(self, f, canonical_dtype(getattr(self, f), f, AB_DTYPES + FP8_DTYPES))
        object.__setattr__(self, "c_dtype", canonical_dtype(self.c_dtype, "c_dtype", C_DTYPES + FP8_C_DTYPES))
        object.__setattr__(self, "acc_dtype", canonical_dtype(self.acc_dtype, "acc_dtype"))
        if self.tile_k is None:
            object.__setattr__(self, "tile_k", TILE_K_BYTES // self.ab_bytes)
        if self.is_fp8:
            if self.b_dtype not in FP8_DTYPES:
                raise ValueError(f"b_dtype must be 8-bit ({FP8_DTYPES}) with an 8-bit a_dtype, got {self.b_dtype!r}")
            for f in ("a_major", "b_major"):
                if getattr(self, f) != "k":
                    raise ValueError(f"{f} must be 'k' for 8-bit inputs (wgmma reads 8-bit A and B K-major only), "
                                     f"got {getattr(self, f)!r}")
            if self.acc_dtype != "float32":
                raise ValueError(f"acc_dtype must be float32 for 8-bit inputs, got {self.acc_dtype}")
        elif self.b_dtype != self.a_dtype:
            raise ValueError(f"b_dtype must equal a_dtype ({self.a_dtype}) for wgmma, got {self.b_dtype!r}")
        if self.acc_dtype not in ACC_DTYPES:
            raise ValueError(f"acc_dtype must be one of {ACC_DTYPES}, got {self.acc_dtype!r}")
        if self.acc_dtype == "float16" and self.a_dtype != "float16":
            raise ValueError(f"acc_dtype float16 needs float16 inputs, got a_dtype={self.a_dtype}")
        if self.c_dtype not in C_DTYPES + FP8_C_DTYPES:
            raise ValueError(f"c_dtype must be one of {C_DTYPES + FP8_C_DTYPES}, got {self.c_dtype!r}")
        for f, allowed in (("a_major", ("k", "m")), ("b_major", ("k", "n")), ("c_major", ("n", "m"))):
            v = getattr(self, f)
            if v not in allowed:
                raise ValueError(f"{f} must be one of {allowed}, got {v!r}")
        tile_k = (TILE_K_BYTES // self.ab_bytes,)
        for f, allowed in (("tile_m", TILE_M), ("tile_n", TILE_N), ("tile_k", tile_k)):
            v = getattr(self, f)
            if v not in allowed:
                raise ValueError(f"{f} must be one of {allowed}, got {v!r}")
        if (self.cluster_m, self.cluster_n) not in CLUSTER_SHAPES:
            raise ValueError(
                f"cluster shape (m, n) must be one of {CLUSTER_SHAPES}, "
                f"got {(self.cluster_m, self.cluster_n)}"
            )
        if self.k_pipe_mmas not in (0, 1):
            raise ValueError(f"k_pipe_mmas must be 0 or 1, got {self.k_pipe_mmas!r}")
        if self.acc_init not in ACC_INITS:
            raise ValueError(f"acc_init must be one of {ACC_INITS}, got {self.acc_init!r}")
        if self.epi_buffers not in (1, 2):
            raise ValueError(f"epi_buffers must be 1 or 2, got {self.epi_buffers!r}")
        if self.release_scope not in RELEASE_SCOPES:
            raise ValueError(f"release_scope must be one of {RELEASE_SCOPES}, got {self.release_scope!r}")
        self._check_epilogue()
        if self.fp8_out:
            self._check_fp8_out()
        self._check_decomposition()
        self._check_promotion()
        self._check_schedule()
        for f, modes in (("scale_a", SCALE_A_MODES), ("scale_b", SCALE_B_MODES)):
            if getattr(self, f) not in modes:
                raise ValueError(f"{f} must be one of {modes}, got {getattr(self, f)!r}")
            if getattr(self, f) is not None and self.acc_dtype != "float32":
                raise ValueError(f"{f} needs acc_dtype float32, got {self.acc_dtype}")
        if self.target not in TARGETS or not TARGETS[self.target].has_wgmma:
            wgmma = [t.name for t in TARGETS.values() if t.has_wgmma]
            raise ValueError(f"target must be one of {wgmma} (wgmma and setmaxnreg), got {self.target!r}")
        if self.stages is not None:
            if not isinstance(self.stages, int) or self.stages < 2:
                raise ValueError(f"stages must be an int >= 2, got {self.stages!r}")
            self.smem_plan(self.stages).check(self.target)
        elif self.max_stages() < 2:
            raise ValueError("tile does not fit two pipeline stages in shared memory")

    def _check_epilogue(self) -> None:
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.bias not in BIAS_MODES:
            raise ValueError(f"bias must be one of {BIAS_MODES}, got {self.bias!r}")
        for f in ("has_input", "has_alpha", "has_aux"):
            if not isinstance(getattr(self, f), bool):
                raise ValueError(f"{f} must be a bool, got {getattr(self, f)!r}")
        if self.has_aux and self.activation == "swiglu":
            raise ValueError("has_aux (the pre-activation output) is not supported with activation 'swiglu': its "
                             "pre-activation is the (M, N) interleaved gate/up product, twice C's width")
        if self.has_aux and self.c_dtype in FP8_C_DTYPES:
            raise ValueError(f"has_aux (the pre-activation output, stored in C's dtype) needs a 16- or 32-bit C, got "
                             f"c_dtype {self.c_dtype}")
        if self.activation == "swiglu":
            if self.has_input:
                raise ValueError("activation 'swiglu' takes no input (has_input must be False)")
            if (self.tile_n // 2) % self.swiglu_chunk_n:
                raise ValueError(
                    f"activation 'swiglu' writes tile_n / 2 = {self.tile_n // 2} columns per tile, which must be a "
                    f"multiple of the {self.swiglu_chunk_n}-column epilogue chunk of a {self.c_dtype} "
                    f"{self.c_major}-major C (tile_n a multiple of {2 * self.swiglu_chunk_n})"
                )

    def _check_fp8_out(self) -> None:
        if not self.is_fp8:
            raise ValueError(f"c_dtype {self.c_dtype} needs 8-bit inputs (a_dtype/b_dtype in {FP8_DTYPES}), got "
                             f"a_dtype={self.a_dtype}")
        if self.c_major != "n":
            raise ValueError(f"c_dtype {self.c_dtype} needs c_major 'n' (an N-major, row-major C, as "
                             f"torch._scaled_mm writes), got {self.c_major!r}")
        if self.c_tile_n % FP8_C_TILE_N_MULTIPLE:
            raise ValueError(f"c_dtype {self.c_dtype} stages 64- or 128-byte rows of C: the tile's {self.c_tile_n} "
                             f"columns of C must be a multiple of {FP8_C_TILE_N_MULTIPLE} (SwiGLU: tile_n 256)")

    def _check_decomposition(self) -> None:
        if self.decomposition not in DECOMPOSITIONS:
            raise ValueError(f"decomposition must be one of {DECOMPOSITIONS}, got {self.decomposition!r}")
        if not self.shares_k:
            return
        if self.acc_dtype != "float32":
            raise ValueError(f"decomposition {self.decomposition!r} needs acc_dtype float32, got {self.acc_dtype}")

    def _check_promotion(self) -> None:
        p = self.mma_promotion_interval
        if isinstance(p, bool) or not isinstance(p, int) or p < 0:
            raise ValueError(f"mma_promotion_interval must be an int >= 0 (0: no promotion), got {p!r}")
        if not p:
            return
        if p % self.k_blocks:
            raise ValueError(f"mma_promotion_interval must be a multiple of the {self.k_blocks} k-blocks of a K-tile, "
                             f"got {p}")
        if self.acc_dtype != "float32":
            raise ValueError(f"mma_promotion_interval needs acc_dtype float32, got {self.acc_dtype}")
        if self.tile_n > MAX_PROMOTION_TILE_N:
            raise ValueError(f"mma_promotion_interval needs tile_n <= {MAX_PROMOTION_TILE_N} (two 64 x tile_n float32 "
                             f"accumulators per consumer warpgroup), got tile_n={self.tile_n}")

    def _check_schedule(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.schedule == "cooperative":
            self._check_cooperative()
            return
        if self.shares_k:
            raise ValueError(f"schedule 'pingpong' needs decomposition 'data_parallel' (each warpgroup takes every "
                             f"other unit; shared-K units' running counts and fix-up order span all units), got "
                             f"{self.decomposition!r}")
        acc = self.tile_m * self.tile_n // 128
        if acc > MAX_PINGPONG_ACC:
            raise ValueError(f"schedule 'pingpong' needs tile_m * tile_n / 128 <= {MAX_PINGPONG_ACC} accumulators per "
                             f"thread (one warpgroup holds the whole tile), got tile {self.tile_m}x{self.tile_n} "
                             f"({acc})")
        if self.tile_m not in PINGPONG_TILE_M:
            raise ValueError(f"schedule 'pingpong' supports tile_m in {PINGPONG_TILE_M} (one 64-row wgmma atom per "
                             f"warpgroup), got tile_m={self.tile_m}")
        if self.has_input and acc > MAX_PINGPONG_INPUT_ACC:
            raise ValueError(f"has_input with schedule 'pingpong' needs tile_m * tile_n / 128 <= "
                             f"{MAX_PINGPONG_INPUT_ACC} accumulators per thread (the addend's loads spill next to "
                             f"more), got tile {self.tile_m}x{self.tile_n} ({acc})")
        if self.mma_promotion_interval:
            raise ValueError("schedule 'pingpong' takes no mma_promotion_interval (two accumulators of a whole tile "
                             "per warpgroup do not fit its registers)")

    def _check_cooperative(self) -> None:
        acc = cooperative_acc(self.tile_m, self.tile_n)
        if acc > MAX_COOPERATIVE_ACC:
            raise ValueError(f"tile {self.tile_m}x{self.tile_n} needs {acc} float32 accumulators per consumer thread "
                             f"(tile_m * tile_n / 128 over {self.num_consumer_warpgroups} warpgroups); at most "
                             f"{MAX_COOPERATIVE_ACC} fit (tile_m 256 takes tile_n <= 128)")
        if self.atoms_m == 1:
            return
        for f, ok in (("mma_promotion_interval", not self.mma_promotion_interval), ("has_input", not self.has_input)):
            if not ok:
                raise ValueError(f"tile_m {self.tile_m} (two 64-row wgmma atoms per consumer warpgroup) takes no "
                                 f"{f} {getattr(self, f)!r}: one accumulator per atom and no addend loads beside them")

    @property
    def pingpong(self) -> bool:
        """Whether two consumer warpgroups take whole tiles alternately (`schedule` "pingpong")."""
        return self.schedule == "pingpong"

    @property
    def atoms_m(self) -> int:
        """64-row wgmma atoms one consumer warpgroup issues per K-block (its accumulators): tile_m/64 for ping-pong,
        else tile_m / 64 / num_consumer_warpgroups (2 at tile_m 256, else 1)."""
        return self.tile_m // 64 if self.pingpong else self.tile_m // 64 // self.num_consumer_warpgroups

    @property
    def mma_warpgroups(self) -> int:
        """Consumer warpgroups sharing one tile's MMAs and releasing each stage: every consumer warpgroup, or 1
        for ping-pong."""
        return 1 if self.pingpong else self.num_consumer_warpgroups

    @property
    def k_blocks(self) -> int:
        """wgmma K-blocks per K-tile (a wgmma reads 32 bytes of K: 16 16-bit or 32 8-bit elements)."""
        return self.tile_k * self.ab_bytes // 32

    @property
    def shares_k(self) -> bool:
        """Whether units may share a tile's K loop (split-K, stream-K: the `dense_gemm_split` kernel)."""
        return self.decomposition != "data_parallel"

    # --- derived sizes -------------------------------------------------------------------------------
    @property
    def fused(self) -> bool:
        """Whether the epilogue does more than store the accumulators (the `dense_gemm_fused` kernel)."""
        return (self.activation != "identity" or self.bias is not None or self.has_input or self.has_alpha
                or self.has_aux or self.scaled)

    @property
    def scaled(self) -> bool:
        """Whether the kernel reads device scales of A or B or writes an 8-bit C (the `dense_gemm_scaled` kernel)."""
        return self.scale_a is not None or self.scale_b is not None or self.fp8_out

    @property
    def fp8_out(self) -> bool:
        """Whether C is 8-bit: satfinite(D * out_scale) as E4M3, with the optional amax of D."""
        return self.c_dtype in FP8_C_DTYPES

    @property
    def epilogue_dtype(self) -> str:
        """The dtype of the fused epilogue's bias and input: C's, or bfloat16 for an 8-bit C."""
        return FP8_C_EPILOGUE_DTYPE if self.fp8_out else self.c_dtype

    @property
    def c_tile_n(self) -> int:
        """Columns of C per CTA tile: tile_n, or half of it for SwiGLU (gate/up pairs)."""
        return self.tile_n // 2 if self.activation == "swiglu" else self.tile_n

    @property
    def is_fp8(self) -> bool:
        """Whether A and B are 8-bit floats (E4M3/E5M2)."""
        return self.a_dtype in FP8_DTYPES

    @property
    def ab_bytes(self) -> int:
        """Bytes per A/B element."""
        return numeric_type(self.a_dtype).bytes

    @property
    def c_bytes(self) -> int:
        """Bytes per C element."""
        return DTYPE_BYTES[self.c_dtype]

    @property
    def num_consumer_warpgroups(self) -> int:
        """Consumer warpgroups: tile_m/64 up to MAX_CONSUMER_WARPGROUPS (atoms_m 64-row slabs of the tile each), or
        2 for ping-pong (whole tiles each)."""
        return 2 if self.pingpong else cooperative_warpgroups(self.tile_m)

    @property
    def num_threads(self) -> int:
        """Threads per CTA: one producer warpgroup plus the consumers."""
        return 128 * (1 + self.num_consumer_warpgroups)

    @property
    def cluster_size(self) -> int:
        """CTAs per cluster."""
        return self.cluster_m * self.cluster_n

    @functools.cached_property
    def tile_scheduler(self) -> TileScheduler:
        """The persistent tile scheduler's description (tile counts, units, grid, order: host and kernel)."""
        return TileScheduler(self.tile_m, self.tile_n, self.tile_k, self.cluster_m, self.cluster_n)

    @property
    def a_stage_bytes(self) -> int:
        """Bytes of one A stage (tile_m x tile_k)."""
        return self.tile_m * self.tile_k * self.ab_bytes

    @property
    def b_stage_bytes(self) -> int:
        """Bytes of one B stage (tile_n x tile_k)."""
        return self.tile_n * self.tile_k * self.ab_bytes

    @property
    def clamped_edges(self) -> tuple[bool, bool]:
        """Whether an edge tile along M / N that would cross the problem starts at the last whole tile inside it
        instead (where the problem holds one, and along a contiguous mode only at a multiple of 16 elements:
        `tile_origin`): its TMA boxes stay in bounds, and it writes its neighbour's
        overlapping rows (columns) again with the same values. TMA fills out-of-bound box rows slowly (H200, 400 x
        4096 x 4096 on 128x64: 56.8 us with the last M tile's A box 3/4 out of bounds, 27.0 us in bounds). Not with
        an input addend (it may be out itself: a second write would follow a read of the first), nor, along N,
        SwiGLU's interleaved gate/up columns. Under stream-K only where the launch's units at that edge cover all
        of K (`tile_origin`'s `whole`: an edge tile and a neighbour that split K at different iterations round
        their overlapping rows differently and the last writer's bits would win, which a GPU test's runs showed;
        split-K splits every tile at the same iterations)."""
        m = not self.has_input
        return m, m and self.activation != "swiglu"

    @property
    def edge_aligned(self) -> tuple[bool, bool]:
        """Whether an edge tile's shift along M / N must leave its origin a multiple of `EDGE_ALIGN` elements: M
        where it is contiguous in A or C (a TMA coordinate there must stay 16-byte aligned: an unaligned one
        faulted) or indexes an epilogue vector (bias, row scales: vector loads); N always (contiguous in the usual
        N-major C; the unaligned shift was never run on a GPU for the rest)."""
        m = self.a_major == "m" or self.c_major == "m" or self.bias == "m" or self.scale_a not in (None, "tensor")
        return m, True

    def tile_origin(self, mode: int, idx: Any, extent: Any, ops: Any = PY_OPS, whole: Any = True) -> Any:
        """The first row (mode 0) or accumulator column (mode 1) of CTA tile `idx` of a problem `extent` long in
        that mode (Python ints, or run-time values with `ops`, the IntOps of cute-ir): idx x tile, or for an edge
        tile that would cross the extent `extent - tile` where `clamped_edges` and the extent holds a whole tile
        (and, where `edge_aligned`, `extent - tile` is a multiple of `EDGE_ALIGN`), where `whole`: the scheduler's
        `edges_whole`, True but under stream-K)."""
        size = (self.tile_m, self.tile_n)[mode]
        start = idx * size
        if not self.clamped_edges[mode] or whole is False:
            return start
        last = extent - size
        shifted = ops.min(start, last)
        if self.edge_aligned[mode]:
            shifted = ops.select(last % EDGE_ALIGN == 0, shifted, start)
        if whole is not True:
            shifted = ops.select(whole, shifted, start)
        return ops.select(extent >= size, shifted, start)

    @property
    def short_a_box(self) -> bool:
        """Whether A's TMA box shrinks to the rows M has (`a_box_rows`): a K-major A loaded in one box (no
        multicast, cluster_n 1)."""
        return self.a_major == "k" and self.cluster_n == 1

    def a_box_rows(self, m: Any, ops: Any = PY_OPS) -> Any:
        """Rows of A's TMA box for M rows (Python ints, or run-time values with `ops`, the IntOps of cute-ir):
        tile_m, or M rounded up to 8 where fewer and `short_a_box` (a decode row's box of one valid row in 64 ran
        1.5x longer than a full one: TMA fills out-of-bound rows element by element). The host encodes that box,
        the kernel expects its bytes; the stage's other rows are zeroed once per launch."""
        if not self.short_a_box:
            return self.tile_m
        return box_rows(m, self.tile_m, ops)

    @property
    def row_epi_n(self) -> int:
        """Columns of C in one 128-byte swizzle row (N-major) or the widest M-major chunk (64 of a 16-bit C)."""
        return 128 // self.c_bytes if self.c_major == "n" else (64 if self.c_bytes == 2 else 32)

    @property
    def swiglu_chunk_n(self) -> int:
        """The epilogue chunk SwiGLU's C columns per tile must be a multiple of: a 16-bit N-major C's 32-byte row
        (16 columns: tile N 224 writes seven, 160 five), else `row_epi_n`."""
        return 16 if self.c_bytes == 2 and self.c_major == "n" else self.row_epi_n

    @property
    def epi_n(self) -> int:
        """Columns of C each consumer warpgroup stages per epilogue step: an N-major C's widest swizzle row (128,
        64 or 32 bytes) that divides the tile's columns, an M-major C's 64 (16-bit) or 32 (float32) columns, halved
        until they divide them (tile N 96 and 160 stage 32-column chunks of a 16-bit C). With the pre-activation
        output an N-major 16-bit C stages 32-column chunks: its buffers and C's then take the shared memory C's
        alone take with 64 (128x256: four stages, not three)."""
        width = self.row_epi_n
        if self.has_aux and self.c_major == "n" and self.c_bytes == 2:
            width //= 2
        while self.c_tile_n % width and width * self.c_bytes > 32:
            width //= 2
        return width

    @property
    def epi_layout_type(self) -> GmmaLayoutType:
        """The staging buffer's swizzle: an N-major C's row of epi_n elements, an M-major C's 64 rows (128 bytes
        of a 16-bit C, 256 of a float32 one: both the 128-byte swizzle)."""
        if self.c_major == "m":
            return GmmaLayoutType.B128
        return {128: GmmaLayoutType.B128, 64: GmmaLayoutType.B64, 32: GmmaLayoutType.B32}[self.epi_n * self.c_bytes]

    @property
    def epi_bytes(self) -> int:
        """Bytes of one consumer warpgroup's epilogue staging buffer (64 x epi_n of C)."""
        return 64 * self.epi_n * self.c_bytes

    @property
    def c_staging_bytes(self) -> int:
        """Bytes of every consumer warpgroup's C staging buffers; with `has_aux` the pre-activation output's buffers
        follow them, each this many bytes after C's of the same warpgroup and chunk."""
        return self.num_consumer_warpgroups * self.epi_buffers * self.epi_bytes

    def smem_plan(self, stages: int) -> SmemPlan:
        """The kernel's shared-memory plan with `stages` stages (cute-nvarch's allocator; not yet checked).

        Full/empty mbarriers of every stage, then the A and B stages and the consumer warpgroups' C staging
        buffers, each aligned to its GMMA swizzle pattern (1024 bytes for the 128-byte swizzle), from a
        1024-byte aligned base.
        """
        plan = SmemPlan(1024, label=f"GemmConfig({self.a_major}{self.b_major}{self.c_major} "
                        f"{self.tile_m}x{self.tile_n}x{self.tile_k}, {self.a_dtype}/{self.c_dtype}, stages={stages})")
        plan.add_mbarriers("barriers", 2 * stages)
        for name, major, mn, nbytes in (
            ("a", self.a_major, self.tile_m, self.a_stage_bytes),
            ("b", self.b_major, self.tile_n, self.b_stage_bytes),
        ):
            lt = select_gmma_layout_type(self.a_dtype, "K" if major == "k" else "MN", mn, self.tile_k)
            plan.add_gmma(name, stages * nbytes, lt)
        # consumer warpgroup g's staging buffer b is at (g * epi_buffers + b) * epi_bytes (SW128 layouts); with the
        # pre-activation output (has_aux) its buffer of the same chunk is c_staging_bytes on
        plan.add_gmma("epi", self.c_staging_bytes * (2 if self.has_aux else 1), GmmaLayoutType.B128)
        return plan

    def smem_bytes(self, stages: int) -> int:
        """Dynamic shared memory of the kernel with `stages` stages (with the 1024-byte round-up slack)."""
        return _smem_bytes(self, stages)

    def max_stages(self) -> int:
        """The most stages (<= 8) that fit the target's shared-memory capacity."""
        s = 8
        while s >= 1 and not _smem_fits(self, s):
            s -= 1
        return s

    @property
    def num_stages(self) -> int:
        """The stage count the kernel is built with."""
        return self.stages if self.stages is not None else self.max_stages()

    @property
    def name(self) -> str:
        """The kernel's entry symbol (its parts: NAME_LEGEND)."""
        a, b, acc, c = (numeric_type(d).short for d in (self.a_dtype, self.b_dtype, self.acc_dtype, self.c_dtype))
        if b != a:
            a = f"{a}{b}"
        return (
            f"dense_gemm_{a}_{acc}_{c}_"
            f"{self.a_major}{self.b_major}{self.c_major}_{self.tile_m}x{self.tile_n}x{self.tile_k}_"
            f"c{self.cluster_m}x{self.cluster_n}_s{self.num_stages}_"
            f"p{self.k_pipe_mmas}{self.acc_init[0]}{self.epi_buffers}"
            + ("P" if self.pingpong else "")  # one letter: the longest fused names must fit the report's column
            + ("" if self.release_scope == "cta" else "_rc")
            + self.epilogue_label
            + ("" if not self.shares_k else "_" + self.decomposition.replace("_", ""))
            + (f"_pi{self.mma_promotion_interval}" if self.mma_promotion_interval else "")
        )

    @property
    def epilogue_label(self) -> str:
        """The fused epilogue's part of the name ("" without one; e.g. "_gelu_bn")."""
        parts = [self.activation] if self.activation != "identity" else []
        parts += [f"b{self.bias}"] if self.bias else []
        parts += ["in"] if self.has_input else []
        parts += ["al"] if self.has_alpha else []
        parts += ["aux"] if self.has_aux else []
        if self.scaled:  # s<A's: t|m|x><B's: t|n|x> (x: none)
            parts += ["s" + "".join(m[0] if m else "x" for m in (self.scale_a, self.scale_b))]
        return "".join("_" + p for p in parts)

    @property
    def variant(self) -> str | None:
        """The name of the `VARIANTS` entry whose speed options this config has, else None."""
        for name, opts in VARIANTS.items():
            if all(getattr(self, k) == v for k, v in opts.items()):
                return name
        return None

    def with_schedule(self, schedule: str) -> GemmConfig:
        """This config with `schedule`; for ping-pong a tile over `MAX_PINGPONG_ACC` accumulators per thread keeps
        its N and halves its M (128x256 -> 64x256, stages re-derived)."""
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
        tile_m, stages = self.tile_m, self.stages
        if schedule == "pingpong" and tile_m * self.tile_n // 128 > MAX_PINGPONG_ACC:
            tile_m, stages = tile_m // 2, None
        return replace(self, schedule=schedule, tile_m=tile_m, stages=stages)

    def with_variant(self, variant: str) -> GemmConfig:
        """This config with the speed options of `VARIANTS[variant]` (stages re-derived when not fixed; the schedule
        through `with_schedule`)."""
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
        opts = dict(VARIANTS[variant])
        schedule = opts.pop("schedule")
        return replace(self, **opts).with_schedule(schedule)


EDGE_ALIGN = 16  # elements: where a shifted edge tile's origin must be aligned, a multiple of this (16 bytes of 8-bit)


def box_rows(m: Any, full: int, ops: Any = PY_OPS) -> Any:
    """Rows of a TMA box of `full` rows over a tensor of `m` rows from its first row: m rounded up to 8 (whole
    swizzle atoms), at most `full` (ints, or run-time values with cute-ir's IntOps)."""
    return ops.min((m + 7) // 8 * 8, full)


@functools.lru_cache(maxsize=4096)
def _smem_bytes(cfg: GemmConfig, stages: int) -> int:
    return cfg.smem_plan(stages).dynamic_smem_bytes


@functools.lru_cache(maxsize=4096)
def _smem_fits(cfg: GemmConfig, stages: int) -> bool:
    return cfg.smem_plan(stages).fits(cfg.target)


# default normwise relative-error bounds per C dtype (K-term sums in float32, rounded once to C)
# E4M3: 3 mantissa bits, a relative rounding error up to 2^-4
TOLERANCE = {Float16.canonical: 2e-3, BFloat16.canonical: 1.6e-2, Float32.canonical: 1e-4,
             Float8E4M3FN.canonical: 6.25e-2}


def tolerance(acc_dtype: str, c_dtype: str) -> float:
    """The default normwise relative-error bound of a result (float16 accumulation loses more)."""
    return 1e-2 if acc_dtype == "float16" else TOLERANCE[c_dtype]

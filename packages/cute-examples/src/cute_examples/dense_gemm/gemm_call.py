"""One gemm() call as data (`GemmCall`), and the kernel gemm() loads for it, found without a GPU.

A GPU test builds its tensors from a `GemmCall` (`shapes()`) and passes `keywords(...)` to gemm(); the AOT
catalogue lists `configs(num_sms)` for every call of `gpu_calls.gpu_calls()`: gemm()'s own checks and config decision
(`launch_plan._check`, `check_epilogue`, `scale_modes`, `staged_problem`, `plan_config`) run on geometry-only
stand-ins of the call's tensors, so a bundle-only GPU host serves every call without recording a miss.
The CPU test `test_dense_gemm_gpu_calls` runs gemm() itself on CPU fakes of the same calls and checks that
every kernel it asks for is in the catalogue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .launch_plan import Layout

__all__ = ["DEVICE_SCALES", "GemmCall"]

DEVICE_SCALES = ("tensor", "m", "n")


class _Standin(Layout):
    """A CUDA tensor's geometry on device 0 (all that gemm()'s checks and planning read), without a GPU."""

    @property
    def device(self) -> Any:
        import torch

        return torch.device("cuda", 0)

    def numel(self) -> int:
        n = 1
        for e in self.shape:
            n *= e
        return n

    def element_size(self) -> int:
        from cute_nvarch.numeric import numeric_type

        return numeric_type(str(self.dtype)).bytes


def _dense(shape: tuple[int, ...], dtype: Any, base: int) -> _Standin:
    strides, step = [], 1
    for e in reversed(shape):
        strides.append(step)
        step *= max(e, 1)
    return _Standin(shape, tuple(reversed(strides)), dtype, base)


@dataclass(frozen=True)
class GemmCall:
    """One gemm() call: (M, N, K), `batch` (0: 2-D operands, else 3-D with that L), dtypes, b's major, whether out
    is given, the epilogue arguments and the config options.

    a is a row-major (.., M, K) tensor; b a row-major (.., K, N) tensor (`b_major` "n") or the transpose of a
    row-major (.., N, K) one ("k"); out, input (the addend), bias (N,) and `aux` (pre_activation_out) are dense tensors
    of C's dtype. A scale is
    None, a Python float (folded into alpha) or a device-scale mode ("tensor": one float32 element, "m": (M, 1),
    "n": (1, N)).
    """

    mnk: tuple[int, int, int]
    batch: int = 0
    a_dtype: str = "float16"
    b_dtype: str | None = None  # None: a's
    b_major: str = "n"
    out: bool = False
    c_dtype: str | None = None  # None: gemm()'s default
    bias: bool = False
    input: bool = False
    alpha: float = 1.0
    beta: float | None = None
    activation: str | None = None
    scale_a: float | str | None = None
    scale_b: float | str | None = None
    tile: tuple[int, int, int] | None = None
    cluster: tuple[int, int] | None = None
    variant: str | None = None
    promotion: int = 0
    aux: bool = False

    @property
    def c_name(self) -> str:
        """C's dtype name: c_dtype, else bfloat16 for 8-bit inputs and a's dtype otherwise."""
        if self.c_dtype is not None:
            return self.c_dtype
        return "bfloat16" if self.a_dtype.startswith("float8") else self.a_dtype

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """The storage shapes the call's tensors are made with: a, b (before the transpose of "k"), out/input, bias
        and the device scales."""
        m, n, k = self.mnk
        lead = (self.batch,) if self.batch else ()
        out = {"a": (*lead, m, k), "b": (*lead, k, n) if self.b_major == "n" else (*lead, n, k),
               "out": (*lead, m, n), "input": (*lead, m, n), "bias": (n,), "aux": (*lead, m, n)}
        for name, s in (("scale_a", self.scale_a), ("scale_b", self.scale_b)):
            if s in DEVICE_SCALES:
                out[name] = {"tensor": (), "m": (m, 1), "n": (1, n)}[s]
        return out

    def keywords(self, **tensors: Any) -> dict[str, Any]:
        """gemm()'s keyword arguments for this call; `tensors`: the bias, input, aux (pre_activation_out) and device
        scale_a/scale_b it needs."""
        from ..torch_types import torch_dtype

        kw: dict[str, Any] = {}
        if self.c_dtype is not None:
            kw["c_dtype"] = torch_dtype(self.c_dtype)
        for name in ("bias", "input"):
            if getattr(self, name):
                kw[name] = tensors[name]
        if self.aux:
            kw["pre_activation_out"] = tensors["aux"]
        for name in ("scale_a", "scale_b"):
            s = getattr(self, name)
            if s is not None:
                kw[name] = tensors[name] if s in DEVICE_SCALES else s
        if self.alpha != 1.0:
            kw["alpha"] = self.alpha
        for name, value in (("beta", self.beta), ("activation", self.activation), ("tile_shape_mnk", self.tile),
                            ("cluster_shape_mn", self.cluster), ("variant", self.variant)):
            if value is not None:
                kw[name] = value
        if self.promotion:
            kw["mma_promotion_interval"] = self.promotion
        return kw

    def configs(self, num_sms: Sequence[int]) -> list[Any]:
        """The config gemm() loads for this call on GPUs of each SM count (no tuned entry; a split-K / stream-K
        kernel counted as loadable, as it is from a bundle that holds it)."""
        from ..torch_types import torch_dtype
        from .epilogue_args import check_epilogue
        from .launch_plan import _check, _scaled_alpha, plan_pick, scale_modes, staged_problem

        base = 1 << 20
        shapes = self.shapes()
        ab = torch_dtype(self.a_dtype), torch_dtype(self.b_dtype or self.a_dtype)
        cd = torch_dtype(self.c_name)
        a = _dense(shapes["a"], ab[0], base)
        b = _dense(shapes["b"], ab[1], base)
        if self.b_major == "k":
            b = _Standin((*b.shape[:-2], b.shape[-1], b.shape[-2]), (*b.stride()[:-2], 1, b.stride()[-2]), ab[1], base)
        out = _dense(shapes["out"], cd, base) if self.out else None
        n_out = None
        _, c_name = _check(a, b, out, None if self.out or self.c_dtype is None else cd, self.activation == "swiglu")
        scales = [_dense(shapes[n], torch_dtype("float32"), base) if n in shapes else None
                  for n in ("scale_a", "scale_b")]
        floats = [s if isinstance(s, float) else None for s in (self.scale_a, self.scale_b)]
        alpha = _scaled_alpha(self.alpha, *floats) if floats != [None, None] else self.alpha
        epi = (self.bias, self.input, self.beta, self.activation, self.aux)
        fields = None
        if epi != (False, False, None, None, False) or alpha != 1.0 or scales != [None, None]:
            e = check_epilogue(a, b, out, c_name, bias=_dense(shapes["bias"], cd, base) if self.bias else None,
                               input=_dense(shapes["input"], cd, base) if self.input else None, alpha=alpha,
                               beta=self.beta, activation=self.activation,
                               pre_activation_out=_dense(shapes["aux"], cd, base) if self.aux else None)
            modes = scale_modes(a, b, *scales)
            fields = {**e.config_fields, "scale_a": modes[0], "scale_b": modes[1]}
            n_out = e.n_out
        problem = staged_problem(a, b, out, cd, n_out)
        options = (self.c_dtype, "float32", self.tile, self.cluster, self.variant) + (
            (self.promotion,) if self.promotion else ())
        picks = (plan_pick(problem, options, fields, sms) for sms in num_sms)
        return [(t_pick or direct)[0] for direct, t_pick in picks]  # the transposed pick where gemm() runs it

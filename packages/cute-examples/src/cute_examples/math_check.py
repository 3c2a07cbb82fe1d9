"""The math-check kernels (every `cute_ir.math` function of one family) and their accuracy check on a GPU.

One kernel per family: `y[f, i] = F_f(x[f, i])` for each function F_f of the family (cute-nvarch's
`MATH_FUNCTIONS` order), i < n, 128 threads per CTA. The catalogue compiles both (so bundles carry them);
`check_math(family)` fills each row of x with `N` points spread over that function's documented domain,
runs the kernel (from the bundle, cute-ir's cache or a build) and measures the error against torch in float64.
It raises when any element exceeds the documented `Bound`, and returns each function's measured figures.

Kernel parameters: x (ptr, float32, read only), y (ptr, float32), n (i32). Grid: ceil(n / 128).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from cute_nvarch.math_functions import FAMILIES, MATH_FUNCTIONS, Bound, family_functions

__all__ = [
    "N",
    "MathResult",
    "allowed_error",
    "build_math",
    "check_math",
    "compile_math",
    "inputs",
    "math_jobs",
    "math_spec",
    "measure",
    "reference",
]

N = 1 << 20  # points per function
_THREADS = 128


def math_spec(family: str) -> dict:
    """The spec of the math-check kernel of `family` ("accurate" or "fast")."""
    return {"kernel": "math_check", "family": family, "functions": list(family_functions(family)),
            "dtype": "float32"}


def build_math(spec: dict, target: str = "sm_90a") -> Any:
    """Build (IR only) the math-check kernel of a spec for `target`."""
    from cute_ir import if_
    from cute_ir import math as cm
    from cute_ir.kernel import KernelDef, Param
    from cute_ir.tensor import make_tensor
    from cute_layout import Layout

    names, fast = spec["functions"], spec["family"] == "fast"
    params = [Param("x", "ptr", dtype="float32", noalias=True, readonly=True, align=4),
              Param("y", "ptr", dtype="float32", noalias=True, align=4), Param("n", "i32")]
    kd = KernelDef(f"math_check_{spec['family']}", params, block=(_THREADS, 1, 1), target=target, spec=spec)
    with kd.body() as k:
        n = k.arg("n")
        x = make_tensor(k.arg("x"), Layout((len(names), n), (n, 1)), "float32")
        y = make_tensor(k.arg("y"), Layout((len(names), n), (n, 1)), "float32")
        i = k.block_idx(0) * _THREADS + k.thread_idx(0)

        def body() -> None:
            for f, name in enumerate(names):
                y.store((f, i), cm.apply(name, x.load((f, i)), fast=fast))

        if_(i < n, body)
    return kd


def compile_math(spec: dict, target: str = "sm_90a") -> Any:
    """The compiled math-check kernel (cute_ir Artifact) through cute-ir's compile cache."""
    from cute_ir import compile_kernel

    return compile_kernel(spec, lambda: build_math(spec, target), target)


def math_jobs(target: str) -> list[tuple[str, Any]]:
    """(label, compile) of both math-check kernels on target, for the catalogue."""
    return [(f"math_check {family}", functools.partial(compile_math, math_spec(family), target))
            for family in FAMILIES]


def allowed_error(bound: Bound, x: Any, exact: Any) -> Any:
    """`bound.allowed` element by element on float64 torch tensors (a CPU test compares the two)."""
    import torch

    a = exact.abs()
    exponent = torch.frexp(a)[1].to(torch.float64)
    ulp = torch.where(a > 0, torch.exp2((exponent - 1).clamp(min=-126) - 23), torch.full_like(a, 2.0**-149))
    out = torch.maximum(torch.full_like(a, bound.abs), bound.rel * a)
    return torch.maximum(out, (bound.ulp + bound.ulp_per_x * x.abs()) * ulp)


def inputs(name: str, n: int = N) -> Any:
    """n float32 points over the function's domain (log-spaced where the table says so), on the CPU."""
    import torch

    fn = MATH_FUNCTIONS[name]
    lo, hi = fn.domain
    if fn.log_spaced:
        pts = torch.logspace(torch.log10(torch.tensor(lo)).item(), torch.log10(torch.tensor(hi)).item(), n,
                             dtype=torch.float64)
    else:
        pts = torch.linspace(lo, hi, n, dtype=torch.float64)
    return pts.to(torch.float32)


def reference(name: str, x: Any) -> Any:
    """The function in torch (float64 in, float64 out; float32 in, float32 out)."""
    import torch

    return getattr(torch, {"rcp": "reciprocal"}.get(name, name))(x)


@dataclass(frozen=True)
class MathResult:
    """One function's measured error: max abs, max in float32 ulps of the exact value, the worst fraction of
    the bound (> 1: violated) and where, and the max abs difference to torch's own float32 function."""

    name: str
    family: str
    max_abs: float
    max_ulp: float
    worst_fraction: float
    worst_x: float
    vs_torch_f32: float

    def line(self) -> str:
        """One report line."""
        bound = MATH_FUNCTIONS[self.name].error(self.family)
        return (f"{self.family:8s} {self.name:8s} max abs {self.max_abs:.3e}  max ulp {self.max_ulp:9.2f}  "
                f"worst {self.worst_fraction:.3f} of the bound ({bound.text()}) at x={self.worst_x:.7g}  "
                f"vs torch f32 {self.vs_torch_f32:.3e}")


def check_math(family: str, n: int = N) -> list[MathResult]:
    """Run the family's math-check kernel on the current GPU; AssertionError naming every function whose error
    exceeds its documented bound (or that returns a non-finite value); else the measured figures."""
    import torch

    from ._compiled import kernel_for

    spec = math_spec(family)
    names = spec["functions"]
    if len(names) * n >= 2**31:
        raise ValueError(f"n={n}: {len(names)} x n must stay below 2**31 (i32 offsets)")
    device = torch.cuda.current_device()
    x = torch.stack([inputs(name, n) for name in names]).to(f"cuda:{device}")
    y = torch.full_like(x, float("nan"))
    kernel = kernel_for(spec, lambda target: compile_math(spec, target), torch.cuda.get_device_capability(device),
                        device=device)
    kernel.launch(-(-n // _THREADS), x, y, n)
    torch.cuda.synchronize()
    return measure(family, x, y)


def measure(family: str, x: Any, y: Any) -> list[MathResult]:
    """The figures of outputs y (float32, one row per function of the family) for inputs x; AssertionError
    naming every function beyond its documented bound or with a non-finite output."""
    import torch

    results, bad = [], []
    for f, name in enumerate(family_functions(family)):
        xf, yf = x[f].double(), y[f].double()
        exact = reference(name, xf)
        err = (yf - exact).abs()
        ulp = allowed_error(Bound(ulp=1), xf, exact)
        frac = torch.where(err > 0, err / allowed_error(MATH_FUNCTIONS[name].error(family), xf, exact), 0.0)
        frac = torch.where(torch.isfinite(yf) & torch.isfinite(exact), frac, torch.full_like(frac, float("inf")))
        w = int(frac.argmax())
        r = MathResult(name, family, float(err.max()), float((err / ulp).max()), float(frac[w]), float(xf[w]),
                       float((y[f] - reference(name, x[f])).abs().max()))
        results.append(r)
        if not r.worst_fraction <= 1.0:
            bad.append(r.line())
    if bad:
        raise AssertionError(f"math_check {family}: errors beyond the documented bound:\n  " + "\n  ".join(bad))
    return results

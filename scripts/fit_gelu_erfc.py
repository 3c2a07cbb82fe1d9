"""Fit the fused GELU's erfc: a degree-5 polynomial P(u) with 2^P(u) ~ erfc(u / sqrt 2) on u in [0, 5.5]
(`epilogue_math._GELU_ERFC`), and print its coefficients and the float32 formula's max error over |x|.

    python3 scripts/fit_gelu_erfc.py

Lawson's iteratively reweighted least squares on the error that reaches the output, |2^P(u) - erfc(u / sqrt 2)|
(GELU's abs error over |x| / 2), which makes it a minimax fit of that error. Past the interval P keeps falling
(checked below), so the kernel needs no clamp. Needs numpy; `tests/test_gelu_erfc_fit.py` refits and compares with
the coefficients the kernel uses (`activation.GELU_ERFC`).
"""

from __future__ import annotations

import math

import numpy as np

erf = np.vectorize(math.erf, otypes=[float])
erfc = np.vectorize(math.erfc, otypes=[float])

CLAMP = 5.5
DEGREE = 5


def fit(clamp: float = CLAMP, degree: int = DEGREE, iterations: int = 100) -> np.ndarray:
    """Power-basis coefficients c0..c_degree of P."""
    u = np.linspace(0.0, clamp, 8001)
    target = erfc(u / np.sqrt(2.0))
    vander = np.vander(u, degree + 1, increasing=True)
    lawson = np.ones_like(u)
    for _ in range(iterations):
        w = np.sqrt(lawson) * target  # d(2^P) = 2^P ln2 dP: weight log2's residual by erfc
        c, *_ = np.linalg.lstsq(vander * w[:, None], np.log2(target) * w, rcond=None)
        err = np.abs(2.0 ** (vander @ c) - target)
        lawson = lawson * err / np.sum(lawson * err)
    return c


def gelu_f32(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The kernel's formula in float32 (numpy's rounding of each step; the GPU's fma rounds once): P evaluated at
    w = -|x| / 2 with coefficients c_k (-2)^k, then max(x, 0) + w 2^P."""
    f = np.float32
    x = x.astype(f)
    w = (f(-0.5) * np.abs(x)).astype(f)
    cw = [f(a * (-2.0) ** k) for k, a in enumerate(c)]
    p = cw[-1]
    for a in cw[-2::-1]:
        p = (p * w + a).astype(f)
    e = np.exp2(p).astype(f)
    return (w * e + np.maximum(x, f(0))).astype(f)


def max_error(c: np.ndarray) -> float:
    """max |gelu_f32 - gelu| / |x| over x in [-16, 16] and |x| log-spaced in [1e-8, 100]."""
    x = np.concatenate([np.linspace(-16, 16, 2_000_001), np.logspace(-8, 2, 20001), -np.logspace(-8, 2, 20001)])
    x = x[x != 0]
    exact = 0.5 * x * (1 + erf(x / np.sqrt(2.0)))
    return float(np.max(np.abs(gelu_f32(x, c).astype(np.float64) - exact) / np.abs(x)))


def max_beyond(c: np.ndarray) -> float:
    """The largest P(u) past the fitted interval (u up to 1e12); ValueError unless P keeps falling there."""
    u = np.unique(np.concatenate([np.linspace(CLAMP, 64, 100001), np.logspace(np.log10(64), 12, 1001)]))
    beyond = np.polynomial.polynomial.polyval(u, c)
    if not np.all(np.diff(beyond) < 0):
        raise ValueError("P rises past the fitted interval")
    return float(beyond.max())


def main() -> None:
    """Print the coefficients, P's largest value past the interval and the max abs error over |x|."""
    c = fit()
    print("coefficients c0..c5:", ", ".join(repr(float(v)) for v in c))
    print(f"P past {CLAMP}: at most {max_beyond(c):.1f}, decreasing")
    worst = max_error(c)
    print(f"max |gelu_f32 - gelu| / |x| = {worst:.3e} = 2^{np.log2(worst):.2f}")


if __name__ == "__main__":
    main()

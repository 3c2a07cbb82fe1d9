"""Correctness checks on a GPU, shared by the main job and the GPU tests: poisoned outputs, guarded borders."""

from __future__ import annotations

from typing import Any

__all__ = ["EW_SHAPES", "check_elementwise", "check_gemm", "run_checks"]

EW_SHAPES = ((1, 1), (1, 7), (127, 129), (4096, 4096), (16384, 16384))
_GUARD = 4096  # elements of guard region before and after the output


def _random(shape: tuple[int, ...], dtype: Any) -> Any:
    import torch

    if dtype.is_floating_point:
        return torch.randn(shape, device="cuda", dtype=dtype)
    return torch.randint(-(2**20), 2**20, shape, device="cuda", dtype=dtype)


def _poison(dtype: Any) -> float | int:
    return float("nan") if dtype.is_floating_point else -123456789


def check_elementwise(dtype_name: str, shape: tuple[int, int], *, transposed: bool = False) -> None:
    """elementwise_add equals a + b exactly, with out poisoned beforehand and a guard region around it untouched."""
    import torch

    from .elementwise_add import elementwise_add

    dtype = getattr(torch, dtype_name)
    m, n = shape
    if transposed:  # column-major views of (n, m) buffers
        a, b = _random((n, m), dtype).t(), _random((n, m), dtype).t()
    else:
        a, b = _random((m, n), dtype), _random((m, n), dtype)
    storage = torch.full((m * n + 2 * _GUARD,), _poison(dtype), device="cuda", dtype=dtype)
    guard = storage.clone()
    body = storage[_GUARD:_GUARD + m * n]
    out = body.view(n, m).t() if transposed else body.view(m, n)
    elementwise_add(a, b, out)
    torch.cuda.synchronize()
    want = a + b
    if not torch.equal(out, want):
        bad = (out != want).nonzero()[:5].tolist()
        raise AssertionError(f"elementwise_add {dtype_name} {shape} transposed={transposed}: wrong at {bad}")
    for name, sl in (("before", slice(0, _GUARD)), ("after", slice(_GUARD + m * n, None))):
        if not torch.equal(storage[sl].view(torch.uint8), guard[sl].view(torch.uint8)):
            raise AssertionError(f"elementwise_add {dtype_name} {shape}: the guard region {name} out was written")


def run_checks() -> list[str]:
    """Every check the main job runs; one line each, raising on the first failure."""
    from .elementwise_add.kernel import DTYPES

    rows = []
    for dtype in DTYPES:
        for shape in EW_SHAPES:
            check_elementwise(dtype, shape)
        check_elementwise(dtype, (127, 129), transposed=True)
        rows.append(f"elementwise_add {dtype}: exact at {', '.join(f'{m}x{n}' for m, n in EW_SHAPES)} "
                    f"and a transposed 127x129 view; guard regions untouched")
    import torch

    from .dense_gemm.spec import AB_DTYPES, runs_on

    if runs_on(torch.cuda.get_device_capability()):

        for dtype in AB_DTYPES:
            shapes = ((1000, 1000, 1000), (127, 255, 72), (4096, 4096, 4096))
            for shape in shapes:
                check_gemm(dtype, shape)
            rows.append(f"dense_gemm {dtype}: within tolerance at {', '.join('x'.join(map(str, s)) for s in shapes)}; "
                        "padding and guard untouched")
    return rows


def check_gemm(dtype_name: str, shape: tuple[int, int, int]) -> None:
    """gemm(a, b, out) against a float32 reference, out poisoned, its padding and a guard region untouched."""
    import torch

    from .dense_gemm import gemm
    from .dense_gemm.spec import TOLERANCE

    dtype = getattr(torch, dtype_name)
    m, n, k = shape
    ld = -(-n * dtype.itemsize // 16) * 16 // dtype.itemsize
    a, b = _random((m, k), dtype), _random((k, n), dtype)
    storage = torch.full((m * ld + 2 * _GUARD,), -7.25, device="cuda", dtype=dtype)
    guard = storage.clone()
    out = storage[_GUARD:_GUARD + m * ld].view(m, ld)[:, :n]
    out.fill_(float("nan"))
    gemm(a, b, out)
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    err = float((out.float() - ref).norm() / ref.norm())
    if not err <= TOLERANCE[dtype_name]:
        raise AssertionError(f"dense_gemm {dtype_name} {shape}: relative error {err:.2e} > {TOLERANCE[dtype_name]}")
    mask = torch.ones_like(storage, dtype=torch.bool)
    mask[_GUARD:_GUARD + m * ld].view(m, ld)[:, :n] = False
    if not torch.equal(storage[mask].view(torch.int16), guard[mask].view(torch.int16)):
        raise AssertionError(f"dense_gemm {dtype_name} {shape}: padding or guard region written")

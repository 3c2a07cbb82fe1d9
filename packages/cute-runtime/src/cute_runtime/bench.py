"""Host time per launch of a loaded kernel with 3 torch tensors, against torch.add (needs a GPU and torch).

Run: python -m cute_runtime.bench [--n N] [--reps R] [--trials T]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from cute_nvarch.entry import KernelEntry, Launch
from cute_nvarch.params import Param

from ._cli import Parser, int_at_least
from .kernel import Kernel

# c[i] = a[i] + b[i] for i < n, one thread per element (hand-written PTX, JIT-compiled by the driver); the
# runtime tests launch it too (tests/runtime_kernels.py).
ADD_F32_PTX = """
.version 7.8
.target sm_80
.address_size 64

.visible .entry add_f32(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<11>;

    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [c];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.u32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    add.s64 %rd9, %rd5, %rd7;
    add.s64 %rd10, %rd6, %rd7;
    ld.global.f32 %f1, [%rd8];
    ld.global.f32 %f2, [%rd9];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd10], %f3;
DONE:
    ret;
}
"""

ADD_F32_ENTRY = KernelEntry(
    "add_f32",
    "sm_80",
    (Param("a", "ptr"), Param("b", "ptr"), Param("c", "ptr"), Param("n", "u32")),
    Launch((128, 1, 1)),
    {"kernel": "add_f32"},
)


def per_call_us(
    fns: Sequence[Callable[[], Any]], reps: int, trials: int, sync: Callable[[], None]
) -> list[tuple[float, float]]:
    """(median, min) over trials of the host microseconds per call of each fn.

    Each trial times a burst of reps calls of every fn in turn (interleaved, so drifts of the host hit all
    alike) and waits for the GPU outside the timed region, so a burst stays far below the launch queue's
    depth and the GPU never pushes back on the host.
    """
    for fn in fns:
        for _ in range(reps):
            fn()
    sync()
    times: list[list[float]] = [[] for _ in fns]
    clock = time.perf_counter_ns
    for _ in range(trials):
        for i, fn in enumerate(fns):
            start = clock()
            for _ in range(reps):
                fn()
            times[i].append((clock() - start) / reps / 1e3)
            sync()
    return [(statistics.median(t), min(t)) for t in times]


def _ctypes_launcher() -> Any:
    """libcuda's cuLaunchKernel through ctypes, as a reference for the driver call's own cost."""
    import ctypes

    lib = ctypes.CDLL("libcuda.so.1")
    fn = lib.cuLaunchKernel
    u = ctypes.c_uint
    fn.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


def _extra_params(kernel: Kernel) -> tuple[int, Any]:
    """The `extra` array (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END) of the kernel's packed parameter block: the
    driver copies the block whole instead of one pointer per parameter (address, and what keeps it alive)."""
    import ctypes

    drv = kernel._drv
    size = ctypes.c_size_t(kernel.layout.size)
    arr = (ctypes.c_void_p * 5)(
        drv.CU_LAUNCH_PARAM_BUFFER_POINTER, kernel._buffer.address, drv.CU_LAUNCH_PARAM_BUFFER_SIZE,
        ctypes.addressof(size), drv.CU_LAUNCH_PARAM_END,
    )
    return ctypes.addressof(arr), (arr, size)


def parser() -> Parser:
    """The command line of the launch benchmark."""
    p = Parser(prog="python -m cute_runtime.bench", description=__doc__,
               epilog="example:\n  python -m cute_runtime.bench --n 4096 --trials 100")
    for flag, default, example, what in (("--n", 1024, 4096, "elements per tensor"),
                                         ("--reps", 100, 50, "calls per timed burst"),
                                         ("--trials", 300, 100, "timed bursts")):
        p.add_argument(flag, type=int_at_least(1), default=default, metavar="N",
                       help=f"{what} (default: {default}; example: {flag} {example})")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Print the per-call host time of each launch path next to torch.add's."""
    args = parser().parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device visible to torch", file=sys.stderr)
        return 1
    n = args.n
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    c = torch.full((n,), float("nan"), device="cuda")
    kernel = Kernel(ADD_F32_ENTRY, None, ADD_F32_PTX)
    grid = (n + 127) // 128
    kernel.launch(grid, a, b, c, n)
    torch.cuda.synchronize()
    if not torch.equal(c, a + b):
        print("FAILED: add_f32 gave a wrong result", file=sys.stderr)
        return 1
    raw_stream = torch.cuda.current_stream().cuda_stream
    get_raw = torch._C._cuda_getCurrentRawStream
    launch, launch_packed = kernel.launch, kernel.launch_packed
    grid3 = (grid, 1, 1)
    drv_launch, f, kp = kernel._launch_fn, kernel._f, kernel._buffer.kernel_params
    drv_stream = kernel._drv.CUstream
    raw_launch, f_int, func = _ctypes_launcher(), int(kernel._f), kernel._func
    extra, _keep = _extra_params(kernel)
    c.fill_(float("nan"))
    err = drv_launch(f, grid, 1, 1, 128, 1, 1, 0, raw_stream, 0, extra)[0]
    torch.cuda.synchronize()
    if err or not torch.equal(c, a + b):
        print(f"FAILED: the launch with extra= gave {err!r} / a wrong result", file=sys.stderr)
        return 1
    rows: list[tuple[str, Callable[[], Any]]] = [
        ("torch.add(a, b, out=c)", lambda: torch.add(a, b, out=c)),
        ("Kernel.launch(grid, a, b, c, n)", lambda: launch(grid, a, b, c, n)),
        ("Kernel.launch(..., stream=raw int)", lambda: launch(grid, a, b, c, n, stream=raw_stream)),
        ("Kernel.launch_packed(grid3, raw)", lambda: launch_packed(grid3, raw_stream)),
        (
            "  cuLaunchKernel alone (bindings)",
            lambda: drv_launch(f, grid, 1, 1, 128, 1, 1, 0, raw_stream, kp, 0),
        ),
        (
            "  cuLaunchKernel alone (bindings, CUfunction)",
            lambda: drv_launch(func, grid, 1, 1, 128, 1, 1, 0, raw_stream, kp, 0),
        ),
        (
            "  cuLaunchKernel alone (ctypes)",
            lambda: raw_launch(f_int, grid, 1, 1, 128, 1, 1, 0, raw_stream, kp, None),
        ),
        (
            "  cuLaunchKernel alone (bindings, extra= block)",
            lambda: drv_launch(f, grid, 1, 1, 128, 1, 1, 0, raw_stream, 0, extra),
        ),
        ("  cuda-bindings CUstream(raw)", lambda: drv_stream(raw_stream)),
        ("  packer alone (3 tensors + int)", lambda: kernel._pack(a, b, c, n)),
        ("  torch._C._cuda_getCurrentRawStream", lambda: get_raw(0)),
        ("  a.data_ptr()", lambda: a.data_ptr()),
        ("  a.get_device()", lambda: a.get_device()),
        ("  a.is_cuda", lambda: a.is_cuda),
        ("  torch.cuda.current_stream().cuda_stream", lambda: torch.cuda.current_stream().cuda_stream),
    ]
    print(
        f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  n={n}  "
        f"bursts of {args.reps} calls x {args.trials}"
    )
    print(f"{'path':44s} {'median us':>10s} {'min us':>8s}")
    results = {}
    measured = per_call_us([fn for _, fn in rows], args.reps, args.trials, torch.cuda.synchronize)
    for (name, _), (med, best) in zip(rows, measured, strict=True):
        results[name] = med
        print(f"{name:44s} {med:10.2f} {best:8.2f}")
    torch.cuda.synchronize()
    ok = torch.equal(c, a + b)
    print(f"result after timing: {'exact' if ok else 'WRONG'}")
    ratio = results["Kernel.launch(grid, a, b, c, n)"] / results["torch.add(a, b, out=c)"]
    print(f"Kernel.launch / torch.add = {ratio:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

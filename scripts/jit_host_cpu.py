"""Host cost of a JIT call's hit path on a CPU-only machine: the Python side measured exactly, the driver stubbed.

A stand-in `libcuda.so.1` (built here with `cc`; its cuLaunchKernel/cuLaunchKernelEx return at once) is put on
LD_LIBRARY_PATH, so cuda-bindings and ctypes both reach it: every row is the real Python-side cost of that path,
minus the driver's own work (which only a GPU host measures: `python -m cute_examples.bench --only jit`).
The JIT add of cute_examples.bench_jit is called with three CPU torch tensors (n = 4096, 8 rotated sets); its
kernel comes from a fake compiler and is bound to the stub driver, its launch plans from the public call.

Run: python scripts/jit_host_cpu.py   (needs cc, torch, cuda-bindings; no GPU)
"""

from __future__ import annotations

import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

STUB = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
typedef int CUresult;
volatile uint64_t sink;
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuInit(unsigned f) { return 0; }
CUresult cuDeviceGetCount(int *c) { *c = 1; return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *stream, void **kp, void **extra) {
  sink = (uint64_t)f + gx + gy + gz + bx + by + bz + smem + (uint64_t)stream + (uint64_t)kp;
  return 0;
}
CUresult cuLaunchKernelEx(const void *config, void *f, void **kp, void **extra) {
  sink = (uint64_t)config + (uint64_t)f + (uint64_t)kp;
  return 0;
}
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, uint64_t flags, int *status) {
  void *p = dlsym(RTLD_DEFAULT, symbol);
  *pfn = p;
  if (status) *status = p ? 0 : 1;
  return p ? 0 : 500;
}
"""


def _per_call_us(fn: Any, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def measure(calls: int = 20000, rounds: int = 15) -> list[str]:
    """Median us per call of each part, alternating blocks (run under the stub libcuda)."""
    import torch
    from cuda.bindings import driver as drv
    from cute_examples.bench_jit import BLOCK, add
    from cute_nvarch.entry import KernelEntry, Launch
    from cute_nvarch.jit_spec import entry_symbol, kernel_params
    from cute_runtime import Placeholder, register_compiler, tensors
    from cute_runtime import stream as streams
    from cute_runtime.tensors import TensorInfo

    class Art:
        def __init__(self, spec: dict[str, Any], target: str) -> None:
            name, params = entry_symbol(spec), kernel_params(spec)
            decl = ", ".join(f".param .u64 {p.name}" for p in params)
            self.ptx = f".version 7.8\n.target sm_80\n.address_size 64\n.visible .entry {name}({decl})\n{{ ret; }}\n"
            self.cubin = None
            self.entry = KernelEntry(name, target, params, Launch(tuple(spec["block"]), tuple(spec["cluster"])), spec)

    drv.cuInit(0)
    register_compiler(lambda fn, spec, target: Art(spec, target))
    n, sets = 4096, 8
    # CPU tensors stand for CUDA ones: describe() reads them as device -1; the launch plan's key has get_device() -1
    tensors._from_torch = lambda v, name: TensorInfo(v.data_ptr(), "float32", tuple(v.shape), tuple(v.stride()), -1)
    add.target = "sm_90a"
    k = add.kernel_for(add.specialize(*(Placeholder((n,)) for _ in range(3)))[0], "sm_90a", 0)
    k._drv, k.device, k._owner = drv, -1, threading.get_ident()  # what load() sets, bound to the stub driver
    k._f, k._launch_fn = drv.CUfunction(0x1234), drv.cuLaunchKernel
    k._install_fast_launch()
    k._ready = True
    import cute_runtime.driver as runtime_driver

    runtime_driver.current_device = lambda: 0
    streams.set_stream_provider(lambda device: 0)  # on a GPU: torch._C._cuda_getCurrentRawStream, a C function
    bufs = [tuple(torch.randn(n) for _ in range(3)) for _ in range(sets)]
    grid = -(-n // BLOCK)
    for s in bufs:
        add(*s, grid=grid)  # the slow path makes the launch plan
    assert len(add.plans) == 1, add.plans
    plans, keys = add.plans, [add.call_key(list(s)) for s in bufs]
    plan = plans[keys[0]]
    plan_args = [tuple(v for t in s for v in (t.data_ptr(), t.shape, t.stride())) for s in bufs]
    pack_into, buf, base = k.layout.struct.pack_into, k._buffer.buffer, k._buffer.base
    vals = [(s[0].data_ptr(), n, s[1].data_ptr(), n, s[2].data_ptr(), n) for s in bufs]
    lib = ctypes.CDLL("libcuda.so.1")
    raw = lib.cuLaunchKernel
    u, vp = ctypes.c_uint, ctypes.c_void_p
    raw.argtypes, raw.restype = [vp, u, u, u, u, u, u, u, vp, vp, vp], ctypes.c_int
    cu, f, kp = drv.cuLaunchKernel, k._f, k._buffer.kernel_params
    it = [0]

    def ours() -> None:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        add(x, y, z, grid=grid)

    def key() -> Any:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        return (x.dtype, x.shape, x.stride(), x.data_ptr() & 15, x.get_device(),
                y.dtype, y.shape, y.stride(), y.data_ptr() & 15, y.get_device(),
                z.dtype, z.shape, z.stride(), z.data_ptr() & 15, z.get_device())

    def lookup() -> Any:
        i = it[0] = (it[0] + 1) % sets
        return plans[keys[i]]

    def pack() -> None:
        i = it[0] = (it[0] + 1) % sets
        pack_into(buf, base, *vals[i])

    def launch_plan() -> None:
        i = it[0] = (it[0] + 1) % sets
        plan(grid, None, *plan_args[i])

    def rotation() -> Any:
        i = it[0] = (it[0] + 1) % sets
        x, y, z = bufs[i]
        return x

    fns = {
        "ours (public call)": ours,
        "key": key,
        "lookup": lookup,
        "pack": pack,
        "launch plan (pack, grid, stream, driver)": launch_plan,
        "driver: Kernel.launch_packed (bindings)": lambda: k.launch_packed((grid, 1, 1), 0),
        "driver: cuda-bindings cuLaunchKernel": lambda: cu(f, grid, 1, 1, BLOCK, 1, 1, 0, 0x7F00, kp, 0)[0],
        "driver: ctypes cuLaunchKernel (argtypes)": lambda: raw(0x1234, grid, 1, 1, BLOCK, 1, 1, 0, 0x7F00, kp, None),
        "rotation (the loop alone)": rotation,
    }
    for fn in fns.values():
        _per_call_us(fn, calls // 10)
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for r in range(rounds):
        order = list(fns.items()) if r % 2 == 0 else list(reversed(fns.items()))
        for name, fn in order:
            samples[name].append(_per_call_us(fn, calls))
    return [f"{name:44s} {statistics.median(v):6.3f} us" for name, v in samples.items()]


def main() -> int:
    """Build the stub driver, re-run this script under it, print the rows."""
    if os.environ.get("CUTE_STUB_LIBCUDA") == "1":
        print("\n".join(measure()))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "stub.c")
        with open(src, "w") as fh:
            fh.write(STUB)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", os.path.join(tmp, "libcuda.so.1"), src, "-ldl"],
                       check=True)
        env = dict(os.environ, CUTE_STUB_LIBCUDA="1", LD_LIBRARY_PATH=tmp)
        return subprocess.run([sys.executable, __file__], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())

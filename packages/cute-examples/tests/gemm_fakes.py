"""CPU stand-ins for the GEMM host tests: a CUDA device, a CUDA tensor's metadata, a GEMM kernel and the driver calls
of a cached plan, without a GPU."""

from __future__ import annotations

import ctypes
import struct

import torch


class Device:
    """A stand-in for torch.device('cuda', index)."""

    def __init__(self, index):
        self.index = index

    def __eq__(self, other):
        return isinstance(other, Device) and other.index == self.index

    def __hash__(self):
        return hash(("cuda", self.index))

    def __str__(self):
        return f"cuda:{self.index}"


class FakeCuda:
    """A CUDA tensor's metadata (shape, strides, dtype, device, address) without a GPU."""

    is_cuda = True

    def __init__(self, shape, stride=None, dtype=torch.float16, address=1 << 20, device=0):
        self.shape = torch.Size(shape)
        self._stride = tuple(stride) if stride is not None else torch.empty(shape, device="meta").stride()
        self.dtype, self._address, self.device = dtype, address, Device(device)

    def dim(self):
        return len(self.shape)

    def numel(self):
        return self.shape.numel()

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._address

    def moved(self, by):
        """The same view `by` bytes further on (a rotated buffer)."""
        return FakeCuda(self.shape, self._stride, self.dtype, self._address + by, self.device.index)


class GemmKernel:
    """A GEMM Kernel stand-in for `cfg`: the run-time parameters its JIT entry declares; each launch calls
    `record(grid, stream, packed parameter block)`; `active`: the clusters that fit at once (default: a 132-SM
    device's SMs over the cluster size)."""

    def __init__(self, cfg, record, active=None):
        from cute_examples.dense_gemm.kernel import _kernel_fn
        from cute_nvarch.params import Param
        from cute_runtime.params import ParamLayout

        self.layout = ParamLayout([Param(d.name, d.ann.kind) for d in _kernel_fn(cfg).decls if d.kind != "const"])
        self._record = record
        self._active = 132 // (cfg.cluster_m * cfg.cluster_n) if active is None else active

    def max_active_clusters(self):
        return self._active

    def prepare(self, *args):
        from cute_runtime.params import ParamBuffer

        buf = ParamBuffer(self.layout)
        buf.write(self.layout.convert(args))
        return buf

    def bound_launch(self, grid, params, programmatic=False):
        return lambda stream: self._record(grid, stream, params.packed())


class Driver:
    """The driver calls a cached GEMM plan makes: cuTensorMapReplaceAddress writes the address into the map."""

    class CUtensorMap:
        def __init__(self, _ptr):  # the keyword cuda-bindings' CUtensorMap takes
            self.ptr = _ptr

    @staticmethod
    def cuTensorMapReplaceAddress(tm, address):
        ctypes.memmove(tm.ptr, struct.pack("<Q", address), 8)
        return (0,)


_FORMATS = {"u64": "<Q", "i64": "<q", "i32": "<i", "f32": "<f"}


def block_fields(block, layout, names):
    """{name: value} of the parameters `names` in a packed parameter block of `layout`."""
    offsets = dict(zip((p.name for p in layout.params), layout.offsets, strict=True))
    kinds = {p.name: p.kind for p in layout.params}
    return {n: struct.unpack_from(_FORMATS[kinds[n]], block, offsets[n])[0] for n in names}

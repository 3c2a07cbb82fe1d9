"""CPU stand-ins for the GEMM host tests: a CUDA device and a CUDA tensor's metadata, without a GPU."""

from __future__ import annotations

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

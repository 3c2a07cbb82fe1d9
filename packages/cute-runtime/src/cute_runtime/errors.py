"""The exceptions cute-runtime raises."""

from __future__ import annotations


class NoDeviceError(RuntimeError):
    """No NVIDIA driver or GPU could be used; raised at the first operation that needs one."""


class DriverError(RuntimeError):
    """A CUDA driver call failed; carries the CUresult code and name."""

    def __init__(self, message: str, code: int = 0, name: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.name = name


class BundleError(ValueError):
    """An AOT bundle is malformed, corrupt, or of an unsupported format version."""


class ArchMismatchError(RuntimeError):
    """No payload of a kernel (cubin or PTX) can run on the live device."""


class KernelNotFoundError(LookupError):
    """A bundle holds no kernel for the requested spec."""


class CompilerError(RuntimeError):
    """No compiler is installed for a JIT kernel, or the compiler returned something that does not match."""

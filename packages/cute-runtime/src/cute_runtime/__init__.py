"""cute-runtime: load PTX/cubin kernels and AOT bundles, pack arguments, launch on a stream.

`kernel` is the JIT front end (cute_runtime.frontend, .jit): it compiles through the compiler that cute-ir
registers (cute_runtime.compilers) or serves kernels from an AOT bundle.
Importing it needs neither MLIR nor a GPU; the first operation that needs a GPU says when there is none.
"""

from __future__ import annotations

from cute_nvarch.entry import KernelEntry
from cute_nvarch.kernel_spec import canonical_spec, file_stem, spec_digest
from cute_nvarch.params import PARAM_KINDS

from .__about__ import __version__
from .arch import Arch, cubin_runs_on, parse_arch, ptx_runs_on
from .bundle import Bundle, load_bundle
from .compilers import register_compiler
from .device import DeviceProperties, device_arch, device_properties
from .driver import available as gpu_available
from .errors import ArchMismatchError, BundleError, CompilerError, DriverError, KernelNotFoundError, NoDeviceError
from .frontend import kernel
from .jit import JitKernel
from .jit_types import Scalar, Tensor
from .kernel import Kernel
from .params import Param, ParamBuffer, ParamLayout
from .pointers import device_pointer
from .stream import current_stream, set_stream_provider, stream_handle
from .tensors import Placeholder, TensorInfo, describe
from .tma import TensorMap, encode_tiled

__all__ = [
    "PARAM_KINDS",
    "Arch",
    "ArchMismatchError",
    "Bundle",
    "BundleError",
    "CompilerError",
    "DeviceProperties",
    "DriverError",
    "JitKernel",
    "Kernel",
    "KernelEntry",
    "KernelNotFoundError",
    "NoDeviceError",
    "Param",
    "ParamBuffer",
    "ParamLayout",
    "Placeholder",
    "Scalar",
    "Tensor",
    "TensorInfo",
    "TensorMap",
    "__version__",
    "canonical_spec",
    "cubin_runs_on",
    "current_stream",
    "describe",
    "device_arch",
    "device_pointer",
    "device_properties",
    "encode_tiled",
    "file_stem",
    "gpu_available",
    "kernel",
    "load_bundle",
    "parse_arch",
    "ptx_runs_on",
    "register_compiler",
    "set_stream_provider",
    "spec_digest",
    "stream_handle",
]

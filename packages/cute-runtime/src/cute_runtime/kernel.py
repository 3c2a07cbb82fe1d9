"""A kernel loaded from cubin (or PTX through the driver's JIT) into the device's primary context."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import Any

from cute_nvarch.entry import KernelEntry

from . import driver
from . import stream as _stream
from .arch import cubin_runs_on, device_arch_name, ptx_entries, ptx_runs_on, ptx_target
from .errors import ArchMismatchError, DriverError
from .params import ParamBuffer, ParamLayout, make_packer, pack_source

STATIC_SMEM_LIMIT = 48 * 1024
_JIT_LOG_BYTES = 16384
_ERR_INVALID_CONTEXT = 201


def _grid3(grid: Any, what: str = "grid") -> tuple[int, int, int]:
    if isinstance(grid, int) and not isinstance(grid, bool):
        dims: Sequence[Any] = (grid,)
    elif isinstance(grid, (tuple, list)) and 1 <= len(grid) <= 3:
        dims = grid
    else:
        raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, got {grid!r}")
    out = []
    for v in dims:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, got {grid!r}")
        v = int(v)
        if not 1 <= v < (1 << 31):
            raise ValueError(f"{what} {tuple(dims)!r}: every extent must be in [1, 2**31)")
        out.append(v)
    while len(out) < 3:
        out.append(1)
    return (out[0], out[1], out[2])


class Kernel:
    """One compiled kernel, built once from (entry, cubin, ptx); launch() is its checked hot path."""

    def __init__(
        self,
        entry: dict[str, Any] | KernelEntry,
        cubin: bytes | None = None,
        ptx: str | bytes | None = None,
        *,
        device: int | None = None,
    ) -> None:
        self.entry = entry if isinstance(entry, KernelEntry) else KernelEntry.from_dict(entry)
        if cubin is None and ptx is None:
            raise ValueError(f"kernel {self.entry.name!r}: give a cubin, a PTX text, or both")
        if cubin is not None and not isinstance(cubin, (bytes, bytearray, memoryview)):
            raise TypeError(f"cubin must be bytes, got {type(cubin).__name__}")
        if isinstance(ptx, (bytes, bytearray)):
            ptx = bytes(ptx).decode()
        if ptx is not None and not isinstance(ptx, str):
            raise TypeError(f"ptx must be str or bytes, got {type(ptx).__name__}")
        if device is not None and (isinstance(device, bool) or not isinstance(device, int) or device < 0):
            raise ValueError(f"device must be a device ordinal (int >= 0) or None, got {device!r}")
        self.cubin = bytes(cubin) if cubin is not None else None
        self.ptx = ptx
        self.ptx_arch = ptx_target(ptx) if ptx is not None else None
        if ptx is not None and self.entry.name not in ptx_entries(ptx):
            raise ValueError(f"kernel {self.entry.name!r}: the PTX declares no `.entry {self.entry.name}`")
        self.name = self.entry.name
        self.layout = ParamLayout(self.entry.params)
        self.block = self.entry.launch.block
        self.cluster = self.entry.launch.cluster
        self.dynamic_smem = self.entry.launch.dynamic_smem
        self.device: int | None = device
        self.loaded_from: str | None = None
        self.attributes: dict[str, int] = {}
        self._buffer = ParamBuffer(self.layout)
        self._pack = make_packer(self.layout, self._buffer, device, self.name)
        self._lock = threading.Lock()
        self._owner = threading.get_ident()
        self._drv: Any = None
        self._library: Any = None
        self._kernel: Any = None
        self._f: Any = None
        self._func: Any = None
        self._cudev: Any = None
        self._launch_fn: Any = None
        self._image: Any = None
        self._smem_limit = STATIC_SMEM_LIMIT
        self._config: Any = None
        self._max_active: int | None = None
        self._ready = False

    def __repr__(self) -> str:
        sig = ", ".join(f"{p.name}: {p.kind}" for p in self.entry.params)
        return (
            f"Kernel({self.name}({sig}), arch={self.entry.target}, block={self.block}, cluster={self.cluster})"
        )

    # ---------------------------------------------------------------- loading

    def _choose_image(self, cc: tuple[int, int]) -> tuple[str, bytes]:
        if self.cubin is not None and cubin_runs_on(self.entry.target, cc):
            return "cubin", self.cubin
        if self.ptx is not None and self.ptx_arch is not None and ptx_runs_on(self.ptx_arch, cc):
            return "ptx", self.ptx.encode() + b"\0"
        have = []
        if self.cubin is not None:
            have.append(f"a cubin for {self.entry.target}")
        if self.ptx is not None:
            have.append(f"PTX for {self.ptx_arch}")
        raise ArchMismatchError(
            f"kernel {self.name!r}: the device is {device_arch_name(cc)} "
            f"(compute capability {cc[0]}.{cc[1]}), "
            f"but the kernel has only {' and '.join(have)}, none of which runs there "
            f"(a cubin for sm_XY needs the same major and minor >= Y, sm_XYa exactly X.Y; "
            f"PTX needs a device >= "
            f"its target)"
        )

    def load(self) -> Kernel:
        """Load the kernel into its device's primary context (once); NoDeviceError without a driver or GPU."""
        if self._ready:
            return self
        with self._lock:
            if self._ready:
                return self
            drv = driver.init()
            dev = driver.current_device() if self.device is None else self.device
            cudev = driver.device_handle(dev)
            driver.primary_context(dev)
            driver.make_current(dev)
            cc = driver.compute_capability_of(dev)
            kind, image = self._choose_image(cc)
            library, kernel, func = self._load_library(drv, image, kind, cc)
            fa = drv.CUfunction_attribute
            attrs = {}
            for key, attr in (
                ("registers", fa.CU_FUNC_ATTRIBUTE_NUM_REGS),
                ("static_smem", fa.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                ("local_bytes", fa.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
                ("const_bytes", fa.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES),
                ("max_threads_per_block", fa.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
                ("ptx_version", fa.CU_FUNC_ATTRIBUTE_PTX_VERSION),
                ("binary_version", fa.CU_FUNC_ATTRIBUTE_BINARY_VERSION),
            ):
                attrs[key] = int(driver.check(drv.cuFuncGetAttribute(attr, func), "cuFuncGetAttribute"))
            nthreads = self.block[0] * self.block[1] * self.block[2]
            if nthreads > attrs["max_threads_per_block"]:
                raise ValueError(
                    f"kernel {self.name!r}: block {self.block} has {nthreads} threads, but the compiled "
                    f"kernel allows "
                    f"at most {attrs['max_threads_per_block']} per block"
                )
            self._drv, self._library, self._kernel, self.device = drv, library, kernel, dev
            self._cudev = cudev
            self._f = drv.CUfunction(int(kernel))
            self._func = func
            self._launch_fn = drv.cuLaunchKernel
            self.attributes = attrs
            self.loaded_from = kind
            if self.dynamic_smem > STATIC_SMEM_LIMIT:
                self._raise_smem_limit(self.dynamic_smem)
            if self.entry.launch.is_cluster_launch:
                self._config = self._cluster_config(drv, dev)
            self._owner = threading.get_ident()
            self._pack = make_packer(self.layout, self._buffer, dev, self.name)
            self._install_fast_launch()
            self._ready = True
        return self

    def _load_library(self, drv: Any, image: bytes, kind: str, cc: tuple[int, int]) -> tuple[Any, Any, Any]:
        """cuLibraryLoadData, cuLibraryGetKernel, cuKernelGetFunction; one clear error for any failure."""
        self._image = ctypes.create_string_buffer(image, len(image))
        address = ctypes.addressof(self._image)
        log = bytearray(_JIT_LOG_BYTES)
        jo = drv.CUjit_option
        options = [jo.CU_JIT_ERROR_LOG_BUFFER, jo.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        values: list[Any] = [log, _JIT_LOG_BYTES]
        try:
            result = drv.cuLibraryLoadData(address, options, values, len(options), [], [], 0)
        except TypeError:  # a cuda-bindings without char* log buffers: load without the JIT log
            log = bytearray()
            result = drv.cuLibraryLoadData(address, [], [], 0, [], [], 0)
        step = "cuLibraryLoadData"
        if not result[0]:
            library = result[1]
            step = "cuLibraryGetKernel"
            result = drv.cuLibraryGetKernel(library, self.name.encode())
            if not result[0]:
                kernel = result[1]
                step = "cuKernelGetFunction"  # loads the kernel into the current (primary) context now
                result = drv.cuKernelGetFunction(kernel)
                if not result[0]:
                    return library, kernel, result[1]
        text = driver.error_text(drv, result[0])
        jit_log = bytes(log).split(b"\0", 1)[0].decode(errors="replace").strip()
        source = f"cubin for {self.entry.target}" if kind == "cubin" else f"PTX for {self.ptx_arch}"
        raise DriverError(
            f"kernel {self.name!r}: loading its {source} on {device_arch_name(cc)} failed in {step}: {text}"
            + (f"\nJIT log:\n{jit_log}" if jit_log else ""),
            int(result[0]),
            getattr(result[0], "name", ""),
        )

    def _raise_smem_limit(self, smem: int) -> None:
        """Allow smem bytes of dynamic shared memory (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)."""
        drv = self._drv
        optin = int(
            driver.check(
                drv.cuDeviceGetAttribute(
                    drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, self._cudev
                ),
                "cuDeviceGetAttribute",
            )
        )
        static = self.attributes.get("static_smem", 0)
        if smem + static > optin:
            raise ValueError(
                f"kernel {self.name!r}: {smem} bytes of dynamic shared memory (+ {static} static) exceed the "
                f"device's {optin}-byte per-block limit"
            )
        driver.check(
            drv.cuKernelSetAttribute(
                drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem,
                self._kernel,
                self._cudev,
            ),
            f"cuKernelSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES={smem})",
        )
        self._smem_limit = smem

    def _launch_config(self, drv: Any, dev: int, programmatic: bool) -> Any:
        """A CUlaunchConfig of this kernel: its cluster (if any) and, with `programmatic`, programmatic stream
        serialization (the attributes are built here, once: a config's attribute list is not read back)."""
        if self.entry.launch.is_cluster_launch:
            return self._cluster_config(drv, dev, programmatic)
        config = drv.CUlaunchConfig()
        config.blockDimX, config.blockDimY, config.blockDimZ = self.block
        config.sharedMemBytes = self.dynamic_smem
        attrs = [self._pdl_attribute(drv)] if programmatic else []
        config.attrs = attrs  # (copied into the config)
        config.numAttrs = len(attrs)
        return config

    @staticmethod
    def _pdl_attribute(drv: Any) -> Any:
        pdl = drv.CUlaunchAttribute()
        pdl.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        pdl.value.programmaticStreamSerializationAllowed = 1
        return pdl

    def _cluster_config(self, drv: Any, dev: int, programmatic: bool = False) -> Any:
        supported = int(
            driver.check(
                drv.cuDeviceGetAttribute(
                    drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, self._cudev
                ),
                "cuDeviceGetAttribute",
            )
        )
        if not supported:
            raise ValueError(
                f"kernel {self.name!r}: cluster {self.cluster} needs a device with cluster launch "
                f"(sm_90+), device {dev} has none"
            )
        size = self.cluster[0] * self.cluster[1] * self.cluster[2]
        if size > 8:
            driver.check(
                drv.cuKernelSetAttribute(
                    drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                    1,
                    self._kernel,
                    self._cudev,
                ),
                "cuKernelSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)",
            )
        attr = drv.CUlaunchAttribute()
        attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = self.cluster
        attrs = [attr, self._pdl_attribute(drv)] if programmatic else [attr]
        config = drv.CUlaunchConfig()
        config.attrs = attrs
        config.numAttrs = len(attrs)
        config.blockDimX, config.blockDimY, config.blockDimZ = self.block
        config.sharedMemBytes = self.dynamic_smem
        self._cluster_attr = attr
        return config

    def max_active_clusters(self) -> int:
        """Clusters of this kernel (CTAs, without a cluster) that its device runs at once: the driver's occupancy
        for its block, shared memory, registers and cluster shape (loads the kernel; cached)."""
        if self._max_active is not None:
            return self._max_active
        self.load()
        drv = self._drv
        sms = int(driver.check(drv.cuDeviceGetAttribute(
            drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self._cudev), "cuDeviceGetAttribute"))
        if self.entry.launch.is_cluster_launch:
            config = self._cluster_config(drv, self.device)
            size = self.cluster[0] * self.cluster[1] * self.cluster[2]
            per = max(1, sms // size)  # the grid a persistent launch asks for, in clusters along x
            config.gridDimX, config.gridDimY, config.gridDimZ = (
                self.cluster[0] * per, self.cluster[1], self.cluster[2]
            )
            n = driver.check(drv.cuOccupancyMaxActiveClusters(self._f, config), "cuOccupancyMaxActiveClusters")
        else:
            threads = self.block[0] * self.block[1] * self.block[2]
            per_sm = driver.check(
                drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(self._f, threads, self.dynamic_smem),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            )
            n = int(per_sm) * sms
        self._max_active = int(n)
        return self._max_active

    # ---------------------------------------------------------------- arguments

    def pack(self, *args: Any) -> bytes:
        """Check args against the signature and return the packed parameter block (no GPU needed)."""
        return self.layout.pack(args, self.device, self.name)

    def prepare(self, *args: Any) -> ParamBuffer:
        """Check and pack args into a new ParamBuffer that launch_packed can launch any number of times."""
        buf = ParamBuffer(self.layout)
        buf.write(self.layout.convert(args, self.device, self.name))
        return buf

    # ---------------------------------------------------------------- launching

    def launch(
        self, grid: Any, *args: Any, stream: Any = None, block: Any = None, smem: int | None = None
    ) -> None:
        """Launch on grid with args checked against the signature, on stream (default: torch's current).

        The first call loads the kernel and replaces this method, on the instance, by a function generated for
        the kernel's signature: it packs the arguments into a preallocated parameter block and calls
        cuLaunchKernel, and falls back to this checked path for anything unusual (bad arguments, block= or
        smem= overrides, another thread).
        """
        self._launch_checked(grid, args, stream, block, smem)

    def _install_fast_launch(self) -> None:
        """Generate the hot-path launch function for this kernel's signature and bind it as self.launch."""
        names, statement, ns = pack_source(self.layout, self._buffer, self.device, self.name)
        ns.update(
            get_ident=threading.get_ident,
            owner=self._owner,
            slow=self._launch_checked,
            grid3=_grid3,
            streams=_stream,
            stream_handle=_stream.stream_handle,
            cu=self._launch_fn,
            f=self._f,
            BX=self.block[0],
            BY=self.block[1],
            BZ=self.block[2],
            BLOCK=self.block,
            SMEM=self.dynamic_smem,
            KP=self._buffer.kernel_params,
            BUF=self._buffer,
            failed=self._launch_failed,
            cluster=self._launch_cluster,
        )
        if len(names) == 0:
            unpack = "if args: raise TypeError"
        else:
            unpack = f"{', '.join(names)}, = args"
        if self._config is None:
            call = (
                "try:\n"
                "            err = cu(f, gx, gy, gz, BX, BY, BZ, SMEM, s, KP, 0)[0]\n"
                "        except (OverflowError, TypeError):\n"
                "            grid3((gx, gy, gz))\n"
                "            raise\n"
                "        if err:\n"
                "            failed(err, (gx, gy, gz), BLOCK, SMEM, s, BUF)"
            )
        else:
            call = "cluster((gx, gy, gz), BLOCK, SMEM, s, BUF)"
        src = f"""def launch(grid, *args, stream=None, block=None, smem=None):
    if block is None and smem is None and get_ident() == owner:
        try:
            {unpack}
            {statement}
        except Exception:
            return slow(grid, args, stream, block, smem)
        if type(grid) is int:
            gx = grid
            gy = gz = 1
        else:
            gx, gy, gz = grid3(grid)
        if stream is None:
            s = streams.current(dev)
        elif type(stream) is int:
            s = stream
        else:
            s = stream_handle(stream)
        {call}
        return None
    return slow(grid, args, stream, block, smem)
"""
        exec(compile(src, f"<cute_runtime launch of {self.name}>", "exec"), ns)
        launch = ns["launch"]
        launch.__doc__ = Kernel.launch.__doc__
        self.launch = launch  # type: ignore[method-assign]

    def _launch_checked(
        self, grid: Any, args: Sequence[Any], stream: Any, block: Any, smem: int | None
    ) -> None:
        values = self.layout.convert(args, self.device, self.name)
        grid3 = _grid3(grid)
        block3 = self.block if block is None else _grid3(block, "block")
        if block3[0] * block3[1] * block3[2] > 1024:
            raise ValueError(f"block {block3} has more than 1024 threads")
        if smem is None:
            smem = self.dynamic_smem
        elif isinstance(smem, bool) or not isinstance(smem, int) or smem < 0:
            raise ValueError(f"smem must be an int >= 0 (bytes of dynamic shared memory), got {smem!r}")
        s = None if stream is None else _stream.stream_handle(stream)
        self.load()
        # The device is known now: re-check device placement of tensor arguments.
        values = self.layout.convert(args, self.device, self.name)
        if s is None:
            s = _stream.current_stream(self.device)
        if smem > self._smem_limit:
            self._raise_smem_limit(smem)
        if self._owner == threading.get_ident():
            buf = self._buffer
        else:
            buf = ParamBuffer(self.layout)
        buf.write(values)
        if self._config is not None:
            self._launch_cluster(grid3, block3, smem, s, buf)
            return
        err = self._launch_fn(self._f, *grid3, *block3, smem, s, buf.kernel_params, 0)[0]
        if err:
            self._launch_failed(err, grid3, block3, smem, s, buf)

    def _launch_cluster(
        self, grid: tuple[int, int, int], block: tuple[int, int, int], smem: int, s: int, buf: ParamBuffer
    ) -> None:
        cx, cy, cz = self.cluster
        if grid[0] % cx or grid[1] % cy or grid[2] % cz:
            raise ValueError(
                f"kernel {self.name!r}: grid {grid} is not a multiple of its cluster {self.cluster}"
            )
        drv = self._drv
        config = (
            self._config if self._owner == threading.get_ident() else self._cluster_config(drv, self.device)
        )
        config.gridDimX, config.gridDimY, config.gridDimZ = grid
        config.blockDimX, config.blockDimY, config.blockDimZ = block
        config.sharedMemBytes = smem
        config.hStream = drv.CUstream(s)
        err = drv.cuLaunchKernelEx(config, self._f, buf.kernel_params, 0)[0]
        if err:
            self._launch_failed(err, grid, block, smem, s, buf, cluster=True)

    def _launch_failed(
        self,
        err: Any,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        smem: int,
        s: int,
        buf: ParamBuffer,
        cluster: bool = False,
    ) -> None:
        drv = self._drv
        _grid3(grid)  # a zero extent is a ValueError, not a driver error
        if int(err) == _ERR_INVALID_CONTEXT and self.device is not None:
            # A thread with no current context: make the device's primary context current and try once more.
            driver.make_current(self.device)
            if cluster:
                err = drv.cuLaunchKernelEx(self._config, self._f, buf.kernel_params, 0)[0]
            else:
                err = self._launch_fn(self._f, *grid, *block, smem, s, buf.kernel_params, 0)[0]
            if not err:
                return
        raise DriverError(
            f"launch of kernel {self.name!r} (grid={grid}, block={block}, cluster={self.cluster}, "
            f"dynamic smem={smem}, "
            f"stream={s:#x}) failed: {driver.error_text(drv, err)}",
            int(err),
            getattr(err, "name", ""),
        )

    def bound_launch(self, grid: Any, params: ParamBuffer, *, programmatic: bool = False) -> Callable[[int], None]:
        """A launcher of this kernel with a fixed grid and parameter block, called with a raw stream handle.

        Everything but the stream is set up once (a cluster kernel gets its own CUlaunchConfig), so a caller
        that re-launches one configuration (a GEMM launch plan) pays for the driver call only. The block's
        bytes are read at each call (the caller may rewrite them between calls); unchecked, one thread.
        `programmatic`: launch with programmatic stream serialization (PDL), so that the grid may start while
        the previous kernel of the stream finishes; only for a kernel that runs `griddepcontrol.wait` before
        its first global memory access (cute_ir.hopper.grid_dependency_wait).
        """
        self.load()
        grid3 = _grid3(grid)
        drv, f, block, smem, kp = self._drv, self._f, self.block, self.dynamic_smem, params.kernel_params
        if self._config is None and not programmatic:
            cu = self._launch_fn
            gx, gy, gz = grid3
            bx, by, bz = block

            def launch(stream: int) -> None:
                err = cu(f, gx, gy, gz, bx, by, bz, smem, stream, kp, 0)[0]
                if err:
                    self._launch_failed(err, grid3, block, smem, stream, params)

            return launch
        cx, cy, cz = self.cluster
        if grid3[0] % cx or grid3[1] % cy or grid3[2] % cz:
            raise ValueError(f"kernel {self.name!r}: grid {grid3} is not a multiple of its cluster {self.cluster}")
        config = self._launch_config(drv, self.device, programmatic)
        config.gridDimX, config.gridDimY, config.gridDimZ = grid3
        last = [None]
        launch_ex, cu_stream = drv.cuLaunchKernelEx, drv.CUstream

        def launch_cluster(stream: int) -> None:
            if stream != last[0]:
                config.hStream = cu_stream(stream)
                last[0] = stream
            err = launch_ex(config, f, kp, 0)[0]
            if err:
                self._launch_failed(err, grid3, block, smem, stream, params, cluster=True)

        return launch_cluster

    def launch_packed(
        self, grid: tuple[int, int, int], stream: int = 0, params: ParamBuffer | None = None
    ) -> None:
        """Launch already packed parameters (default: the last launch's) on a raw stream handle, unchecked.

        The lowest-overhead path: no argument checks, no stream lookup.
        """
        if not self._ready:
            self.load()
        buf = self._buffer if params is None else params
        if self._config is not None:
            self._launch_cluster(grid, self.block, self.dynamic_smem, stream, buf)
            return
        b = self.block
        err = self._launch_fn(
            self._f,
            grid[0],
            grid[1],
            grid[2],
            b[0],
            b[1],
            b[2],
            self.dynamic_smem,
            stream,
            buf.kernel_params,
            0,
        )[0]
        if err:
            self._launch_failed(err, grid, b, self.dynamic_smem, stream, buf)

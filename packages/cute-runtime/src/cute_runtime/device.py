"""Device properties read off a live GPU (arch, SM count, shared memory, L2, ...)."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any

from . import driver
from .arch import device_arch_name


@dataclass(frozen=True)
class DeviceProperties:
    """What cute-nvarch's targets and launch rules need to know about one GPU."""

    ordinal: int
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_block: int
    registers_per_sm: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    shared_memory_per_sm: int
    reserved_shared_memory_per_block: int
    l2_cache_bytes: int
    persisting_l2_cache_max_bytes: int
    total_memory_bytes: int
    clock_rate_khz: int
    memory_clock_rate_khz: int
    memory_bus_width_bits: int
    cluster_launch: bool
    tensor_map_access: bool
    max_grid: tuple[int, int, int]
    max_block: tuple[int, int, int]

    @property
    def arch(self) -> str:
        """The device's plain target name, e.g. 'sm_90'."""
        return device_arch_name(self.compute_capability)

    @property
    def feature_arch(self) -> str:
        """The target with this device's full feature set: 'sm_90a' on Hopper, the plain name below 9.0."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}a" if major >= 9 else self.arch

    @property
    def peak_dram_bandwidth(self) -> float:
        """Theoretical DRAM bandwidth in bytes/s (2 x memory clock x bus width); 0.0 if unreported."""
        return 2.0 * self.memory_clock_rate_khz * 1e3 * self.memory_bus_width_bits / 8.0

    def target(self) -> Any:
        """cute-nvarch's Target for this device, with the limits read off the device."""
        import dataclasses

        from cute_nvarch.target import get_target

        documented = get_target(self.compute_capability)
        live = {
            "smem_per_block": self.shared_memory_per_block_optin,
            "smem_per_block_static": self.shared_memory_per_block,
            "smem_per_sm": self.shared_memory_per_sm,
            "registers_per_sm": self.registers_per_sm,
            "registers_per_block": self.registers_per_block,
            "max_threads_per_block": self.max_threads_per_block,
            "max_threads_per_sm": self.max_threads_per_sm,
            "max_blocks_per_sm": self.max_blocks_per_sm,
            "warp_size": self.warp_size,
        }
        names = {f.name for f in dataclasses.fields(documented)}
        return dataclasses.replace(documented, **{k: v for k, v in live.items() if k in names})

    def as_dict(self) -> dict[str, Any]:
        """The properties as a JSON-able dict, arch names included."""
        d = asdict(self)
        d["arch"] = self.arch
        d["feature_arch"] = self.feature_arch
        d["peak_dram_bandwidth"] = self.peak_dram_bandwidth
        return d


def _attr(drv: Any, dev: Any, name: str, default: int | None = None) -> int:
    attr = getattr(drv.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
    err, value = drv.cuDeviceGetAttribute(attr, dev)
    if err:
        if default is not None:
            return default
        driver.check((err,), f"cuDeviceGetAttribute({name})")
    return int(value)


@functools.cache
def _read(ordinal: int) -> DeviceProperties:
    drv = driver.init()
    dev = driver.device_handle(ordinal)
    raw_name = driver.check(drv.cuDeviceGetName(256, dev), "cuDeviceGetName")
    name = (
        raw_name.split(b"\x00", 1)[0].decode(errors="replace")
        if isinstance(raw_name, bytes)
        else str(raw_name)
    )
    total = int(driver.check(drv.cuDeviceTotalMem(dev), "cuDeviceTotalMem"))
    a = functools.partial(_attr, drv, dev)
    return DeviceProperties(
        ordinal=ordinal,
        name=name,
        compute_capability=(a("COMPUTE_CAPABILITY_MAJOR"), a("COMPUTE_CAPABILITY_MINOR")),
        sm_count=a("MULTIPROCESSOR_COUNT"),
        warp_size=a("WARP_SIZE"),
        max_threads_per_block=a("MAX_THREADS_PER_BLOCK"),
        max_threads_per_sm=a("MAX_THREADS_PER_MULTIPROCESSOR"),
        max_blocks_per_sm=a("MAX_BLOCKS_PER_MULTIPROCESSOR"),
        registers_per_block=a("MAX_REGISTERS_PER_BLOCK"),
        registers_per_sm=a("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        shared_memory_per_block=a("MAX_SHARED_MEMORY_PER_BLOCK"),
        shared_memory_per_block_optin=a("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        shared_memory_per_sm=a("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        reserved_shared_memory_per_block=a("RESERVED_SHARED_MEMORY_PER_BLOCK", 0),
        l2_cache_bytes=a("L2_CACHE_SIZE"),
        persisting_l2_cache_max_bytes=a("MAX_PERSISTING_L2_CACHE_SIZE", 0),
        total_memory_bytes=total,
        clock_rate_khz=a("CLOCK_RATE", 0),
        memory_clock_rate_khz=a("MEMORY_CLOCK_RATE", 0),
        memory_bus_width_bits=a("GLOBAL_MEMORY_BUS_WIDTH", 0),
        cluster_launch=bool(a("CLUSTER_LAUNCH", 0)),
        tensor_map_access=bool(a("TENSOR_MAP_ACCESS_SUPPORTED", 0)),
        max_grid=(a("MAX_GRID_DIM_X"), a("MAX_GRID_DIM_Y"), a("MAX_GRID_DIM_Z")),
        max_block=(a("MAX_BLOCK_DIM_X"), a("MAX_BLOCK_DIM_Y"), a("MAX_BLOCK_DIM_Z")),
    )


def device_properties(device: int | None = None) -> DeviceProperties:
    """The properties of a GPU (default: the current device); NoDeviceError without a driver or GPU."""
    ordinal = driver.current_device() if device is None else device
    driver.device_handle(ordinal)
    return _read(ordinal)


def device_arch(device: int | None = None) -> str:
    """The plain target name of a GPU (default: the current device), e.g. 'sm_90'."""
    return device_properties(device).arch

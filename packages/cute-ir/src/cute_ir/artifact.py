"""`Artifact`: one compiled kernel = its cute-nvarch KernelEntry + cubin bytes + PTX text (+ lowered MLIR)."""

from __future__ import annotations

from cute_nvarch.entry import KernelEntry

__all__ = ["Artifact"]


class Artifact:
    """A compiled kernel: `entry` (KernelEntry), `cubin`, `ptx`, optional `mlir`, stage `timings` (ms).

    `cached` is True when the compile cache served it from disk: then `resources["compile_ms"]` is the time of
    the compile that filled the cache, not of this call.
    """

    __slots__ = ("cached", "cubin", "entry", "mlir", "ptx", "ptxas_log", "timings")

    def __init__(
        self,
        entry: KernelEntry,
        cubin: bytes,
        ptx: str,
        *,
        mlir: str | None = None,
        timings: dict[str, float] | None = None,
        ptxas_log: str = "",
        cached: bool = False,
    ) -> None:
        if not isinstance(entry, KernelEntry):
            raise TypeError(f"Artifact: entry must be a KernelEntry, got {type(entry).__name__}")
        if not isinstance(cubin, (bytes, bytearray)):
            raise TypeError(f"Artifact: cubin must be bytes, got {type(cubin).__name__}")
        if not isinstance(ptx, str):
            raise TypeError(f"Artifact: ptx must be a str, got {type(ptx).__name__}")
        self.entry = entry
        self.cubin = bytes(cubin)
        self.ptx = ptx
        self.mlir = mlir
        self.timings = dict(timings or {})
        self.ptxas_log = ptxas_log
        self.cached = cached

    @property
    def name(self) -> str:
        """The kernel's entry symbol."""
        return self.entry.name

    @property
    def arch(self) -> str:
        """The target the cubin was built for."""
        return self.entry.target

    @property
    def spec(self) -> dict:
        """The Python-level kernel specification."""
        return self.entry.spec

    @property
    def resources(self) -> dict:
        """ptxas's resource report plus compile_ms."""
        return self.entry.resources

    def resource_line(self) -> str:
        """One line: registers, shared memory, spill stores, spill loads, compile time (`(cached)` from disk)."""
        r = self.resources
        compile_text = "(cached)" if self.cached else f"{r['compile_ms']:.1f} ms"
        return (
            f"registers: {r['registers']}, shared memory: {r['shared_memory']} bytes, "
            f"spill stores: {r['spill_stores']} bytes, spill loads: {r['spill_loads']} bytes, "
            f"compile: {compile_text}"
        )

    def __repr__(self) -> str:
        return f"Artifact({self.name!r}, arch={self.arch!r}, cubin={len(self.cubin)} bytes)"

"""The shared-memory allocator: named buffers at aligned byte offsets, the launch size, the target's capacity.

`SmemPlan(base_align, label=...)` places buffers one after another from a base aligned to `base_align`
bytes. Each kind of buffer brings its own alignment rule:

- `add(name, nbytes, align)`: any buffer (16 bytes by default);
- `add_mbarriers(name, count)`: `count` mbarriers of `MBARRIER_BYTES`, 8-byte aligned;
- `add_gmma(name, nbytes, layout_type)`: a GMMA / TMA operand buffer (stages of a swizzled tile), aligned
  to its swizzle pattern (`GmmaLayoutType.pattern_bytes`: 1024 bytes for the 128-byte swizzle) and at
  least to the 128 bytes TMA needs, so that every stage sees the same swizzle phase.

`dynamic_smem_bytes` is the size to launch with: the buffers plus the worst-case slack of rounding the
dynamic shared-memory base (declared `DYNAMIC_SMEM_DECLARED_ALIGN`-aligned) up to `base_align` in the
kernel. `check(target)` raises a ValueError naming the plan's label and its buffers when that exceeds the
target's opt-in per-block maximum (`Target.smem_per_block`); `fits(target)` says whether it does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cute_nvarch.gmma_desc import GmmaLayoutType
from cute_nvarch.target import Target, get_target

__all__ = [
    "DYNAMIC_SMEM_DECLARED_ALIGN",
    "MBARRIER_BYTES",
    "TMA_SMEM_ALIGN",
    "SmemBuffer",
    "SmemPlan",
]

DYNAMIC_SMEM_DECLARED_ALIGN = 16  # alignment the kernel's extern dynamic shared-memory array is declared with
MBARRIER_BYTES = 8  # one mbarrier object (a 64-bit word, 8-byte aligned)
TMA_SMEM_ALIGN = 128  # TMA's shared-memory destination alignment without a swizzle


@dataclass(frozen=True)
class SmemBuffer:
    """One named buffer of a `SmemPlan`: byte offset from the aligned base, size and alignment."""

    name: str
    offset: int
    nbytes: int
    align: int

    @property
    def end(self) -> int:
        """The byte offset just past the buffer."""
        return self.offset + self.nbytes


def _pow2(name: str, v: object, lo: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or v & (v - 1):
        raise ValueError(f"{name} must be a power of two >= {lo}, got {v!r}")
    return v


@dataclass
class SmemPlan:
    """Named shared-memory buffers placed at aligned byte offsets from a base aligned to `base_align`."""

    base_align: int = 1024
    label: str = "shared-memory plan"  # what a capacity error names (the kernel or config)
    buffers: dict[str, SmemBuffer] = field(default_factory=dict)
    _end: int = 0

    def __post_init__(self) -> None:
        _pow2("base_align", self.base_align, DYNAMIC_SMEM_DECLARED_ALIGN)

    def add(self, name: str, nbytes: int, align: int = 16) -> SmemBuffer:
        """Place a buffer of `nbytes` bytes aligned to `align` (a power of two <= base_align)."""
        if name in self.buffers:
            raise ValueError(f"shared-memory buffer {name!r} is already placed")
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes <= 0:
            raise ValueError(f"buffer {name!r}: nbytes must be a positive int, got {nbytes!r}")
        if not isinstance(align, int) or align <= 0 or align & (align - 1) or align > self.base_align:
            raise ValueError(f"buffer {name!r}: align must be a power of two <= {self.base_align}, got {align!r}")
        offset = -(-self._end // align) * align
        buf = SmemBuffer(name, offset, nbytes, align)
        self.buffers[name] = buf
        self._end = offset + nbytes
        return buf

    def add_mbarriers(self, name: str, count: int) -> SmemBuffer:
        """Place `count` mbarriers (8 bytes each, 8-byte aligned)."""
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            raise ValueError(f"buffer {name!r}: count must be a positive int, got {count!r}")
        return self.add(name, count * MBARRIER_BYTES, MBARRIER_BYTES)

    def add_gmma(self, name: str, nbytes: int, layout_type: GmmaLayoutType) -> SmemBuffer:
        """Place a GMMA/TMA operand buffer aligned to its swizzle pattern (and to TMA's 128 bytes)."""
        lt = GmmaLayoutType(layout_type)
        return self.add(name, nbytes, max(lt.pattern_bytes, TMA_SMEM_ALIGN))

    def __getitem__(self, name: str) -> SmemBuffer:
        return self.buffers[name]

    @property
    def nbytes(self) -> int:
        """Bytes used from the aligned base."""
        return self._end

    @property
    def dynamic_smem_bytes(self) -> int:
        """Dynamic shared memory to launch with: the plan plus the worst-case round-up slack."""
        return self._end + max(0, self.base_align - DYNAMIC_SMEM_DECLARED_ALIGN)

    def fits(self, target: Target | str) -> bool:
        """Whether the launch size is within the target's opt-in per-block maximum."""
        return self.dynamic_smem_bytes <= get_target(target).smem_per_block

    def check(self, target: Target | str) -> SmemPlan:
        """Return self, or raise ValueError naming the plan and its buffers when it exceeds the target."""
        t = get_target(target)
        if self.dynamic_smem_bytes > t.smem_per_block:
            parts = ", ".join(f"{b.name} {b.nbytes}" for b in self.buffers.values())
            raise ValueError(
                f"{self.label} needs {self.dynamic_smem_bytes} bytes of dynamic shared memory ({parts}; "
                f"{self.dynamic_smem_bytes - self._end} bytes of base round-up), more than {t.name}'s "
                f"{t.smem_per_block} bytes per block"
            )
        return self

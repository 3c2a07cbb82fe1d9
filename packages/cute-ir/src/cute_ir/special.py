"""Special registers, `elect.sync`, `__syncthreads` and the dynamic shared-memory base: their one definition.

Every builder emits at `ir.InsertionPoint.current` and returns an i32 `Int` (`elect_one`: a `Bool`):

- per thread and block: `thread_idx(dim, block_extent=None)` (the extent records the range [0, extent)
  for LLVM), `block_idx(dim)`, `block_dim(dim)`, `grid_dim(dim)`, `lane_idx()`,
  `warp_idx(block_extent_x=None, uniform=False)` (`uniform=True` broadcasts lane 0's value with
  `shfl.sync` so the compiler knows it is warp-uniform, as CUTLASS's `canonical_warp_idx_sync`);
- per cluster (sm_90): `block_idx_in_cluster(dim)` (`%cluster_ctaid`), `cluster_dim(dim)`
  (`%cluster_nctaid`), `cluster_idx(dim)` (`%clusterid`), `num_clusters(dim)` (`%nclusterid`),
  `cluster_ctarank()` (this CTA's linear rank in its cluster, x fastest);
- `elect_one()`: true in exactly one active lane of the warp; `barrier()`: `bar.sync 0`;
- `dynamic_smem(align=16)`: `!llvm.ptr<3>` to the start of dynamic shared memory rounded up in-kernel to
  `align` bytes (the extern array is declared once per module with 16-byte alignment, so a kernel that asks
  for more reserves `align - 16` bytes of slack: TMA/WGMMA SW128 buffers need 1024).
"""

from __future__ import annotations

from typing import Any

from cute_nvarch.smem import DYNAMIC_SMEM_DECLARED_ALIGN
from mlir import ir
from mlir.dialects import llvm, nvvm

from .types import I1, I32, smem_ptr_type
from .values import Bool, Int, as_value, const

__all__ = [
    "DYNAMIC_SMEM_DECLARED_ALIGN",
    "DYNAMIC_SMEM_SYMBOL",
    "barrier",
    "block_dim",
    "block_idx",
    "block_idx_in_cluster",
    "cluster_ctarank",
    "cluster_dim",
    "cluster_idx",
    "dynamic_smem",
    "elect_one",
    "grid_dim",
    "lane_idx",
    "num_clusters",
    "thread_idx",
    "warp_idx",
]

DYNAMIC_SMEM_SYMBOL = "__cute_dynamic_smem"

_SREG = {
    "tid": (nvvm.ThreadIdXOp, nvvm.ThreadIdYOp, nvvm.ThreadIdZOp),
    "ntid": (nvvm.BlockDimXOp, nvvm.BlockDimYOp, nvvm.BlockDimZOp),
    "ctaid": (nvvm.BlockIdXOp, nvvm.BlockIdYOp, nvvm.BlockIdZOp),
    "nctaid": (nvvm.GridDimXOp, nvvm.GridDimYOp, nvvm.GridDimZOp),
    "cluster_ctaid": (nvvm.BlockInClusterIdXOp, nvvm.BlockInClusterIdYOp, nvvm.BlockInClusterIdZOp),
    "cluster_nctaid": (nvvm.ClusterDimBlocksXOp, nvvm.ClusterDimBlocksYOp, nvvm.ClusterDimBlocksZOp),
    "clusterid": (nvvm.ClusterIdXOp, nvvm.ClusterIdYOp, nvvm.ClusterIdZOp),
    "nclusterid": (nvvm.ClusterDimXOp, nvvm.ClusterDimYOp, nvvm.ClusterDimZOp),
}


def _sreg(kind: str, dim: int, upper: int | None = None) -> Int:
    if dim not in (0, 1, 2):
        raise ValueError(f"{kind}: dim must be 0, 1 or 2, got {dim!r}")
    rng = None if upper is None else ir.Attribute.parse(f"#llvm.constant_range<i32, 0, {upper}>")
    return Int(_SREG[kind][dim](I32(), range=rng).result)


def thread_idx(dim: int = 0, block_extent: int | None = None) -> Int:
    """`%tid.{x,y,z}`; `block_extent` records the known range [0, extent) for LLVM."""
    return _sreg("tid", dim, block_extent)


def block_dim(dim: int = 0) -> Int:
    """`%ntid.{x,y,z}`."""
    return _sreg("ntid", dim)


def block_idx(dim: int = 0) -> Int:
    """`%ctaid.{x,y,z}`."""
    return _sreg("ctaid", dim, 2**31 - 1 if dim == 0 else 65535)


def grid_dim(dim: int = 0) -> Int:
    """`%nctaid.{x,y,z}`."""
    return _sreg("nctaid", dim)


def block_idx_in_cluster(dim: int = 0) -> Int:
    """`%cluster_ctaid.{x,y,z}`: this CTA's coordinate inside its cluster."""
    return _sreg("cluster_ctaid", dim)


def cluster_dim(dim: int = 0) -> Int:
    """`%cluster_nctaid.{x,y,z}`: CTAs per cluster along `dim`."""
    return _sreg("cluster_nctaid", dim)


def cluster_idx(dim: int = 0) -> Int:
    """`%clusterid.{x,y,z}`: this cluster's coordinate in the grid of clusters."""
    return _sreg("clusterid", dim)


def num_clusters(dim: int = 0) -> Int:
    """`%nclusterid.{x,y,z}`: clusters in the grid along `dim`."""
    return _sreg("nclusterid", dim)


def cluster_ctarank() -> Int:
    """`%cluster_ctarank`: this CTA's linear rank in its cluster (x fastest)."""
    return Int(nvvm.read_ptx_sreg_cluster_ctarank(I32()))


def lane_idx() -> Int:
    """`%laneid`."""
    return Int(nvvm.LaneIdOp(I32()).result)


def warp_idx(block_extent_x: int | None = None, *, uniform: bool = False) -> Int:
    """`%tid.x // 32` (x-only blocks); `uniform=True` makes it provably warp-uniform (lane 0's, by shfl)."""
    w = thread_idx(0, block_extent_x) // 32
    if not uniform:
        return w
    return Int(nvvm.shfl_sync(I32(), const(-1, I32()), w.value, const(0, I32()), const(31, I32()), nvvm.ShflKind.idx))


def elect_one(membermask: Any = None) -> Bool:
    """`elect.sync`: true in exactly one active lane of the warp."""
    return Bool(nvvm.elect_sync(I1(), membermask=None if membermask is None else as_value(membermask, I32())))


def barrier() -> None:
    """`__syncthreads()` (`bar.sync 0`)."""
    nvvm.Barrier0Op()


def _module_body() -> ir.Block:
    """The body of the gpu.module (or builtin.module) enclosing the current insertion point."""
    op = ir.InsertionPoint.current.block.owner
    while op is not None:
        if op.name in ("gpu.module", "builtin.module"):
            return op.regions[0].blocks[0]
        op = op.parent
    raise ValueError("dynamic_smem: the insertion point is not inside a module")


def _declare_dynamic_smem(body: ir.Block) -> None:
    """Declare the extern dynamic shared-memory array once in the module body."""
    for op in body.operations:
        if op.name == "llvm.mlir.global" and ir.StringAttr(op.attributes["sym_name"]).value == DYNAMIC_SMEM_SYMBOL:
            return
    with ir.InsertionPoint.at_block_begin(body):
        llvm.GlobalOp(
            ir.TypeAttr.get(ir.Type.parse("!llvm.array<0 x i8>")),
            DYNAMIC_SMEM_SYMBOL,
            ir.Attribute.parse("#llvm.linkage<external>"),
            alignment=DYNAMIC_SMEM_DECLARED_ALIGN,
            addr_space=3,
        )


def dynamic_smem(align: int = DYNAMIC_SMEM_DECLARED_ALIGN, module_block: ir.Block | None = None) -> ir.Value:
    """`!llvm.ptr<3>` to dynamic shared memory rounded up to `align` bytes (a power of two)."""
    if isinstance(align, bool) or not isinstance(align, int) or align < 1 or align & (align - 1):
        raise ValueError(f"dynamic_smem: align must be a positive power of two, got {align!r}")
    _declare_dynamic_smem(_module_body() if module_block is None else module_block)
    base = llvm.mlir_addressof(smem_ptr_type(), DYNAMIC_SMEM_SYMBOL)
    if align <= DYNAMIC_SMEM_DECLARED_ALIGN:
        return base
    # pad = (-addr) & (align - 1): bytes to the next multiple of `align`, added by a byte gep
    addr = Int(llvm.ptrtoint(I32(), base))
    pad = (0 - addr) & (align - 1)
    i8 = ir.IntegerType.get_signless(8)
    dynamic = ir.DenseI32ArrayAttr.get([-(1 << 31)])
    return llvm.getelementptr(base.type, base, [pad.value], dynamic, ir.TypeAttr.get(i8), 0)

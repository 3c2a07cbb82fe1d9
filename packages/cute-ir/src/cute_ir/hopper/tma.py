"""TMA (cp.async.bulk.tensor) builders and the `tma` kernel-parameter kind.

The tensor map (CUtensorMap, 128 bytes, encoded on the host by cute-runtime from a cute-nvarch TMA plan) is
passed by value as a kernel parameter: `.param .align 64 .b8 name[128]`. In MLIR that is an `!llvm.ptr`
argument of an `llvm.func` kernel carrying `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
`nvvm.grid_constant`; LLVM's NVPTX backend then takes its generic address with `cvta.param` instead of
copying it to local memory (PTX ISA 7.7+), and that generic address is what `cp.async.bulk.tensor` wants.
`tma_param_arg_attrs()` returns those attributes. Importing this module registers the parameter kind
"tma" with `cute_ir.kernel` (`Param("a_desc", "tma")`; `k.arg("a_desc")` is that `!llvm.ptr`).
`convert-gpu-to-nvvm` drops `llvm.byval` from `gpu.func` arguments (and MLIR rejects `nvvm.grid_constant`
on anything but an `llvm.func` kernel), so a KernelDef with `tma` parameters must be finished with
`finalize_tma_params(kd)` after its body is built: it lowers the `gpu.func` to an `llvm.func` (the same
passes `cute_ir.stages.lower` starts with; running them again later changes nothing) and attaches the
by-value attributes there. `apply_tma_param_attrs(module, kernel, indices)` does the second half for a
caller's own module.

Builders (emit at the caller's insertion point; coordinates are element indices, innermost first, i32):

- `tma_load(desc, dst, mbar, coords, multicast_mask=None)`: global -> shared, completing
  `mbarrier::complete_tx::bytes` on `mbar`; with a 16-bit `multicast_mask` the box lands at the same
  offset in every CTA of the cluster whose rank bit is set, each completing on its own `mbar`.
- `tma_store(desc, src, coords)`: shared -> global (bulk async-group), then `tma_store_commit()` and
  `tma_store_wait(n, read=True)` before the shared buffer is reused or the CTA exits. TMA stores clip
  to the tensor bounds; loads fill out-of-bounds elements with zeros.
- `tma_prefetch_descriptor(desc)`: `prefetch.tensormap` of the descriptor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cute_nvarch.params import TMA_DESCRIPTOR_ALIGN, TMA_DESCRIPTOR_BYTES
from mlir import ir
from mlir.dialects import llvm, nvvm

from ..types import I16, I32, cluster_ptr_type
from ..values import Int, as_value, const

__all__ = [
    "TMA_DESCRIPTOR_ALIGN",
    "TMA_DESCRIPTOR_BYTES",
    "TMA_MAX_RANK",
    "apply_tma_param_attrs",
    "finalize_tma_params",
    "multicast_mask",
    "tma_load",
    "tma_param_arg_attrs",
    "tma_param_type",
    "tma_prefetch_descriptor",
    "tma_store",
    "tma_store_commit",
    "tma_store_wait",
]

TMA_MAX_RANK = 5


def tma_param_type() -> ir.Type:
    """The MLIR type of a `tma` kernel argument: a generic pointer to the by-value parameter."""
    return llvm.PointerType.get()


def tma_param_arg_attrs() -> dict[str, ir.Attribute]:
    """Argument attributes making an `!llvm.ptr` kernel argument a by-value __grid_constant__ CUtensorMap."""
    return {
        "llvm.byval": ir.TypeAttr.get(ir.Type.parse(f"!llvm.array<{TMA_DESCRIPTOR_BYTES} x i8>")),
        "llvm.align": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), TMA_DESCRIPTOR_ALIGN),
        "nvvm.grid_constant": ir.UnitAttr.get(),
    }


def apply_tma_param_attrs(module: ir.Module | ir.Operation, kernel: str, arg_indices: Sequence[int]) -> None:
    """Set the `tma` argument attributes on arguments `arg_indices` of the lowered `llvm.func` `kernel`."""
    root = module.operation if isinstance(module, ir.Module) else module
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value == kernel:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    if not found:
        raise ValueError(
            f"apply_tma_param_attrs: no llvm.func named {kernel!r} (run convert-gpu-to-nvvm first)"
        )
    func = found[0]
    nargs = len(func.regions[0].blocks[0].arguments)
    old = list(func.attributes["arg_attrs"]) if "arg_attrs" in func.attributes else []
    dicts = (
        [dict((a.name, a.attr) for a in ir.DictAttr(d)) for d in old] if old else [{} for _ in range(nargs)]
    )
    for i in arg_indices:
        if not 0 <= i < nargs:
            raise ValueError(f"apply_tma_param_attrs: argument index {i} out of range for {kernel!r}")
        dicts[i].update(tma_param_arg_attrs())
    func.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])


def _coords(coords: Sequence[Any]) -> list[ir.Value]:
    if not 1 <= len(coords) <= TMA_MAX_RANK:
        raise ValueError(f"TMA coordinates must have 1 to {TMA_MAX_RANK} entries, got {len(coords)}")
    return [as_value(c, I32()) for c in coords]


def tma_load(
    desc: ir.Value,
    dst: ir.Value,
    mbar: ir.Value,
    coords: Sequence[Any],
    multicast_mask: Any = None,
) -> None:
    """`cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes[.multicast::cluster]`."""
    dst7 = llvm.addrspacecast(cluster_ptr_type(), dst)
    if isinstance(multicast_mask, int) and not 0 < multicast_mask < (1 << 16):
        raise ValueError(f"multicast_mask must be a non-zero 16-bit mask, got {multicast_mask:#x}")
    nvvm.CpAsyncBulkTensorGlobalToSharedClusterOp(
        dst7,
        desc,
        _coords(coords),
        mbar,
        [],
        multicastMask=None if multicast_mask is None else as_value(multicast_mask, I16()),
    )


def multicast_mask(cluster_shape: Sequence[int], cta_coord: Sequence[Any], axis: int) -> Int:
    """The i32 mask of the CTAs that share `cta_coord` except along `axis` (rank = x + cx*(y + cy*z)).

    What a multicast TMA load along `axis` writes to; `cta_coord` holds Ints or ints (this CTA's
    `block_idx_in_cluster`). The run-time form of `cute_nvarch.tma.cluster_multicast_mask` (tested equal).
    """
    shape = tuple(cluster_shape) + (1,) * (3 - len(cluster_shape))
    if len(shape) != 3 or not all(isinstance(x, int) and x >= 1 for x in shape) or shape[0] * shape[1] * shape[2] > 16:
        raise ValueError(
            f"multicast_mask: cluster_shape must be 1 to 3 positive ints, at most 16 CTAs, got {cluster_shape!r}"
        )
    if axis not in (0, 1, 2):
        raise ValueError(f"multicast_mask: axis must be 0, 1 or 2, got {axis!r}")
    c = list(cta_coord) + [0] * (3 - len(cta_coord))
    mask = Int(const(0, I32()))
    for i in range(shape[axis]):
        c[axis] = i
        mask = mask | (Int(const(1, I32())) << (c[0] + shape[0] * (c[1] + shape[1] * c[2])))
    return mask


def tma_store(desc: ir.Value, src: ir.Value, coords: Sequence[Any]) -> None:
    """`cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [desc, coords], [src]`."""
    nvvm.CpAsyncBulkTensorSharedCTAToGlobalOp(desc, src, _coords(coords))


def tma_store_commit() -> None:
    """`cp.async.bulk.commit_group`: close the current bulk async-group of this thread."""
    nvvm.cp_async_bulk_commit_group()


def tma_store_wait(pending: int = 0, read: bool = True) -> None:
    """`cp.async.bulk.wait_group[.read] pending`: wait until at most `pending` bulk groups are in flight.

    With `read=True` it waits only until the groups finished *reading* shared memory (enough to reuse the
    source buffer); with `read=False` until their writes are done.
    """
    if not 0 <= pending <= 63:
        raise ValueError(f"pending must be in [0, 63], got {pending}")
    nvvm.cp_async_bulk_wait_group(pending, read=True if read else None)


def tma_prefetch_descriptor(desc: ir.Value) -> None:
    """`prefetch.tensormap [desc]`: bring the tensor map into the descriptor cache."""
    nvvm.prefetch(desc, tensormap=True)


# the passes of cute_ir.stages.LOWER_PIPELINE up to and including gpu.func -> llvm.func
_PRELOWER = "builtin.module(gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm{index-bitwidth=64}))"


def finalize_tma_params(kd: Any) -> None:
    """Lower a built KernelDef's gpu.func to llvm.func and make its "tma" arguments by-value tensor maps."""
    from mlir import passmanager

    indices = [i for i, p in enumerate(kd.params) if p.kind == "tma"]
    if not indices:
        return
    if kd.module is None:
        raise ValueError(
            f"finalize_tma_params: KernelDef {kd.name!r} has no module yet (build its body first)"
        )
    with kd.module.context:
        passmanager.PassManager.parse(_PRELOWER).run(kd.module.operation)
        apply_tma_param_attrs(kd.module, kd.name, indices)


def _register_param_kind() -> None:
    """Register the "tma" parameter kind with cute_ir.kernel's KernelDef."""
    from ..kernel import ParamKind, register_param_kind

    register_param_kind(
        ParamKind(
            "tma",
            lambda p: tma_param_type(),
            lambda p: {
                "llvm.align": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), TMA_DESCRIPTOR_ALIGN)
            },
        )
    )


_register_param_kind()

"""cute-nvarch: NVIDIA architecture facts as data, computed with cute-layout.

Numeric types and targets; SM80 `mma.sync` and SM90 `wgmma.mma_async` atoms with CuTe's thread-value
layouts; `make_tiled_mma`; copy atoms (universal, `cp.async`, `ldmatrix`, `stmatrix`, TMA) with
`make_tiled_copy`; GMMA shared-memory layout atoms and descriptors; TMA plans carrying the exact
`cuTensorMapEncodeTiled` argument tuple. No MLIR and no CUDA: everything is plain Python data.
"""

from __future__ import annotations

from cute_nvarch.__about__ import __version__
from cute_nvarch.copy_atom import (
    CopyAtom,
    make_cp_async_atom,
    make_ldmatrix_atom,
    make_stmatrix_atom,
    make_tma_load_atom,
    make_tma_store_atom,
    make_universal_copy_atom,
)
from cute_nvarch.gmma_desc import GmmaDescriptor, GmmaLayoutType, Major, as_major, make_gmma_desc
from cute_nvarch.gmma_smem import (
    gmma_smem_atom,
    gmma_swizzle,
    make_gmma_smem_layout,
    select_gmma_layout_type,
)
from cute_nvarch.mma_atom import MmaAtom, OperandSource
from cute_nvarch.mma_sm80 import make_mma_sync_atom
from cute_nvarch.mma_sm90 import (
    WGMMA_N_DENSE,
    WGMMA_N_INTEGER,
    make_wgmma_atom,
    wgmma_allowed_n,
    wgmma_k,
)
from cute_nvarch.numeric import (
    NUMERIC_TYPES,
    BFloat16,
    Boolean,
    Float8E4M3FN,
    Float8E5M2,
    Float16,
    Float32,
    Int8,
    Int32,
    Int64,
    NumericType,
    TensorMapDataType,
    TFloat32,
    Uint8,
    numeric_type,
)
from cute_nvarch.target import SM80, SM89, SM90A, TARGETS, Target, get_target
from cute_nvarch.tiled_copy import (
    ThrCopy,
    TiledCopy,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_tv,
)
from cute_nvarch.tiled_mma import GmmaOperandDesc, ThrMma, TiledMma, make_tiled_mma
from cute_nvarch.tma import (
    TmaBox,
    TmaInterleave,
    TmaL2Promotion,
    TmaOobFill,
    TmaPlan,
    TmaSwizzle,
    cluster_multicast_mask,
    make_tma_copy,
    make_tma_plan,
)

__all__ = [
    "__version__",
    # numeric types
    "NumericType",
    "NUMERIC_TYPES",
    "numeric_type",
    "TensorMapDataType",
    "Float16",
    "BFloat16",
    "Float32",
    "TFloat32",
    "Float8E4M3FN",
    "Float8E5M2",
    "Int8",
    "Uint8",
    "Int32",
    "Int64",
    "Boolean",
    # targets
    "Target",
    "SM80",
    "SM89",
    "SM90A",
    "TARGETS",
    "get_target",
    # MMA
    "MmaAtom",
    "OperandSource",
    "Major",
    "as_major",
    "make_wgmma_atom",
    "make_mma_sync_atom",
    "wgmma_allowed_n",
    "wgmma_k",
    "WGMMA_N_DENSE",
    "WGMMA_N_INTEGER",
    "TiledMma",
    "ThrMma",
    "GmmaOperandDesc",
    "make_tiled_mma",
    # copies
    "CopyAtom",
    "make_universal_copy_atom",
    "make_cp_async_atom",
    "make_ldmatrix_atom",
    "make_stmatrix_atom",
    "make_tma_load_atom",
    "make_tma_store_atom",
    "TiledCopy",
    "ThrCopy",
    "make_tiled_copy",
    "make_tiled_copy_tv",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    # GMMA shared memory and descriptors
    "GmmaLayoutType",
    "GmmaDescriptor",
    "make_gmma_desc",
    "gmma_smem_atom",
    "gmma_swizzle",
    "select_gmma_layout_type",
    "make_gmma_smem_layout",
    # TMA
    "TmaPlan",
    "TmaBox",
    "TmaSwizzle",
    "TmaInterleave",
    "TmaL2Promotion",
    "TmaOobFill",
    "make_tma_plan",
    "make_tma_copy",
    "cluster_multicast_mask",
]

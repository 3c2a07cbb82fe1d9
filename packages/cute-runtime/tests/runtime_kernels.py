"""Hand-written PTX kernels and manifest entries for cute-runtime's tests (no cute-ir involved)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from cute_runtime.bench import ADD_F32_PTX as ADD_F32_PTX  # the benchmark's kernel: c[i] = a[i] + b[i] for i < n

ADD_F32_ENTRY: dict[str, Any] = {
    "spec": {"kernel": "add_f32", "dtype": "f32", "test": True},
    "name": "add_f32",
    "arch": "sm_80",
    "params": [
        {"name": "a", "kind": "ptr"},
        {"name": "b", "kind": "ptr"},
        {"name": "c", "kind": "ptr"},
        {"name": "n", "kind": "u32"},
    ],
    "launch": {"block": [128, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 0},
    "resources": {
        "registers": 10,
        "shared_memory": 0,
        "spill_stores": 0,
        "spill_loads": 0,
        "local_memory": 0,
        "compile_ms": 1.0,
    },
    "versions": {"cute_ir": "test", "mlir": "none", "ptxas": "13.0.88"},
}

# Copies the raw bits of every parameter kind into 8-byte slots of `out` (slots 6..21 hold the TMA map).
DUMP_PTX = """
.version 7.8
.target sm_80
.address_size 64

.visible .entry dump_params(
    .param .u64 out,
    .param .u32 a,
    .param .u32 b,
    .param .u64 c,
    .param .u64 d,
    .param .f32 e,
    .param .f64 f,
    .param .align 64 .b8 t[128]
)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;

    mov.u32 %r3, %tid.x;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u32 %r1, [a];
    st.global.u32 [%rd1+0], %r1;
    ld.param.u32 %r2, [b];
    st.global.u32 [%rd1+8], %r2;
    ld.param.u64 %rd2, [c];
    st.global.u64 [%rd1+16], %rd2;
    ld.param.u64 %rd3, [d];
    st.global.u64 [%rd1+24], %rd3;
    ld.param.b32 %r1, [e];
    st.global.b32 [%rd1+32], %r1;
    ld.param.b64 %rd4, [f];
    st.global.b64 [%rd1+40], %rd4;
TMA_COPY
DONE:
    ret;
}
""".replace(
    "TMA_COPY",
    "\n".join(
        f"    ld.param.b64 %rd5, [t+{8 * k}];\n    st.global.b64 [%rd1+{48 + 8 * k}], %rd5;"
        for k in range(16)
    ),
).replace("    .reg .b64 %rd<8>;", "    .reg .pred %p<2>;\n    .reg .b64 %rd<8>;")

DUMP_ENTRY: dict[str, Any] = {
    "spec": {"kernel": "dump_params"},
    "name": "dump_params",
    "arch": "sm_80",
    "params": [
        {"name": "out", "kind": "ptr"},
        {"name": "a", "kind": "i32"},
        {"name": "b", "kind": "u32"},
        {"name": "c", "kind": "i64"},
        {"name": "d", "kind": "u64"},
        {"name": "e", "kind": "f32"},
        {"name": "f", "kind": "f64"},
        {"name": "t", "kind": "tma"},
    ],
    "launch": {"block": [32, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 0},
}

# Writes v at byte offset `off` of dynamic shared memory, reads it back and stores it to out[0].
BIG_SMEM_PTX = """
.version 7.8
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dsmem[];

.visible .entry big_smem(
    .param .u64 out,
    .param .u32 v,
    .param .u32 off
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;

    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    ld.param.u32 %r2, [v];
    ld.param.u32 %r3, [off];
    mov.u32 %r4, dsmem;
    add.u32 %r4, %r4, %r3;
    st.shared.u32 [%r4], %r2;
    bar.warp.sync -1;
    ld.shared.u32 %r5, [%r4];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    st.global.u32 [%rd1], %r5;
DONE:
    ret;
}
"""

BIG_SMEM_ENTRY: dict[str, Any] = {
    "spec": {"kernel": "big_smem"},
    "name": "big_smem",
    "arch": "sm_80",
    "params": [{"name": "out", "kind": "ptr"}, {"name": "v", "kind": "u32"}, {"name": "off", "kind": "u32"}],
    "launch": {"block": [32, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 100 * 1024},
}

# out[blockIdx.x] = cluster_ctarank | nctarank << 8 | clusterid.x << 16 (needs sm_90 clusters).
CLUSTER_PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry cluster_ids(
    .param .u64 out
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;

    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r3, %cluster_nctarank;
    mov.u32 %r4, %clusterid.x;
    shl.b32 %r3, %r3, 8;
    shl.b32 %r4, %r4, 16;
    or.b32 %r5, %r2, %r3;
    or.b32 %r5, %r5, %r4;
    mov.u32 %r6, %ctaid.x;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r6, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
DONE:
    ret;
}
"""

CLUSTER_ENTRY: dict[str, Any] = {
    "spec": {"kernel": "cluster_ids"},
    "name": "cluster_ids",
    "arch": "sm_90a",
    "params": [{"name": "out", "kind": "ptr"}],
    "launch": {"block": [32, 1, 1], "cluster": [2, 1, 1], "dynamic_smem": 0},
}

# One TMA tile load (f32, box 32 x 8, no swizzle) into shared memory, then copied to out row by row.
TMA_LOAD_PTX = """
.version 8.0
.target sm_90a
.address_size 64

.visible .entry tma_load_tile(
    .param .align 64 .b8 tmap[128],
    .param .u64 out,
    .param .u32 x0,
    .param .u32 y0
)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<12>;
    .reg .f32 %f<2>;
    .shared .align 1024 .b8 tile[1024];
    .shared .align 8 .b64 bar;

    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    mov.u32 %r2, bar;
    mov.u32 %r3, tile;
    @!%p1 bra SYNC;
    mbarrier.init.shared::cta.b64 [%r2], 1;
    fence.mbarrier_init.release.cluster;
    fence.proxy.async.shared::cta;
SYNC:
    bar.sync 0;
    @!%p1 bra WAIT;
    mov.u64 %rd1, tmap;
    cvta.param.u64 %rd2, %rd1;
    ld.param.u32 %r4, [x0];
    ld.param.u32 %r5, [y0];
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r2], 1024;
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
        [%r3], [%rd2, {%r4, %r5}], [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.param.u64 %rd4, [out];
    cvta.to.global.u64 %rd4, %rd4;
    mov.u32 %r6, %r1;
LOOP:
    setp.ge.u32 %p3, %r6, 256;
    @%p3 bra DONE;
    shl.b32 %r7, %r6, 2;
    add.u32 %r8, %r3, %r7;
    ld.shared.f32 %f1, [%r8];
    cvt.u64.u32 %rd5, %r7;
    add.s64 %rd6, %rd4, %rd5;
    st.global.f32 [%rd6], %f1;
    add.u32 %r6, %r6, 128;
    bra LOOP;
DONE:
    ret;
}
"""

TMA_LOAD_ENTRY: dict[str, Any] = {
    "spec": {"kernel": "tma_load_tile"},
    "name": "tma_load_tile",
    "arch": "sm_90a",
    "params": [
        {"name": "tmap", "kind": "tma"},
        {"name": "out", "kind": "ptr"},
        {"name": "x0", "kind": "i32"},
        {"name": "y0", "kind": "i32"},
    ],
    "launch": {"block": [128, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 0},
}


def find_ptxas() -> str | None:
    """A ptxas binary: on PATH, in CUDA_HOME/bin, /usr/local/cuda/bin, or the nvidia-cuda-nvcc wheel."""
    found = shutil.which("ptxas")
    if found:
        return found
    candidates = [
        Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "ptxas",
        Path("/usr/local/cuda/bin/ptxas"),
    ]
    for entry in sys.path:
        candidates.append(Path(entry) / "nvidia" / "cu13" / "bin" / "ptxas")
        candidates.append(Path(entry) / "nvidia" / "cuda_nvcc" / "bin" / "ptxas")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


def assemble(ptx: str, arch: str) -> bytes:
    """A cubin for arch assembled from ptx with ptxas."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise FileNotFoundError("ptxas not found")
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        subprocess.run([ptxas, f"-arch={arch}", "-o", str(dst), str(src)], check=True, capture_output=True)
        return dst.read_bytes()


def canonical(spec: Any) -> str:
    """The canonical JSON text of a spec, as the schema defines it (written independently of cute_runtime)."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def write_bundle(directory: Path, kernels: list[tuple[dict[str, Any], bytes | None, str | None]]) -> Path:
    """Write a bundle by hand, as docs/bundle.md says: manifest.json, <stem>.cubin and <stem>.ptx files."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for entry, cubin, ptx in kernels:
        stem = hashlib.sha256(canonical(entry["spec"]).encode()).hexdigest()[:16] + "-" + entry["arch"]
        record = dict(entry)
        record["sha256"] = {}
        if cubin is not None:
            (directory / f"{stem}.cubin").write_bytes(cubin)
            record["cubin"] = f"{stem}.cubin"
            record["sha256"]["cubin"] = hashlib.sha256(cubin).hexdigest()
        if ptx is not None:
            data = ptx.encode()
            (directory / f"{stem}.ptx").write_bytes(data)
            record["ptx"] = f"{stem}.ptx"
            record["sha256"]["ptx"] = hashlib.sha256(data).hexdigest()
        entries.append(record)
    manifest = {"format": "cute-bundle", "version": 1, "kernels": entries}
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return directory

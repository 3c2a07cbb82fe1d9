"""SASS of a cubin (cuobjdump -sass, or nvdisasm) and opcode counts, to check what ptxas made of the PTX.

Tools are searched in the `nvidia-cuda-cuobjdump` / `nvidia-cuda-nvdisasm` wheels (`nvidia/cu*/bin` on
sys.path), next to ptxas, then on PATH. `disassemble(cubin)` returns the SASS text; `opcode_counts(sass)`
counts opcodes (the mnemonic up to the first '.', e.g. `HGMMA`, `UTMALDG`, `SYNCS`, `STL`).
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

__all__ = ["disassemble", "find_disassembler", "opcode_counts"]

_memo: dict[str, tuple[str, str] | None] = {}
_INSTR_RE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)(?:\.[A-Z0-9_.]+)?")


def find_disassembler() -> tuple[str, str] | None:
    """(kind, path) of cuobjdump or nvdisasm, or None when neither is installed."""
    if "tool" in _memo:
        return _memo["tool"]
    found = None
    dirs = []
    for entry in sys.path:
        base = os.path.join(entry or ".", "nvidia")
        if os.path.isdir(base):
            for sub in sorted(os.listdir(base), reverse=True):
                dirs.append(os.path.join(base, sub, "bin"))
    try:
        from ..versions import find_ptxas

        dirs.append(os.path.dirname(find_ptxas()))
    except Exception:  # noqa: BLE001 - ptxas missing only means one fewer place to look
        pass
    for kind in ("cuobjdump", "nvdisasm"):
        for d in dirs:
            cand = os.path.join(d, kind)
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                found = (kind, cand)
                break
        if found is None and shutil.which(kind):
            found = (kind, shutil.which(kind))
        if found:
            break
    _memo["tool"] = found
    return found


def disassemble(cubin: bytes) -> str:
    """The SASS text of a cubin; RuntimeError when no disassembler is installed or it fails."""
    tool = find_disassembler()
    if tool is None:
        raise RuntimeError(
            "no SASS disassembler: install nvidia-cuda-cuobjdump (>= 13.2) or nvidia-cuda-nvdisasm"
        )
    kind, path = tool
    with tempfile.TemporaryDirectory(prefix="cute-sass-") as tmp:
        f = os.path.join(tmp, "k.cubin")
        with open(f, "wb") as fh:
            fh.write(cubin)
        args = [path, "-sass", f] if kind == "cuobjdump" else [path, f]
        # cuobjdump -sass runs nvdisasm: let it find the one beside it (the wheels install both there)
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(path) + os.pathsep + env.get("PATH", "")
        proc = subprocess.run(args, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def opcode_counts(sass: str) -> collections.Counter:
    """How often each SASS opcode (without modifiers) occurs in a disassembly."""
    return collections.Counter(m.group(1) for m in _INSTR_RE.finditer(sass))

"""Running ptxas on PTX text and parsing its `-v` resource report (registers, smem, spills, stack frame)."""

from __future__ import annotations

import os
import re

from .errors import CompileError
from .versions import find_ptxas

__all__ = ["assemble", "parse_report"]

_FUNC_RE = re.compile(r"Function properties for (\S+)")
_STACK_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED_RE = re.compile(r"Used (\d+) registers")
_SMEM_RE = re.compile(r"(\d+) bytes smem")
_BARRIERS_RE = re.compile(r"used (\d+) barriers")
_COMPILING_RE = re.compile(r"Compiling entry function '([^']+)'")


def parse_report(log: str, kernel: str) -> dict[str, int]:
    """Registers, static shared memory, spill stores/loads and stack frame of `kernel` from ptxas -v."""
    report = {
        "registers": 0,
        "shared_memory": 0,
        "spill_stores": 0,
        "spill_loads": 0,
        "local_memory": 0,
        "barriers": 0,
    }
    current = None
    found = False
    for line in log.splitlines():
        m = _COMPILING_RE.search(line) or _FUNC_RE.search(line)
        if m:
            current = m.group(1).strip("'")
            continue
        if current != kernel:
            continue
        m = _STACK_RE.search(line)
        if m:
            report["local_memory"], report["spill_stores"], report["spill_loads"] = map(int, m.groups())
            found = True
        m = _USED_RE.search(line)
        if m:
            report["registers"] = int(m.group(1))
            found = True
            s = _SMEM_RE.search(line)
            report["shared_memory"] = int(s.group(1)) if s else 0
            b = _BARRIERS_RE.search(line)
            report["barriers"] = int(b.group(1)) if b else 0
    if not found:
        raise ValueError(f"ptxas report has no resource lines for kernel {kernel!r}:\n{log}")
    return report


def assemble(
    ptx: str, arch: str, kernel: str, *, opt_level: int = 3, extra_args: tuple[str, ...] = ()
) -> tuple[bytes, dict[str, int], str]:
    """Assemble PTX for `arch` with ptxas -v; return (cubin bytes, resource report, ptxas log)."""
    import subprocess
    import tempfile

    ptxas = find_ptxas()
    with tempfile.TemporaryDirectory(prefix="cute-ptxas-") as tmp:
        src = os.path.join(tmp, f"{kernel}.ptx")
        out = os.path.join(tmp, f"{kernel}.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        cmd = [ptxas, f"-arch={arch}", "-v", f"-O{opt_level}", *extra_args, src, "-o", out]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        log = (proc.stdout or "") + (proc.stderr or "")
        if proc.returncode != 0 or not os.path.exists(out):
            raise CompileError(kernel, "to_cubin", f"{' '.join(cmd)} exited with {proc.returncode}:\n{log}")
        with open(out, "rb") as f:
            cubin = f.read()
    try:
        report = parse_report(log, kernel)
    except ValueError as e:
        raise CompileError(kernel, "to_cubin", str(e)) from None
    return cubin, report, log

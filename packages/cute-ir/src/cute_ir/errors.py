"""Errors of cute_ir: every MLIR or ptxas failure surfaces as a `CompileError` naming kernel and stage."""

from __future__ import annotations

__all__ = ["CompileError", "CuteIRError"]


class CuteIRError(Exception):
    """Base class of cute_ir's errors."""


class CompileError(CuteIRError):
    """A kernel failed at one stage (build, verify, lower, to_ptx, to_cubin); carries the diagnostic text."""

    def __init__(self, kernel: str, stage: str, diagnostics: str) -> None:
        self.kernel = kernel
        self.stage = stage
        self.diagnostics = diagnostics.strip()
        super().__init__(f"kernel {kernel!r} failed at stage {stage!r}:\n{self.diagnostics}")


def format_mlir_error(exc: BaseException) -> str:
    """The diagnostic text of an `mlir.ir.MLIRError` (message plus every attached diagnostic and note)."""
    lines = [str(getattr(exc, "message", "") or exc)]
    for diag in getattr(exc, "error_diagnostics", ()) or ():
        _append_diag(lines, diag, "  ")
    return "\n".join(line for line in lines if line)


def _append_diag(lines: list[str], diag: object, indent: str) -> None:
    loc = getattr(diag, "location", None)
    msg = getattr(diag, "message", str(diag))
    lines.append(f"{indent}{loc}: {msg}" if loc is not None else f"{indent}{msg}")
    for note in getattr(diag, "notes", ()) or ():
        _append_diag(lines, note, indent + "  ")

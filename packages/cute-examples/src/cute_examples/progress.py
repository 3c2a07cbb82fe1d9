"""Progress while kernels compile: each finished kernel's row as it comes, and on a terminal a bar below the rows.

On a terminal the bar (`[#####.....] 37/166 kernels 12.3 s  dense_gemm_...`) is redrawn in place under the
rows already printed; anywhere else (a pipe, a log file, CI) each kernel is one line, flushed as it finishes,
and no control characters are written. The standard library does it: a bar is one rewritten line, and a
dependency (tqdm, rich) would be one more package on every install of cute-examples, GPU hosts included.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_BAR = 24


class Progress:
    """Rows printed as kernels finish, with a bar under them on a terminal; `with Progress(total) as p: p.row(...)`."""

    def __init__(self, total: int, stream: TextIO | None = None, *, tty: bool | None = None) -> None:
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stdout
        self.tty = self.stream.isatty() if tty is None else tty
        self.t0 = time.perf_counter()
        self._bar_shown = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.t0

    def start(self, label: str) -> None:
        """Say which kernel is being compiled now (on a terminal only: the bar names it)."""
        if self.tty:
            self._draw(label)

    def row(self, text: str, *, step: bool = True) -> None:
        """Print one finished row (and count one kernel when step)."""
        if step:
            self.done += 1
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(text + "\n")
        if self.tty and self.done < self.total:
            self._draw("")
        self.stream.flush()

    def close(self) -> None:
        """Erase the bar."""
        if self.tty and self._bar_shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._bar_shown = False

    def _draw(self, label: str) -> None:
        filled = _BAR * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (_BAR - filled)
        line = f"[{bar}] {self.done}/{self.total} kernels {self.elapsed:5.1f} s  {label}"
        width = shutil.get_terminal_size((120, 24)).columns - 1
        self.stream.write("\r\x1b[K" + line[:width])
        self.stream.flush()
        self._bar_shown = True

"""The pictures and tables of docs/nvarch.md, generated from the package through cute-layout.

`python -m cute_nvarch.pictures DIR` writes the `nvarch-*.svg` pictures into DIR (docs/img) and prints
the atom tables in Markdown; tests check that the committed files equal what this module renders.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from cute_layout.picture import to_svg, to_svg_tv

from cute_nvarch.copy_atom import (
    CopyAtom,
    make_cp_async_atom,
    make_ldmatrix_atom,
    make_stmatrix_atom,
    make_tma_load_atom,
    make_universal_copy_atom,
)
from cute_nvarch.gmma_desc import GmmaLayoutType
from cute_nvarch.gmma_smem import gmma_smem_atom
from cute_nvarch.mma_atom import MmaAtom
from cute_nvarch.mma_sm80 import make_mma_sync_atom
from cute_nvarch.mma_sm90 import make_wgmma_atom
from cute_nvarch.tiled_copy import make_tiled_copy_A
from cute_nvarch.tiled_mma import make_tiled_mma

__all__ = ["pictures", "mma_atom_table", "copy_atom_table", "main"]


def pictures() -> dict[str, str]:
    """File name -> SVG text of every picture in docs/nvarch.md."""
    out: dict[str, str] = {}
    c = make_wgmma_atom("f16", "f16", "f32", 16).layout_c_tv
    out["nvarch-wgmma-c-64x16.svg"] = to_svg_tv(c, (64, 16))
    tm = make_tiled_mma(make_mma_sync_atom("f16", "f16", "f32"), (2, 1, 1))
    tc = make_tiled_copy_A(make_ldmatrix_atom("f16", 4), tm)
    m, k = tc.tiler_mn
    out["nvarch-ldmatrix-a-src.svg"] = to_svg_tv(tc.get_layoutS_TV(), (m, k))
    out["nvarch-ldmatrix-a-dst.svg"] = to_svg_tv(tc.get_layoutD_TV(), (m, k))
    out["nvarch-gmma-k-sw128-f16.svg"] = to_svg(gmma_smem_atom("f16", "k", GmmaLayoutType.B128))
    return out


def _mma_atoms() -> list[MmaAtom]:
    n = 128
    return [
        make_wgmma_atom("f16", "f16", "f32", n),
        make_wgmma_atom("f16", "f16", "f16", n, a_source="rmem"),
        make_wgmma_atom("bf16", "bf16", "f32", n, "mn", "mn"),
        make_wgmma_atom("tf32", "tf32", "f32", n),
        make_wgmma_atom("tf32", "tf32", "f32", n, a_source="rmem"),
        make_wgmma_atom("e4m3", "e5m2", "f32", n),
        make_wgmma_atom("e4m3", "e4m3", "f16", n, a_source="rmem"),
        make_wgmma_atom("s8", "u8", "s32", n),
        make_wgmma_atom("s8", "s8", "s32", n, a_source="rmem"),
        make_mma_sync_atom("f16", "f16", "f32"),
        make_mma_sync_atom("bf16", "bf16", "f32"),
        make_mma_sync_atom("tf32", "tf32", "f32"),
        make_mma_sync_atom("s8", "s8", "s32"),
    ]


def mma_atom_table() -> str:
    """Markdown table of representative MMA atoms and their thread-value layouts."""
    rows = [
        "| atom | PTX | MNK | ThrID | A (thr,val) -> m+M*k | B (thr,val) -> n+N*k | C (thr,val) -> m+M*n |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for a in _mma_atoms():
        mnk = "x".join(map(str, a.shape_mnk))
        rows.append(
            f"| `{a.name}` | `{a.ptx}` | {mnk} | `{a.thr_id}` | `{a.layout_a_tv}` | `{a.layout_b_tv}` "
            f"| `{a.layout_c_tv}` |"
        )
    return "\n".join(rows) + "\n"


def _copy_atoms() -> list[CopyAtom]:
    return [
        make_universal_copy_atom("f16", 128),
        make_cp_async_atom("f16", 16),
        make_ldmatrix_atom("f16", 1),
        make_ldmatrix_atom("f16", 2),
        make_ldmatrix_atom("f16", 4),
        make_ldmatrix_atom("f16", 4, transpose=True),
        make_stmatrix_atom("f16", 4),
        make_stmatrix_atom("f16", 4, transpose=True),
        make_tma_load_atom("f16", 4096, rank=2),
        make_tma_load_atom("f16", 4096, rank=2, multicast=True),
    ]


def copy_atom_table() -> str:
    """Markdown table of copy atoms (value type f16) with their source and destination layouts."""
    rows = [
        "| atom | PTX | ThrID | src (thr,val) -> element | dst (thr,val) -> element |",
        "| --- | --- | --- | --- | --- |",
    ]
    for a in _copy_atoms():
        ptx = f"`{a.ptx}`" if a.ptx else "(plain loads and stores)"
        rows.append(f"| `{a.name}` | {ptx} | `{a.thr_id}` | `{a.layout_src_tv}` | `{a.layout_dst_tv}` |")
    return "\n".join(rows) + "\n"


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        first = message.strip().splitlines()[0] if message.strip() else "bad command line"
        self.exit(2, f"{self.prog}: error: {first} (see --help)\n")


def parser() -> argparse.ArgumentParser:
    """The command line: one output directory."""
    p = _Parser(prog="python -m cute_nvarch.pictures", description=__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog="example:\n  python -m cute_nvarch.pictures docs/img > tables.md")
    p.add_argument("out_dir", type=Path, metavar="DIR",
                   help="directory for the nvarch-*.svg files (default: none, required; example: docs/img)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Write the pictures into a directory and print the tables."""
    args = parser().parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, svg in pictures().items():
        (args.out_dir / name).write_text(svg)
        print(f"wrote {args.out_dir / name}", file=sys.stderr)
    sys.stdout.write(mma_atom_table() + "\n" + copy_atom_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

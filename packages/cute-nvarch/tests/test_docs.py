"""docs/nvarch.md and its pictures are what the package generates."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import cute_nvarch as nv
import pytest
from cute_nvarch.pictures import copy_atom_table, main, mma_atom_table, pictures

DOCS = Path(__file__).resolve().parents[3] / "docs"
pytestmark = pytest.mark.skipif(not (DOCS / "nvarch.md").exists(), reason="docs/ is not beside the package")


def test_pictures_are_up_to_date() -> None:
    for name, svg in pictures().items():
        path = DOCS / "img" / name
        assert path.read_text() == svg, f"{path} is stale: run python -m cute_nvarch.pictures docs/img"


def test_tables_are_up_to_date() -> None:
    text = (DOCS / "nvarch.md").read_text()
    assert mma_atom_table() in text
    assert copy_atom_table() in text
    for name in pictures():
        assert f"img/{name}" in text


def test_pictures_are_well_formed() -> None:
    ns = "{http://www.w3.org/2000/svg}"
    svgs = pictures()
    root = ET.fromstring(svgs["nvarch-wgmma-c-64x16.svg"])
    cells = [r for r in root.iter(f"{ns}rect") if r.get("data-t") is not None]
    assert len(cells) == 64 * 16
    assert {int(r.get("data-t")) for r in cells} == set(range(128))
    assert {(r.get("data-m"), r.get("data-n")) for r in cells if r.get("data-t") == "0"} == {
        ("0", "0"),
        ("0", "1"),
        ("8", "0"),
        ("8", "1"),
        ("0", "8"),
        ("0", "9"),
        ("8", "8"),
        ("8", "9"),
    }
    src = ET.fromstring(svgs["nvarch-ldmatrix-a-src.svg"])
    t0 = sorted(int(r.get("data-n")) for r in src.iter(f"{ns}rect") if r.get("data-t") == "0")
    assert t0 == list(range(8))  # thread 0 reads row 0, columns 0..7 (16 bytes)


def test_descriptor_table_in_docs() -> None:
    text = (DOCS / "nvarch.md").read_text()
    for major, mn, k in (("k", 64, 64), ("k", 128, 64), ("mn", 128, 64), ("mn", 128, 32), ("k", 64, 32)):
        buf = nv.make_gmma_smem_layout("f16", major, mn, k)
        assert f"`{buf}`" in text


def test_cli_writes_pictures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(pictures())
    assert "SM90_64x128x16_F32F16F16_SS" in capsys.readouterr().out

"""Root pytest hooks: add a marker per package from each test's path."""

from __future__ import annotations

from pathlib import Path

import pytest

_ROOT = Path(__file__).parent
_PACKAGE_MARKERS = {
    "cute-layout": "layout",
    "cute-nvarch": "nvarch",
    "cute-ir": "ir",
    "cute-runtime": "runtime",
    "cute-examples": "examples",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(item.fspath).resolve().relative_to(_ROOT).parts
        if parts[0] == "packages" and len(parts) > 1 and parts[1] in _PACKAGE_MARKERS:
            item.add_marker(getattr(pytest.mark, _PACKAGE_MARKERS[parts[1]]))
        elif parts[0] == "tests":
            item.add_marker(pytest.mark.cross)

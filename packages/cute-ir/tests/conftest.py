"""cute-ir tests need the MLIR Python bindings; skip the whole directory without them."""

from __future__ import annotations

import pytest

pytest.importorskip("mlir")

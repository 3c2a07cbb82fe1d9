from __future__ import annotations

import pytest
from cute_runtime import config


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("true", True), ("YES", True), ("0", False), ("", False), ("off", False)],
)
def test_require_gpu(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv("CUTE_REQUIRE_GPU", raw)
    assert config.require_gpu() is expected


def test_require_gpu_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUTE_REQUIRE_GPU", raising=False)
    assert config.require_gpu() is False


def test_require_gpu_bad(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTE_REQUIRE_GPU", "maybe")
    with pytest.raises(ValueError, match="CUTE_REQUIRE_GPU"):
        config.require_gpu()


def test_default_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUTE_DEVICE", raising=False)
    assert config.default_device() is None
    monkeypatch.setenv("CUTE_DEVICE", "3")
    assert config.default_device() == 3
    for bad in ("-1", "gpu0"):
        monkeypatch.setenv("CUTE_DEVICE", bad)
        with pytest.raises(ValueError, match="CUTE_DEVICE"):
            config.default_device()

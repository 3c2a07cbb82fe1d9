from __future__ import annotations

import pytest
from cute_runtime import stream as st


class TorchLikeStream:
    cuda_stream = 0xABC


class ProtocolStream:
    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, 0x1234)


class HandleStream:
    handle = 0x55


def test_stream_handle_forms() -> None:
    assert st.stream_handle(0) == 0
    assert st.stream_handle(0x7F00) == 0x7F00
    assert st.stream_handle(TorchLikeStream()) == 0xABC
    assert st.stream_handle(ProtocolStream()) == 0x1234
    assert st.stream_handle(HandleStream()) == 0x55
    from cuda.bindings import driver

    assert st.stream_handle(driver.CUstream(0x99)) == 0x99


@pytest.mark.parametrize("bad", [True, -1, "s", 1.0, object()])
def test_stream_handle_rejects(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="stream"):
        st.stream_handle(bad)


def test_provider_is_pluggable() -> None:
    try:
        st.set_stream_provider(lambda device: 100 + device)
        assert st.current_stream(2) == 102
        with pytest.raises(TypeError, match="provider"):
            st.set_stream_provider(5)  # type: ignore[arg-type]
    finally:
        st.set_stream_provider(None)
    assert st.current is st._auto


def test_auto_provider_without_torch_cuda() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: this checks the CPU-only path")
    assert st.current_stream(0) == 0

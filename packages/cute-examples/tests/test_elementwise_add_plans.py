"""elementwise_add's plan cache on the CPU, with stand-in tensors on fake devices and a recording launch: a
rotated buffer reuses its plan; a new dtype, stride, alignment class or device makes a new one; each device
gets its own plan and kernel module. Also the joint coalescing of the three layouts, and the catalogue's
coverage of every call the add's GPU tests, checks, benchmark and CLI make."""

from __future__ import annotations

import pytest
import torch
from cute_examples.elementwise_add import host
from cute_examples.elementwise_add.modes import coalesced_modes, kernel_modes, standins

pytest.importorskip("mlir")  # the plans' kernels compile here (no GPU: they are never loaded)


class Fake:
    """What elementwise_add reads of a CUDA tensor, at a made-up address on a made-up device."""

    def __init__(self, shape: tuple, strides: tuple | None = None, ptr: int = 1 << 32, device: int = 0,
                 dtype: torch.dtype = torch.float32) -> None:
        self.shape = torch.Size(shape)
        self._strides = strides or torch.empty(shape, device="meta").stride()
        self.ptr, self.device_index, self.dtype = ptr, device, dtype

    def stride(self) -> tuple:
        return tuple(self._strides)

    def data_ptr(self) -> int:
        return self.ptr

    def get_device(self) -> int:
        return self.device_index

    def element_size(self) -> int:
        return torch.empty((), dtype=self.dtype).element_size()

    def numel(self) -> int:
        return self.shape.numel()

    def expand(self, shape: tuple) -> Fake:
        assert tuple(shape) == tuple(self.shape)
        return self


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list:
    """Checks skipped (they need CUDA tensors), sm_90 everywhere, launches recorded instead of run."""
    from cute_runtime import Kernel

    monkeypatch.delenv("CUTE_BUNDLE_DIR", raising=False)
    monkeypatch.setattr(host, "_check", lambda a, b, out: out)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    calls: list = []
    monkeypatch.setattr(Kernel, "launch", lambda self, grid, *args, **kw: calls.append((self, grid, args)))

    def bound_launch(self: Kernel, grid: int, params: object) -> object:
        # the plan's fast launcher: record what it packed into its parameter block
        unpack = self.layout.struct.unpack_from
        return lambda stream: calls.append((self, grid, unpack(params.buffer, params.base)))

    monkeypatch.setattr(Kernel, "bound_launch", bound_launch)
    host.plans.clear()
    yield calls
    host.plans.clear()


def _call(shape: tuple, ptr: int = 1 << 32, **kw: object) -> host.Plan:
    a, b, c = (Fake(shape, ptr=ptr + i * (1 << 28), **kw) for i in range(3))
    host.elementwise_add(a, b, c)
    return host.plans[host._key(a, b, c)]


def test_rotated_buffers_share_a_plan(launches: list) -> None:
    first = _call((100, 10007))
    again = _call((100, 10007), ptr=1 << 33)
    third = _call((100, 10007), ptr=1 << 34)
    assert again is first is third and len(host.plans) == 1
    assert first.modes == (100 * 10007,) and first.grid == -(-100 * 10007 // 512)  # one 1-D range
    (k0, g0, args0), (k1, g1, args1), (_, _, args2) = launches  # checked launch, then the bound launcher
    assert k0 is k1 and g0 == g1 == first.grid
    n = 100 * 10007
    assert args0 == (1 << 32, n, (1 << 32) + (1 << 28), n, (1 << 32) + (2 << 28), n)
    assert args1 == (1 << 33, n, (1 << 33) + (1 << 28), n, (1 << 33) + (2 << 28), n)  # the call's own addresses
    assert args2[0] == 1 << 34


def test_a_hit_is_key_lookup_and_launch(launches: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first call, a rotated buffer set runs no check, coalescing or specialization."""
    _call((64, 64))

    def no_miss(*args: object) -> None:
        raise AssertionError("a hit reached plan_for")

    monkeypatch.setattr(host, "plan_for", no_miss)
    _call((64, 64), ptr=1 << 34)
    _call((64, 64), ptr=1 << 35)
    assert len(launches) == 3 and launches[2][2][0] == 1 << 35


def test_each_key_field_makes_a_new_plan(launches: list) -> None:
    base = _call((64, 64))
    others = [
        _call((64, 64), dtype=torch.float16),  # dtype
        _call((64, 64), strides=(65, 1)),  # a stride
        _call((64, 64), ptr=(1 << 32) + 4),  # alignment class of the addresses
        _call((64, 64), device=1),  # device
    ]
    assert len(host.plans) == 5 and len({id(p) for p in [base, *others]}) == 5
    assert others[1].modes == (64, 64)  # padded rows keep two modes
    assert [t["align"] for t in others[2].spec["args"][:3]] == [4, 4, 4]


def test_each_device_gets_its_own_plan_and_module(launches: list) -> None:
    p0, p1 = _call((32, 32), device=0), _call((32, 32), device=1)
    assert p0 is not p1 and p0.spec == p1.spec
    assert p0.kernel is not p1.kernel  # one Kernel, hence one loaded module, per device
    assert (p0.kernel.device, p1.kernel.device) == (0, 1)
    assert [k.device for k, _, _ in launches] == [0, 1]


def test_empty_tensors_launch_nothing(launches: list) -> None:
    assert _call((0, 5)).kernel is None and launches == []


def test_joint_coalescing() -> None:
    # contiguous (M, N) of any N: one mode
    assert coalesced_modes((10000, 10007), [(10007, 1)] * 3) == ((100070000,), [(1,)] * 3)
    # size-1 modes drop out; a padded output keeps two modes for all three
    assert coalesced_modes((1, 300, 1, 7), [(2100, 7, 7, 1)] * 3) == ((2100,), [(1,)] * 3)
    assert coalesced_modes((300, 7), [(7, 1), (7, 1), (8, 1)]) == ((300, 7), [(7, 1), (7, 1), (8, 1)])
    # every other element of a contiguous range is one mode of stride 2; broadcast modes merge as stride 0
    assert coalesced_modes((30, 7), [(14, 2), (0, 0), (7, 1)]) == ((210,), [(2,), (0,), (1,)])
    assert coalesced_modes((1, 1), [(1, 1)] * 3) == ((1,), [(1,)] * 3)
    # a range too long for i32 coordinates splits at the last extent
    assert kernel_modes("float32", (2**20, 2**12), [(2**12, 1)] * 3) == ((2**20, 2**12), [(2**12, 1)] * 3)
    with pytest.raises(ValueError, match="3 modes after merging"):
        kernel_modes("float32", (4, 5, 6), [(200, 30, 2)] * 3)
    _, args = standins("bfloat16", (10000, 10007), [(10007, 1)] * 3, 16)
    assert [a.info.shape for a in args] == [(100070000,)] * 3


def test_catalogue_covers_every_call_of_the_add() -> None:
    """Every case of elementwise_add.cases specializes to a kernel the catalogue (hence the bundle) holds."""
    from cute_examples.catalogue import _elementwise
    from cute_examples.elementwise_add.cases import cases
    from cute_examples.elementwise_add.kernel import add_kernel
    from cute_nvarch.kernel_spec import canonical_spec

    listed = {canonical_spec(add_kernel.specialize(*fn.args)[0]) for _, fn in _elementwise("sm_90a")}
    labels = [label for label, _ in _elementwise("sm_90a")]
    assert labels[:2] == ["elementwise_add float32 vec i32", "elementwise_add float32 vec i64"]
    assert len(labels) == len(set(labels))
    for case in cases():
        if 0 in case.out.shape:
            continue
        nbytes = torch.empty((), dtype=getattr(torch, case.dtype)).element_size()
        align = min(t.address_align(nbytes) for t in (case.a, case.b, case.out))
        args = standins(case.dtype, case.out.shape, [t.stride for t in (case.a, case.b, case.out)], align)[1]
        assert canonical_spec(add_kernel.specialize(*args)[0]) in listed, case.label

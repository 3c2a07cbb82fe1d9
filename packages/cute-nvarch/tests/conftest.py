"""Check the acceptance properties on every TiledMma and TiledCopy that any test builds.

Every public constructor of TiledMma and TiledCopy is wrapped while a test runs; afterwards each object it
returned is checked once per session: each element of C is owned by exactly one (thread, value), and each
element of a TiledCopy's tile is moved exactly once (once per replica when the layout broadcasts a tile
to several thread groups, as an A tile to the warps along N).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import cute_nvarch as nv
import pytest
from cute_layout import Layout, flatten, size

_CHECKED: set[object] = set()
_CONSTRUCTORS = (
    "make_tiled_mma",
    "make_tiled_copy",
    "make_tiled_copy_tv",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    "make_tma_copy",
)


def _leaves(x: object) -> tuple:
    f = flatten(x)
    return f if isinstance(f, tuple) else (f,)


def check_tiled_mma(tm: nv.TiledMma) -> None:
    """Each element of the tiled MMA's C tile is owned by exactly one (thread, value)."""
    m, n, _ = tm.tile_shape_mnk
    counts: Counter = Counter()
    for tid in range(tm.num_threads):
        part, off = tm.get_slice(tid).partition_C_and_offset(Layout((m, n)))
        counts.update(off + part(i) for i in range(size(part)))
    assert counts == Counter(range(m * n)), f"{tm}: C is not owned exactly once"


def check_tiled_copy(tc: nv.TiledCopy) -> None:
    """Each element of the tile is moved exactly once (per replica of a broadcast thread layout)."""
    tile = size(Layout(tc.tiler_mn))
    ref = tc.layout_tv
    counts = Counter(ref(i) for i in range(size(ref)))
    replicas = size(ref) // tile
    broadcast = any(
        d == 0 and s > 1 for s, d in zip(_leaves(ref[0].shape), _leaves(ref[0].stride), strict=True)
    )
    assert replicas == 1 or broadcast, f"{tc}: {replicas} values per element without a broadcast thread mode"
    assert counts == Counter({e: replicas for e in range(tile)}), f"{tc}: the tile is not moved exactly once"
    for side, atom_layout in (("D", tc.atom.layout_dst_tv), ("S", tc.atom.layout_src_tv)):
        if len({atom_layout(i) for i in range(size(atom_layout))}) != size(atom_layout):
            continue  # this side broadcasts addresses (ldmatrix .x1/.x2 shared-memory side)
        seen: Counter = Counter()
        for tid in range(tc.num_threads):
            thr = tc.get_slice(tid)
            part, off = (thr.partition_D_and_offset if side == "D" else thr.partition_S_and_offset)(
                Layout(tc.tiler_mn)
            )
            seen.update(off + part(i) for i in range(size(part)))
        assert seen == counts, f"{tc}: side {side} does not move each element exactly once"


@pytest.fixture(autouse=True)
def _check_every_tiled_object(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    built: list[object] = []

    def wrap(fn: object) -> object:
        def recorder(*args: object, **kwargs: object) -> object:
            obj = fn(*args, **kwargs)  # type: ignore[operator]
            built.append(obj)
            return obj

        return recorder

    for name in _CONSTRUCTORS:
        monkeypatch.setattr(nv, name, wrap(getattr(nv, name)))
    yield
    for obj in built:
        key = (type(obj).__name__, str(obj))
        if key in _CHECKED:
            continue
        _CHECKED.add(key)
        if isinstance(obj, nv.TiledMma):
            check_tiled_mma(obj)
        elif isinstance(obj, nv.TiledCopy):
            check_tiled_copy(obj)

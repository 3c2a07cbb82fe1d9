"""Where the GEMM's CTA tiles start (`GemmConfig.tile_origin`, the arithmetic the kernel emits on run-time values):
the tiles cover the problem, an edge tile shifted inside it stays in bounds and aligned where it must, and only
configs that allow the shift shift. No MLIR."""

from __future__ import annotations

import dataclasses
import random

from cute_examples.dense_gemm.configs import every_config
from cute_examples.dense_gemm.spec import EDGE_ALIGN, GemmConfig


def _variants(cfg: GemmConfig) -> list[GemmConfig]:
    """cfg with an input addend, with a bias along M and along N (those that are valid configs)."""
    out = [cfg]
    for fields in ({"has_input": True}, {"bias": "m"}, {"bias": "n"}):
        try:
            out.append(dataclasses.replace(cfg, **fields))
        except ValueError:
            pass
    return out


def _check(cfg: GemmConfig, mode: int, extent: int) -> None:
    size = (cfg.tile_m, cfg.tile_n)[mode]
    tiles = -(-extent // size)
    covered = [False] * extent
    # one tile past the grid: a cluster's CTA beyond the matrix takes the same origin rule
    for idx in range(tiles + 1):
        start = idx * size
        origin = cfg.tile_origin(mode, idx, extent)
        assert origin >= 0
        if origin != start:
            assert cfg.clamped_edges[mode], (cfg.name, mode, extent, idx)
            assert extent >= size and origin == extent - size  # the last whole tile inside the problem
            assert start + size > extent  # only an edge tile moves
            if cfg.edge_aligned[mode]:
                assert origin % EDGE_ALIGN == 0
        elif cfg.clamped_edges[mode] and extent >= size and start + size > extent:
            # an edge tile that stays where it was: only where its shift would be unaligned
            assert cfg.edge_aligned[mode] and (extent - size) % EDGE_ALIGN
        if idx < tiles:
            for i in range(origin, min(origin + size, extent)):
                covered[i] = True
    assert all(covered), (cfg.name, mode, extent)


def test_tiles_cover_the_problem_and_edge_tiles_stay_inside():
    rng = random.Random(7)
    configs = every_config()
    assert len(configs) > 1000
    checked = 0
    for cfg in rng.sample(configs, 300):
        for v in _variants(cfg):
            for mode in (0, 1):
                size = (v.tile_m, v.tile_n)[mode]
                for extent in {1, size - 1, size, size + 1, 2 * size + 16, rng.randrange(1, 4000)}:
                    if extent >= 1:
                        _check(v, mode, extent)
                        checked += 1
    assert checked > 3000


def test_which_configs_shift_their_edge_tiles():
    cfg = next(c for c in every_config() if c.a_major == "k" and c.c_major == "n" and c.tile_m == 128)
    assert cfg.clamped_edges == (True, True) and cfg.edge_aligned == (False, True)
    # M: any shift (A's and C's M is an outer mode); N is contiguous in C: only 16-element multiples
    assert cfg.tile_origin(0, 3, 400) == 400 - 128
    assert cfg.tile_origin(1, 7, 1001) == 7 * cfg.tile_n  # 1001 - tile_n is not a multiple of 16: unshifted
    assert cfg.tile_origin(1, -(-784 // cfg.tile_n) - 1, 784) == 784 - cfg.tile_n
    # an input addend may be out itself: no shift; a bias along M needs the aligned shift
    assert dataclasses.replace(cfg, has_input=True).clamped_edges == (False, False)
    assert dataclasses.replace(cfg, bias="m").tile_origin(0, 3, 404) == 3 * 128  # 276 is not a multiple of 16
    assert dataclasses.replace(cfg, bias="m").tile_origin(0, 3, 416) == 416 - 128

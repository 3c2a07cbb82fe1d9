"""Memoization: repeated pure calls on static arguments are served from a cache."""

from __future__ import annotations

import cute_layout as cl
import pytest
from cute_layout import Layout, memoize


def test_repeated_calls_return_the_cached_result() -> None:
    cl.clear_caches()
    a, b = Layout((8, 8), (8, 1)), Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))
    r1 = cl.composition(a, b)
    r2 = cl.composition(a, b)
    assert r1 is r2
    # equal but distinct arguments hit the same entry
    r3 = cl.composition(Layout((8, 8), (8, 1)), Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))))
    assert r3 is r1
    assert cl.cache_sizes()["cute_layout.algebra.composition"] == 1
    z1 = cl.zipped_divide(Layout((4096, 4096), (4096, 1)), (Layout(16, 1), Layout(128, 1)))
    z2 = cl.zipped_divide(Layout((4096, 4096), (4096, 1)), (Layout(16, 1), Layout(128, 1)))
    assert z1 is z2


def test_clear_caches_empties_every_cache() -> None:
    cl.composition(Layout((4, 8), (1, 16)), Layout(8, 2))
    assert sum(cl.cache_sizes().values()) > 0
    cl.clear_caches()
    assert sum(cl.cache_sizes().values()) == 0
    assert cl.complement(Layout((4, 8), (1, 16)), 1024) == Layout((4, 8), (4, 128))


def test_layout_hash_is_cached_and_value_based() -> None:
    a = Layout((4, (2, 3)), (1, (4, 8)))
    h = hash(a)
    assert a._h == h and hash(a) == h
    assert hash(Layout((4, (2, 3)), (1, (4, 8)))) == h


def test_memoize_decorator_counts_calls_and_skips_unhashable_or_runtime_args() -> None:
    calls = []

    @memoize
    def f(x: object, y: object = 0) -> object:
        calls.append((x, y))
        return (x, y)

    assert f(3) == (3, 0) and f(3) == (3, 0)
    assert len(calls) == 1
    assert f((1, 2), y=5) == ((1, 2), 5) and f((1, 2), y=5) == ((1, 2), 5)
    assert len(calls) == 2
    f([1, 2])  # not static: computed every time
    f([1, 2])
    assert len(calls) == 4
    f(1.5)
    f(1.5)
    assert len(calls) == 6


def test_equal_but_non_int_arguments_do_not_hit_int_entries() -> None:
    layout = Layout(4, 1)
    assert cl.complement(layout, 2) == Layout(1, 0)
    with pytest.raises(TypeError):
        cl.complement(layout, 2.0)
    assert cl.logical_divide(Layout(8, 1), 2) == Layout((2, 4), (1, 2))
    with pytest.raises(TypeError):
        cl.logical_divide(Layout(8, 1), True)


def test_single_operand_results_are_kept_on_the_layout() -> None:
    # coalesce, right/left inverse and complement by an int cotarget are kept on the (immutable) layout:
    # a first call pays no cache key, a repeated call on the same layout is an attribute read
    a = Layout((4, 8), (1, 16))
    assert cl.coalesce(a) is cl.coalesce(a) and cl.right_inverse(a) is cl.right_inverse(a)
    assert cl.left_inverse(a) is cl.left_inverse(a)
    assert cl.complement(a, 1024) is cl.complement(a, 1024) == Layout((4, 8), (4, 128))
    assert cl.complement(a, 1024) == cl.complement(Layout((4, 8), (1, 16)), 1024)

"""The builder vocabulary: one const/as_value, while_ with carried values, special registers in one place."""

from __future__ import annotations

import pytest

pytest.importorskip("mlir")

from _ir_host import HostInt  # noqa: E402
from cute_ir import special  # noqa: E402
from cute_ir.control import for_, if_values, while_  # noqa: E402
from cute_ir.values import Int, as_value, const  # noqa: E402
from mlir import ir  # noqa: E402


def test_while_with_carried_values_runs_on_the_cpu():
    """gcd(a, b) by Euclid's loop: carried Ints in, carried Ints out, the condition reads them."""

    def build(a, b):
        def body(x, y):
            return [y, x % y]

        x, y = while_(lambda x, y: y != 0, body, init=[Int(a), Int(b)])
        assert isinstance(x, Int) and isinstance(y, Int)
        return [x]

    run = HostInt(2, [32], build)
    for a, b in ((12, 18), (17, 5), (0, 9), (9, 0), (2**30, 3 * 2**20)):
        import math

        assert run(a, b) == (math.gcd(a, b),)


def test_while_spin_loop_and_carried_count_mismatch():
    def build(a):
        (n,) = while_(lambda n: n < 100, lambda n: [n * 2 + 1], init=[Int(a)])
        (m,) = for_(0, 3, 1, lambda i, acc: [acc + i], init=[n], bits=32)
        (p,) = if_values(m > 200, [m.type], lambda: [m], lambda: [m + 1000])
        return [p]

    run = HostInt(1, [32], build)
    assert run(1) == (127 + 3 + 1000,)
    assert run(150) == (150 + 3 + 1000,)
    assert run(300) == (300 + 3,)

    def bad(a):
        while_(lambda n: n < 1, lambda n: [], init=[Int(a)])
        return [a]

    with pytest.raises(ValueError, match="while_: body must return 1 carried values, got 0"):
        HostInt(1, [32], bad)

    def mixed(a):
        # int bounds give an index induction variable: acc + i widens the carried i32 to i64
        for_(0, 3, 1, lambda i, acc: [acc + i], init=[Int(a)])
        return [a]

    with pytest.raises(TypeError, match="for_: body returns"):
        HostInt(1, [32], mixed)


def test_const_takes_signed_values_and_bit_patterns():
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(m.body):
            assert str(const(-1, i32).owner.attributes["value"]) == "-1 : i32"
            # a bit pattern (descriptor half) is stored two's-complement
            assert str(const(0xFFFFFFFF, i32).owner.attributes["value"]) == "-1 : i32"
            assert str(const(1 << 31, i32).owner.attributes["value"]) == "-2147483648 : i32"
            for bad in (1 << 32, -(1 << 31) - 1):
                with pytest.raises(ValueError, match="does not fit"):
                    const(bad, i32)
            with pytest.raises(ValueError, match="does not fit"):
                const(1 << 63, ir.IndexType.get())
            # as_value casts as Int.cast does: sign extension
            v = as_value(const(-5, i32), ir.IntegerType.get_signless(64))
            assert v.owner.name == "arith.extsi"


def test_special_registers_have_one_definition():
    """cute_ir.kernel and cute_ir.hopper re-export cute_ir.special's builders (the same objects)."""
    from cute_ir import hopper as H
    from cute_ir import kernel

    for name in ("thread_idx", "block_idx", "grid_dim", "lane_idx", "warp_idx", "barrier", "dynamic_smem",
                 "cluster_ctarank", "block_idx_in_cluster", "cluster_idx"):
        assert getattr(kernel, name) is getattr(special, name), name
    for h, s in (("thread_idx", "thread_idx"), ("block_in_cluster", "block_idx_in_cluster"),
                 ("cluster_id", "cluster_idx"), ("cluster_cta_rank", "cluster_ctarank"),
                 ("num_clusters", "num_clusters"), ("warp_idx", "warp_idx"), ("elect_one", "elect_one"),
                 ("block_dim", "block_dim"), ("cluster_dim", "cluster_dim")):
        assert getattr(H, h) is getattr(special, s), h

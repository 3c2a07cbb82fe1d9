"""The mbarrier pipeline: a model of PTX mbarrier semantics driving the protocol, its IR, and its PTX."""

from __future__ import annotations

import random

import pytest
from cute_ir import Int, as_value, select
from cute_ir import hopper as H
from cute_ir.hopper.pipeline import PipelineSpec, release_targets, releases_to, stage_and_phase
from cute_ir.types import I32
from hypothesis import given, settings
from hypothesis import strategies as st


class MBarrier:
    """PTX mbarrier: pending arrivals and tx-count of the current phase; phase completes at (0, 0)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pending = count
        self.tx = 0
        self.phase = 0  # number of completed phases

    def _maybe_complete(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def arrive(self) -> None:
        assert self.pending > 0
        self.pending -= 1
        self._maybe_complete()

    def arrive_expect_tx(self, nbytes: int) -> None:
        self.tx += nbytes
        self.arrive()

    def complete_tx(self, nbytes: int) -> None:
        self.tx -= nbytes
        self._maybe_complete()

    def try_wait_parity(self, parity: int) -> bool:
        # true when the phase of this parity has completed: the current phase's parity differs
        return (self.phase & 1) != parity


def simulate(stages: int, consumers: int, iters: int, seed: int, tx_chunks: int = 2, flip: int = 1) -> None:
    """Producer + `consumers` consumers over `iters` loads, randomly interleaved; asserts safety."""
    rng = random.Random(seed)
    full = [MBarrier(1) for _ in range(stages)]
    empty = [MBarrier(consumers) for _ in range(stages)]
    data = [None] * stages  # which iteration's data each stage holds
    readers = [set() for _ in range(stages)]  # consumers still reading a stage
    in_flight = []  # (stage, iteration, bytes) TMA transfers not yet landed
    prod = {"it": 0, "state": "acquire"}
    cons = [{"it": 0, "state": "wait"} for _ in range(consumers)]
    steps = 0
    while prod["it"] < iters or any(c["it"] < iters for c in cons) or in_flight:
        steps += 1
        assert steps < 100000, "deadlock"
        actors = ["tma"] if in_flight else []
        if prod["it"] < iters:
            actors.append("p")
        actors += [i for i, c in enumerate(cons) if c["it"] < iters]
        who = rng.choice(actors)
        if who == "tma":
            s, it, nbytes = in_flight.pop(rng.randrange(len(in_flight)))
            assert not readers[s], "TMA overwrote a stage a consumer was reading"
            data[s] = it
            full[s].complete_tx(nbytes)
        elif who == "p":
            s, ph = stage_and_phase(prod["it"], stages)
            if prod["state"] == "acquire":
                if empty[s].try_wait_parity(ph ^ flip):
                    prod["state"] = "issue"
            else:
                # expect-tx then issue the copies (which may land before or after, in pieces)
                full[s].arrive_expect_tx(tx_chunks * 8)
                in_flight.extend((s, prod["it"], 8) for _ in range(tx_chunks))
                prod["it"] += 1
                prod["state"] = "acquire"
        else:
            c = cons[who]
            s, ph = stage_and_phase(c["it"], stages)
            if c["state"] == "wait":
                if full[s].try_wait_parity(ph):
                    assert data[s] == c["it"], f"consumer {who} read iteration {data[s]} for {c['it']}"
                    assert not any(x[0] == s for x in in_flight), "consumer woke before its data landed"
                    readers[s].add(who)
                    c["state"] = "read"
            else:
                readers[s].discard(who)
                empty[s].arrive()
                c["it"] += 1
                c["state"] = "wait"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 3), st.integers(1, 40), st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_pipeline_protocol_is_safe_and_live(stages, consumers, iters, seed, chunks):
    simulate(stages, consumers, iters, seed, chunks)


def test_model_catches_a_wrong_producer_parity():
    """Control: waiting on `phase` instead of `phase ^ 1` deadlocks at the first acquire (the model bites)."""
    with pytest.raises(AssertionError, match="deadlock"):
        simulate(2, 1, 8, 0, flip=0)


def test_stage_phase_ir_matches_python(host_int):
    """The emitted (stage, phase) arithmetic equals stage_and_phase for many iterations and stage counts."""
    from mlir import ir

    for stages in (1, 2, 3, 4, 6, 7, 8):

        def build(it, stages=stages):
            with ir.InsertionPoint.current:
                pipe = H.TmaPipeline(H.PipelineSpec(stages, 1024, 1), None)
            return [as_value(x, I32()) for x in pipe.stage_phase(it)]  # stages=1: stage is the int 0

        run = host_int(1, [32, 32], build)
        for it in list(range(50)) + [2**20 + 3, 2**31 - 1]:
            assert run(it) == stage_and_phase(it, stages)


def test_release_rule_ir_matches_python(host_int):
    """releases_to emitted on Ints (what release_group predicates on) equals its Python-int answer."""
    for cluster in ((2, 1), (1, 2), (2, 2), (4, 2), (1, 4)):
        run = host_int(
            3, [32], lambda t, m, n, cluster=cluster: [select(releases_to(Int(t), Int(m), Int(n), cluster), 1, 0)]
        )
        cm, cn = cluster
        for m in range(cm):
            for n in range(cn):
                got = [d for d in range(128) if run(d, m, n) == (1,)]
                assert got == release_targets(m, n, cluster)
                assert len(got) == cm + cn - 1


def test_pipeline_spec_for_groups_counts_every_release():
    """Each empty barrier counts one arrival per consumer group of every CTA that releases to it."""
    for cluster in ((1, 1), (2, 1), (1, 2), (2, 2), (4, 2)):
        spec = PipelineSpec.for_groups(4, 1024, 2, cluster)
        cm, cn = cluster
        for x in range(cm):
            for y in range(cn):
                senders = [(a, b) for a in range(cm) for b in range(cn) if x + y * cm in release_targets(a, b, cluster)]
                assert 2 * len(senders) == spec.consumer_arrivals
    with pytest.raises(ValueError, match="release_scope"):
        PipelineSpec(2, 1024, 1, release_scope="gpu")
    with pytest.raises(ValueError, match="cluster"):
        PipelineSpec(2, 1024, 1, cluster=(4, 8))
    with pytest.raises(ValueError, match="consumer_groups"):
        PipelineSpec.for_groups(2, 1024, 0)
    with pytest.raises(ValueError, match="not in a 2 x 1 cluster"):
        release_targets(0, 1, (2, 1))


def test_pipeline_spec_validation():
    with pytest.raises(ValueError, match="stages"):
        H.PipelineSpec(0, 1024, 1)
    with pytest.raises(ValueError, match="tx_bytes"):
        H.PipelineSpec(2, 1 << 20, 1)
    with pytest.raises(ValueError, match="consumer_arrivals"):
        H.PipelineSpec(2, 1024, 0)
    assert H.PipelineSpec(4, 1024, 2).smem_bytes == 64
    with pytest.raises(ValueError):
        stage_and_phase(-1, 2)


def test_pipeline_ptx(compile_kernel, ptx_lines):
    """init (one thread) + fence; producer acquire/commit; consumer wait/release, local and remote; tail."""
    spec = H.PipelineSpec(stages=3, tx_bytes=24576, consumer_arrivals=2)

    def body(k):
        base = H.dynamic_smem_base(1024)
        pipe = H.TmaPipeline(spec, base)
        pipe.init(k.thread_idx(0) == 0)
        H.cluster_arrive(relaxed=True)
        H.cluster_wait()
        it = k.arg("it")
        stage, phase = pipe.stage_phase(it)
        pipe.producer_acquire(stage, phase)
        pipe.producer_commit(stage)
        pipe.consumer_wait(stage, phase)
        pipe.consumer_release(stage)
        pipe.consumer_release_cluster(stage, 1)
        pipe.producer_tail(it)

    art = compile_kernel(
        "pipe", [("it", "i32")], body, block=(128, 1, 1), cluster=(2, 1, 1), dynamic_smem=2048
    )
    lines = ptx_lines(art.ptx)
    inits = [ln for ln in lines if ln.startswith("mbarrier.init.shared.b64")]
    assert len(inits) == 6
    assert lines.index("fence.mbarrier_init.release.cluster;") > max(lines.index(x) for x in inits)
    assert any(ln.startswith("mbarrier.arrive.expect_tx.shared.b64") for ln in lines)
    waits = [ln for ln in lines if ln.startswith("mbarrier.try_wait.parity.shared.b64")]
    assert len(waits) == 2 + spec.stages  # acquire, wait, and one per stage in the tail
    assert any(ln.startswith("mbarrier.arrive.shared.b64") for ln in lines)
    assert any(ln.startswith("mapa.shared::cluster.u64") for ln in lines)
    # the remote release is CTA-scoped (CUTLASS's ClusterBarrier::arrive): no .release.cluster, whose
    # MEMBAR.ALL.GPU would stall every K-tile
    assert any(ln.startswith("mbarrier.arrive.shared::cluster.b64 _,") for ln in lines)
    assert not any(ln.startswith("mbarrier.arrive.release.cluster") for ln in lines)
    assert ".reqnctapercluster 2, 1, 1" in art.ptx or ".explicitcluster" in art.ptx


@pytest.mark.parametrize("scope", ["cta", "cluster"])
def test_remote_release_scope(compile_kernel, ptx_lines, scope):
    """consumer_release_cluster(scope=...) picks the arrive's release scope; a bad scope is refused."""
    spec = H.PipelineSpec(stages=2, tx_bytes=1024, consumer_arrivals=1)

    def body(k):
        pipe = H.TmaPipeline(spec, H.dynamic_smem_base(1024))
        pipe.consumer_release_cluster(k.arg("s"), 1, scope)

    art = compile_kernel("rel", [("s", "i32")], body, block=(128, 1, 1), cluster=(2, 1, 1), dynamic_smem=2048)
    arrives = [ln for ln in ptx_lines(art.ptx) if ln.startswith("mbarrier.arrive")]
    want = "mbarrier.arrive.shared::cluster.b64" if scope == "cta" else "mbarrier.arrive.release.cluster"
    assert len(arrives) == 1 and arrives[0].startswith(want), arrives


def test_remote_release_rejects_unknown_scope(compile_kernel):
    spec = H.PipelineSpec(stages=2, tx_bytes=1024, consumer_arrivals=1)

    def body(k):
        H.TmaPipeline(spec, H.dynamic_smem_base(1024)).consumer_release_cluster(k.arg("s"), 1, "gpu")

    with pytest.raises(ValueError, match="scope must be one of"):
        compile_kernel("rel", [("s", "i32")], body, block=(128, 1, 1), cluster=(2, 1, 1), dynamic_smem=2048)


def simulate_cluster(
    cm: int, cn: int, nc: int, stages: int, iters: int, seed: int, arrivals: int | None = None
):
    """The GEMM's multicast protocol on a cm x cn cluster: CTA (x, y) loads A share y for its row and
    B share x for its column; each CTA expects full A + B bytes; consumers release to every CTA of
    their row and column."""
    rng = random.Random(seed)
    ctas = [(x, y) for y in range(cn) for x in range(cm)]
    rank = {c: c[0] + c[1] * cm for c in ctas}
    a_bytes, b_bytes = 16 * cn, 16 * cm  # one 16-byte share per multicast source
    spec = PipelineSpec.for_groups(stages, a_bytes + b_bytes, nc, (cm, cn))
    count = spec.consumer_arrivals if arrivals is None else arrivals
    full = {c: [MBarrier(1) for _ in range(stages)] for c in ctas}
    empty = {c: [MBarrier(count) for _ in range(stages)] for c in ctas}
    landed = {c: [set() for _ in range(stages)] for c in ctas}  # (iteration, source, operand) shares in smem
    reading = {c: [set() for _ in range(stages)] for c in ctas}
    in_flight = []  # (dst cta, stage, iteration, src cta, operand)
    prod = {c: {"it": 0, "state": "acquire"} for c in ctas}
    cons = {(c, g): {"it": 0, "state": "wait"} for c in ctas for g in range(nc)}
    steps = 0
    while (
        any(p["it"] < iters for p in prod.values())
        or any(v["it"] < iters for v in cons.values())
        or in_flight
    ):
        steps += 1
        assert steps < 200000, "deadlock"
        actors = (["tma"] if in_flight else []) + [("p", c) for c in ctas if prod[c]["it"] < iters]
        actors += [("c", key) for key, v in cons.items() if v["it"] < iters]
        who = rng.choice(actors)
        if who == "tma":
            dst, s, it, src, op = in_flight.pop(rng.randrange(len(in_flight)))
            assert not reading[dst][s], f"multicast from {src} overwrote stage {s} of {dst} while it was read"
            landed[dst][s] = {x for x in landed[dst][s] if x[0] == it}
            landed[dst][s].add((it, src, op))
            full[dst][s].complete_tx(16)
        elif who[0] == "p":
            c = who[1]
            p = prod[c]
            s, ph = stage_and_phase(p["it"], stages)
            if p["state"] == "acquire":
                if empty[c][s].try_wait_parity(ph ^ 1):
                    p["state"] = "issue"
            else:
                full[c][s].arrive_expect_tx(a_bytes + b_bytes)
                x, y = c
                in_flight += [((x, yy), s, p["it"], c, "A") for yy in range(cn)]  # A share to the row
                in_flight += [((xx, y), s, p["it"], c, "B") for xx in range(cm)]  # B share to the column
                p["it"] += 1
                p["state"] = "acquire"
        else:
            c, g = who[1]
            v = cons[(c, g)]
            s, ph = stage_and_phase(v["it"], stages)
            if v["state"] == "wait":
                if full[c][s].try_wait_parity(ph):
                    x, y = c
                    want = {(v["it"], (x, yy), "A") for yy in range(cn)} | {
                        (v["it"], (xx, y), "B") for xx in range(cm)
                    }
                    assert landed[c][s] == want, (
                        f"{c} consumer {g} saw {landed[c][s]} for iteration {v['it']}"
                    )
                    reading[c][s].add(g)
                    v["state"] = "read"
            else:
                reading[c][s].discard(g)
                # the pipeline block's release rule: the CTAs of this CTA's cluster row and column
                for d in ctas:
                    if rank[d] in release_targets(c[0], c[1], (cm, cn)):
                        empty[d][s].arrive()
                v["it"] += 1
                v["state"] = "wait"


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([(1, 1), (2, 1), (1, 2), (2, 2)]),
    st.integers(1, 2),
    st.integers(1, 4),
    st.integers(1, 12),
    st.integers(0, 2**32 - 1),
)
def test_cluster_multicast_protocol_is_safe_and_live(cluster, nc, stages, iters, seed):
    simulate_cluster(cluster[0], cluster[1], nc, stages, iters, seed)


def test_cluster_model_catches_too_few_empty_arrivals():
    """Control: counting only local consumers (nc) lets a remote multicast overwrite a stage being read."""
    with pytest.raises(AssertionError):
        for seed in range(200):
            simulate_cluster(2, 2, 1, 1, 6, seed, arrivals=1)


@pytest.mark.parametrize("scope", ["cta", "cluster"])
def test_release_group_ptx(compile_kernel, ptx_lines, scope):
    """release_group in a 2 x 2 cluster: one predicated remote arrive (mapa + arrive) at the spec's scope;
    the CTA-scope release has no GPU-wide fence."""
    spec = PipelineSpec.for_groups(2, 1024, 2, (2, 2), release_scope=scope)
    assert spec.consumer_arrivals == 2 * 3

    def body(k):
        pipe = H.TmaPipeline(spec, H.dynamic_smem_base(1024))
        tid = k.thread_idx(0)
        pipe.release_group(k.arg("s"), tid % 128, H.block_in_cluster(0), H.block_in_cluster(1))

    art = compile_kernel("relg", [("s", "i32")], body, block=(128, 1, 1), cluster=(2, 2, 1), dynamic_smem=2048)
    lines = ptx_lines(art.ptx)
    arrives = [ln for ln in lines if ln.startswith("mbarrier.arrive")]
    assert len(arrives) == 1 and any(ln.startswith("mapa.shared::cluster") for ln in lines)
    if scope == "cta":
        assert arrives[0].startswith("mbarrier.arrive.shared::cluster.b64")
        assert not any("membar" in ln or "fence.acq_rel.gpu" in ln for ln in lines)
    else:
        assert arrives[0].startswith("mbarrier.arrive.release.cluster")

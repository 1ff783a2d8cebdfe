"""Preemption's shortlist, as kube-scheduler's DefaultPreemption draws it: the dry run stops once it has
numCandidates = max(potential * 10 / 100, 100) candidates (at most the potential nodes: those whose failure an
eviction may resolve), and the preemptor goes to the best of those. kubedra walks the nodes in order from the
first (upstream starts at a random offset); below 100 potential nodes every node is tried, as before."""

from __future__ import annotations

import pytest
from allocator.helpers import cls, dev, req, slice_
from hypothesis import given
from hypothesis import strategies as st

from kubedra.allocator.session import engine_config
from kubedra.k8s import versions
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import (
    Container,
    DeviceClaim,
    Node,
    ObjectMeta,
    Pod,
    PodResourceClaim,
    ResourceClaimTemplate,
    Taint,
)
from kubedra.scheduler import preemption
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.preemption import num_candidates
from kubedra.scheduler.shortlist import Shortlist
from kubedra.scheduler.simulator import Scheduler


@pytest.mark.parametrize("release", versions.SUPPORTED)
@pytest.mark.parametrize(
    ("potential", "expected"),
    [
        (0, 0),
        (1, 1),
        (99, 99),
        (100, 100),
        (150, 100),
        (1000, 100),
        (1009, 100),
        (1010, 101),
        (100_000, 10_000),
    ],
)
def test_num_candidates_is_upstreams_formula(release, potential, expected):
    # calculateNumCandidates: n = numNodes * 10 / 100 (integer), at least 100, at most numNodes
    assert num_candidates(potential, release) == expected


@given(
    keys=st.dictionaries(st.integers(0, 40), st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=41),
    removed=st.sets(st.integers(0, 40)),
    k=st.integers(0, 45),
)
def test_shortlist_gives_the_best_of_the_first_k_candidates(keys, removed, k):
    tree = Shortlist(41)
    for i, key in keys.items():
        tree.set(i, (*key, i))
    for i in removed:
        tree.set(i, None)
    live = sorted(i for i in keys if i not in removed)
    first = [(*keys[i], i) for i in live[:k]]
    assert tree.total() == len(live)
    assert tree.best_of_first(k) == (min(first) if first else None)


def _node(name: str, tainted: bool = False) -> Node:
    node = Node(meta=ObjectMeta(name=name))
    node.allocatable = {"cpu": Quantity.from_int(1), "pods": Quantity.from_int(10)}
    if tainted:
        node.taints = [Taint(key="example.com/maintenance", effect="NoSchedule")]
    return node


def _pod(name: str, priority: int, node: str = "") -> Pod:
    return Pod(
        meta=ObjectMeta(name=name, namespace="default"),
        containers=[Container(name="c", requests={"cpu": Quantity.from_int(1)})],
        priority=priority,
        node_name=node,
    )


def _preempt(
    monkeypatch, n: int, victim_priority: dict[int, int], tainted: int = 0
) -> tuple[str | None, int]:
    """``n`` full nodes, the first ``tainted`` of them tainted (not potential), node i running a pod of
    priority ``victim_priority.get(i, 1000)`` (1000: above the preemptor's, no candidate); one pod of priority 100
    preempts. Returns where it went and how many nodes the dry run tried."""
    nodes = [_node(f"n{i}", tainted=i < tainted) for i in range(n)]
    running = [_pod(f"run-{i}", victim_priority.get(i, 1000), f"n{i}") for i in range(n)]
    sched = Scheduler(engine_config("1.37"), nodes, dra=False)
    sched.run(build_sim_pods(running, [], []))
    tried = 0
    original = preemption._try_node

    def counted(*a, **k):
        nonlocal tried
        tried += 1
        return original(*a, **k)

    monkeypatch.setattr(preemption, "_try_node", counted)
    (urgent,) = build_sim_pods([_pod("urgent", 100)], [], [])
    sched.run([urgent])
    monkeypatch.undo()
    return urgent.node, tried


def test_the_dry_run_stops_at_num_candidates_and_takes_the_best_of_those(monkeypatch):
    # 250 nodes: 100 candidates. Every even node runs a pod of priority 10 (a candidate), every odd one a pod
    # of priority 1000 (none); node 240 runs one of priority 1, the best of all, but it is not among the first
    # 100 candidates (nodes 0, 2, ..., 198), so the dry run never reaches it: node 0 (first of equal rank)
    prio = {i: 10 for i in range(0, 250, 2)} | {240: 1}
    node, tried = _preempt(monkeypatch, 250, prio)
    assert (node, tried) == ("n0", 199)  # nodes 0..198: the 100th candidate is node 198
    # among the first 100 candidates, the best ranked wins: node 100 runs priority 5
    node, tried = _preempt(monkeypatch, 250, prio | {100: 5})
    assert (node, tried) == ("n100", 199)


def test_below_100_potential_nodes_every_node_is_tried(monkeypatch):
    prio = {i: 10 for i in range(0, 99, 2)} | {98: 1}
    assert _preempt(monkeypatch, 99, prio) == ("n98", 99)
    # 150 nodes of which 60 tainted: 90 potential nodes, all tried, and the best (node 148) wins
    prio = {i: 10 for i in range(60, 150, 2)} | {148: 1}
    assert _preempt(monkeypatch, 150, prio, tainted=60) == ("n148", 90)
    # the same without the taints: 150 potential nodes, 100 candidates needed, fewer exist: every node tried
    assert _preempt(monkeypatch, 150, prio) == ("n148", 150)


def test_a_later_preemptor_of_the_class_tries_only_what_changed_and_the_next_node(monkeypatch):
    # 300 nodes, each a candidate of equal rank: the first preemptor tries the first 100 and takes node 0; the
    # second retries node 0 (changed: it now runs the first preemptor, of equal priority, no candidate) and
    # tries node 100 to have 100 candidates again, then takes node 1
    nodes = [_node(f"n{i}") for i in range(300)]
    running = [_pod(f"run-{i}", 10, f"n{i}") for i in range(300)]
    sched = Scheduler(engine_config("1.37"), nodes, dra=False)
    sched.run(build_sim_pods(running, [], []))
    tried: list[str] = []
    original = preemption._try_node

    def counted(s, sp, node, required):
        tried.append(node.name)
        return original(s, sp, node, required)

    monkeypatch.setattr(preemption, "_try_node", counted)
    first, second = build_sim_pods([_pod("a", 100), _pod("b", 100)], [], [])
    sched.run([first])
    assert (first.node, len(tried)) == ("n0", 100)
    tried.clear()
    sched.run([second])
    assert second.node == "n1"
    assert tried == ["n0", "n100"]


def test_the_pending_message_from_kept_counts_equals_a_recount(tmp_path, monkeypatch):
    """A pod that fits nowhere after a change is explained from its class's counts, kept as results change,
    and the DRA phrases of the nodes that changed only: the message equals counting every node again (the
    preempt shape, where preemptors fail, evict and fail again, on device-plugin and DRA nodes)."""
    import json
    from collections import Counter

    from click.testing import CliRunner

    from kubedra.cli import cli
    from kubedra.scheduler import pending, simulator
    from kubedra.scheduler.state import DRA_FAILURE
    from kubedra.testing import snapshotgen

    compared = Counter[str]()
    kept = pending.class_reason

    def both(sched, sp, cls):
        reasons = Counter(f.reason or "unknown" for f in cls.results() if f is not None)
        reasons.update(cls.outside)
        nodes = None if cls.pinned is None else [sched.nodes[i] for i in cls.pinned]
        recount = pending.pending_reason(sched, sp, reasons, nodes)
        got = kept(sched, sp, cls)
        assert got == recount
        compared["dra" if reasons.get(DRA_FAILURE) else "other"] += 1
        return got

    monkeypatch.setattr(simulator, "class_reason", both)
    path = tmp_path / "preempt-40.json"
    snapshotgen.write(str(path), 40, preempt=True)
    r = CliRunner().invoke(cli, ["simulate", "-f", str(path), "-o", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert compared["dra"] >= 2, compared  # both kinds of message were compared
    assert compared["other"] >= 2, compared
    modes = json.loads(r.stdout)["modes"]
    assert modes["device-plugin"]["evicted"]  # and the shape did preempt for nvidia.com/gpu
    assert not modes["dra"]["evicted"]  # never for DRA devices, which kube-scheduler does not preempt for


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.36", "1.37", "1.38"])
def test_the_filters_preemption_skips_are_those_upstream_calls_unresolvable(release):
    """The filters kubedra never preempts for (its static ones, the DRA filter) and the one it does
    (NodeResourcesFit) are those kube-scheduler's plugins give those codes (data/versions.yaml)."""
    from kubedra.k8s import versions

    facts = versions.behaviour("scheduler.preemption", release)
    static = {"NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeName"}
    assert static | {"DynamicResources"} <= set(facts["unresolvable"])
    assert facts["unschedulable"] == ["NodeResourcesFit"]
    assert facts["dryRunFreesDevices"] is False  # what _try_node's check before the dry run relies on


@pytest.mark.parametrize("fast", [True, False], ids=["class-results", "filtered-again"])
def test_nodes_failing_only_the_dra_filter_are_not_potential_nodes_for_num_candidates(fast):
    # 150 nodes short of CPU (NodeResourcesFit: Unschedulable, potential), their GPU free, each running a pod of
    # priority 10 (node 110: priority 1, the best victim); then 1,000 nodes with CPU to spare whose one GPU a
    # pod of priority 10 holds (DynamicResources: UnschedulableAndUnresolvable, not potential). kube-scheduler's
    # numCandidates is max(150 * 10%, 100) = 100, so the dry run stops at the 100th candidate (node 99) and
    # node 110 is never among them: node 0 (first of equal rank). Counting the DRA nodes as potential would
    # make it max(1150 * 10%, 100) = 115 and reach node 110.
    short, held = 150, 1000
    nodes = []
    for i in range(short + held):
        n = _node(f"n{i}")
        n.allocatable["cpu"] = Quantity.from_int(1 if i < short else 2)
        nodes.append(n)
    slices = [slice_(f"n{i}-gpu", [dev("gpu-0")], pool=f"n{i}", node_name=f"n{i}") for i in range(len(nodes))]
    one = ResourceClaimTemplate(
        meta=ObjectMeta(name="one", namespace="default"), spec=DeviceClaim(requests=[req("gpu", 1)])
    )

    def gpu_pod(name: str, priority: int, node: str = "") -> Pod:
        p = _pod(name, priority, node)
        p.resource_claims = [PodResourceClaim(name="gpu", resource_claim_template_name="one")]
        p.containers[0].claims = ["gpu"]
        return p

    running = [_pod(f"run-{i}", 1 if i == 110 else 10, f"n{i}") for i in range(short)]
    running += [gpu_pod(f"run-{i}", 10, f"n{i}") for i in range(short, short + held)]
    sched = Scheduler(engine_config("1.37"), nodes, [cls()], slices, fast=fast)
    sched.run(build_sim_pods(running, [one], []))
    assert all(sp.node for sp in sched.bound)
    (urgent,) = build_sim_pods([gpu_pod("urgent", 100)], [one], [])
    sched.run([urgent])
    assert urgent.node == "n0"
    [cands] = sched.preemptors.values()
    assert cands.limit == num_candidates(short, "1.37") == 100
    assert sched.evicted[0].name == "run-0"

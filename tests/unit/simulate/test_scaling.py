"""No step of ``kubedra simulate`` grows with the square of the cluster.

Counted, not timed: the node checks the scheduler runs (its node-only filters and its per-node filter) for
the same realistic snapshot at N and 2N nodes (``kubedra.testing.snapshotgen``: half device plugin, half
DRA, DaemonSets and their running pods, 20 running pods a node, allocated claims, pending GPU pods). Linear
work doubles; before, each DaemonSet pod (pinned to its node by ``metadata.name``, a class of its own) was
checked against every node, and the count grew four times. The CPU-time check is
``benchmarks/realistic.py``."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.scheduler import simulator
from kubedra.testing import snapshotgen


def _write(path, n: int, daemon_pods_gone: str | None = None) -> dict:
    """The generated snapshot without the running pods of its DaemonSets (on every node, or those named
    ``daemon_pods_gone`` on node 0), so that the DaemonSets make them: pods pinned to their nodes to place.
    With them running, the DaemonSets make none (kubedra.scheduler.owned)."""
    snapshotgen.write(str(path), n)
    doc = json.loads(path.read_text())

    def gone(item: dict) -> bool:
        if item["kind"] != "Pod" or item["metadata"]["ownerReferences"][0]["kind"] != "DaemonSet":
            return False
        if daemon_pods_gone is None:
            return True
        owner = item["metadata"]["ownerReferences"][0]["name"]
        return owner == daemon_pods_gone and item["spec"]["nodeName"] == snapshotgen.node_name(0)

    doc["items"] = [i for i in doc["items"] if not gone(i)]
    path.write_text(json.dumps(doc))
    return doc


def _checks(path, monkeypatch) -> tuple[int, dict]:
    calls: Counter[str] = Counter()
    for name in ("static_reason", "filter_node"):
        original = getattr(simulator.Scheduler, name)

        def counted(self, *a, _f=original, _n=name, **k):
            calls[_n] += 1
            return _f(self, *a, **k)

        monkeypatch.setattr(simulator.Scheduler, name, counted)
    r = CliRunner().invoke(cli, ["simulate", "-f", str(path), "-o", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    monkeypatch.undo()
    return sum(calls.values()), json.loads(r.stdout)


def test_node_checks_grow_with_the_cluster_not_its_square(tmp_path, monkeypatch):
    counts, outs = {}, {}
    for n in (40, 80):
        path = tmp_path / f"mixed-{n}.json"
        _write(path, n)
        counts[n], outs[n] = _checks(path, monkeypatch)
    for n, out in outs.items():  # the shape did what it says: everything placed in both modes
        for mode in ("device-plugin", "dra"):
            assert out["modes"][mode]["pending"] == 0, (n, mode)
            assert out["modes"][mode]["placed"] > n
    assert counts[80] / counts[40] < 2.5, counts


@pytest.mark.parametrize("cordoned", [0, 3])
def test_a_pinned_pod_that_cannot_fit_names_every_node(tmp_path, cordoned):
    """A DaemonSet pod whose node is full is pending with the reasons of all nodes, as before: the nodes the
    class never looks at are counted as failing the affinity. Cordoned nodes too: the DaemonSet controller gives
    its pods a toleration of node.kubernetes.io/unschedulable (AddOrUpdateDaemonPodTolerations), so
    NodeUnschedulable passes them."""
    path = tmp_path / "mixed.json"
    doc = _write(path, 8, daemon_pods_gone="kube-proxy")  # the DaemonSet makes node 0's pod
    left = cordoned
    for item in doc["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"] == snapshotgen.node_name(0):
            item["status"]["allocatable"]["pods"] = "19"  # full with its running pods
        if item["kind"] == "Node" and left and item["metadata"]["name"] != snapshotgen.node_name(0):
            left -= 1
            item["spec"]["unschedulable"] = True
    path.write_text(json.dumps(doc))
    r = CliRunner().invoke(cli, ["simulate", "-f", str(path), "--mode", "dra", "-o", "json"])
    pods = {p["name"]: p for p in json.loads(r.stdout)["modes"]["dra"]["pods"]}
    reason = pods[f"kube-proxy-{snapshotgen.node_name(0)}"]["reason"]
    assert reason.startswith("0/8 nodes are available: ")
    parts = sorted(reason.removeprefix("0/8 nodes are available: ").rstrip(".").split(", "))
    assert parts == sorted(["1 Too many pods", "7 node(s) didn't match Pod's node affinity/selector"])


def test_a_pinned_pod_preempts_looking_at_its_node_only(monkeypatch):
    """Preemption for a pod pinned to its node (a DaemonSet pod of higher priority on full nodes) examines
    that node, not the cluster: before, each such pod ran the node filters on every node."""
    from kubedra.allocator.session import engine_config
    from kubedra.k8s.quantity import Quantity
    from kubedra.model.objects import Container, Node, ObjectMeta, Pod
    from kubedra.scheduler import filters
    from kubedra.scheduler.build import build_sim_pods
    from kubedra.scheduler.simulator import Scheduler

    def run(n: int) -> tuple[int, list]:
        nodes = []
        for i in range(n):
            node = Node(meta=ObjectMeta(name=f"n{i}"))
            node.allocatable = {"cpu": Quantity.from_int(1), "pods": Quantity.from_int(10)}
            nodes.append(node)

        def pod(name: str, prio: int, node: str | None = None) -> Pod:
            p = Pod(
                meta=ObjectMeta(name=name, namespace="default"),
                containers=[Container(name="c", requests={"cpu": Quantity.from_int(1)})],
                priority=prio,
            )
            if node is not None:
                term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                p.affinity = {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
                    }
                }
            return p

        low = [pod(f"low-{i}", 0) for i in range(n)]
        daemons = [pod(f"ds-{i}", 1000, f"n{i}") for i in range(n)]
        sched = Scheduler(engine_config("1.37"), nodes, dra=False)
        sched.run(build_sim_pods(low, [], []))
        calls = 0
        original = filters.node_affinity

        def counted(*a, **k):
            nonlocal calls
            calls += 1
            return original(*a, **k)

        monkeypatch.setattr(filters, "node_affinity", counted)
        sims = build_sim_pods(daemons, [], [])
        sched.run(sims)
        monkeypatch.undo()
        return calls, [(p.name, p.node) for p in sims]

    small, placed_small = run(60)
    large, placed_large = run(120)
    assert placed_small == [(f"ds-{i}", f"n{i}") for i in range(60)]  # each preempted the pod on its node
    assert placed_large == [(f"ds-{i}", f"n{i}") for i in range(120)]
    assert large / small < 2.5, (small, large)


@pytest.mark.parametrize("verb", ["verify", "plan"])
def test_verify_and_plan_read_and_check_with_the_collector_paused(tmp_path, monkeypatch, verb):
    """verify -f and plan build a million acyclic objects for a large snapshot; with the cyclic collector
    running, each collection rescanned them all (verify of 1,000 nodes: 38 s CPU, 7.6 s with it paused)."""
    import gc

    from kubedra.plan import engine
    from kubedra.verify import checks

    path = tmp_path / "mixed.json"
    snapshotgen.write(str(path), 4)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        "apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n"
        "- {name: mixed, snapshot: mixed.json, distribution: kubeadm}\n"
    )
    module, name = (checks, "run_checks") if verb == "verify" else (engine, "build")
    seen = []
    original = getattr(module, name)

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return original(*a, **k)

    monkeypatch.setattr(module, name, spy)
    argv = ["verify", "-f", str(path)] if verb == "verify" else ["plan", "--fleet", str(fleet)]
    was = gc.isenabled()
    r = CliRunner().invoke(cli, [*argv, "-o", "json"])
    assert r.exit_code in (0, 1), r.output
    assert seen == [False]
    assert gc.isenabled() == was


def test_preemption_grows_with_the_cluster_not_its_square(tmp_path, monkeypatch):
    """The preempt shape (every GPU busy, nodes/20 pending pods of a higher PriorityClass): each preemptor
    tried every node (unbinding its lower-priority pods), so the unbinds grew with preemptors x nodes, four
    times for twice the nodes; now each class of preemptor tries again only the nodes that changed. Only the
    device-plugin mode preempts (and unbinds): kube-scheduler does not preempt for DRA devices."""
    counts, outs = {}, {}
    for n in (40, 80):
        path = tmp_path / f"preempt-{n}.json"
        snapshotgen.write(str(path), n, preempt=True)
        calls: Counter[str] = Counter()
        original = simulator.Scheduler.unbind

        def counted(self, *a, _f=original, _calls=calls, **k):
            _calls["unbind"] += 1
            return _f(self, *a, **k)

        monkeypatch.setattr(simulator.Scheduler, "unbind", counted)
        r = CliRunner().invoke(cli, ["simulate", "-f", str(path), "-o", "json"], catch_exceptions=False)
        monkeypatch.undo()
        assert r.exit_code == 0, r.output
        counts[n], outs[n] = calls["unbind"], json.loads(r.stdout)
    for n, out in outs.items():  # the shape did what it says: each urgent pod evicted 2 training pods
        mode = "device-plugin"
        urgent = [p for p in out["modes"][mode]["pods"] if p["name"].startswith("urgent-")]
        assert len(urgent) == n // 20, (n, mode)
        assert all(p["node"] for p in urgent), (n, mode, urgent)
        evicted = out["modes"][mode]["evicted"]
        assert len(evicted) == 2 * (n // 20), (n, mode)
        assert all(e["reason"].startswith("preempted by ml/urgent-") for e in evicted)
        # with DRA claims kube-scheduler does not preempt (DynamicResources: UnschedulableAndUnresolvable)
        urgent = [p for p in out["modes"]["dra"]["pods"] if p["name"].startswith("urgent-")]
        assert len(urgent) == n // 20, n
        assert not out["modes"]["dra"]["evicted"], n
        assert all(
            not p["node"] and p["reason"].endswith(" node(s) with lower-priority pods.") for p in urgent
        )
    assert counts[80] / counts[40] < 2.5, counts

"""A workload whose pods are already in the input (a snapshot holds a DaemonSet and its running pods, a
Deployment's pods through its ReplicaSet) is not expanded into them again: only what its controller would
still make is simulated."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.simulate.test_workloads import docs, names

from kubedra.model.objects import Node, ObjectMeta
from kubedra.scheduler.workloads import expand
from kubedra.testing import snapshotgen
from kubedra.testing.cli import run

NODES = 20


def test_snapshot_daemonsets_are_not_made_again(tmp_path: Path) -> None:
    """A generated mixed snapshot: every node runs its DaemonSets' pods, so the simulation places only the
    pending pods (nodes // 20); before, every DaemonSet made one more pod per node beside the running one."""
    path = tmp_path / "mixed.json"
    snapshotgen.write(str(path), NODES)
    res = run("simulate", "-f", str(path), "-o", "json")
    assert res.exit_code == 0, res.output
    for mode, out in json.loads(res.stdout)["modes"].items():
        assert (mode, out["placed"], out["pending"]) == (mode, NODES // 20, 0)


def _pod(name: str, node: str, owner: dict[str, object], labels: str = "{}") -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: prod
  labels: {labels}
  ownerReferences: [{json.dumps(owner)}]
spec:
  nodeName: {node}
  containers: [{{name: c, image: x}}]
status: {{phase: Running}}
"""


def test_deployment_makes_only_the_missing_replicas() -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5f7b9", "controller": True}
    text = (
        """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  replicas: 3
  template:
    spec:
      containers: [{name: c, image: x}]
"""
        + _pod("web-5f7b9-aaaaa", "n0", rs, "{pod-template-hash: 5f7b9}")
        + _pod("web-5f7b9-bbbbb", "n1", rs, "{pod-template-hash: 5f7b9}")
    )
    w = expand(docs(text))
    assert sorted(names(w)) == ["web-0", "web-5f7b9-aaaaa", "web-5f7b9-bbbbb"]
    assert any("2 of its pods are in the input" in n for n in w.notes)


def test_daemonset_gets_pods_only_on_nodes_without_one() -> None:
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "dcgm", "controller": True}
    text = (
        """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm, namespace: prod}
spec:
  template:
    spec:
      containers: [{name: c, image: x}]
"""
        + _pod("dcgm-x1", "n0", ds)
        + _pod("other", "n1", {**ds, "name": "another"})
        + _pod("ended", "n2", ds).replace("Running", "Succeeded")
    )
    nodes = [Node(meta=ObjectMeta(name=f"n{i}")) for i in range(3)]
    w = expand(docs(text), nodes=nodes)
    assert sorted(names(w)) == ["dcgm-n1", "dcgm-n2", "dcgm-x1", "other"]  # the ended pod is not simulated

"""Which nodes get a DaemonSet's pod: the DaemonSet controller's rules (NodeShouldRunDaemonPod), with the
tolerations it adds to every daemon pod (AddOrUpdateDaemonPodTolerations), not only NoSchedule taints.

Before: a NoExecute taint did not stop the expansion (the pod was made and stayed pending), a cordoned node got
no pod (its unschedulable taint counted as untolerated), a not-ready node's pod stayed pending."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubedra.cli import cli

NODES = {
    "plain": "",
    "maintenance": "taints: [{key: maintenance, effect: NoExecute}]",  # untolerated NoExecute: no pod
    "cordoned": "unschedulable: true\n  taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]",
    "not-ready": "taints: [{key: node.kubernetes.io/not-ready, effect: NoExecute}]",
    "pressure": "taints: [{key: node.kubernetes.io/memory-pressure, effect: NoSchedule}]",
    "no-network": "taints: [{key: node.kubernetes.io/network-unavailable, effect: NoSchedule}]",  # hostNetwork only
    "pinned-away": "taints: [{key: gpu, value: 'true', effect: NoSchedule}]",
}
STATUS = "status:\n  allocatable: {cpu: '8', memory: 32Gi, pods: '110'}\n  capacity: {cpu: '8', memory: 32Gi, pods: '110'}\n"


def _daemonset(name: str, host_network: bool) -> str:
    return (
        f"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: {name}}}\nspec:\n"
        f"  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n"
        f"    spec:\n      hostNetwork: {str(host_network).lower()}\n"
        "      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n"
    )


def _placed(tmp_path: Path) -> dict[str, dict[str, str | None]]:
    docs = [
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\nspec:\n  {spec or '{}'}\n{STATUS}"
        for n, spec in NODES.items()
    ]
    docs += [_daemonset("agent", False), _daemonset("netagent", True)]
    f = tmp_path / "cluster.yaml"
    f.write_text("---\n".join(docs))
    r = CliRunner().invoke(
        cli, ["simulate", str(f), "--mode", "device-plugin", "-o", "json"], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    pods = json.loads(r.stdout)["modes"]["device-plugin"]["pods"]
    out: dict[str, dict[str, str | None]] = {}
    for p in pods:
        ds, node = p["name"].split("-", 1)
        out.setdefault(ds, {})[node] = p["node"]
    return out


def test_daemon_pods_follow_the_controllers_rules(tmp_path: Path) -> None:
    placed = _placed(tmp_path)
    everywhere = {"plain", "cordoned", "not-ready", "pressure"}
    assert placed["agent"] == {n: n for n in everywhere}  # made where they may run, and placed there
    assert placed["netagent"] == {n: n for n in everywhere | {"no-network"}}

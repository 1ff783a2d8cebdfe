"""Day-2 verbs against the testbed's real 1.37 control plane: ``kubedra explain pod/NAME`` reads a pending
pod and everything around it from the apiserver and names why it is pending; ``kubedra verify`` fails an
untolerated NoExecute DeviceTaintRule (served at resource.k8s.io/v1 in 1.37) over a device a bound pod holds.

The testbed runs no device-taint eviction controller (controller-manager runs only the controllers in
kubedra.testing.controlplane), so the bound pod stays for verify to see.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from helpers import fresh_namespace, kubedra_inprocess, sa_kubeconfig

from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import GROUP_LABEL
from kubedra.testing.kubeapi import resource_path

pytestmark = pytest.mark.integration

RESOURCE = "resource.k8s.io/v1"


def _namespace(cp: ControlPlane) -> str:
    return fresh_namespace(cp, "day2")


def _template(
    ns: str, name: str, count: int, tolerations: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    exactly: dict[str, Any] = {
        "deviceClassName": "gpu.nvidia.com",
        "allocationMode": "ExactCount",
        "count": count,
    }
    if tolerations:
        exactly["tolerations"] = tolerations
    return {
        "apiVersion": RESOURCE,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": exactly}]}}},
    }


def _pod(ns: str, name: str, group: str, template: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "nodeSelector": {GROUP_LABEL: group},
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
        },
    }


def _claim_of(cp: ControlPlane, ns: str, pod: str) -> dict[str, Any]:
    path = resource_path("v1", "Pod", pod, ns)

    def allocated() -> dict[str, Any] | None:
        statuses = cp.api.get(path).get("status", {}).get("resourceClaimStatuses") or []
        name = statuses[0].get("resourceClaimName") if statuses else None
        if not name:
            return None
        claim: dict[str, Any] = cp.api.get(resource_path(RESOURCE, "ResourceClaim", name, ns))
        return (
            claim
            if claim.get("status", {}).get("allocation") and cp.api.get(path)["spec"].get("nodeName")
            else None
        )

    return cp.api.wait_for(f"pod {pod} bound with an allocated claim", allocated, timeout=60)


def test_explain_pod_names_why_it_is_pending(controlplane: ControlPlane, gpu_cluster) -> None:
    (node,) = gpu_cluster("h100-80gb", 1)
    group = node.rsplit("-", 1)[0]
    ns = _namespace(controlplane)
    controlplane.api.create(_template(ns, "nine-gpus", 9))
    controlplane.api.create(_pod(ns, "big", group, "nine-gpus"))
    # the scheduler tried: the pod is unschedulable (PodScheduled False)
    controlplane.api.wait_for(
        "pod big marked unschedulable",
        lambda: any(
            c.get("type") == "PodScheduled" and c.get("status") == "False"
            for c in controlplane.api.get(resource_path("v1", "Pod", "big", ns))
            .get("status", {})
            .get("conditions")
            or []
        ),
        timeout=60,
    )
    kc = str(controlplane.kubeconfig)
    res = kubedra_inprocess("explain", "pod/big", "-n", ns, "--kubeconfig", kc, "--node", node)
    assert res.exit_code == 1, res.output
    assert (
        f"node {node}: cannot allocate {ns}/big-gpu request gpus" in res.stdout
        or f"node {node}: cannot allocate" in res.stdout
    )
    assert "request gpus (class gpu.nvidia.com) needs 9, 8 available" in res.stdout
    # every node: ours fails on DRA, the session's other nodes on the pod's node selector
    res = kubedra_inprocess("explain", "pod/big", "-n", ns, "--kubeconfig", kc, "-o", "json")
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    by_node = {e["node"]: e for e in data["nodes"]}
    assert by_node[node]["explanation"]
    assert not by_node[node]["allocatable"]
    others = [e for n, e in by_node.items() if n != node]
    assert all(e.get("reason") == "node(s) didn't match Pod's node affinity/selector" for e in others)

    # the same question asked about the pod's generated claim (the resourceclaim controller made it)
    def generated() -> str | None:
        st = (
            controlplane.api.get(resource_path("v1", "Pod", "big", ns))
            .get("status", {})
            .get("resourceClaimStatuses")
        )
        return (st or [{}])[0].get("resourceClaimName")

    claim_name = controlplane.api.wait_for("the generated claim", generated, timeout=30)
    claim = kubedra_inprocess("explain", f"claim/{claim_name}", "-n", ns, "--kubeconfig", kc, "--node", node)
    assert claim.exit_code == 1, claim.output
    assert "request gpus (class gpu.nvidia.com) needs 9, 8 available" in claim.stdout
    # a pod that fits: exit 0; a pod that is not there: exit 2
    controlplane.api.create(_template(ns, "one-gpu", 1))
    controlplane.api.create(_pod(ns, "small", group, "one-gpu"))
    _claim_of(controlplane, ns, "small")
    missing = kubedra_inprocess("explain", "pod/nope", "-n", ns, "--kubeconfig", kc)
    assert missing.exit_code == 2
    assert f"Pod {ns}/nope not found" in missing.stderr


def test_verify_fails_an_untolerated_noexecute_rule(
    controlplane: ControlPlane, gpu_cluster, tmp_path
) -> None:
    (node,) = gpu_cluster("h100-80gb", 1)
    group = node.rsplit("-", 1)[0]
    ns = _namespace(controlplane)
    controlplane.api.create(_template(ns, "one-gpu", 1))
    controlplane.api.create(_pod(ns, "worker", group, "one-gpu"))
    claim = _claim_of(controlplane, ns, "worker")
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    rule_name = f"drain-{uuid.uuid4().hex[:8]}"
    rule = kubedra_inprocess("discover", "--drain-rule", f"{node}/{result['device']}", "-o", "json")
    assert rule.exit_code == 0, rule.output
    obj = json.loads(rule.stdout)
    obj["metadata"]["name"] = rule_name
    stored = controlplane.api.create(obj)  # the apiserver accepts kubedra's rule as written
    try:
        snap = tmp_path / "s.yaml"
        kc = str(controlplane.kubeconfig)
        got = kubedra_inprocess("snapshot", "--kubeconfig", kc, "-o", str(snap))
        assert got.exit_code == 0, got.output
        res = kubedra_inprocess("verify", "-f", str(snap), "-o", "json")
        health = {c["id"]: c for c in json.loads(res.stdout)["checks"]}["health"]
        assert health["status"] == "fail", health
        assert any(
            f"tainted kubedra.io/drain=unhealthy:NoExecute by DeviceTaintRule {rule_name}: not tolerated" in m
            and f"Pod {ns}/worker" in m
            for m in health["messages"]
        ), health["messages"]
        assert res.exit_code == 1
    finally:
        controlplane.api.delete(stored)


def test_explain_with_partial_rbac_is_incomplete(controlplane: ControlPlane, gpu_cluster, tmp_path) -> None:
    """A reader that may not list ResourceClaims cannot see the in-use allocations: exit 2 naming the read,
    unless --allow-missing accepts it (then the per-node answer, exit 1 here)."""
    (node,) = gpu_cluster("h100-80gb", 1)
    group = node.rsplit("-", 1)[0]
    ns = _namespace(controlplane)
    controlplane.api.create(_template(ns, "nine-gpus", 9))
    controlplane.api.create(_pod(ns, "big", group, "nine-gpus"))
    controlplane.api.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "asker", "namespace": ns}}
    )
    role = f"{ns}-explain-no-claims"
    rules = [
        {"apiGroups": [""], "resources": ["pods", "nodes"], "verbs": ["get", "list"]},
        {
            "apiGroups": ["resource.k8s.io"],
            "resources": ["resourceslices", "deviceclasses", "devicetaintrules", "resourceclaimtemplates"],
            "verbs": ["list"],
        },
        # the pod's own claims may be read one by one, but not every claim of the cluster listed
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get"]},
    ]
    cr = controlplane.api.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": role},
            "rules": rules,
        }
    )
    crb = controlplane.api.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "asker", "namespace": ns}],
        }
    )
    try:
        kc = str(sa_kubeconfig(controlplane, tmp_path, ns, "asker"))

        def ask(*extra: str):
            return kubedra_inprocess(
                "explain", "pod/big", "-n", ns, "--kubeconfig", kc, "--node", node, *extra
            )

        def refused():
            r = ask()
            return r if r.exit_code == 2 else None

        res = controlplane.api.wait_for("RBAC in force", refused, timeout=30)
        assert "incomplete" in res.stderr, res.stderr
        assert "resourceclaims.resource.k8s.io" in res.stderr, res.stderr
        assert "needs 9, 8 available" in res.stdout  # the answer is still shown, marked incomplete
        ok = ask("--allow-missing", "resourceclaims.resource.k8s.io")
        assert ok.exit_code == 1, ok.output
    finally:
        controlplane.api.delete(crb)
        controlplane.api.delete(cr)

"""kubedra's model of the device-taint eviction controller against the real one (kube-controller-manager 1.37,
``device-taint-eviction-controller``): for each case, what ``kubedra verify`` predicts from the cluster's
state (FAIL: the pod will be evicted; WARN: it stays) is what the real controller then does to the pod.

The cases pin the semantics kubedra copied from upstream's ``claimEvictionTime``: a NoExecute
DeviceTaintRule without a matching toleration evicts; a NoExecute toleration without tolerationSeconds keeps
the pod; a toleration that names no effect does not count for eviction; a NoSchedule rule evicts nobody.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from helpers import fresh_namespace, kubedra_inprocess

from kubedra.testing import binaries, fakecluster
from kubedra.testing.controlplane import DEFAULT_CONTROLLERS, ControlPlane
from kubedra.testing.fakecluster import GROUP_LABEL
from kubedra.testing.kubeapi import ApiError, resource_path

pytestmark = pytest.mark.integration

RESOURCE = "resource.k8s.io/v1"


@pytest.fixture(scope="module")
def evicting() -> Iterator[ControlPlane]:
    from conftest import require_testbed

    require_testbed(*binaries.KUBERNETES, binaries.LAUNCHER)
    cp = ControlPlane("1.37", controllers=(*DEFAULT_CONTROLLERS, "device-taint-eviction-controller"))
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


def _bound_pod(cp: ControlPlane, ns: str, group: str, tolerations: list[dict[str, Any]]) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu.nvidia.com"}
    if tolerations:
        exactly["tolerations"] = tolerations
    cp.api.create(
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one", "namespace": ns},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
        }
    )
    cp.api.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "worker", "namespace": ns},
            "spec": {
                "nodeSelector": {GROUP_LABEL: group},
                "containers": [
                    {
                        "name": "m",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": [{"name": "gpu"}]},
                    }
                ],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}],
            },
        }
    )
    pod_path = resource_path("v1", "Pod", "worker", ns)

    def allocated() -> dict[str, Any] | None:
        pod = cp.api.get(pod_path)
        st = pod.get("status", {}).get("resourceClaimStatuses") or []
        if not st or not pod["spec"].get("nodeName"):
            return None
        claim: dict[str, Any] = cp.api.get(
            resource_path(RESOURCE, "ResourceClaim", st[0]["resourceClaimName"], ns)
        )
        return claim if claim.get("status", {}).get("allocation") else None

    return cp.api.wait_for("pod bound with an allocated claim", allocated, timeout=60)


def _gone(cp: ControlPlane, ns: str) -> bool:
    try:
        pod = cp.api.get(resource_path("v1", "Pod", "worker", ns))
    except ApiError as e:
        return e.status == 404
    return bool(pod["metadata"].get("deletionTimestamp"))


@pytest.mark.parametrize(
    ("effect", "tolerations", "evicted"),
    [
        ("NoExecute", [], True),
        ("NoExecute", [{"key": "example.com/rma", "operator": "Exists", "effect": "NoExecute"}], False),
        ("NoExecute", [{"key": "example.com/rma", "operator": "Exists"}], True),
        ("NoSchedule", [], False),
    ],
    ids=["untolerated", "tolerated", "toleration-without-effect", "noschedule"],
)
def test_verify_predicts_the_real_controller(
    evicting: ControlPlane, tmp_path, effect: str, tolerations: list[dict[str, Any]], evicted: bool
) -> None:
    cp = evicting
    group = f"evict-{uuid.uuid4().hex[:6]}"
    fakecluster.add_gpu_nodes(cp.api, "h100-80gb", 1, prefix=group)
    ns = fresh_namespace(cp, "evict")
    claim = _bound_pod(cp, ns, group, tolerations)
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    # the prediction, from the state just before the rule exists plus the rule (a snapshot with it added)
    snap = tmp_path / "s.yaml"
    assert kubedra_inprocess("snapshot", "--kubeconfig", str(cp.kubeconfig), "-o", str(snap)).exit_code == 0
    rule = {
        "apiVersion": RESOURCE,
        "kind": "DeviceTaintRule",
        "metadata": {"name": f"rma-{uuid.uuid4().hex[:8]}"},
        "spec": {
            "deviceSelector": {
                "driver": result["driver"],
                "pool": result["pool"],
                "device": result["device"],
            },
            "taint": {"key": "example.com/rma", "effect": effect},
        },
    }
    doc = yaml.safe_load(snap.read_text())
    doc["items"].append(rule)
    snap.write_text(yaml.safe_dump(doc))
    res = kubedra_inprocess("verify", "-f", str(snap), "-o", "json")
    health = {c["id"]: c for c in json.loads(res.stdout)["checks"]}["health"]
    mine = [m for m in health["messages"] if f"Pod {ns}/worker" in m or f"ResourceClaim {ns}/" in m]
    predicted = any("the device-taint eviction controller evicts" in m for m in mine)
    assert predicted == evicted, mine
    # what the real controller does
    stored = cp.api.create(rule)
    try:
        if evicted:
            cp.api.wait_for("the pod evicted", lambda: _gone(cp, ns), timeout=60)
        else:
            time.sleep(8)  # the controller acts within a second or two of the rule
            assert not _gone(cp, ns), "the real controller evicted a pod kubedra predicted to stay"
    finally:
        cp.api.delete(stored)

"""The Go-built control plane: a real apiserver, controller-manager and scheduler on fake GPU nodes."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import fresh_namespace

from kubedra.testing import gpunodes
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import GROUP_LABEL
from kubedra.testing.kubeapi import ApiError, resource_path

pytestmark = pytest.mark.integration

RESOURCE = "resource.k8s.io/v1"


def _namespace(cp: ControlPlane) -> str:
    return fresh_namespace(cp)


def _pod(
    namespace: str, name: str, group: str, claims: list[dict[str, Any]], limits: dict[str, str] | None = None
):
    container: dict[str, Any] = {"name": "main", "image": "registry.k8s.io/pause:3.10"}
    if claims:
        container["resources"] = {"claims": [{"name": c["name"]} for c in claims]}
    if limits:
        container.setdefault("resources", {})["limits"] = limits
    spec: dict[str, Any] = {"nodeSelector": {GROUP_LABEL: group}, "containers": [container]}
    if claims:
        spec["resourceClaims"] = claims
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _scheduled_node(cp: ControlPlane, pod: dict[str, Any], timeout: float = 60) -> str:
    path = resource_path("v1", "Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])

    def check() -> str | None:
        node: str | None = cp.api.get(path)["spec"].get("nodeName")
        return node

    try:
        return cp.api.wait_for(f"pod {pod['metadata']['name']} to be bound", check, timeout=timeout)
    except TimeoutError:
        status = cp.api.get(path).get("status", {})
        raise AssertionError(
            f"pod not scheduled; status: {status}\nscheduler log:\n{cp.log_tail('kube-scheduler')}"
        ) from None


def _group(names: list[str]) -> str:
    return names[0].rsplit("-", 1)[0]


def test_apiserver_ready_and_serves_dra_versions(controlplane: ControlPlane) -> None:
    assert controlplane.api.request("GET", "/readyz") == "ok"
    assert controlplane.api.get("/version")["gitVersion"] == "v1.37.2"
    groups = controlplane.api.get("/apis")["groups"]
    resource = next(g for g in groups if g["name"] == "resource.k8s.io")
    served = {v["version"] for v in resource["versions"]}
    assert {"v1", "v1beta1", "v1beta2", "v1alpha3"} <= served
    assert resource["preferredVersion"]["version"] == "v1"
    kinds = {r["kind"] for r in controlplane.api.get("/apis/resource.k8s.io/v1")["resources"]}
    assert {
        "ResourceSlice",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "DeviceClass",
        "DeviceTaintRule",
    } <= kinds
    # The workload API is off unless asked for.
    assert "scheduling.k8s.io/v1beta1" not in {v["groupVersion"] for g in groups for v in g["versions"]}


@pytest.mark.parametrize(
    ("shape", "slices", "devices"),
    [("h100-80gb", 1, 8), ("a100-80gb-static-mig", 1, 32), ("h100-80gb-dynamic-mig", 9, 8 * 26)],
)
def test_fake_nodes_and_slices_are_stored(
    controlplane: ControlPlane, gpu_cluster, shape: str, slices: int, devices: int
) -> None:
    (name,) = gpu_cluster(shape, 1)
    node = controlplane.api.get(resource_path("v1", "Node", name))
    ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert ready["Ready"] == "True"
    assert not node["spec"].get("taints"), "the not-ready taint must be gone or nothing schedules"
    assert node["status"]["allocatable"]["cpu"] == gpunodes.shape(shape).cpu
    assert "nvidia.com/gpu" not in node["status"]["allocatable"]

    stored = [
        s for s in controlplane.api.list(RESOURCE, "ResourceSlice") if s["spec"]["pool"]["name"] == name
    ]
    assert len(stored) == slices
    assert all(s["spec"]["pool"]["resourceSliceCount"] == slices for s in stored)
    assert sum(len(s["spec"].get("devices") or []) for s in stored) == devices
    # The apiserver kept what the driver sent (no field dropped by a disabled gate).
    _same_specs(stored, gpunodes.resource_slices(name, shape))


def _same_specs(stored: list[dict[str, Any]], sent: list[dict[str, Any]]) -> None:
    by_name = {s["metadata"]["name"]: s["spec"] for s in stored}
    for s in sent:
        assert by_name[s["metadata"]["name"]] == s["spec"], s["metadata"]["name"]


def test_device_plugin_node_schedules_extended_resource(controlplane: ControlPlane, gpu_cluster) -> None:
    names = gpu_cluster("h100-80gb", 1, dra=False)
    node = controlplane.api.get(resource_path("v1", "Node", names[0]))
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    ns = _namespace(controlplane)
    pod = controlplane.api.create(_pod(ns, "dp", _group(names), [], limits={"nvidia.com/gpu": "2"}))
    assert _scheduled_node(controlplane, pod) == names[0]


def test_claim_template_pod_gets_claim_node_and_allocation(controlplane: ControlPlane, gpu_cluster) -> None:
    names = gpu_cluster("a100-80gb-static-mig", 2)
    ns = _namespace(controlplane)
    controlplane.api.create(
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "mig-3g", "namespace": ns},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "mig",
                                "exactly": {
                                    "deviceClassName": "mig.nvidia.com",
                                    "selectors": [
                                        {
                                            "cel": {
                                                "expression": "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"
                                            }
                                        }
                                    ],
                                },
                            }
                        ]
                    }
                }
            },
        }
    )
    pod = controlplane.api.create(
        _pod(ns, "trainer", _group(names), [{"name": "gpu", "resourceClaimTemplateName": "mig-3g"}])
    )
    node = _scheduled_node(controlplane, pod)
    assert node in names

    pod_path = resource_path("v1", "Pod", "trainer", ns)

    def claim_name() -> str | None:
        statuses = controlplane.api.get(pod_path).get("status", {}).get("resourceClaimStatuses") or []
        return statuses[0].get("resourceClaimName") if statuses else None

    name = controlplane.api.wait_for("the generated claim name in pod status", claim_name, timeout=30)
    claim = controlplane.api.get(resource_path(RESOURCE, "ResourceClaim", name, ns))
    assert claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpu"
    assert claim["metadata"]["ownerReferences"][0]["name"] == "trainer"
    allocation = claim["status"]["allocation"]
    (result,) = allocation["devices"]["results"]
    assert result["request"] == "mig"
    assert result["driver"] == "gpu.nvidia.com"
    assert result["pool"] == node
    assert result["device"].startswith("gpu-")
    assert result["device"].endswith("-mig-3g40gb-9-4")
    # The allocation is pinned to the node the scheduler picked.
    (term,) = allocation["nodeSelector"]["nodeSelectorTerms"]
    assert term["matchFields"] == [{"key": "metadata.name", "operator": "In", "values": [node]}]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["trainer"]


def test_counters_keep_dynamic_mig_partitions_apart(controlplane: ControlPlane, gpu_cluster) -> None:
    """Two 4g.40gb need two GPUs (placement 0 only): 8 fit on one node, the 9th must wait."""
    names = gpu_cluster("h100-80gb-dynamic-mig", 1)
    ns = _namespace(controlplane)
    selector = "device.attributes['gpu.nvidia.com'].profile == '4g.40gb'"
    controlplane.api.create(
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "mig-4g", "namespace": ns},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "mig",
                                "exactly": {
                                    "deviceClassName": "mig.nvidia.com",
                                    "selectors": [{"cel": {"expression": selector}}],
                                },
                            }
                        ]
                    }
                }
            },
        }
    )
    for i in range(9):
        controlplane.api.create(
            _pod(ns, f"p{i}", _group(names), [{"name": "gpu", "resourceClaimTemplateName": "mig-4g"}])
        )

    # Which pod is left over depends on the scheduler's queue (a pod whose claim the controller created
    # late is retried later), so count instead of naming them.
    def split() -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
        pods = controlplane.api.list("v1", "Pod", ns)
        bound = [p for p in pods if p["spec"].get("nodeName")]
        unschedulable = [
            p
            for p in pods
            if any(
                c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
                for c in (p.get("status") or {}).get("conditions") or []
            )
        ]
        return (bound, unschedulable) if len(bound) == 8 and len(unschedulable) == 1 else None

    try:
        bound, _ = controlplane.api.wait_for("8 pods bound and 1 unschedulable", split, timeout=90)
    except TimeoutError:
        raise AssertionError(f"scheduler log:\n{controlplane.log_tail('kube-scheduler')}") from None
    assert {p["spec"]["nodeName"] for p in bound} == {names[0]}
    claims = controlplane.api.list(RESOURCE, "ResourceClaim", ns)
    allocated = sorted(
        r["device"]
        for c in claims
        if (c.get("status") or {}).get("allocation")
        for r in c["status"]["allocation"]["devices"]["results"]
    )
    # One 4g.40gb per GPU: placement 0 only, and the counters of each GPU allow just one.
    assert allocated == sorted(f"gpu-{m}-mig-4g40gb-5-0" for m in range(8))


def test_workload_gates_serve_the_workload_api(workload_controlplane: ControlPlane) -> None:
    cp = workload_controlplane
    assert cp.gates() == {"GenericWorkload": True}
    kinds = {r["kind"] for r in cp.api.get("/apis/scheduling.k8s.io/v1beta1")["resources"]}
    assert {"Workload", "PodGroup"} <= kinds


def test_unknown_kind_is_refused_by_the_client(controlplane: ControlPlane) -> None:
    with pytest.raises(ValueError, match="not known"):
        resource_path("v1", "Frobnicator")
    with pytest.raises(ApiError) as err:
        controlplane.api.get(resource_path("v1", "Node", "does-not-exist"))
    assert err.value.status == 404

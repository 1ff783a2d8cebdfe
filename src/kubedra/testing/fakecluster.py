"""Populate a test control plane with fake GPU nodes, the way kubelets and the NVIDIA DRA driver would.

There is no kubelet: a node is a Node object whose status is written through the status subresource
(Ready, capacity, allocatable), and the driver's ResourceSlices are created through the API. Scheduling
works regardless, since binding a pod is only an API write.
"""

from __future__ import annotations

from typing import Any

from kubedra.testing import gpunodes
from kubedra.testing.kubeapi import ApiError, KubeAPI, resource_path

# Added on create by the TaintNodesByCondition admission plugin and normally removed by the node
# lifecycle controller once the kubelet reports Ready; the testbed runs neither kubelet nor that controller.
_NOT_READY_TAINT = "node.kubernetes.io/not-ready"
GROUP_LABEL = "kubedra.dev/testbed-group"


def ready_node(api: KubeAPI, stored: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """A created Node made Ready as a kubelet and the node lifecycle controller would: ``status`` written, the
    not-ready taint the apiserver added on create removed. Returns the node as stored then."""
    stored = api.apply_status(stored, status)
    taints = [t for t in stored.get("spec", {}).get("taints") or [] if t.get("key") != _NOT_READY_TAINT]
    return api.merge_patch(stored, {"spec": {"taints": taints or None}})


def wait_for_service_account(api: KubeAPI, namespace: str) -> None:
    """Wait for ``namespace``'s "default" ServiceAccount (the serviceaccount controller makes it; pod admission
    refuses pods until it exists)."""
    api.wait_for(
        f"ServiceAccount {namespace}/default",
        lambda: api.get(resource_path("v1", "ServiceAccount", "default", namespace)),
        timeout=30,
    )


def pod_state(pod: dict[str, Any]) -> str:
    """``bound``, ``unschedulable`` (kube-scheduler's PodScheduled=False/Unschedulable) or ``waiting``."""
    if pod["spec"].get("nodeName"):
        return "bound"
    for c in pod.get("status", {}).get("conditions") or []:
        if (
            c.get("type") == "PodScheduled"
            and c.get("status") == "False"
            and c.get("reason") == "Unschedulable"
        ):
            return "unschedulable"
    return "waiting"


def listed(api: KubeAPI, api_version: str, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
    """List items with their apiVersion and kind (a list response leaves them out of its items)."""
    return [
        {**o, "apiVersion": api_version, "kind": kind}
        for o in api.list(api_version, kind, namespace=namespace)
    ]


def create_ignore_exists(api: KubeAPI, obj: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return api.create(obj)
    except ApiError as err:
        if err.status == 409:
            return None
        raise


def add_node(
    api: KubeAPI,
    name: str,
    shape: str,
    dra: bool = True,
    kubelet_version: str = gpunodes.KUBELET_VERSION,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Create one Ready node of ``shape`` and, for DRA nodes, publish its ResourceSlices."""
    node = gpunodes.node(name, shape, dra=dra)
    node["metadata"]["labels"].update(labels or {})
    stored = ready_node(
        api, api.create(node), gpunodes.node_status(name, shape, dra=dra, kubelet_version=kubelet_version)
    )
    if dra:
        for obj in gpunodes.resource_slices(name, shape):
            api.create(obj)
    return stored


def add_gpu_nodes(
    api: KubeAPI,
    shape: str,
    count: int,
    prefix: str | None = None,
    dra: bool = True,
    kubelet_version: str = gpunodes.KUBELET_VERSION,
) -> list[str]:
    """Create ``count`` nodes of ``shape`` named ``<prefix>-<i>`` (plus the DeviceClasses); return the names.

    Every node carries the label ``kubedra.dev/testbed-group=<prefix>`` so a test can pin pods to its group."""
    prefix = prefix or shape
    if dra:
        for cls in gpunodes.device_classes():
            create_ignore_exists(api, cls)
    names = [f"{prefix}-{i}" for i in range(count)]
    for name in names:
        add_node(api, name, shape, dra=dra, kubelet_version=kubelet_version, labels={GROUP_LABEL: prefix})
    return names

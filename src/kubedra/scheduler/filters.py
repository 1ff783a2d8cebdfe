"""Node filters of the default kube-scheduler profile that matter for GPU placement.

NodeUnschedulable, NodeAffinity (``nodeSelector`` and required node affinity), TaintToleration
(NoSchedule/NoExecute) and NodeResourcesFit (cpu, memory, pods, extended resources). Each returns None
when the node passes, or a reason phrased like kube-scheduler's status messages so the pending summary
reads like ``0/8 nodes are available: 6 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint``.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubedra.model.nodeaffinity import NodeSelectorError, node_selector_matches, required_node_selector
from kubedra.model.objects import Node, NodeSelector, Pod, Taint
from kubedra.model.tolerations import tolerates, untolerated

UNSCHEDULABLE = "node(s) were unschedulable"
AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


def tolerates_unschedulable(pod: Pod) -> bool:
    return any(tolerates(x, _UNSCHEDULABLE_TAINT) for x in pod.tolerations)


def unschedulable(pod: Pod, node: Node) -> str | None:
    if not node.unschedulable or tolerates_unschedulable(pod):
        return None
    return UNSCHEDULABLE


def node_affinity(pod: Pod, node: Node, required: NodeSelector | None) -> str | None:
    labels = node.labels
    for k, v in pod.node_selector.items():
        if labels.get(k) != v:
            return AFFINITY_MISMATCH
    if required is not None:
        try:
            ok = node_selector_matches(required, node.name, labels)
        except NodeSelectorError:
            ok = False
        if not ok:
            return AFFINITY_MISMATCH
    return None


def pinned_names(required: NodeSelector | None) -> frozenset[str] | None:
    """The node names a required node affinity limits a pod to, when every term that can match names them
    (a ``matchFields`` ``metadata.name`` ``In`` requirement, as the DaemonSet controller pins its pods); None
    when some term may match a node by its labels alone. Every node outside the set fails
    :func:`node_affinity`: each term that is not empty requires one of the names (and an invalid term makes
    every node fail), so the scheduler need only look at these nodes."""
    if required is None:
        return None
    names: set[str] = set()
    for term in required.terms:
        if not term.match_expressions and not term.match_fields:
            continue  # matches no node (node_selector_matches skips it)
        pin = next((r for r in term.match_fields if r.key == "metadata.name" and r.operator == "In"), None)
        if pin is None:
            return None
        names.update(pin.values)
    return frozenset(names)


def required_affinity(pod: Pod) -> NodeSelector | None:
    return required_node_selector(pod.affinity)


def taints(pod: Pod, node: Node) -> str | None:
    t = untolerated(node.taints, pod.tolerations)
    if t is None:
        return None
    return (
        f"node(s) had untolerated taint {{{t.key}: {t.value}}}"
        if t.value
        else f"node(s) had untolerated taint {{{t.key}}}"
    )


def resources_fit(
    requests: Mapping[str, int], free: Mapping[str, int], skip: frozenset[str] = frozenset()
) -> str | None:
    """NodeResourcesFit: every requested resource must fit the node's free allocatable.

    ``skip`` are extended resources the DRA plugin satisfies instead (DRAExtendedResource)."""
    for name, want in requests.items():
        if want <= 0 or name in skip:
            continue
        if free.get(name, 0) < want:
            return "Too many pods" if name == "pods" else f"Insufficient {name}"
    return None


def resources_reason(reason: str | None) -> bool:
    """Whether ``reason`` is NodeResourcesFit's (:func:`resources_fit_node`, or too many pods)."""
    return reason is not None and (reason == "Too many pods" or reason.startswith("Insufficient "))


def resources_fit_node(
    requests: Mapping[str, int],
    allocatable: Mapping[str, int],
    used: Mapping[str, int],
    skip: frozenset[str] = frozenset(),
) -> str | None:
    """:func:`resources_fit` with free = allocatable - used, without building the free map."""
    for name, want in requests.items():
        if want <= 0 or name in skip:
            continue
        if allocatable.get(name, 0) - used.get(name, 0) < want:
            return "Too many pods" if name == "pods" else f"Insufficient {name}"
    return None

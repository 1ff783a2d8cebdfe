"""The pods a DaemonSet makes of its template, and pods named from a template (:mod:`kubedra.scheduler.workloads`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from kubedra.model.objects import Node, ObjectMeta, Pod, Toleration
from kubedra.model.tolerations import BLOCKING_EFFECTS, untolerated
from kubedra.scheduler import filters

# The tolerations the DaemonSet controller adds to every pod it makes (Kubernetes 1.37,
# pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations, called by NewPod and
# CreatePodTemplate): node problems do not keep or evict a daemon pod; network-unavailable only with hostNetwork.
_DAEMON_TOLERATIONS = (
    Toleration("node.kubernetes.io/not-ready", "Exists", effect="NoExecute"),
    Toleration("node.kubernetes.io/unreachable", "Exists", effect="NoExecute"),
    Toleration("node.kubernetes.io/disk-pressure", "Exists", effect="NoSchedule"),
    Toleration("node.kubernetes.io/memory-pressure", "Exists", effect="NoSchedule"),
    Toleration("node.kubernetes.io/pid-pressure", "Exists", effect="NoSchedule"),
    Toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule"),
)
_HOST_NETWORK = Toleration("node.kubernetes.io/network-unavailable", "Exists", effect="NoSchedule")


def daemon_tolerations(template: Pod) -> list[Toleration]:
    """The template's tolerations with the controller's added, as ``AddOrUpdateTolerationInPodSpec`` does: one
    with the same key, operator, value and effect is replaced (its ``tolerationSeconds`` dropped), else it is
    appended."""
    out = list(template.tolerations)
    for add in (*_DAEMON_TOLERATIONS, *((_HOST_NETWORK,) if template.host_network else ())):
        if add in out:
            continue
        same = [
            (t.key, t.operator, t.value, t.effect) == (add.key, add.operator, add.value, add.effect)
            for t in out
        ]
        out = [add if m else t for t, m in zip(out, same, strict=True)] if any(same) else [*out, add]
    return out


def named(template: Pod, name: str) -> Pod:
    """``template`` as the pod named ``name`` (same spec, metadata copied)."""
    m = template.meta
    meta = ObjectMeta(
        name=name,
        namespace=m.namespace,
        labels=m.labels,
        annotations=m.annotations,
        owner_references=m.owner_references,
    )
    return dataclasses.replace(template, meta=meta)


def daemon_pods(
    template: Pod, names_base: str, nodes: Sequence[Node], taken: AbstractSet[str] = frozenset()
) -> list[Pod]:
    """The DaemonSet controller's pods (``NodeShouldRunDaemonPod``, pkg/controller/daemon/daemon_controller.go):
    one per node the template may run on (its ``nodeName`` if set, required node affinity, no NoSchedule or
    NoExecute taint left untolerated by its tolerations and :func:`daemon_tolerations`) and that has none of its
    pods yet (``taken``: the nodes of its pods in the input, :func:`kubedra.scheduler.owned.nodes_of`), each with
    those tolerations and pinned with a ``metadata.name`` matchFields term."""
    out = []
    required = filters.required_affinity(template)
    tolerations = daemon_tolerations(template)
    for node in nodes:
        if node.name in taken or (template.node_name and template.node_name != node.name):
            continue
        if filters.node_affinity(template, node, required):
            continue
        if untolerated(node.taints, tolerations, BLOCKING_EFFECTS) is not None:
            continue
        pod = named(template, f"{names_base}-{node.name}")
        pod.tolerations = tolerations  # one list for all its pods (never changed once modelled)
        pod.affinity = {
            **(template.affinity or {}),
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node.name]}]}
                    ]
                }
            },
        }
        out.append(pod)
    return out

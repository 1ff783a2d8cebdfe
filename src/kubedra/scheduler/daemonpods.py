"""The pods a DaemonSet makes of its template, and pods named from a template (:mod:`kubedra.scheduler.workloads`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from kubedra.model.objects import Node, ObjectMeta, Pod
from kubedra.model.tolerations import untolerated
from kubedra.scheduler import filters


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
    """The DaemonSet controller's pods: one per node the template may run on (required node affinity, untolerated
    NoSchedule taints) and that has none of its pods yet (``taken``: the nodes of its pods in the input,
    :func:`kubedra.scheduler.owned.nodes_of`), each pinned with a ``metadata.name`` matchFields term."""
    out = []
    required = filters.required_affinity(template)
    for node in nodes:
        if node.name in taken or filters.node_affinity(template, node, required):
            continue
        if untolerated(node.taints, template.tolerations, ("NoSchedule",)) is not None:
            continue
        pod = named(template, f"{names_base}-{node.name}")
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

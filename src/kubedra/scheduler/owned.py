"""Pods of the input that a workload of the input has already made, so that the workload is not expanded into
them again (a snapshot holds a DaemonSet and its running pods, a Deployment's pods through its ReplicaSet).

A pod belongs to the workload its controller ``ownerReference`` (``controller: true``) names, in the pod's
namespace. A ReplicaSet's pod also belongs to the Deployment that owns the ReplicaSet: by the ReplicaSet's own
controller reference when it is in the input, else by name, ``<deployment>-<pod-template-hash>``, the name the
Deployment controller gives the ReplicaSet of a template (kubernetes/kubernetes v1.37
``pkg/controller/deployment/sync.go`` ``getNewReplicaSet``: ``Name: d.Name + "-" + podTemplateSpecHash``, with
the label ``pod-template-hash`` on its pods). Pods that ended (Succeeded, Failed) are the controller's no more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubedra.k8s import namespaces
from kubedra.k8s.workloads import api_group
from kubedra.model.objects import Pod
from kubedra.model.parse import parse_object
from kubedra.scheduler import filters
from kubedra.sources.files import Document

Key = tuple[str, str, str, str]  # (API group, kind, namespace, name) of a workload
_HASH = "pod-template-hash"


def _controller(refs: Iterable[Any], namespace: str) -> Key | None:
    for ref in refs:
        if isinstance(ref, Mapping) and ref.get("controller") is True and ref.get("kind") and ref.get("name"):
            return (
                api_group(str(ref.get("apiVersion") or "")),
                str(ref["kind"]),
                namespace,
                str(ref["name"]),
            )
    return None


def made(docs: Sequence[Document], pods: Mapping[int, Pod]) -> dict[Key, list[Pod]]:
    """The input's live pods by the workload that made them (``pods``: the parsed Pod of each Pod document)."""
    rs_owner: dict[Key, Key] = {}
    for d in docs:
        if d.kind == "ReplicaSet" and api_group(d.api_version) == "apps":
            meta = d.obj.get("metadata")
            ns = namespaces.effective(d.namespace)
            owner = _controller(meta.get("ownerReferences") or [], ns) if isinstance(meta, Mapping) else None
            if owner is not None:
                rs_owner[("apps", "ReplicaSet", ns, d.name)] = owner
    out: dict[Key, list[Pod]] = {}
    for d in docs:
        pod = pods.get(id(d))
        if pod is None or pod.phase in ("Succeeded", "Failed"):
            continue
        key = _controller(pod.meta.owner_references, namespaces.effective(pod.meta.namespace))
        if key is None:
            continue
        out.setdefault(key, []).append(pod)
        if key[:2] == ("apps", "ReplicaSet"):
            deployment = rs_owner.get(key)
            template_hash = (pod.meta.labels or {}).get(_HASH)
            if deployment is None and template_hash and key[3].endswith(f"-{template_hash}"):
                deployment = ("apps", "Deployment", key[2], key[3][: -len(template_hash) - 1])
            if deployment is not None:
                out.setdefault(deployment, []).append(pod)
    return out


def nodes_of(pods: Iterable[Pod]) -> set[str]:
    """The nodes these (DaemonSet) pods are on, or are pinned to when not bound yet."""
    out: set[str] = set()
    for pod in pods:
        if pod.node_name:
            out.add(pod.node_name)
        else:
            out |= filters.pinned_names(filters.required_affinity(pod)) or set()
    return out


def bare_pods(docs: Sequence[Document], pods: Mapping[int, Pod]) -> dict[int, Pod]:
    """The Pod of each Pod document (``pods``: those already parsed, by ``id(document)``)."""
    out: dict[int, Pod] = {}
    for doc in docs:
        if doc.kind == "Pod" and doc.api_version == "v1":
            pod = pods.get(id(doc))
            if pod is None:
                parsed = parse_object(doc.obj, doc.location)
                assert parsed is not None
                pod = parsed.obj
            assert isinstance(pod, Pod)
            out[id(doc)] = pod
    return out


def note(have: Sequence[Pod], daemon: bool) -> str:
    rest = "only nodes without one get a pod" if daemon else "only the rest are made"
    return f"{len(have)} of its pods are in the input, simulated as they are; {rest}"


def undecided(have: Sequence[Pod]) -> str:
    return f"{len(have)} of its pods are in the input: which of its pods are still to be made is not decided"

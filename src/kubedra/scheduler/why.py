"""Why a pod is pending: its claims as the scheduler's DRA plugin sees them, and the node-only filters.

``pod_claims`` resolves ``spec.resourceClaims`` like the plugin's PreEnqueue/PreFilter: a
``resourceClaimName`` names the claim; a ``resourceClaimTemplateName`` uses the claim named in
``status.resourceClaimStatuses`` (created by the resourceclaim controller), or, before that exists, a claim
from the template (what the controller will create). A claim or template that is missing is reported, as
kube-scheduler keeps such a pod out of the queue. ``node_reason`` is the filters that depend only on the
node (NodeUnschedulable, NodeAffinity, TaintToleration) and the node selector of the pod's allocated claims.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubedra.k8s import namespaces, versions
from kubedra.model.inventory import Inventory
from kubedra.model.nodeaffinity import NodeSelectorError, node_selector_matches
from kubedra.model.objects import Node, ObjectMeta, Pod, ResourceClaim
from kubedra.scheduler import filters
from kubedra.text import count


@dataclass
class PodClaims:
    to_allocate: list[ResourceClaim] = field(default_factory=list)
    allocated: list[ResourceClaim] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # why the pod cannot even be queued
    notes: list[str] = field(default_factory=list)


def pod_claims(pod: Pod, inv: Inventory) -> PodClaims:
    ns = namespaces.effective(pod.meta.namespace)
    named = {(namespaces.effective(c.meta.namespace), c.meta.name): c for c in inv.claims}
    templates = {(namespaces.effective(t.meta.namespace), t.meta.name): t for t in inv.templates}
    out = PodClaims()
    for rc in pod.resource_claims:
        claim: ResourceClaim | None = None
        if rc.resource_claim_name:
            claim = named.get((ns, rc.resource_claim_name))
            if claim is None:
                out.missing.append(f'resourceclaim "{rc.resource_claim_name}" not found')
        elif rc.resource_claim_template_name:
            generated = pod.claim_statuses.get(rc.name)
            if generated:
                claim = named.get((ns, generated))
                if claim is None:
                    out.missing.append(f'resourceclaim "{generated}" (generated for {rc.name}) not found')
            else:
                t = templates.get((ns, rc.resource_claim_template_name))
                if t is None:
                    out.missing.append(f'resourceclaimtemplate "{rc.resource_claim_template_name}" not found')
                else:
                    claim = ResourceClaim(
                        meta=ObjectMeta(name=f"{pod.meta.name}-{rc.name}", namespace=ns), spec=t.spec
                    )
                    out.notes.append(
                        f"claim {rc.name}: not created yet; explained from ResourceClaimTemplate {t.meta.name}"
                    )
        if claim is None:
            continue
        (out.allocated if claim.allocation is not None else out.to_allocate).append(claim)
    return out


def node_reason(pod: Pod, node: Node, allocated: Sequence[ResourceClaim]) -> str | None:
    reason = (
        filters.unschedulable(pod, node)
        or filters.node_affinity(pod, node, filters.required_affinity(pod))
        or filters.taints(pod, node)
    )
    if reason:
        return reason
    for c in allocated:
        sel = c.allocation.node_selector if c.allocation is not None else None
        if sel is None:
            continue
        try:
            ok = node_selector_matches(sel, node.name, node.labels)
        except NodeSelectorError:
            ok = False
        if not ok:
            return f"claim {c.meta.name} is allocated to devices this node cannot reach"
    return None


def postfilter_hints(
    pod: Pod, nodes: Sequence[Node], allocated: Sequence[ResourceClaim], release: str
) -> list[str]:
    """What kube-scheduler's DynamicResources PostFilter does for this pod when no node fits
    (``scheduler.draPostFilter``; :mod:`kubedra.scheduler.postfilter` models it in the simulation): it
    deallocates an allocated claim that is unavailable on a node where its Filter runs and that no pod but this
    one has reserved, so that the next attempt allocates it anew. Here the nodes are those passing the node-only
    filters (CPU and memory are not looked at)."""
    if not versions.behaviour("scheduler.draPostFilter", release)["deallocatesUnreserved"]:
        return []
    open_nodes = [n for n in nodes if not node_reason(pod, n, ())]
    out = []
    for c in allocated:
        reserved = c.reserved_for
        if reserved and not (len(reserved) == 1 and reserved[0].uid and reserved[0].uid == pod.meta.uid):
            continue
        unreachable = [n.name for n in open_nodes if node_reason(pod, n, [c])]
        if unreachable:
            out.append(
                f"when no node fits, kube-scheduler's DynamicResources PostFilter deallocates ResourceClaim "
                f"{c.meta.name} (its devices are out of reach of {count(len(unreachable), 'node')} the pod may "
                "run on; reserved by no other pod) and the pod's next attempt allocates it anew; the nodes above "
                "are explained with the claim as it is now"
            )
    return out

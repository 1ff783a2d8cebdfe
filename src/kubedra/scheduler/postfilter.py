"""DynamicResources' PostFilter (``scheduler.draPostFilter`` in data/versions.yaml): when a pod fits no node, the
DRA plugin deallocates one of its allocated claims that its Filter found unavailable on a node it ran on (the
allocation's node selector does not match a node whose other filters passed) and that no pod but this one
has reserved, so that a later attempt can allocate it anew; the claim's update requeues the pod. kube-scheduler
runs it before DefaultPreemption in the same attempt (both run: it answers Unschedulable). Functions of one
:class:`kubedra.scheduler.simulator.Scheduler`.

kube-scheduler picks the claim at random among several (a map's order); kubedra takes the first in
``spec.resourceClaims`` order and says so where there was a choice. The requeued pod comes back behind the
pods of its priority still in the queue (activeQ orders by priority, then the time the pod was queued)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubedra.k8s import versions
from kubedra.model.objects import ResourceClaim
from kubedra.scheduler import filters
from kubedra.scheduler.pods import SimPod

if TYPE_CHECKING:
    from kubedra.scheduler.simulator import Scheduler


def unavailable_claims(sched: Scheduler, sp: SimPod, claims: list[ResourceClaim]) -> list[ResourceClaim]:
    """Those of ``claims`` (the pod's, allocated) whose node selector fails a node where DynamicResources'
    Filter runs (every filter before it passes), in the pod's claim order (dynamicresources.go Filter,
    ``unavailableClaims``)."""
    allocated = [
        (c, c.allocation.node_selector) for c in claims if c.allocation and c.allocation.node_selector
    ]
    if not allocated:
        return []
    required = filters.required_affinity(sp.pod)
    found: list[ResourceClaim] = []
    for node in sched.nodes:
        if not sched.filter_node(sp, node, required, dra=False).ok:
            continue  # a filter before DynamicResources failed: its Filter did not run here
        for c, selector in allocated:
            if c not in found and filters.node_affinity(sp.pod, node.node, selector):
                found.append(c)
        if len(found) == len(allocated):
            break
    return found


def reserved_by_others(sched: Scheduler, sp: SimPod, claim: ResourceClaim) -> bool:
    """Whether a pod other than ``sp`` has reserved ``claim``: in its status (``reservedFor``, anything but
    ``sp`` alone), or bound in this simulation (kube-scheduler reserves a claim for the pod it binds)."""
    reserved = claim.reserved_for
    if reserved and not (len(reserved) == 1 and reserved[0].uid and reserved[0].uid == sp.pod.meta.uid):
        return True
    return sched._claim_in_use_elsewhere(claim, sp)


def pick(sched: Scheduler, sp: SimPod) -> tuple[ResourceClaim | None, int]:
    """The claim PostFilter deallocates for ``sp``, and among how many it could choose."""
    if not sched.dra or sp.gang:  # a PodGroup's pods: PodGroupPostFilter, not modelled
        return None, 0
    if not versions.behaviour("scheduler.draPostFilter", sched.cfg.target_version)["deallocatesUnreserved"]:
        return None, 0
    # who reserved a claim first: a claim many pods share is held by a bound one, and that is cheap to see
    free = [c for c in sp.claims if c.allocation is not None and not reserved_by_others(sched, sp, c)]
    choice = unavailable_claims(sched, sp, free) if free else []
    return (choice[0] if choice else None), len(choice)


def deallocate(sched: Scheduler, sp: SimPod, claim: ResourceClaim, choices: int) -> str | None:
    """Clear ``claim``'s allocation and reservations as the PostFilter's status update does; what happened, in
    words, for the pod's reason and the run's notes. None where a bound pod still holds the claim (``pick``
    does not choose such a claim; were it to, the pod is not requeued for ever)."""
    sched._release(sp, [claim])
    if claim.allocation is not None:
        return None
    claim.reserved_for = []
    claim.device_statuses = []
    what = (
        f"DynamicResources PostFilter deallocated ResourceClaim {claim.key} (allocated where the pod cannot "
        "run, reserved by no other pod) and requeued the pod"
    )
    if choices > 1:
        what += f" (kube-scheduler picks one of the {choices} such claims at random; kubedra the first)"
    sp.extra.setdefault("postfilter", []).append(what)
    return what


def requeue(queue: list[SimPod], pos: int, sp: SimPod) -> None:
    """Put ``sp`` back into ``queue`` after position ``pos``, behind the pods of its priority (and of pods
    created after others, the same group) still waiting."""
    key = (bool(sp.extra.get("after")), -sp.priority)
    at = pos + 1
    while at < len(queue) and (bool(queue[at].extra.get("after")), -queue[at].priority) <= key:
        at += 1
    queue.insert(at, sp)

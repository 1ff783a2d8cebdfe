"""Placement beyond one pod's filter-and-score: binding without filtering (pods already on a node, reprieved
victims), gangs (all or nothing, minCount), preemption (kube-scheduler's DefaultPreemption) and the device-taint
eviction controller. Functions of one :class:`kubedra.scheduler.simulator.Scheduler`."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubedra.allocator.errors import AllocationError
from kubedra.model.objects import (
    ResourceClaim,
)
from kubedra.scheduler import filters
from kubedra.scheduler.eviction import controller_of, eviction_reason, recreate
from kubedra.scheduler.pods import SimPod
from kubedra.scheduler.state import (
    Fit,
    SimNode,
)

if TYPE_CHECKING:
    from kubedra.scheduler.simulator import Scheduler


def evict_tainted(sched: Scheduler, bound: Sequence[SimPod]) -> list[SimPod]:
    """Evict bound pods on untolerated NoExecute-tainted devices; return their controllers' new pods."""
    counter = itertools.count(1)
    out: list[SimPod] = []
    for sp in bound:
        reason = eviction_reason(sp, sched.taints)
        if reason is None:
            continue
        sched.unbind(sp)
        ext = sp.extra.get("ext_claim")
        sched._release(sp, [*sp.claims, *([ext] if ext is not None else [])])
        sched.evicted.append(sp)
        if controller_of(sp) is None:
            sp.reason = f"{reason}; no controller recreates it"
            continue
        new = recreate(sp, sp.order, counter)
        sp.reason = f"{reason}; recreated by its controller as {new.key}"
        out.append(new)
    return out


def bind_existing(sched: Scheduler, sp: SimPod) -> None:
    node = sched.by_name[sp.pod.node_name]
    claims = [c for c in sp.claims if c.allocation is None] if sched.dra else []
    bind_on(sched, sp, node, claims)


def bind_on(sched: Scheduler, sp: SimPod, node: SimNode, claims: list[ResourceClaim]) -> None:
    """Bind without filtering (a pod already on the node, or a reprieved victim); its unallocated claims
    get devices there when possible, like the kubelet would find them prepared."""
    fit = Fit(True)
    if claims:
        try:
            res = sched.allocator.allocate(node.node, claims)
        except AllocationError:
            res = None
        if res is not None:
            fit = Fit(True, None, res, claims)
    sched.bind(sp, node, fit)


def schedule_gang(sched: Scheduler, members: list[SimPod], min_count: int) -> None:
    placed: list[SimPod] = []
    for sp in members:
        out = sched.try_schedule(sp)
        if out.placed:
            placed.append(sp)
        else:
            sp.reason = out.reason
    if len(placed) >= min_count:
        return
    for sp in reversed(placed):
        sched.unbind(sp)
    msg = f"gang {members[0].gang}: only {len(placed)} of minCount {min_count} pods could be placed together"
    for sp in members:
        sp.reason = msg if sp.reason is None else f"{msg}; {sp.reason}"


def preempt(sched: Scheduler, sp: SimPod) -> None:
    if not any(prio < sp.priority for prio in sched._bound_priorities):
        return  # no bound pod of lower priority (checked without walking every bound pod)
    candidates: list[tuple[tuple[int, int, int], SimNode, list[SimPod]]] = []
    required = filters.required_affinity(sp.pod)
    pinned = filters.pinned_names(required)  # a pod pinned to its node (a DaemonSet's) can only go there
    nodes = (
        sched.nodes
        if pinned is None
        else sorted((sched.by_name[n] for n in pinned if n in sched.by_name), key=lambda n: n.index)
    )
    for node in nodes:
        pre = (
            filters.unschedulable(sp.pod, node.node)
            or filters.node_affinity(sp.pod, node.node, required)
            or filters.taints(sp.pod, node.node)
        )
        if pre:
            continue
        victims_all = sorted(
            (p for p in node.pods if p.priority < sp.priority), key=lambda p: (-p.priority, p.order)
        )
        if not victims_all:
            continue
        for v in victims_all:
            sched.unbind(v)
        if not sched.filter_node(sp, node, required).ok:
            for v in reversed(victims_all):
                rebind(sched, v, node)
            continue
        # reprieve as many victims as possible, highest priority first
        victims = []
        for v in victims_all:
            rebind(sched, v, node)
            if not sched.filter_node(sp, node, required).ok:
                sched.unbind(v)
                victims.append(v)
        for v in reversed(victims):
            rebind(sched, v, node)
        if victims:
            rank = (max(v.priority for v in victims), sum(v.priority for v in victims), len(victims))
            candidates.append((rank, node, victims))
    if not candidates:
        return
    candidates.sort(key=lambda c: (c[0], c[1].index))
    _, node, victims = candidates[0]
    for v in victims:
        sched.unbind(v)
        v.reason = f"preempted by {sp.key} (priority {sp.priority})"
        v.preempted_by = sp.key
        sched.evicted.append(v)
    fit = sched.filter_node(sp, node, required)
    if fit.ok:
        sched.bind(sp, node, fit)


def rebind(sched: Scheduler, sp: SimPod, node: SimNode) -> None:
    bind_on(sched, sp, node, [c for c in sp.extra.get("own_claims", []) if c.allocation is None])

"""Placement beyond one pod's filter-and-score: binding without filtering (pods already on a node, reprieved
victims), gangs (all or nothing, minCount) and the device-taint eviction controller (preemption, kube-scheduler's
DefaultPreemption, is :mod:`kubedra.scheduler.preemption`). Functions of one
:class:`kubedra.scheduler.simulator.Scheduler`."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubedra.allocator.errors import AllocationError
from kubedra.model.objects import (
    ResourceClaim,
)
from kubedra.scheduler.eviction import controller_of, eviction_reason, recreate
from kubedra.scheduler.pods import SimPod
from kubedra.scheduler.state import Fit, SimNode

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

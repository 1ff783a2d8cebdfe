"""Preemption (kube-scheduler's DefaultPreemption): a pod that fits nowhere evicts lower-priority pods from the
node where that takes the least, ranked by the highest victim priority, then the sum of victim priorities, then
the number of victims, then the node's index. Functions of one :class:`kubedra.scheduler.simulator.Scheduler`.

What preempting on a node takes depends only on that node (its pods and devices: node-local pools; a change
to a pool shared by nodes counts as a change of every node) and on the preemptor's class (pod spec, claims,
priority). So each class keeps its nodes' answers (:class:`kubedra.scheduler.state.Candidates`) and, like the
scheduling classes, tries again only the nodes that changed since it last looked: a cluster's preemptors
cost the nodes they change, not every node each (which made many preemptors quadratic in the nodes). Trying a
node unbinds its lower-priority pods and binds them back, which leaves it equal to how it was for every later
try (the same pods; the reprieved victims' devices chosen again from the same free devices)."""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from kubedra.scheduler import filters
from kubedra.scheduler.placement import bind_on
from kubedra.scheduler.pods import SimPod
from kubedra.scheduler.state import Candidates, SimNode

if TYPE_CHECKING:
    from kubedra.scheduler.simulator import Scheduler

MAX_PREEMPTOR_CLASSES = 16  # classes of preemptors whose per-node answers are kept (each holds one per node)

Rank = tuple[int, int, int]


def preempt(sched: Scheduler, sp: SimPod) -> None:
    if not any(prio < sp.priority for prio in sched._bound_priorities):
        return  # no bound pod of lower priority (checked without walking every bound pod)
    required = filters.required_affinity(sp.pod)
    pinned = filters.pinned_names(required)  # a pod pinned to its node (a DaemonSet's) can only go there
    best: tuple[SimNode, list[SimPod]] | None = None
    if pinned is None:
        best = _best_of_class(sched, sp, required)
    else:
        nodes = sorted((sched.by_name[n] for n in pinned if n in sched.by_name), key=lambda n: n.index)
        candidates = []
        for node in nodes:
            if _static_reason(sp, node, required):
                continue
            rank, victims = _try_node(sched, sp, node, required)
            if rank is not None:
                candidates.append((rank, node.index, node, victims))
        if candidates:
            _, _, node, victims = min(candidates, key=lambda c: (c[0], c[1]))
            best = node, victims
    if best is None:
        return
    node, victims = best
    for v in victims:
        sched.unbind(v)
        v.reason = f"preempted by {sp.key} (priority {sp.priority})"
        v.preempted_by = sp.key
        sched.evicted.append(v)
    fit = sched.filter_node(sp, node, required)
    if fit.ok:
        sched.bind(sp, node, fit)


def _static_reason(sp: SimPod, node: SimNode, required: Any) -> str | None:
    return (
        filters.unschedulable(sp.pod, node.node)
        or filters.node_affinity(sp.pod, node.node, required)
        or filters.taints(sp.pod, node.node)
    )


def _best_of_class(sched: Scheduler, sp: SimPod, required: Any) -> tuple[SimNode, list[SimPod]] | None:
    """The node where preempting takes least for ``sp``, from its class's answers brought up to date."""
    key = (sched._class_key(sp), sp.priority)
    cands = sched.preemptors.pop(key, None)
    if cands is None:
        cands = Candidates()
        if len(sched.preemptors) >= MAX_PREEMPTOR_CLASSES:
            sched.preemptors.pop(next(iter(sched.preemptors)))  # the least recently used
    sched.preemptors[key] = cands  # most recently used last
    changes = sched._changes
    if cands.log_pos < 0 or -1 in changes[cands.log_pos :]:
        dirty: list[int] = list(range(len(sched.nodes)))
    else:
        dirty = sorted(set(changes[cands.log_pos :]))
    for i in dirty:
        if i in cands.static_fail:
            continue  # labels, taints and unschedulable do not change during a simulation
        node = sched.nodes[i]
        if i not in cands.entries and _static_reason(sp, node, required):
            cands.static_fail.add(i)
            continue
        rank, victims = _try_node(sched, sp, node, required)
        cands.entries[i] = (node.version, rank, victims)
        if rank is not None:
            heapq.heappush(cands.heap, (rank, i, node.version))
    cands.log_pos = len(changes)  # trying a node leaves it equal: its own changes need no second try
    heap = cands.heap
    while heap:
        rank, i, version = heap[0]
        entry = cands.entries.get(i)
        if entry is None or entry[0] != version or sched.nodes[i].version != version:
            heapq.heappop(heap)  # an older answer for a node tried again since
            continue
        return sched.nodes[i], entry[2]
    return None


def _try_node(sched: Scheduler, sp: SimPod, node: SimNode, required: Any) -> tuple[Rank | None, list[SimPod]]:
    """What preempting on ``node`` takes: (rank, victims), or (None, []) where it does not help. Leaves the
    node's pods bound; where they hold what they held before, the node takes back its version and the change
    log forgets the try (nothing changed for any class, nor for the filter results kept at that version)."""
    victims_all = sorted(
        (p for p in node.pods if p.priority < sp.priority), key=lambda p: (-p.priority, p.order)
    )
    if not victims_all:
        return None, []
    version, logged, shared = node.version, len(sched._changes), sched.shared_version
    held = [_held(v) for v in victims_all]
    rank, victims = _victims(sched, sp, node, required, victims_all)
    changes = sched._changes
    if (
        sched.shared_version == shared
        and all(i == node.index for i in changes[logged:])
        and [_held(v) for v in victims_all] == held
    ):
        node.version = version
        del changes[logged:]
    return rank, victims


def _held(sp: SimPod) -> tuple[Any, ...]:
    return sp.node, sp.devices, [c.allocation for c in sp.claims], sp.extra.get("own_claims")


def _victims(
    sched: Scheduler, sp: SimPod, node: SimNode, required: Any, victims_all: list[SimPod]
) -> tuple[Rank | None, list[SimPod]]:
    for v in victims_all:
        sched.unbind(v)
    if not sched.filter_node(sp, node, required).ok:
        for v in reversed(victims_all):
            rebind(sched, v, node)
        return None, []
    # reprieve as many victims as possible, highest priority first
    victims = []
    for v in victims_all:
        rebind(sched, v, node)
        if not sched.filter_node(sp, node, required).ok:
            sched.unbind(v)
            victims.append(v)
    for v in reversed(victims):
        rebind(sched, v, node)
    if not victims:
        return None, []
    return (max(v.priority for v in victims), sum(v.priority for v in victims), len(victims)), victims


def rebind(sched: Scheduler, sp: SimPod, node: SimNode) -> None:
    bind_on(sched, sp, node, [c for c in sp.extra.get("own_claims", []) if c.allocation is None])

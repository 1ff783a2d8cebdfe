"""Preemption (kube-scheduler's DefaultPreemption): a pod that fits nowhere evicts lower-priority pods from the
node where that takes the least among the candidates the dry run shortlists, ranked by the highest victim
priority, then the sum of victim priorities, then the number of victims, then the node's index. Functions of one
:class:`kubedra.scheduler.simulator.Scheduler`.

What preempting on a node takes depends only on that node (its pods and devices: node-local pools; a change
to a pool shared by nodes counts as a change of every node) and on the preemptor's class (pod spec, claims,
priority). So each class keeps its nodes' answers (:class:`kubedra.scheduler.state.Candidates`) and, like the
scheduling classes, tries again only the nodes that changed since it last looked: a cluster's preemptors
cost the nodes they change, not every node each (which made many preemptors quadratic in the nodes). Trying a
node unbinds its lower-priority pods and binds them back, which leaves it equal to how it was for every later
try (the same pods; the reprieved victims' devices chosen again from the same free devices).

Like kube-scheduler (framework/preemption DryRunPreemption), the dry run stops once it has numCandidates
candidates (:func:`num_candidates`, at least 100: on smaller clusters every node) and the pod goes to the best
of those. kube-scheduler starts at a random potential node; kubedra at the first, in node order
(:class:`kubedra.scheduler.shortlist.Shortlist` keeps the candidates in that order), and the report says so
where the shortlist left potential nodes out (``Scheduler.shortlisted``).

Which nodes preemption may help on follows the filters' status codes (``scheduler.preemption`` in
data/versions.yaml): only nodes whose first failing filter says Unschedulable (NodeResourcesFit's CPU, memory,
pods and extended resources such as nvidia.com/gpu, below the node's allocatable) are potential. Node name,
unschedulable, taints, node affinity and DynamicResources say UnschedulableAndUnresolvable, so kube-scheduler
never preempts to free DRA devices. Its dry run does not free them either (DynamicResources has no
PreFilterExtensions: the allocator keeps the devices its PreFilter saw allocated), so a pod with claims preempts
only on nodes where its claims can be allocated as the node is: kubedra checks the DRA filter before the dry run
and leaves it out of the dry run. A pod that stays pending for that says so (:data:`DRA_NOT_PREEMPTED`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubedra.k8s import versions
from kubedra.scheduler import filters
from kubedra.scheduler.placement import bind_on
from kubedra.scheduler.pods import PODS, SimPod
from kubedra.scheduler.shortlist import Shortlist
from kubedra.scheduler.state import Candidates, SimNode

if TYPE_CHECKING:
    from kubedra.scheduler.simulator import Scheduler

DRA_NOT_PREEMPTED = (
    " Not preempted: kube-scheduler does not preempt for DRA devices (its DynamicResources filter is "
    "UnschedulableAndUnresolvable) on {n} node(s) with lower-priority pods."
)
MAX_PREEMPTOR_CLASSES = 16  # classes of preemptors whose per-node answers are kept (each holds one per node)

Rank = tuple[int, int, int]


def preempt(sched: Scheduler, sp: SimPod) -> None:
    if not any(prio < sp.priority for prio in sched._bound_priorities):
        return  # no bound pod of lower priority (checked without walking every bound pod)
    required = filters.required_affinity(sp.pod)
    pinned = filters.pinned_names(required)  # a pod pinned to its node (a DaemonSet's) can only go there
    best: tuple[SimNode, list[SimPod]] | None = None
    blocked: set[int] = set()  # nodes whose DRA filter fails as they are
    if pinned is None:
        best, blocked = _best_of_class(sched, sp, required)
    else:
        nodes = sorted((sched.by_name[n] for n in pinned if n in sched.by_name), key=lambda n: n.index)
        candidates = []
        for node in nodes:
            if _static_reason(sp, node, required):
                continue
            rank, victims = _try_node(sched, sp, node, required)
            if victims and rank is None:
                blocked.add(node.index)
            if rank is not None:
                candidates.append((rank, node.index, node, victims))
        if candidates:
            _, _, node, victims = min(candidates, key=lambda c: (c[0], c[1]))
            best = node, victims
    if best is None:
        if blocked and sp.reason is not None:
            sp.reason += DRA_NOT_PREEMPTED.format(n=len(blocked))
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


def num_candidates(potential: int, release: str) -> int:
    """kube-scheduler's numCandidates for ``potential`` nodes: max(potential * minCandidateNodesPercentage / 100,
    minCandidateNodesAbsolute), at most ``potential`` (DefaultPreemptionArgs defaults of ``release``)."""
    args: dict[str, int] = versions.behaviour("scheduler.defaultPreemptionArgs", release)
    n = potential * args["minCandidateNodesPercentage"] // 100
    return min(max(n, args["minCandidateNodesAbsolute"]), potential)


def candidates_rule(release: str) -> str:
    """numCandidates in words, for the report: ``max(10% of the potential nodes, 100) candidates``."""
    args = versions.behaviour("scheduler.defaultPreemptionArgs", release)
    return (
        f"max({args['minCandidateNodesPercentage']}% of the potential nodes, "
        f"{args['minCandidateNodesAbsolute']}) candidates"
    )


def _best_of_class(
    sched: Scheduler, sp: SimPod, required: Any
) -> tuple[tuple[SimNode, list[SimPod]] | None, set[int]]:
    """The node where preempting takes least for ``sp`` among the first numCandidates candidates in node order,
    from its class's answers brought up to date.

    kube-scheduler dry-runs the potential nodes from a random offset, in an order it does not fix (a map's and
    its parallel workers'), until it has numCandidates candidates, then picks the best of those; kubedra starts
    at the first node and goes in node order, so where there are more candidates than that, kube-scheduler
    may shortlist others and pick another node, one no better ranked than the best of all (the pick among the
    shortlisted ones follows the same ranking). Below numCandidates potential nodes (at least 100) every
    node is tried by both. Also the nodes tried where the DRA filter blocks preemption."""
    key = (sched._class_key(sp), sp.priority)
    cands = sched.preemptors.pop(key, None)
    if cands is None:
        cands = _new_candidates(sched, sp, required)
        if len(sched.preemptors) >= MAX_PREEMPTOR_CLASSES:
            sched.preemptors.pop(next(iter(sched.preemptors)))  # the least recently used
    sched.preemptors[key] = cands  # most recently used last
    # kube-scheduler stops once it has numCandidates candidates, of the nodes whose status is Unschedulable at
    # the attempt (counted before any try here changes a node)
    potential = cands.potential - _dra_failed(sched, sp, cands, required)
    cands.limit = num_candidates(potential, sched.cfg.target_version)
    changes = sched._changes
    if cands.log_pos >= 0 and -1 in changes[cands.log_pos :]:
        cands.entries.clear()  # a pool shared by nodes changed: every answer is stale, try the nodes again
        cands.dra_blocked.clear()
        cands.shortlist = Shortlist(len(sched.nodes))
        cands.frontier, cands.untried = 0, cands.potential
    elif cands.log_pos >= 0:
        for i in sorted(set(changes[cands.log_pos :])):
            if i < cands.frontier and i not in cands.unresolvable:
                _look(sched, sp, cands, i, required)
    # try further nodes only until then; with no potential node, on to the end, for the pending message
    shortlist, n = cands.shortlist, len(sched.nodes)
    while shortlist.total() < max(cands.limit, 1) and cands.frontier < n:
        i = cands.frontier
        cands.frontier += 1
        if i not in cands.unresolvable:
            cands.untried -= 1
            _look(sched, sp, cands, i, required)
    cands.log_pos = len(changes)  # trying a node leaves it equal: its own changes need no second try
    best = shortlist.best_of_first(cands.limit)
    if best is None:
        return None, cands.dra_blocked
    if cands.untried or shortlist.total() > cands.limit:
        sched.shortlisted += 1  # kube-scheduler, starting elsewhere, may shortlist other candidates
    i = best[-1]
    return (sched.nodes[i], cands.entries[i][2]), cands.dra_blocked


def _dra_failed(sched: Scheduler, sp: SimPod, cands: Candidates, required: Any) -> int:
    """The nodes where DynamicResources' Filter ran (every filter before it passed) and failed: their status is
    UnschedulableAndUnresolvable, so kube-scheduler's findCandidates leaves them out of the potential nodes
    (NodesForStatusCode(..., Unschedulable)), and out of numCandidates. From the class's filter results where
    they are current (the pod's attempt has just brought them up to date), else filtered again."""
    cls = sched._classes.get(sched._class_key(sp))
    if sched.fast and cls is not None and cls.log_pos == len(sched._changes):
        return len(cls.dra_failed)
    failed = 0
    for node in sched.nodes:
        if node.index not in cands.unresolvable:
            fit = sched.filter_node(sp, node, required)
            failed += not fit.ok and not filters.resources_reason(fit.reason)
    return failed


def _new_candidates(sched: Scheduler, sp: SimPod, required: Any) -> Candidates:
    """A class's view before any try: its potential nodes (labels, taints, unschedulable and allocatable do not
    change during a simulation) and numCandidates."""
    cands = Candidates(shortlist=Shortlist(len(sched.nodes)))
    for node in sched.nodes:
        if _static_reason(sp, node, required) or _exceeds_allocatable(sched, sp, node):
            cands.unresolvable.add(node.index)
    cands.potential = cands.untried = len(sched.nodes) - len(cands.unresolvable)
    return cands


def _exceeds_allocatable(sched: Scheduler, sp: SimPod, node: SimNode) -> bool:
    """NodeResourcesFit's Unresolvable: a request above the node's allocatable, which no eviction frees
    (plugins/noderesources fit.go InsufficientResource.Unresolvable, v1.34.4 to v1.38.0-beta.0)."""
    skip = sched._pod_claims_for_node(sp, node)[1] if sched.dra else frozenset()
    allocatable = node.allocatable
    return any(
        want > 0 and name not in skip and name != PODS and allocatable.get(name, 0) < want
        for name, want in sp.requests.items()
    )


def _look(sched: Scheduler, sp: SimPod, cands: Candidates, i: int, required: Any) -> None:
    node = sched.nodes[i]
    rank, victims = _try_node(sched, sp, node, required)
    cands.entries[i] = (node.version, rank, victims if rank is not None else [])
    if victims and rank is None:
        cands.dra_blocked.add(i)
    else:
        cands.dra_blocked.discard(i)
    cands.shortlist.set(i, None if rank is None else (*rank, i))


def _try_node(sched: Scheduler, sp: SimPod, node: SimNode, required: Any) -> tuple[Rank | None, list[SimPod]]:
    """What preempting on ``node`` takes: (rank, victims), or (None, []) where it does not help, (None,
    victims) where the DRA filter fails on the node as it is (which no eviction changes for kube-scheduler's
    dry run: see the module's docstring). Leaves the
    node's pods bound; where they hold what they held before, the node takes back its version and the change
    log forgets the try (nothing changed for any class, nor for the filter results kept at that version)."""
    victims_all = sorted(
        (p for p in node.pods if p.priority < sp.priority), key=lambda p: (-p.priority, p.order)
    )
    if not victims_all:
        return None, []
    frees = versions.behaviour("scheduler.preemption", sched.cfg.target_version)["dryRunFreesDevices"]
    if sched.dra and not frees and not sched.dra_filter(sp, node, sched._pod_claims_for_node(sp, node)[0]).ok:
        return None, victims_all
    version, devices, logged, shared = (
        node.version,
        node.devices_version,
        len(sched._changes),
        sched.shared_version,
    )
    held = [_held(v) for v in victims_all]
    rank, victims = _victims(sched, sp, node, required, victims_all, frees)
    changes = sched._changes
    if (
        sched.shared_version == shared
        and all(i == node.index for i in changes[logged:])
        and [_held(v) for v in victims_all] == held
    ):
        node.version, node.devices_version = version, devices
        del changes[logged:]
    return rank, victims


def _held(sp: SimPod) -> tuple[Any, ...]:
    return sp.node, sp.devices, [c.allocation for c in sp.claims], sp.extra.get("own_claims")


def _victims(
    sched: Scheduler, sp: SimPod, node: SimNode, required: Any, victims_all: list[SimPod], frees: bool
) -> tuple[Rank | None, list[SimPod]]:
    for v in victims_all:
        sched.unbind(v)
    if not sched.filter_node(sp, node, required, dra=frees).ok:
        for v in reversed(victims_all):
            rebind(sched, v, node)
        return None, []
    # reprieve as many victims as possible, highest priority first
    victims = []
    for v in victims_all:
        rebind(sched, v, node)
        if not sched.filter_node(sp, node, required, dra=frees).ok:
            sched.unbind(v)
            victims.append(v)
    for v in reversed(victims):
        rebind(sched, v, node)
    if not victims:
        return None, []
    return (max(v.priority for v in victims), sum(v.priority for v in victims), len(victims)), victims


def rebind(sched: Scheduler, sp: SimPod, node: SimNode) -> None:
    bind_on(sched, sp, node, [c for c in sp.extra.get("own_claims", []) if c.allocation is None])

"""The scheduling loop: kube-scheduler's default profile, reduced to what decides GPU placement.

Per pod, in queue order (priority, then creation order):

1. **Filter** nodes, starting where the previous pod stopped (``nextStartNodeIndex``) and stopping after
   ``numFeasibleNodesToFind`` feasible nodes (adaptive ``percentageOfNodesToScore``: 50% − nodes/125,
   at least 5% and at least 100 nodes), like kube-scheduler. Filters: NodeUnschedulable, NodeAffinity,
   TaintToleration, NodeResourcesFit, then DynamicResources (the allocator).
2. **Score** the feasible nodes: NodeResourcesFit (LeastAllocated by default, MostAllocated for
   bin-packing) and NodeResourcesBalancedAllocation on cpu/memory, plus the DRA prioritized-list score,
   each normalised to 0–100 and weighted 1 like the default plugin configuration. Ties go to the first
   node found (kube-scheduler picks among ties at random; kubedra stays deterministic).
3. **Bind**: claims get their allocation, devices become in use.

Failed pods may **preempt** lower-priority pods (DefaultPreemption: :mod:`kubedra.scheduler.preemption`); a
PodGroup's pods are placed all together or none (gang scheduling, ``minCount``). Before the queue runs, bound
pods on a device with an untolerated NoExecute taint are evicted, their controllers' replacements queued.

Speed: a node's filter result for a given set of claim specs is cached until that node (or a shared,
non-node-local pool) changes, so each pod re-runs the allocator only where something changed.
"""

from __future__ import annotations

import contextlib
import gc
import time
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from kubedra.allocator.core import Allocator
from kubedra.allocator.errors import FILTER_TIMEOUT, AllocationError, AllocationTimeout, FailedOnNodeError
from kubedra.allocator.selectors import SelectorError
from kubedra.allocator.session import EngineConfig
from kubedra.allocator.state import AllocatedState
from kubedra.allocator.taints import apply_taint_rules
from kubedra.model.objects import (
    AllocationResult,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceTaintRule,
    Node,
    ResourceClaim,
    ResourceSlice,
)
from kubedra.scheduler import filters, postfilter
from kubedra.scheduler.eviction import Taints
from kubedra.scheduler.extended import extended_resource_classes
from kubedra.scheduler.pending import class_reason, own_claims, pending_reason
from kubedra.scheduler.placement import bind_existing, evict_tainted, schedule_gang
from kubedra.scheduler.pods import PODS, SimPod, allocatable
from kubedra.scheduler.preemption import preempt
from kubedra.scheduler.sampling import check_percentage, next_start_index, num_feasible_nodes_to_find
from kubedra.scheduler.state import (
    DRA_FAILURE,
    MAX_SCORE,
    VERSIONS,
    Candidates,
    ClassState,
    Fit,
    Outcome,
    SimNode,
    fit_score,
    keep_recent,
    new_class,
    prioritized_score,
)


class Scheduler:
    def __init__(  # noqa: PLR0913 - the cluster's objects, options keyword-only
        self,
        cfg: EngineConfig,
        nodes: Sequence[Node],
        classes: Sequence[DeviceClass] = (),
        slices: Sequence[ResourceSlice] = (),
        taint_rules: Sequence[DeviceTaintRule] = (),
        claims: Sequence[ResourceClaim] = (),
        *,
        scoring: str = "LeastAllocated",
        percentage_of_nodes_to_score: int | None = None,
        dra: bool = True,
        preemption: bool = True,
        fast: bool = True,
    ) -> None:
        self.cfg = cfg
        self.scoring = scoring
        check_percentage(percentage_of_nodes_to_score)
        self.percentage = percentage_of_nodes_to_score
        self.dra = dra
        self.preemption = preemption
        self.nodes = [SimNode(n, i, allocatable(n, cfg.target_version)) for i, n in enumerate(nodes)]
        self.by_name = {n.name: n for n in self.nodes}
        self.next_start = 0
        self.classes = list(classes)
        self.ext_classes = extended_resource_classes(self.classes) if cfg.extended_resources and dra else {}
        rules = taint_rules if cfg.taint_rules else []
        the_slices = apply_taint_rules(slices, rules, release=cfg.target_version) if rules else list(slices)
        self.allocated = AllocatedState.from_claims(claims)
        self.allocator = Allocator(
            cfg.features,
            self.classes,
            the_slices,
            self.allocated,
            pool_counters=cfg.pool_counters,
            target_version=cfg.target_version,
            reuse_results=True,
        )
        if dra:
            # like kube-scheduler, which compiles a DeviceClass's CEL when the class arrives (informer), not
            # in the scheduling cycle; a compile error is remembered and raised where it is used, as before
            for c in self.classes:
                for i, expr in enumerate(c.selectors):
                    with contextlib.suppress(SelectorError):
                        self.allocator.matcher.compile(i, expr)
        # pools that are not local to one node: a change there invalidates every node's cached result
        self.node_local_pools = {(s.driver, s.pool.name): s.node_name for s in the_slices if s.node_name}
        self.shared_version = 0
        self._cache: dict[tuple[Any, int], tuple[int, int, Fit]] = {}
        # bound pods in bind order, a dict: unbinding a victim is O(1), not a scan of every bound pod
        self.bound: dict[SimPod, None] = {}
        # claim key -> bound pods holding a claim of that key: equal claims share their key, so this finds
        # every pod _claim_in_use_elsewhere must look at without walking all bound pods
        self._claim_holders: dict[str, dict[SimPod, None]] = {}
        self.evicted: list[SimPod] = []
        self.recreated: list[SimPod] = []  # controllers' replacements of pods evicted for device taints
        self.taints = (
            Taints.of(slices, taint_rules if cfg.taint_rules else (), cfg.target_version)
            if dra and cfg.features.device_taints
            else Taints({}, [], cfg.target_version)
        )
        self.allocate_calls = 0
        self.fast = fast
        # equivalence classes of pods (same claims, requests, placement constraints): their filter and score
        # results per node, refreshed from the change log (node indexes whose state changed; -1: all)
        self._changes: list[int] = []
        self._classes: dict[tuple[Any, ...], ClassState] = {}
        self._pinned_classes: dict[tuple[Any, ...], ClassState] = {}
        self._cordoned = sum(1 for n in nodes if n.unschedulable)  # labels, taints, this: fixed in a run
        self._bound_priorities: Counter[int] = Counter()  # priorities of bound pods (for preemption)
        self._spec_keys: dict[tuple[int, ...], tuple[tuple[Any, ...], tuple[Any, ...]]] = {}
        self.preemptors: dict[tuple[Any, ...], Candidates] = {}  # per preemptor class (preemption)
        self.shortlisted = 0  # preemptions decided without trying every potential node (preemption)
        self.notes: list[str] = []  # what the run did beyond placing pods (PostFilter's deallocations)

    # ------------------------------------------------------------------ state changes
    def _touch(self, results: Iterable[AllocationResult]) -> None:
        """Nodes (or everything, for pools not local to a node) whose devices changed."""
        for res in results:
            for r in res.results:
                owner = self.node_local_pools.get((r.driver, r.pool))
                if owner is None:
                    self.shared_version += 1
                    self._changes.append(-1)
                elif owner in self.by_name:
                    self.by_name[owner].version = self.by_name[owner].devices_version = next(VERSIONS)
                    self._changes.append(self.by_name[owner].index)

    def _flips(self, res: AllocationResult) -> list[DeviceRequestAllocationResult]:
        """Results whose device is not allocated (before adding / after removing ``res``)."""
        return [
            r
            for r in res.results
            if not r.admin_access and not self.allocator.is_allocated((r.driver, r.pool, r.device))
        ]

    def bind(self, sp: SimPod, node: SimNode, fit: Fit) -> None:
        for k, v in sp.requests.items():
            node.used[k] = node.used.get(k, 0) + v
        node.used[PODS] = node.used.get(PODS, 0) + 1
        node.score_cpu += sp.score_cpu
        node.score_mem += sp.score_mem
        node.pods.append(sp)
        node.version = next(VERSIONS)
        self._changes.append(node.index)
        self._bound_priorities[sp.priority] += 1
        sp.node = node.name
        sp.reason = None
        devices: list[str] = []
        if fit.results:
            for claim, res in zip(fit.claims, fit.results, strict=True):
                res = self.allocator.fresh_share_ids(res)
                newly = self._flips(res)
                claim.allocation = res
                self.allocated.add_claim(claim)
                self.allocator.note_allocated(claim)
                self.allocator.counters_changed(newly, -1)
            self._touch(fit.results)
        if not sp.claims and not fit.claims:  # most of a cluster's pods: no devices, no claims of its own
            sp.devices = ()
            sp.extra.pop("own_claims", None)
            self.bound[sp] = None
            return
        for claim in [
            *sp.claims,
            *([sp.extra["ext_claim"]] if sp.extra.get("ext_claim") in fit.claims else []),
        ]:
            if claim.allocation is not None:
                devices += [f"{r.driver}/{r.pool}/{r.device}" for r in claim.allocation.results]
        sp.devices = devices or ()  # most bound pods have none: no empty list each
        own = [c for c in fit.claims if c in sp.claims]
        if own:  # read with a default: a cluster's running pods, most of them, keep no empty list
            sp.extra["own_claims"] = own
        else:
            sp.extra.pop("own_claims", None)
        self.bound[sp] = None
        for c in sp.claims:
            self._claim_holders.setdefault(c.key, {})[sp] = None

    def unbind(self, sp: SimPod) -> None:
        node = self.by_name[sp.node] if sp.node else None
        if node is None:
            return
        for k, v in sp.requests.items():
            node.used[k] = node.used.get(k, 0) - v
        node.used[PODS] = node.used.get(PODS, 0) - 1
        node.score_cpu -= sp.score_cpu
        node.score_mem -= sp.score_mem
        node.pods.remove(sp)
        node.version = next(VERSIONS)
        self._changes.append(node.index)
        self._bound_priorities[sp.priority] -= 1
        if not self._bound_priorities[sp.priority]:
            del self._bound_priorities[sp.priority]
        self._release(sp, sp.extra.get("own_claims", []))
        sp.node = None
        sp.devices = ()
        if self.bound.pop(sp, ...) is None:  # it was bound: it no longer holds its claims
            for c in sp.claims:
                holders = self._claim_holders.get(c.key)
                if holders is not None:
                    holders.pop(sp, None)
                    if not holders:
                        del self._claim_holders[c.key]

    def _release(self, sp: SimPod, claims: Iterable[ResourceClaim]) -> None:
        """Deallocate those of ``claims`` no other bound pod uses."""
        released = []
        for claim in claims:
            if claim.allocation is not None and not self._claim_in_use_elsewhere(claim, sp):
                res = claim.allocation
                released.append(res)
                self.allocated.remove_claim(claim)
                self.allocator.note_released(claim)
                self.allocator.counters_changed(self._flips(res), +1)
                claim.allocation = None
        self._touch(released)

    def _claim_in_use_elsewhere(self, claim: ResourceClaim, sp: SimPod) -> bool:
        holders = self._claim_holders.get(claim.key, {})
        return any(claim in other.claims for other in holders if other is not sp)

    # ------------------------------------------------------------------ filtering
    def _pod_claims_for_node(self, sp: SimPod, node: SimNode) -> tuple[list[ResourceClaim], frozenset[str]]:
        """Claims to allocate on this node and extended resources DRA satisfies here (KEP-5004)."""
        claims = [c for c in sp.claims if c.allocation is None]
        ext = sp.extra.get("ext_claim")
        if ext is None:
            return claims, frozenset()
        names: frozenset[str] = sp.extra["ext_resources"]
        if any(node.allocatable.get(r, 0) > 0 for r in names):
            return claims, frozenset()  # device plugin on this node handles them (NodeResourcesFit)
        return [*claims, ext], names

    def _signature(self, sp: SimPod, claims: list[ResourceClaim]) -> tuple[Any, ...]:
        return tuple(id(c.spec) for c in claims) + tuple(
            (id(c), id(c.allocation)) for c in sp.claims if c.allocation is not None
        )

    def static_reason(self, sp: SimPod, node: SimNode, required: Any) -> str | None:
        """The filters that depend only on the node object (not on what runs there)."""
        pod = sp.pod
        return (
            filters.unschedulable(pod, node.node)
            or filters.node_affinity(pod, node.node, required)
            or filters.taints(pod, node.node)
        )

    def filter_node(
        self, sp: SimPod, node: SimNode, required: Any, *, static_ok: bool = False, dra: bool = True
    ) -> Fit:
        reason = None if static_ok else self.static_reason(sp, node, required)
        if reason:
            return Fit(False, reason)
        claims, skip = self._pod_claims_for_node(sp, node) if self.dra else ([], frozenset())
        allocatable, used = node.allocatable, node.used
        if PODS in allocatable and allocatable[PODS] - used.get(PODS, 0) < 1:
            return Fit(False, "Too many pods")
        reason = filters.resources_fit_node(sp.requests, allocatable, used, skip)
        if reason:
            return Fit(False, reason)
        return self.dra_filter(sp, node, claims) if self.dra and dra else Fit(True)

    def dra_filter(self, sp: SimPod, node: SimNode, claims: list[ResourceClaim]) -> Fit:
        """DynamicResources' Filter (every failure UnschedulableAndUnresolvable, except a timeout's Error)."""
        for c in sp.claims:  # allocated shared claims: their node selector must match
            sel = c.allocation.node_selector if c.allocation is not None else None
            if sel is not None and filters.node_affinity(sp.pod, node.node, sel):
                return Fit(False, "node(s) didn't match the allocation of a shared ResourceClaim")
        if not claims:
            return Fit(True)
        key = (self._signature(sp, claims), node.index)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == node.devices_version and hit[1] == self.shared_version:
            fit = hit[2]  # an alike pod's: its error named that pod's claims
            fatal = own_claims(fit.fatal, fit.claims, claims)
            return Fit(fit.ok, fit.reason, fit.results, claims, fit.dra_score, fatal)
        self.allocate_calls += 1
        timeout = self.cfg.filter_timeout
        try:
            results = self.allocator.allocate(
                node.node, claims, deadline=None if timeout is None else time.monotonic() + timeout
            )
        except AllocationTimeout:
            # kube-scheduler: an Error status for this node (the pod is retried with backoff); transient,
            # so not cached
            return Fit(False, DRA_FAILURE, fatal=FILTER_TIMEOUT.format(node=node.node.name))
        except FailedOnNodeError as e:
            fit = Fit(False, str(e))  # ErrFailedAllocationOnNode: unschedulable here, the others are tried
        except AllocationError as e:
            fit = Fit(False, DRA_FAILURE, claims=claims, fatal=str(e))
        else:
            if results is None:
                fit = Fit(False, DRA_FAILURE)
            else:
                fit = Fit(True, None, results, claims, prioritized_score(claims, results))
        self._cache[key] = (node.devices_version, self.shared_version, fit)
        return Fit(fit.ok, fit.reason, fit.results, claims, fit.dra_score, fit.fatal)

    def find_feasible(self, sp: SimPod) -> tuple[list[tuple[SimNode, Fit]], Counter[str], str | None]:
        n = len(self.nodes)
        want = num_feasible_nodes_to_find(n, self.percentage)
        feasible: list[tuple[SimNode, Fit]] = []
        reasons: Counter[str] = Counter()
        required = filters.required_affinity(sp.pod)
        processed = 0
        fatal = None
        for i in range(n):
            node = self.nodes[(self.next_start + i) % n]
            processed += 1
            fit = self.filter_node(sp, node, required)
            if fit.fatal is not None:
                fatal = fit.fatal
                break
            if fit.ok:
                feasible.append((node, fit))
                if len(feasible) >= want:
                    break
            else:
                reasons[fit.reason or "unknown"] += 1
        self.next_start = next_start_index(self.next_start, processed, n)
        return feasible, reasons, fatal

    # ------------------------------------------------------------------ scoring
    def pick(self, sp: SimPod, feasible: list[tuple[SimNode, Fit]]) -> tuple[SimNode, Fit]:
        if len(feasible) == 1:
            return feasible[0]
        max_dra = max(f.dra_score for _, f in feasible)
        best: tuple[SimNode, Fit] | None = None
        best_score = -1.0
        for node, fit in feasible:
            f, balanced = fit_score(self.scoring, sp, node)
            dra = fit.dra_score * MAX_SCORE / max_dra if max_dra else 0
            total = int(f) + int(balanced) + int(dra)
            if total > best_score:
                best, best_score = (node, fit), total
        assert best is not None
        return best

    # ------------------------------------------------------------------ one pod
    def try_schedule(self, sp: SimPod) -> Outcome:
        if self.fast:
            return self._try_schedule_fast(sp)
        feasible, reasons, fatal = self.find_feasible(sp)
        if fatal is not None:
            return Outcome(False, reason=f"error: {fatal}")
        if not feasible:
            return Outcome(False, reason=pending_reason(self, sp, reasons))
        node, fit = self.pick(sp, feasible)
        self.bind(sp, node, fit)
        return Outcome(True, node.name)

    # ------------------------------------------------------------------ fast path (same decisions)
    def _class_key(self, sp: SimPod) -> tuple[Any, ...]:
        """What filter and score results depend on, besides the node: pods with equal keys get equal results."""
        pod = sp.pod
        ext = sp.extra.get("ext_claim")
        # the pod-spec part is a function of these objects, which pods of one template share
        parts = (
            pod.containers,
            pod.init_containers,
            pod.overhead,
            pod.node_selector,
            pod.affinity,
            pod.tolerations,
        )
        memo_key = tuple(map(id, parts))
        hit = self._spec_keys.get(memo_key)
        if hit is not None and all(a is b for a, b in zip(hit[0], parts, strict=True)):
            spec_key = hit[1]
        else:
            spec_key = (
                tuple(sorted(sp.requests.items())),
                sp.score_cpu,
                sp.score_mem,
                tuple(sorted(pod.node_selector.items())),
                repr(pod.affinity) if pod.affinity else None,
                tuple((t.key, t.operator, t.value, t.effect) for t in pod.tolerations),
            )
            self._spec_keys[memo_key] = (parts, spec_key)
        return (
            tuple(
                id(c.spec) if c.allocation is None else ("allocated", id(c), id(c.allocation))
                for c in sp.claims
            ),
            id(ext.spec) if ext is not None else None,
            spec_key,
        )

    def _class_for(self, sp: SimPod) -> ClassState:
        key = self._class_key(sp)
        for kept in (self._classes, self._pinned_classes):
            cls = kept.get(key)
            if cls is not None:
                kept[key] = kept.pop(key)  # most recently used last
                return cls
        cls = new_class(sp, self.nodes, self.by_name, self._cordoned)
        # pinned classes (one per DaemonSet pod) are kept apart, so they never push out the shared ones
        keep_recent(self._classes if cls.pinned is None else self._pinned_classes, key, cls)
        return cls

    def _sync(self, cls: ClassState, sp: SimPod) -> None:
        """Refresh the class's results for the nodes that changed since it last looked."""
        dirty: Iterable[int]
        if cls.log_pos < 0 or -1 in self._changes[cls.log_pos :]:
            dirty = range(len(self.nodes)) if cls.pinned is None else cls.pinned
        else:
            dirty = set(self._changes[cls.log_pos :])
            if cls.pinned is not None:
                dirty = sorted(i for i in dirty if i in cls.fits)
        cls.log_pos = len(self._changes)
        required = cls.required
        fits, base, dras = cls.fits, cls.base, cls.dra
        for i in dirty:
            node = self.nodes[i]
            was = fits[i]
            if was is None:
                static = self.static_reason(sp, node, required)
                if static:
                    cls.set_fit(i, Fit(False, static))
                    cls.static_fail.add(i)
                    continue
            elif i in cls.static_fail:
                continue  # labels, taints and unschedulable do not change during a simulation
            fit = self.filter_node(sp, node, required, static_ok=True)
            cls.set_fit(i, fit, dra=not fit.ok and not filters.resources_reason(fit.reason))
            if fit.fatal is not None:
                cls.fatal.add(i)
            else:
                cls.fatal.discard(i)
            if fit.ok:
                f, b = fit_score(self.scoring, sp, node)
                base[i] = int(f) + int(b)
                dras[i] = fit.dra_score
                if fit.dra_score:
                    cls.with_dra.add(i)
                else:
                    cls.with_dra.discard(i)
                if was is None or not was.ok:
                    insort(cls.feasible, i)
            else:
                cls.with_dra.discard(i)
                if was is not None and was.ok:
                    del cls.feasible[bisect_left(cls.feasible, i)]

    def _try_schedule_fast(self, sp: SimPod) -> Outcome:
        cls = self._class_for(sp)
        self._sync(cls, sp)
        n = len(self.nodes)
        if cls.fatal or n == 0:
            return self._try_schedule_slow(sp)
        want = num_feasible_nodes_to_find(n, self.percentage)
        feasible = cls.feasible
        start = self.next_start
        if not feasible:
            # nothing changed since the last pod of this class failed: same reason (explaining DRA
            # failures runs the allocator's explanation on every node)
            if cls.pending is not None and cls.pending[0] == len(self._changes):
                return Outcome(False, reason=own_claims(cls.pending[1], cls.pending[2], sp.claims))
            reason = class_reason(self, sp, cls)
            cls.pending = (len(self._changes), reason, sp.claims)
            return Outcome(False, reason=reason)
        p = bisect_left(feasible, start)
        if len(feasible) >= want:
            window = feasible[p : p + want]
            if len(window) < want:
                window += feasible[: want - len(window)]
            processed = (window[-1] - start) % n + 1
        else:
            window = feasible[p:] + feasible[:p]
            processed = n
        self.next_start = next_start_index(start, processed, n)
        if len(window) == 1:
            best = window[0]
        elif cls.with_dra:
            max_dra = max(cls.dra[i] for i in window)
            best, best_score = window[0], -1
            for i in window:
                total = cls.base[i] + (int(cls.dra[i] * MAX_SCORE / max_dra) if max_dra else 0)
                if total > best_score:
                    best, best_score = i, total
        else:
            best = max(window, key=cls.base.__getitem__)
        node = self.nodes[best]
        chosen = cls.fits[best]
        assert chosen is not None
        fit = Fit(True)
        if chosen.results is not None:  # the class's allocation, for this pod's own claims (same specs)
            claims, _ = self._pod_claims_for_node(sp, node)
            fit = Fit(True, None, chosen.results, claims, chosen.dra_score)
        self.bind(sp, node, fit)
        return Outcome(True, node.name)

    def _try_schedule_slow(self, sp: SimPod) -> Outcome:
        feasible, reasons, fatal = self.find_feasible(sp)
        if fatal is not None:
            return Outcome(False, reason=f"error: {fatal}")
        if not feasible:
            return Outcome(False, reason=pending_reason(self, sp, reasons))
        node, fit = self.pick(sp, feasible)
        self.bind(sp, node, fit)
        return Outcome(True, node.name)

    # ------------------------------------------------------------------ the loop
    def run(self, pods: Sequence[SimPod], gangs: dict[str, int] | None = None) -> None:
        # the loop allocates many short-lived objects and few cycles: the cyclic GC only costs time here
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._run(pods, gangs)
        finally:
            if was_enabled:
                gc.enable()

    def _run(self, pods: Sequence[SimPod], gangs: dict[str, int] | None = None) -> None:
        gangs = gangs or {}
        for sp in pods:
            if sp.pod.node_name and sp.pod.node_name in self.by_name:
                bind_existing(self, sp)
        if self.taints:
            self.recreated = evict_tainted(self, [sp for sp in pods if sp.node is not None])
        # a pod that already has a reason (missing ResourceClaimTemplate or PodGroup...) is held back before
        # the queue, like PreEnqueue does: it is never placed without what it waits for
        queue = sorted(
            [
                *(p for p in pods if p.node is None and not p.pod.node_name and p.reason is None),
                *self.recreated,
            ],
            # pods created only after others are placed (sp.extra["after"]) come to the queue after them
            key=lambda p: (bool(p.extra.get("after")), -p.priority, p.order),
        )
        done: set[int] = set()
        by_key = {p.key: p for p in pods}
        pos = -1
        while (pos := pos + 1) < len(queue):  # PostFilter puts pods back (postfilter.requeue)
            sp = queue[pos]
            if id(sp) in done:
                continue
            after = sp.extra.get("after")  # created by its controller only once these pods are placed
            if after and not all(by_key[k].node for k in after[0] if k in by_key):
                done.add(id(sp))
                sp.reason = after[1]
                continue
            if sp.gang and sp.gang in gangs:
                members = [p for p in queue if p.gang == sp.gang and id(p) not in done]
                for p in members:
                    done.add(id(p))
                schedule_gang(self, members, gangs[sp.gang])
                continue
            done.add(id(sp))
            out = self.try_schedule(sp)
            if out.placed or (out.reason or "").startswith("error:"):  # an Error: no PostFilter runs
                sp.reason = out.reason
                continue
            sp.reason = out.reason
            freed, choices = postfilter.pick(self, sp)  # DynamicResources' PostFilter, then DefaultPreemption
            if self.preemption:
                preempt(self, sp)
            if (
                freed is not None
                and sp.node is None
                and (note := postfilter.deallocate(self, sp, freed, choices))
            ):
                self.notes.append(note)
                done.discard(id(sp))
                postfilter.requeue(queue, pos, sp)
            elif sp.node is None and sp.extra.get("postfilter"):
                sp.reason = f"{sp.reason} ({'; '.join(sp.extra['postfilter'])})"

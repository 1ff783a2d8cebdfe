"""The structured allocator: upstream ``k8s.io/dynamic-resource-allocation/structured`` for one node.

Behaviour follows the incubating allocator (and the experimental one when ListTypeAttributes is on) of
kubernetes/dynamic-resource-allocation as of Kubernetes 1.37; see dra-reference.md §4 for the algorithm in
prose. The search is depth-first and returns the first full solution:

claims in input order → requests in spec order → for ``firstAvailable`` requests subrequest 0, 1, … (a
subrequest is kept only if the *entire remainder* also succeeds) → device slots 0..n-1, where the next slot
of the same request only looks at devices after the previous pick (combinations, not permutations).

Per candidate device the checks run in upstream's order: in use → class and request selectors (cached per
device × request) → per-device node selection → consumable capacity → counters → taints → constraints.

Version: the behaviour of k8s.io/dynamic-resource-allocation v0.37 (Kubernetes 1.37), where a device that
a taint, constraint or capacity check rejects gives back what it reserved (counters, constraint state,
capacity), counter caches are keyed by driver + pool, and capacity arithmetic errors abort the allocation.
Upstream quirks that remain are reproduced on purpose (each has a conformance case or a unit test):
- counters are checked *before* taints and constraints (so a device can fail for counters first);
- available counters are computed once per pool per Allocator and reused across nodes, like upstream's
  ``availableCounters`` cache (the simulator invalidates them when allocations change);
- the 1.33/1.34 counter model (counters in the device's own slice, keyed by slice name) is used for target
  versions up to 1.34 (``pool_counters=False``).
"""

from __future__ import annotations

import copy
import dataclasses
import time
import uuid
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.allocator import capacity as cap
from kubedra.allocator.constraints import Constraint, DistinctAttribute, MatchAttribute
from kubedra.allocator.pools import Pool, PoolError, gather_pools, node_matches
from kubedra.allocator.selectors import SelectorError, SelectorMatcher
from kubedra.allocator.state import AllocatedState, DeviceID, Features, device_id_str
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.model.objects import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT,
    AllocationResult,
    CounterSet,
    Device,
    DeviceAllocationConfiguration,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceTaint,
    DeviceToleration,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ResourceClaim,
    ResourceSlice,
)
from kubedra.model.quantity import Quantity

MAX_RESULTS = 32  # AllocationResultsMaxSize


class AllocationError(Exception):
    """A fatal allocation problem (bad CEL, unknown class, All-mode on an incomplete pool, …).

    kube-scheduler reports these as an *error* status for the whole scheduling attempt, not as
    "unschedulable on this node".
    """


class InvalidPoolsError(AllocationError):
    """upstream ``ErrFailedAllocationOnNode``: allocation failed and invalid pools were seen (node-local)."""


class AllocationTimeout(AllocationError):
    """The search ran past its deadline: upstream's allocateOne returns ``filter operation aborted: <the
    context's cause>`` once its context is done. kube-scheduler's DynamicResources filter bounds each node's
    allocation by ``DRASchedulerFilterTimeout`` (default 10 s) and then reports :data:`FILTER_TIMEOUT`."""

    def __init__(self) -> None:
        super().__init__("filter operation aborted: context deadline exceeded")


# What kube-scheduler's DynamicResources Filter returns (an Error status: the pod is retried with backoff,
# not marked unschedulable) when the allocation on a node hit the filter timeout.
FILTER_TIMEOUT = "node {node}: timed out trying to allocate devices"


class _Stop(Exception):
    """errAllocationResultMaxSizeExceeded: prune the search (not fatal)."""


def claim_ref(claim: ResourceClaim) -> str:
    return f"{claim.meta.namespace}/{claim.meta.name}" if claim.meta.namespace else claim.meta.name


def tolerates(tol: DeviceToleration, taint: DeviceTaint) -> bool:
    """``resourceclaim.ToleratesTaint``."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    if tol.operator in ("", "Equal"):
        return tol.value == taint.value
    return tol.operator == "Exists"


def taint_blocks(device: Device, tolerations: Sequence[DeviceToleration]) -> DeviceTaint | None:
    for t in device.taints:
        if t.effect in ("NoSchedule", "NoExecute") and not any(tolerates(x, t) for x in tolerations):
            return t
    return None


@dataclass
class _Req:
    """A request or one subrequest, normalised (upstream's requestAccessor)."""

    name: str  # own name
    parent: str  # parent request name for a subrequest, "" otherwise
    class_name: str
    selectors: list[str]
    mode: str
    count: int
    admin: bool
    has_admin: bool
    tolerations: list[DeviceToleration]
    capacity: dict[str, Quantity] | None

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass
class _ReqData:
    req: _Req
    cls: DeviceClass | None
    num: int = 0
    all_devices: list[_Dev] = field(default_factory=list)
    selected_sub: int = 0  # only on the entry with sub index 0 of a firstAvailable request
    is_sub: bool = False
    sel_key: tuple[Any, ...] | None = None  # (class name, request selectors): key of the selectable cache
    scans: int = 0  # how often the search scanned the candidates for this request
    # indices of the selectable candidates, once known for all of them without an error (see _scan_order)
    order: list[int] | None = None


@dataclass
class _Dev:
    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


@dataclass
class _Rollback:
    """What ``_allocate_device`` has reserved so far (upstream's ``deviceRollbackState``)."""

    constraints_added: int = 0
    marked: bool = False
    capacity: dict[str, Quantity] | None = None
    capacity_existed: bool = False


@dataclass
class _Result:
    req: _Req
    dev: _Dev
    share_id: str | None
    consumed: dict[str, Quantity] | None
    admin: bool | None


def _requests_of(claim: ResourceClaim) -> list[list[_Req]]:
    """One list per request: [exact] or the subrequests in order."""
    out: list[list[_Req]] = []
    for r in claim.spec.requests:
        if r.first_available:
            out.append(
                [
                    _Req(
                        s.name,
                        r.name,
                        s.device_class_name,
                        s.selectors,
                        s.allocation_mode,
                        s.count,
                        False,
                        False,
                        s.tolerations,
                        s.capacity,
                    )
                    for s in r.first_available
                ]
            )
        elif r.exactly is not None:
            e = r.exactly
            out.append(
                [
                    _Req(
                        r.name,
                        "",
                        e.device_class_name,
                        e.selectors,
                        e.allocation_mode,
                        e.count,
                        bool(e.admin_access),
                        e.admin_access is not None,
                        e.tolerations,
                        e.capacity,
                    )
                ]
            )
        else:  # neither set: upstream sees an exact request with an empty class name
            out.append([_Req(r.name, "", "", [], ALLOCATION_MODE_EXACT, 0, False, False, [], None)])
    return out


class Allocator:
    """Allocate claims on one node at a time; build once per set of slices/classes/allocated state.

    ``pool_counters`` selects the counter model: True for Kubernetes ≥ 1.35 (counter sets are pool-wide and
    live in counters-only slices), False for 1.33/1.34 (counters in the device's own slice).
    """

    def __init__(
        self,
        features: Features,
        classes: Iterable[DeviceClass],
        slices: Sequence[ResourceSlice],
        allocated: AllocatedState | None = None,
        *,
        selector_matcher: SelectorMatcher | None = None,
        pool_counters: bool = True,
        share_id_factory: Callable[[], str] | None = None,
        target_version: str = DEFAULT_TARGET,
    ) -> None:
        self.features = features
        self.target_version = target_version
        major, _, minor = target_version.partition(".")
        # v0.37 result configs: a claim config once, requests cleared when it covers all (v0.36: neither)
        self.clears_all_request_configs = (int(major), int(minor.split(".")[0])) >= (1, 37)
        self.classes = {c.name: c for c in classes}
        self.all_slices = list(slices)
        self.allocated = allocated or AllocatedState()
        self.pool_counters = pool_counters
        self.share_id_factory = share_id_factory or (lambda: str(uuid.uuid4()))
        self.matcher = selector_matcher or SelectorMatcher(
            target_version=target_version,
            consumable_capacity=features.consumable_capacity,
            list_type_attributes=features.list_type_attributes,
        )
        self.slices_on_node: dict[str, list[ResourceSlice]] = {}
        self.slices_shared: list[ResourceSlice] = []
        for s in self.all_slices:
            if s.node_name:
                self.slices_on_node.setdefault(s.node_name, []).append(s)
            else:
                self.slices_shared.append(s)
        self._available_counters: dict[str, dict[str, dict[str, int]]] = {}
        self._overdrawn: set[str] = set()  # counter caches with a negative counter (full check needed)
        self._devices_by_id: dict[DeviceID, tuple[Device, ResourceSlice]] | None = None
        # (class name, request selectors[, node]) and device -> selectable; classes and slices are fixed
        self._selectable: dict[tuple[Any, ...], bool] = {}
        self._pool_slice_names: dict[str, list[str]] = {}
        for s in self.all_slices:
            self._pool_slice_names.setdefault(s.pool.name, []).append(s.name)
        self._shared_index: set[DeviceID] = {(s[0], s[1], s[2]) for s in self.allocated.shared_ids}
        self.allocate_one_calls = 0
        # node name -> (node, its pools, its candidate devices); slices are fixed for the allocator's life
        self._pools: dict[str, tuple[Node, list[Pool], list[_Dev] | None]] = {}

    # ------------------------------------------------------------------ incremental use (simulator)
    def note_allocated(self, claim: ResourceClaim) -> None:
        """The caller added ``claim`` to ``self.allocated``; keep derived indexes in step."""
        if claim.allocation is not None:
            for r in claim.allocation.results:
                if r.share_id and not r.admin_access:
                    self._shared_index.add((r.driver, r.pool, r.device))

    def note_released(self, claim: ResourceClaim) -> None:
        """The caller removed ``claim`` from ``self.allocated``."""
        self._shared_index = {(s[0], s[1], s[2]) for s in self.allocated.shared_ids}

    def invalidate_pool(self, pool_name: str, driver: str | None = None) -> None:
        """Forget cached available counters of a pool whose allocations changed.

        Upstream builds a new allocator per scheduling cycle; the simulator keeps one and drops only what
        a bind or an eviction made stale. Counter caches are keyed by ``driver/pool`` (1.35+) or by slice
        name (1.33/1.34)."""
        if driver is not None:
            self._available_counters.pop(f"{driver}/{pool_name}", None)
        else:
            for key in [k for k in self._available_counters if k.endswith(f"/{pool_name}")]:
                del self._available_counters[key]
        for name in self._pool_slice_names.get(pool_name, ()):
            self._available_counters.pop(name, None)

    def counters_changed(self, results: Iterable[DeviceRequestAllocationResult], sign: int) -> None:
        """Devices of ``results`` just became allocated (``sign`` -1) or free (+1) in ``self.allocated``:
        update the cached counter availability of their pools instead of dropping it (what
        :meth:`invalidate_pool` does, and still does for shared or capacity-consuming results)."""
        if self._devices_by_id is None:
            self._devices_by_id = {
                (sl.driver, sl.pool.name, d.name): (d, sl) for sl in self.all_slices for d in sl.devices
            }
        for r in results:
            if r.share_id or r.consumed_capacity:
                self.invalidate_pool(r.pool, r.driver)
                continue
            entry = self._devices_by_id.get((r.driver, r.pool, r.device))
            if entry is None or not entry[0].consumes_counters:
                continue
            dev, sl = entry
            key = f"{r.driver}/{r.pool}" if self.pool_counters else sl.name
            avail = self._available_counters.get(key)
            if avail is None:
                continue
            negative = False
            for cc in dev.consumes_counters:
                cset = avail.get(cc.counter_set)
                if cset is None:
                    continue
                for n, q in cc.counters.items():
                    if n in cset:
                        cset[n] += sign * q.nanos
                        negative = negative or cset[n] < 0
            if negative:
                self._overdrawn.add(key)
            elif (
                sign > 0
                and key in self._overdrawn
                and not any(v < 0 for c in avail.values() for v in c.values())
            ):
                self._overdrawn.discard(key)

    def fresh_share_ids(self, result: AllocationResult) -> AllocationResult:
        """A copy of ``result`` with new shareIDs (a cached result may be reused for another claim)."""
        if all(r.share_id is None for r in result.results):
            # nothing to renew: a new result object around the same (never mutated) device results
            return AllocationResult(
                results=list(result.results),
                config=list(result.config),
                node_selector=result.node_selector,
                allocation_timestamp=result.allocation_timestamp,
            )
        out = copy.copy(result)
        out.results = [
            copy.copy(r) if r.share_id is None else dataclasses.replace(r, share_id=self.share_id_factory())
            for r in result.results
        ]
        return out

    def is_allocated(self, did: DeviceID) -> bool:
        a = self.allocated
        return did in a.devices or did in a.capacity or did in self._shared_index

    def pools_for(self, node: Node) -> list[Pool]:
        """The node's pools. Slices do not change during an Allocator's life, so they are gathered once per
        node (object) and reused by later calls (the simulator calls allocate many times per node)."""
        hit = self._pools.get(node.name)
        if hit is not None and hit[0] is node:
            return hit[1]
        slices_for_node = self.slices_on_node.get(node.name, []) + self.slices_shared
        try:
            pools = gather_pools(
                slices_for_node, node, self.features, self.all_slices, pool_counters=self.pool_counters
            )
        except PoolError as e:
            raise AllocationError(f"gather pool information: {e}") from None
        self._pools[node.name] = (node, pools, None)
        return pools

    def _candidates(self, node: Node, pools: list[Pool]) -> list[_Dev]:
        """Every device of the node's complete, valid pools, in pool and slice order (cached with the pools)."""
        hit = self._pools.get(node.name)
        if hit is not None and hit[0] is node and hit[1] is pools and hit[2] is not None:
            return hit[2]
        cands = [
            _Dev((p.driver, p.name, d.name), d, s, p)
            for p in pools
            if not (p.incomplete or p.invalid)
            for s in p.slices
            for d in s.devices
        ]
        if hit is not None and hit[0] is node and hit[1] is pools:
            self._pools[node.name] = (node, pools, cands)
        return cands

    def allocate(
        self, node: Node, claims: Sequence[ResourceClaim], *, deadline: float | None = None
    ) -> list[AllocationResult] | None:
        """Results for every claim, None when they cannot all be allocated on this node.

        Raises :class:`AllocationError` for fatal problems, :class:`InvalidPoolsError` when allocation
        failed and some pool was invalid, and :class:`AllocationTimeout` when the search step that starts
        finds ``time.monotonic()`` at or past ``deadline`` (upstream checks its context in every
        ``allocateOne``, so an already expired deadline fails before the first device is tried).
        """
        run = _Run(self, node, list(claims), self.pools_for(node))
        run.deadline = deadline
        return run.allocate()


class _Run:
    """State of one Allocate call (upstream's ``allocator`` struct)."""

    def __init__(self, a: Allocator, node: Node, claims: list[ResourceClaim], pools: list[Pool]) -> None:
        self.a = a
        self.f = a.features
        self.node = node
        self.claims = claims
        self.pools = pools
        self.candidates: list[_Dev] = a._candidates(node, pools)
        self.req_data: dict[tuple[int, int, int], _ReqData] = {}
        self.constraints: list[list[Constraint]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, int]]] = {}
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.deadline: float | None = None
        self._fits_cache: dict[tuple[int, DeviceID], bool] = {}

    # ------------------------------------------------------------------ setup
    def allocate(self) -> list[AllocationResult] | None:
        f = self.f
        for ci, claim in enumerate(self.claims):
            min_claim = 0
            for ri, alts in enumerate(_requests_of(claim)):
                is_sub = bool(alts[0].parent)
                if not f.prioritized_list and is_sub:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {alts[0].parent}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                # Only the incubating and experimental allocators check this; the stable one (chosen when no
                # feature beyond its SupportedFeatures is on) ignores capacity requests.
                if not f.consumable_capacity and f.implementation() != "stable":
                    for r in alts:
                        if r.capacity is not None:
                            what = "subrequest" if is_sub else "request"
                            raise AllocationError(
                                f"claim {claim_ref(claim)}, {what} {r.name}: has capacity requests, "
                                "but the DRAConsumableCapacity feature is disabled"
                            )
                min_req: int
                if is_sub:
                    best: int | None = None
                    for si, r in enumerate(alts):
                        rd = self._validate(ci, ri, si, r)
                        rd.is_sub = True
                        self.req_data[(ci, ri, si)] = rd
                        best = rd.num if best is None else min(best, rd.num)
                    min_req = best or 0
                else:
                    rd = self._validate(ci, ri, 0, alts[0])
                    self.req_data[(ci, ri, 0)] = rd
                    min_req = rd.num
                if min_req > MAX_RESULTS - min_claim:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {alts[0].parent or alts[0].name}: adding {min_req} devices "
                        f"exceeds the claim limit of {MAX_RESULTS}, with {min_claim} already accounted for"
                    )
                min_claim += min_req
            cons: list[Constraint] = []
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute is not None:
                    cons.append(MatchAttribute(c.requests, c.match_attribute, f.list_type_attributes))
                elif c.distinct_attribute is not None and f.implementation() != "stable":
                    # upstream's stable allocator (chosen when the enabled features allow it) knows only
                    # matchAttribute: distinctAttribute falls into its "unsupported constraint" branch
                    cons.append(DistinctAttribute(c.requests, c.distinct_attribute, f.list_type_attributes))
                else:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(cons)
        try:
            done = self._one(0, 0, 0, 0, False, 0)
        except _Stop:
            return None
        if not done:
            if any(p.invalid for p in self.pools):
                raise InvalidPoolsError("invalid resource pools were encountered")
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _validate(self, ci: int, ri: int, si: int, r: _Req) -> _ReqData:
        claim = self.claims[ci]
        rd = _ReqData(req=r, cls=None)
        if not self.f.admin_access and r.has_admin:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {r.name}: admin access is requested, but the feature is disabled"
            )
        if not r.class_name:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {r.name}: missing device class name (unsupported request type?)"
            )
        cls = self.a.classes.get(r.class_name)
        if cls is None:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {r.name}: could not retrieve device class {r.class_name}: "
                f'deviceclass.resource.k8s.io "{r.class_name}" not found'
            )
        rd.cls = cls
        if r.mode == ALLOCATION_MODE_EXACT:
            rd.num = r.count
        elif r.mode == ALLOCATION_MODE_ALL:
            for p in self.pools:
                if p.incomplete:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {r.name}: asks for all devices, but resource pool "
                        f"{p.id} is currently being updated"
                    )
                if p.invalid:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {r.name}: asks for all devices, but resource pool "
                        f"{p.id} is currently invalid"
                    )
                for s in p.slices:
                    for d in s.devices:
                        did = (s.driver, s.pool.name, d.name)
                        if not self._selectable(ci, ri, si, rd, s, d, did):
                            continue
                        if self.f.consumable_capacity:
                            try:
                                ok = cap.fits(
                                    None, r.capacity, d.capacity, None, self.f.fractional_capacity_range
                                )
                            except cap.CapacityError as e:
                                raise AllocationError(
                                    f"claim {claim_ref(claim)}, request {r.name}: checking capacity for device {d.name}: {e}"
                                ) from None
                            if not ok:
                                continue
                        rd.all_devices.append(_Dev(did, d, s, p))
            rd.num = len(rd.all_devices)
        else:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {r.name}: unsupported count mode {r.mode}"
            )
        return rd

    def _scan_order(self, ci: int, ri: int, si: int, rd: _ReqData) -> list[int] | None:
        """The selectable candidates of a request, for a search that comes back to it (backtracking).

        Selectability is fixed during a run, so a scan may skip the others; but a selector's runtime error
        must surface only when upstream's scan reaches that device (not in use), so the list is used only
        when every candidate was evaluated without an error; otherwise the scan stays lazy."""
        if rd.order is not None or rd.scans < 0:
            return rd.order
        rd.scans += 1
        if rd.scans < 2:  # a first scan that finds a device never needs the others
            return None
        try:
            rd.order = [
                i
                for i, dev in enumerate(self.candidates)
                if self._selectable(ci, ri, si, rd, dev.slice, dev.device, dev.id)
            ]
        except AllocationError:
            rd.scans = -1  # an erroring selector: keep upstream's lazy order
        return rd.order

    # ------------------------------------------------------------------ checks
    def _selectable(
        self, ci: int, ri: int, si: int, rd: _ReqData, s: ResourceSlice, d: Device, did: DeviceID
    ) -> bool:
        if not self.f.device_binding_and_status and d.binding_conditions:
            return False
        # selectors and per-device node selection only depend on the device, the class and the request's
        # selectors (and the node, for per-device node selection): remembered across Allocate calls
        sel_key = rd.sel_key
        if sel_key is None:
            sel_key = rd.sel_key = (rd.cls.name if rd.cls is not None else None, tuple(rd.req.selectors))
        key = (sel_key, did, self.node.name) if s.per_device_node_selection else (sel_key, did)
        cache = self.a._selectable
        cached = cache.get(key)
        if cached is not None:
            return cached
        claim = self.claims[ci]
        try:
            if rd.cls is not None and not self.a.matcher.all_match(rd.cls.selectors, d, s.driver):
                cache[key] = False
                return False
        except SelectorError as e:
            raise AllocationError(
                e.describe(f"class {rd.cls.name if rd.cls else ''}", device_id_str(did))
            ) from None
        try:
            if not self.a.matcher.all_match(rd.req.selectors, d, s.driver):
                cache[key] = False
                return False
        except SelectorError as e:
            raise AllocationError(e.describe(f"claim {claim_ref(claim)}", device_id_str(did))) from None
        if s.per_device_node_selection:
            try:
                ok = node_matches(self.node, d.node_name, d.all_nodes, d.node_selector)
            except PoolError as e:
                raise AllocationError(str(e)) from None
            if not ok:
                cache[key] = False
                return False
        cache[key] = True
        return True

    def _capacity_fits(self, r: _Req, did: DeviceID, d: Device) -> bool:
        """Raises cap.CapacityError (the caller turns it into an AllocationError)."""
        current = self.a.allocated.capacity.get(did)
        allocating = self.allocating_capacity.get(did)
        if current is None and allocating is None:
            # nothing consumed yet: the answer depends only on the request and the device, and the search
            # asks it again for every combination it tries
            key = (id(r), did)
            hit = self._fits_cache.get(key)
            if hit is None:
                hit = self._fits_cache[key] = cap.fits(
                    None, r.capacity, d.capacity, None, self.f.fractional_capacity_range
                )
            return hit
        return cap.fits(current, r.capacity, d.capacity, allocating, self.f.fractional_capacity_range)

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated.devices or bool(self.allocating.get(did))

    def _capacity_in_use(self, did: DeviceID) -> bool:
        return (
            did in self.a.allocated.capacity or did in self.a._shared_index or did in self.allocating_capacity
        )

    # ------------------------------------------------------------------ counters
    def _counter_key(self, dev: _Dev) -> str:
        """Pool ID (driver/pool) since 1.35; the slice name in the 1.33/1.34 model."""
        return dev.pool.id if self.a.pool_counters else dev.slice.name

    def _available(self, dev: _Dev) -> dict[str, dict[str, int]]:
        key = self._counter_key(dev)
        cache = self.a._available_counters
        avail = cache.get(key)
        if avail is not None:
            return avail
        sets: Iterable[CounterSet]
        if self.a.pool_counters:
            sets = dev.pool.counter_sets.values()
            scan = [*dev.pool.slices, *dev.pool.slices_not_targeting_node]
        else:
            sets = dev.slice.shared_counters
            scan = [dev.slice]
        avail = {cs.name: {n: q.nanos for n, q in cs.counters.items()} for cs in sets}
        for s in scan:
            for d in s.devices:
                if not d.consumes_counters or not self.a.is_allocated((s.driver, s.pool.name, d.name)):
                    continue
                for cc in d.consumes_counters:
                    cset = avail.get(cc.counter_set)
                    if cset is None:
                        continue
                    for n, q in cc.counters.items():
                        if n in cset:
                            cset[n] -= q.nanos
        cache[key] = avail
        if any(v < 0 for c in avail.values() for v in c.values()):
            self.a._overdrawn.add(key)
        else:
            self.a._overdrawn.discard(key)
        return avail

    def _take_counters(self, dev: _Dev) -> bool:
        avail = self._available(dev)
        consumed = self.consumed_counters.setdefault(self._counter_key(dev), {})
        for cc in dev.device.consumes_counters:
            cset = consumed.setdefault(cc.counter_set, {})
            for n, q in cc.counters.items():
                cset[n] = cset.get(n, 0) + q.nanos
        # every other counter set passed this check when its consumption last changed; without a counter
        # that was negative to begin with, only the sets this device consumes can fail now
        if self._counter_key(dev) in self.a._overdrawn:
            check: Iterable[str] = avail
        else:
            check = [cc.counter_set for cc in dev.device.consumes_counters if cc.counter_set in avail]
        for set_name in check:
            counters = avail[set_name]
            used = consumed.get(set_name, {})
            for n, v in counters.items():
                if v < used.get(n, 0):
                    self._release_counters(dev)
                    return False
        return True

    def _release_counters(self, dev: _Dev) -> None:
        consumed = self.consumed_counters.get(self._counter_key(dev), {})
        for cc in dev.device.consumes_counters:
            cset = consumed.setdefault(cc.counter_set, {})
            for n, q in cc.counters.items():
                cset[n] = cset.get(n, 0) - q.nanos

    # ------------------------------------------------------------------ one device
    def _allocate_device(self, ci: int, ri: int, si: int, dev: _Dev, must: bool) -> Callable[[], None] | None:
        """Try one device; returns its undo function, or None when it cannot be used here.

        Every rejection after a partial reservation rolls back what was reserved (counters, constraints,
        in-use marks, capacity), like upstream's ``rollbackDevice`` since v0.37."""
        claim = self.claims[ci]
        rd = self.req_data[(ci, ri, si)]
        r = rd.req
        did = dev.id
        d = dev.device
        f = self.f
        multi = bool(f.consumable_capacity and d.allow_multiple_allocations)
        if not multi and r.admin and ci in self.allocating.get(did, ()):
            return None
        if not r.admin and self._in_use(did):
            return None
        if not f.partitionable_devices and d.consumes_counters:
            return None
        skip_counters = multi and self._capacity_in_use(did)
        counters_taken = False
        if not skip_counters and d.consumes_counters:
            if not self._take_counters(dev):
                return None
            counters_taken = True
        base = r.parent or r.name
        sub = r.name if r.parent else ""
        cons = self.constraints[ci]
        results = self.results[ci]
        n_before = len(results)
        state = _Rollback()

        def rollback() -> None:
            del results[n_before:]
            inserted = state.capacity
            if inserted is not None:
                agg = self.allocating_capacity.get(did)
                if agg is not None:
                    for k, q in inserted.items():
                        if k in agg:
                            agg[k] = agg[k].sub(q)
                    if all(v.is_zero() for v in agg.values()):
                        del self.allocating_capacity[did]
                if state.capacity_existed and did not in self.allocating_capacity:
                    self.allocating_capacity[did] = {}
            if state.marked:
                self.allocating[did].discard(ci)
            for idx in range(state.constraints_added - 1, -1, -1):
                cons[idx].remove(base, sub, d, did[0])
            if counters_taken:
                self._release_counters(dev)

        if f.device_taints and taint_blocks(d, r.tolerations) is not None:
            rollback()
            return None
        for c in cons:
            if not c.add(base, sub, d, did[0]):
                rollback()
                if must:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {r.name}: cannot add device {device_id_str(did)} "
                        "because a claim constraint would not be satisfied"
                    )
                return None
            state.constraints_added += 1
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
            state.marked = True
        consumed: dict[str, Quantity] = {}
        share_id = None
        if f.consumable_capacity:
            try:
                ok = self._capacity_fits(r, did, d)
            except cap.CapacityError as e:
                rollback()
                raise AllocationError(
                    f"claim {claim_ref(claim)}, request {r.name}: rechecking capacity for device {device_id_str(did)}: {e}"
                ) from None
            if not ok:
                rollback()
                return None
            if multi:
                try:
                    consumed = cap.consumed_from_request(r.capacity, d.capacity, f.fractional_capacity_range)
                except cap.CapacityError as e:
                    rollback()
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {r.name}: computing consumed capacity for device "
                        f"{device_id_str(did)}: {e}"
                    ) from None
                share_id = self.a.share_id_factory()
                state.capacity_existed = did in self.allocating_capacity
                agg = self.allocating_capacity.setdefault(did, {})
                for k, q in consumed.items():
                    agg[k] = agg[k].add(q) if k in agg else q
                state.capacity = consumed
        results.append(_Result(r, dev, share_id, consumed or None, True if r.admin else None))
        return rollback

    # ------------------------------------------------------------------ search
    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        self.a.allocate_one_calls += 1
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise AllocationTimeout()
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False, 0)
            except _Stop:
                return False
        rd = self.req_data[(ci, ri, si)]
        if not in_sub and rd.is_sub:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.req_data:
                try:
                    ok = self._one(ci, ri, sub, di, True, 0)
                except _Stop:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.req_data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _Stop()
            return False
        r = rd.req
        all_mode = r.mode == ALLOCATION_MODE_ALL
        if all_mode and not rd.all_devices:
            return False
        if di >= rd.num:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + rd.num - di > MAX_RESULTS:
            raise _Stop()
        if all_mode:
            dev = rd.all_devices[di]
            undo = self._allocate_device(ci, ri, si, dev, True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, 0)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        cands = self.candidates
        f = self.f
        order = self._scan_order(ci, ri, si, rd)
        for idx in range(start, len(cands)) if order is None else order[bisect_left(order, start) :]:
            dev = cands[idx]
            did = dev.id
            if r.admin:
                if ci in self.allocating.get(did, ()):
                    continue
            elif self._in_use(did):
                continue
            if order is None and not self._selectable(ci, ri, si, rd, dev.slice, dev.device, did):
                continue
            if f.consumable_capacity:
                try:
                    ok = self._capacity_fits(r, did, dev.device)
                except cap.CapacityError as e:
                    raise AllocationError(
                        f"claim {claim_ref(self.claims[ci])}, request {r.name}: checking capacity for device "
                        f"{device_id_str(did)}: {e}"
                    ) from None
                if not ok:
                    continue
            undo = self._allocate_device(ci, ri, si, dev, False)
            if undo is None:
                continue
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, idx + 1)
            except BaseException:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    # ------------------------------------------------------------------ results
    def _result(self, ci: int) -> AllocationResult:
        claim = self.claims[ci]
        f = self.f
        out = AllocationResult()
        for res in self.results[ci]:
            d = res.dev.device
            out.results.append(
                DeviceRequestAllocationResult(
                    request=res.req.full_name,
                    driver=res.dev.id[0],
                    pool=res.dev.id[1],
                    device=res.dev.id[2],
                    admin_access=res.admin,
                    tolerations=list(res.req.tolerations),
                    binding_conditions=list(d.binding_conditions) if f.device_binding_and_status else [],
                    binding_failure_conditions=list(d.binding_failure_conditions)
                    if f.device_binding_and_status
                    else [],
                    share_id=res.share_id,
                    consumed_capacity=dict(res.consumed) if res.consumed else None,
                )
            )
        # configs: each class's configs once (FromClass), then the claim's (FromClaim)
        selected: list[_ReqData] = []
        for ri in range(len(claim.spec.requests)):
            rd = self.req_data[(ci, ri, 0)]
            if rd.is_sub:
                rd = self.req_data[(ci, ri, rd.selected_sub)]
            selected.append(rd)
        by_class: dict[str, tuple[int, int]] = {}
        for rd in selected:
            cls = rd.cls
            if cls is None:
                continue
            if cls.name in by_class:
                lo, hi = by_class[cls.name]
                for i in range(lo, hi):
                    out.config[i].requests.append(rd.req.full_name)
                continue
            lo = len(out.config)
            for o in cls.config:
                out.config.append(DeviceAllocationConfiguration("FromClass", [rd.req.full_name], o))
            by_class[cls.name] = (lo, len(out.config))
        for cfg in claim.spec.config:
            if not cfg.requests:
                out.config.append(DeviceAllocationConfiguration("FromClaim", [], cfg.opaque))
                continue
            # v0.37 adds a claim config once; v0.36 (1.36) once per request it names
            once = self.a.clears_all_request_configs
            for ri, r in enumerate(claim.spec.requests):
                if r.name in cfg.requests:
                    out.config.append(
                        DeviceAllocationConfiguration("FromClaim", list(cfg.requests), cfg.opaque)
                    )
                    if once:
                        break
                    continue
                rd = selected[ri]
                if not rd.is_sub:
                    continue
                if rd.req.full_name in cfg.requests:
                    out.config.append(
                        DeviceAllocationConfiguration("FromClaim", list(cfg.requests), cfg.opaque)
                    )
                    if once:
                        break
        # v0.37 clears the requests of a config that applies to every request ("empty means all"); the
        # 1.36 allocator (v0.36) keeps them
        for c in out.config if self.a.clears_all_request_configs else ():
            if not c.requests:
                continue
            if all(
                r.name in c.requests or (rd.is_sub and rd.req.full_name in c.requests)
                for r, rd in zip(claim.spec.requests, selected, strict=True)
            ):
                c.requests = []
        try:
            out.node_selector = _node_selector(self.results[ci], self.node.name)
        except ValueError as e:
            raise AllocationError(f"create NodeSelector for claim {claim.meta.name}: {e}") from None
        return out


def _node_selector(results: list[_Result], node_name: str) -> NodeSelector | None:
    term = NodeSelectorTerm()
    for res in results:
        s = res.dev.slice
        d = res.dev.device
        if s.per_device_node_selection:
            node = d.node_name
            sel = d.node_selector
        else:
            node = s.node_name
            sel = s.node_selector
        if node is not None or d.binds_to_node:
            return NodeSelector(
                terms=[
                    NodeSelectorTerm(
                        match_fields=[NodeSelectorRequirement("metadata.name", "In", [node_name])]
                    )
                ]
            )
        if sel is not None:
            if len(sel.terms) == 1:
                _merge(sel.terms[0].match_fields, term.match_fields)
                _merge(sel.terms[0].match_expressions, term.match_expressions)
            elif len(sel.terms) > 1:
                raise ValueError(f"unsupported ResourceSlice.NodeSelector with {len(sel.terms)} terms")
    if term.match_fields or term.match_expressions:
        return NodeSelector(terms=[term])
    return None


def _merge(src: list[NodeSelectorRequirement], dst: list[NodeSelectorRequirement]) -> None:
    for r in src:
        if not any(
            x.key == r.key and x.operator == r.operator and set(x.values) == set(r.values) for x in dst
        ):
            dst.append(r)


def describe_result(res: Any) -> str:  # pragma: no cover - debugging aid
    return f"{res.request} -> {res.driver}/{res.pool}/{res.device}"

"""One Allocate call: the depth-first search over claims, requests, subrequests and devices (upstream's
``allocator`` struct in allocator_incubating.go); see :mod:`kubedra.allocator.core` for the order of checks."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubedra.allocator import capacity as cap
from kubedra.allocator import groups as grp
from kubedra.allocator.constraints import Constraint, build
from kubedra.allocator.counters import CounterTracking
from kubedra.allocator.derived import DerivedAttributes, check_request
from kubedra.allocator.errors import (
    MAX_RESULTS,
    RECHECK_PANIC,
    AllocationError,
    AllocationTimeout,
    FailedOnNodeError,
    InvalidPoolsError,
    StopSearch,
    UpstreamPanicError,
)
from kubedra.allocator.kept import allocate_device_kept
from kubedra.allocator.pools import Pool, PoolError, node_matches
from kubedra.allocator.requests import Dev, DeviceResult, Req, ReqData, Rollback, claim_ref, requests_of
from kubedra.allocator.result import build_result
from kubedra.allocator.selectors import SelectorError
from kubedra.allocator.state import DeviceID, device_id_str
from kubedra.allocator.taints import taint_blocks
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT,
    AllocationResult,
    Device,
    Node,
    ResourceClaim,
    ResourceSlice,
)

if TYPE_CHECKING:
    from kubedra.allocator.core import Allocator

# k8s.io/component-helpers nodedeclaredfeatures/features/draoptionalnodeoperations (v0.37.2)
NODE_FEATURE = "DRAOptionalNodeOperations"


class Search(CounterTracking):
    """State of one Allocate call (upstream's ``allocator`` struct)."""

    def __init__(self, a: Allocator, node: Node, claims: list[ResourceClaim], pools: list[Pool]) -> None:
        self.a = a
        self.f = a.features
        self.node = node
        self.claims = claims
        self.pools = pools
        self._candidates: list[Dev] | None = None
        self.searched = False  # whether allocate got past validating the requests (kubedra.allocator.orders)
        self._invalid_stop: tuple[int, str] | None = None
        self._invalid_stop_known = False
        self.req_data: dict[tuple[int, int, int], ReqData] = {}
        self.constraints: list[list[Constraint]] = []
        self.derived = DerivedAttributes(a.matcher, pools)
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, int]]] = {}
        # the same for pools whose counters need 1.38's Quantity arithmetic (:meth:`_wide`)
        self.consumed_wide: dict[str, dict[str, dict[str, Quantity]]] = {}
        self.results: list[list[DeviceResult]] = [[] for _ in claims]
        self.deadline: float | None = None
        self._fits_cache: dict[tuple[int, DeviceID], bool] = {}
        # pool ID -> counter set -> compatibility-group intersection of this search's devices
        self.consumed_groups: dict[str, grp.Running] = {}
        # only upstream's experimental allocator knows a slice's skipNodeOperations (stable and incubating
        # allocate such devices and leave the field out of the result)
        self.experimental = a.features.implementation(a.target_version) == "experimental"

    @property
    def invalid_stop(self) -> tuple[int, str] | None:
        """Up to 1.34 (``allocator.searchSkipsUnreadyPools``): where the search meets the first invalid pool (the
        candidates before it) and the error it aborts with there (v0.34.13 allocator_*.go allocateOne: "pool %s is
        invalid: %s", the pool's name); None when the search skips invalid pools or there is none."""
        if not self._invalid_stop_known:
            self._invalid_stop_known = True
            if not self.a.skips_unready_pools:
                before = 0
                for p in self.pools:
                    if p.invalid:
                        self._invalid_stop = (before, f"pool {p.name} is invalid: {p.invalid_reason}")
                        break
                    before += sum(len(s.devices) for s in p.slices)
        return self._invalid_stop

    @property
    def candidates(self) -> list[Dev]:
        """Every device of the node's usable pools, in order (made when a search first needs them: a
        reused outcome only needs the devices it picks)."""
        if self._candidates is None:
            self._candidates = self.a._candidates(self.node, self.pools)
        return self._candidates

    # ------------------------------------------------------------------ setup
    def allocate(self) -> list[AllocationResult] | None:  # noqa: C901 - port of upstream allocator.Allocate kept step for step
        f = self.f
        for ci, claim in enumerate(self.claims):
            min_claim = 0
            for ri, alts in enumerate(requests_of(claim)):
                is_sub = bool(alts[0].parent)
                if not f.prioritized_list and is_sub:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {alts[0].parent}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                # Only the incubating and experimental allocators check this; the stable one (chosen when no
                # feature beyond its SupportedFeatures is on) ignores capacity requests.
                if not f.consumable_capacity and f.implementation(self.a.target_version) != "stable":
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
                if self.a.claim_limit_per_request and min_req > MAX_RESULTS - min_claim:
                    raise AllocationError(
                        f"claim {claim_ref(claim)}, request {alts[0].parent or alts[0].name}: adding {min_req} devices "
                        f"exceeds the claim limit of {MAX_RESULTS}, with {min_claim} already accounted for"
                    )
                min_claim += min_req
            if not self.a.claim_limit_per_request and min_claim > MAX_RESULTS:
                raise AllocationError(
                    f"claim {claim_ref(claim)}: number of requested devices {min_claim} exceeds the claim limit "
                    f"of {MAX_RESULTS}"
                )
            lookup = self.derived.for_claim(claim) if f.derived_attributes else None
            code = f.implementation(self.a.target_version)  # at 1.38 the stable variant runs "incubating"
            typed = self.derived.typed(claim, code == "incubating") if self.a.attribute_values_typed else None
            keeps, compares = self.a.distinct_keeps_every_value, self.a.distinct_compares_values
            cons = build(claim, f.list_type_attributes, code == "stable", keeps, lookup, compares, typed)
            self.constraints.append(cons)
        reuse = self.a.reuse
        key = reuse.key(self) if reuse is not None else None
        if key is not None and reuse is not None:
            kept = reuse.replay(key, self)
            if kept is not None:
                return [build_result(self, ci) for ci in range(len(self.claims))] if kept else None
        self.searched = True
        try:
            done = self._one(0, 0, 0, 0, False, 0)
        except StopSearch:
            done = False
        if key is not None and reuse is not None:
            reuse.keep(key, self, done)
        if not done:
            if self.a.skips_unready_pools and any(p.invalid for p in self.pools):
                raise InvalidPoolsError("invalid resource pools were encountered")
            return None
        return [build_result(self, ci) for ci in range(len(self.claims))]

    def _validate(self, ci: int, ri: int, si: int, r: Req) -> ReqData:
        claim = self.claims[ci]
        rd = ReqData(req=r, cls=None)
        check_request(claim, r, self.f.derived_attributes)
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
            # fatal through 1.37, this node only from 1.38 (data/versions.yaml)
            unready = FailedOnNodeError if self.a.all_on_unready_pool_fails_node_only else AllocationError
            for p in self.pools:
                if p.incomplete:
                    raise unready(
                        f"claim {claim_ref(claim)}, request {r.name}: asks for all devices, but resource pool "
                        f"{p.id} is currently being updated"
                    )
                if p.invalid:
                    raise unready(
                        f"claim {claim_ref(claim)}, request {r.name}: asks for all devices, but resource pool "
                        f"{p.id} is currently invalid"
                    )
                rd.all_devices.extend(self._all_of_pool(ci, ri, si, rd, p))
            rd.num = len(rd.all_devices)
        else:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {r.name}: unsupported count mode {r.mode}"
            )
        return rd

    def _all_of_pool(self, ci: int, ri: int, si: int, rd: ReqData, p: Pool) -> list[Dev]:
        """The devices of a complete, valid pool that an ``All`` request takes."""
        claim, r = self.claims[ci], rd.req
        out: list[Dev] = []
        # before 1.36 the second subrequest is validated under the first one's key, so where the first asks for
        # All it reuses what the first's selectors answered (data/versions.yaml)
        first = self.req_data.get((ci, ri, 0)) if si == 1 and not self.a.subrequests_own_key else None
        sel = first if first is not None and first.req.mode == ALLOCATION_MODE_ALL else rd
        for s in p.slices:
            for d in s.devices:
                did = (s.driver, s.pool.name, d.name)
                if not self._selectable(ci, ri, si, sel, s, d, did):
                    continue
                if self.f.consumable_capacity:
                    try:
                        if self.a.all_devices_fit_empty:
                            ok = cap.fits(
                                None, r.capacity, d.capacity, None, self.f.fractional_capacity_range
                            )
                        else:  # up to 1.36: with the capacity in use (no error there but a division by 0)
                            ok = self._capacity_fits(r, did, d)
                    except cap.CapacityError as e:
                        raise AllocationError(
                            f"claim {claim_ref(claim)}, request {r.name}: checking capacity for device {d.name}: {e}"
                        ) from None
                    if not ok:
                        continue
                out.append(Dev(did, d, s, p))
        return out

    def _scan_order(self, ci: int, ri: int, si: int, rd: ReqData) -> list[int] | None:
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
        self, ci: int, ri: int, si: int, rd: ReqData, s: ResourceSlice, d: Device, did: DeviceID
    ) -> bool:
        if not self.f.device_binding_and_status and d.binding_conditions:
            return False
        # selectors and per-device node selection only depend on the device, the class and the request's
        # selectors (and the node, for per-device node selection): remembered across Allocate calls
        sel_key = rd.sel_key or self.sel_key(rd)
        key = (sel_key, did, self.node.name) if s.per_device_node_selection else (sel_key, did)
        cache = self.a._selectable
        cached = cache.get(key)
        if cached is not None:
            return cached
        ok = self._selectable_uncached(ci, rd, s, d, did)
        cache[key] = ok
        return ok

    def sel_key(self, rd: ReqData) -> tuple[Any, ...]:
        rd.sel_key = (rd.cls.name if rd.cls is not None else None, tuple(rd.req.selectors))
        return rd.sel_key

    def selectable_now(self, ci: int, ri: int, si: int, rd: ReqData, dev: Dev) -> bool:
        """``_selectable`` without remembering the answer per device (the caller keeps a whole node's)."""
        d = dev.device
        if not self.f.device_binding_and_status and d.binding_conditions:
            return False
        return self._selectable_uncached(ci, rd, dev.slice, d, dev.id)

    def _selectable_uncached(self, ci: int, rd: ReqData, s: ResourceSlice, d: Device, did: DeviceID) -> bool:
        claim = self.claims[ci]
        try:
            if rd.cls is not None and not self.a.matcher.all_match(rd.cls.selectors, d, s.driver):
                return False
        except SelectorError as e:
            owner = f"class {rd.cls.name if rd.cls else ''}"
            named = self.a.selector_error_names_device
            raise AllocationError(e.describe(owner, device_id_str(did), names_device=named)) from None
        try:
            if not self.a.matcher.all_match(rd.req.selectors, d, s.driver):
                return False
        except SelectorError as e:
            named = self.a.selector_error_names_device
            owner = f"claim {claim_ref(claim)}"
            raise AllocationError(e.describe(owner, device_id_str(did), names_device=named)) from None
        if s.per_device_node_selection:
            try:
                ok = node_matches(self.node, d.node_name, d.all_nodes, d.node_selector)
            except PoolError as e:
                raise AllocationError(str(e)) from None
            if not ok:
                return False
        return True

    def device_at(self, dev: Dev, di: int) -> tuple[DeviceID, Device]:
        """The device 1.34's allocateDevice rechecks the capacity of (``allocator.capacityRecheckReadsTheDevice``
        in data/versions.yaml): ``slice.Spec.Devices[r.deviceIndex]``, the device of the candidate's slice at the
        request's device index, which panics past the slice's end."""
        devices = dev.slice.devices
        if di >= len(devices):
            raise UpstreamPanicError(
                self.a.target_version,
                RECHECK_PANIC,
                f"runtime error: index out of range [{di}] with length {len(devices)}",
            )
        other = devices[di]
        return (dev.slice.driver, dev.slice.pool.name, other.name), other

    def _capacity_fits(self, r: Req, did: DeviceID, d: Device) -> bool:
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
                    None,
                    r.capacity,
                    d.capacity,
                    None,
                    self.f.fractional_capacity_range,
                    self.a.capacity_checked,
                )
            return hit
        return cap.fits(
            current,
            r.capacity,
            d.capacity,
            allocating,
            self.f.fractional_capacity_range,
            self.a.capacity_checked,
        )

    def _skips_node_operations(self) -> bool:
        """Whether a device of a slice with skipNodeOperations may be allocated here: the gate is on and the
        node declares the DRAOptionalNodeOperations feature (status.declaredFeatures)."""
        return self.f.optional_node_operations and NODE_FEATURE in self.node.declared_features

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated.devices or bool(self.allocating.get(did))

    def _capacity_in_use(self, did: DeviceID) -> bool:
        return (
            did in self.a.allocated.capacity or did in self.a._shared_index or did in self.allocating_capacity
        )

    # ------------------------------------------------------------------ one device
    def _allocate_device(  # noqa: C901 - port of upstream allocateDevice with its rollbacks, kept step for step
        self, ci: int, ri: int, si: int, dev: Dev, must: bool, di: int = 0
    ) -> Callable[[], None] | None:
        """Try one device (the request's ``di``-th); returns its undo function, or None when it cannot be used here.

        Every rejection after a partial reservation rolls back what was reserved (counters, constraints,
        in-use marks, capacity), like upstream's ``rollbackDevice`` since v0.36.3; before, what was reserved stays
        (:func:`kubedra.allocator.kept.allocate_device_kept`)."""
        if not self.a.rolls_back_rejected:
            return allocate_device_kept(self, ci, ri, si, dev, must, di)
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
        # from 1.38 a device with a live share is not allocated exclusively (data/versions.yaml)
        if not r.admin and not multi and self.a.exclusive_waits_for_shares and self._capacity_in_use(did):
            return None
        if dev.slice.skip_node_operations and self.experimental and not self._skips_node_operations():
            return None
        if not f.partitionable_devices and d.consumes_counters:
            return None
        skip_counters = multi and self._capacity_in_use(did)
        # compatibility groups are checked before counters, under the same condition (upstream runs it first
        # so that a rejection returns before counters are reserved)
        groups_saved = None
        if f.compatibility_groups and not skip_counters and d.consumes_counters:
            running = self.consumed_groups.setdefault(dev.pool.id, {})
            groups_saved = grp.check_and_consume(d, running, self.a.group_baseline(dev))
            if groups_saved is None:
                return None
        counters_taken = False
        if not skip_counters and d.consumes_counters:
            if not self._take_counters(dev):
                if groups_saved is not None:
                    grp.restore(self.consumed_groups[dev.pool.id], groups_saved)
                return None
            counters_taken = True
        base = r.parent or r.name
        sub = r.name if r.parent else ""
        cons = self.constraints[ci]
        results = self.results[ci]
        n_before = len(results)
        state = Rollback()

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
            if groups_saved is not None:
                grp.restore(self.consumed_groups[dev.pool.id], groups_saved)
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
                    consumed = cap.consumed_from_request(
                        r.capacity, d.capacity, f.fractional_capacity_range, self.a.capacity_checked
                    )
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
        results.append(DeviceResult(r, dev, share_id, consumed or None, True if r.admin else None))
        return rollback

    # ------------------------------------------------------------------ search
    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:  # noqa: C901 - port of upstream allocateOne (the search's recursion), kept step for step
        self.a.allocate_one_calls += 1
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise AllocationTimeout()
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False, 0)
            except StopSearch:
                return False
        rd = self.req_data[(ci, ri, si)]
        if not in_sub and rd.is_sub:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.req_data:
                try:
                    ok = self._one(ci, ri, sub, di, True, 0)
                except StopSearch:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.req_data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise StopSearch()
            return False
        r = rd.req
        all_mode = r.mode == ALLOCATION_MODE_ALL
        if all_mode and not rd.all_devices:
            return False
        if di >= rd.num:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + rd.num - di > MAX_RESULTS:
            raise StopSearch()
        if all_mode:
            dev = rd.all_devices[di]
            undo = self._allocate_device(ci, ri, si, dev, True, di)
            if undo is None:
                return False
            # before 1.36 the next device of an All subrequest is looked up as subrequest 0 (data/versions.yaml)
            try:
                done = self._one(ci, ri, si if self.a.all_mode_keeps_sub else 0, di + 1, in_sub, 0)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        cands = self.candidates
        f = self.f
        stop = self.invalid_stop
        order = self._scan_order(ci, ri, si, rd) if stop is None else None
        # the next device of this request is looked for after this one (each combination once), or before 1.36
        # from the first device again (every permutation: data/versions.yaml allocator.triesEachCombinationOnce)
        combinations = self.a.tries_combinations_once
        # up to 1.34 the scan stops at the first invalid pool (allocator.searchSkipsUnreadyPools)
        end = len(cands) if stop is None else stop[0]
        for idx in range(start, end) if order is None else order[bisect_left(order, start) :]:
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
            undo = self._allocate_device(ci, ri, si, dev, False, di)
            if undo is None:
                continue
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, idx + 1 if combinations else 0)
            except BaseException:
                undo()
                raise
            if done:
                return True
            undo()
        if stop is not None:
            raise AllocationError(stop[1])
        return False

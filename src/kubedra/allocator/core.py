"""The structured allocator: upstream ``k8s.io/dynamic-resource-allocation/structured`` for one node.

Behaviour follows the incubating allocator (and the experimental one when ListTypeAttributes is on) of
kubernetes/dynamic-resource-allocation as of Kubernetes 1.37 (k8s.io/dynamic-resource-allocation v0.37.2,
``structured/internal/incubating/{allocator_incubating.go, pools_incubating.go, constraint.go,
consumable_capacity.go}``). The search is depth-first and returns the first full solution:

claims in input order → requests in spec order → for ``firstAvailable`` requests subrequest 0, 1, … (a
subrequest is kept only if the *entire remainder* also succeeds) → device slots 0..n-1, where the next slot
of the same request only looks at devices after the previous pick (combinations, not permutations).

Per candidate device the checks run in upstream's order: in use → class and request selectors (cached per
device × request) → per-device node selection → consumable capacity → counters → taints → constraints.

Version: the behaviour of k8s.io/dynamic-resource-allocation v0.37 (Kubernetes 1.37), where a device that
a taint, constraint or capacity check rejects gives back what it reserved (counters, constraint state,
capacity), counter caches are keyed by driver + pool, and capacity arithmetic errors abort the allocation.
Where v0.35/v0.36 behave otherwise, the target release picks the behaviour from data/versions.yaml
(``allocator.*`` since-facts: counters keyed by pool name, distinctAttribute per request, error texts).
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
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kubedra.allocator import groups as grp
from kubedra.allocator.counters import consumed_from
from kubedra.allocator.errors import AllocationError
from kubedra.allocator.orders import allocate_every_order, order_free
from kubedra.allocator.pools import Pool, PoolError, gather_pools, gather_pools_134, gather_pools_135_stable
from kubedra.allocator.requests import Dev
from kubedra.allocator.reuse import Reuse
from kubedra.allocator.search import Search
from kubedra.allocator.selectors import SelectorMatcher
from kubedra.allocator.state import AllocatedState, DeviceID, Features
from kubedra.k8s import versions
from kubedra.k8s.quantity import Quantity, quantity_rules
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.model.objects import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceRequestAllocationResult,
    Node,
    ResourceClaim,
    ResourceSlice,
)


class Allocator:
    """Allocate claims on one node at a time; build once per set of slices/classes/allocated state.

    ``pool_counters`` selects the counter model: True for Kubernetes ≥ 1.35 (counter sets are pool-wide and
    live in counters-only slices), False for 1.33/1.34 (counters in the device's own slice); by default the one
    of ``target_version`` (``dra.countersOnlySlices`` in data/versions.yaml).
    """

    def __init__(  # noqa: PLR0913 - the allocator's inputs (classes, slices, allocated), options keyword-only
        self,
        features: Features,
        classes: Iterable[DeviceClass],
        slices: Sequence[ResourceSlice],
        allocated: AllocatedState | None = None,
        *,
        selector_matcher: SelectorMatcher | None = None,
        pool_counters: bool | None = None,
        share_id_factory: Callable[[], str] | None = None,
        target_version: str = DEFAULT_TARGET,
        reuse_results: bool = False,
    ) -> None:
        self.features = features
        # results reused between nodes that look the same to the claims (kubedra.allocator.reuse); the
        # simulator turns it on, one-off callers (conformance corpus, differential tests) search every time
        self.reuse = Reuse() if reuse_results else None
        self.target_version = target_version
        # Behaviour per release (data/versions.yaml), exact to the patch where target_version names one
        # (``v1.36.3``); a bare minor means its newest patch.
        # result configs: a claim config once, requests cleared when it covers all (data/versions.yaml)
        self.clears_all_request_configs = versions.holds_at(
            "allocator.clearsAllRequestConfigs", target_version
        )
        # up to 1.36 counter caches are keyed by pool name alone and distinctAttribute keeps one value per
        # request (data/versions.yaml)
        self.counters_by_pool_id = versions.holds_at("allocator.countersKeyedByDriverAndPool", target_version)
        self.distinct_keeps_every_value = versions.holds_at(
            "allocator.distinctAttributeKeepsEveryValue", target_version
        )
        self.distinct_compares_values = versions.holds_at(
            "allocator.distinctAttributeComparesValues", target_version
        )
        # from 1.38 constraints read attributes as Go values (kubedra.allocator.constraints.TypedValues)
        self.attribute_values_typed = versions.holds_at("allocator.attributeValuesTyped", target_version)
        self.shared_device_counters_once = versions.holds_at(
            "allocator.sharedDeviceCountersOnce", target_version
        )
        self.capacity_recheck_reads_device = versions.holds_at(
            "allocator.capacityRecheckReadsTheDevice", target_version
        )
        self.all_devices_fit_empty = versions.holds_at("allocator.allDevicesFitAnEmptyDevice", target_version)
        # error texts (data/versions.yaml)
        self.selector_error_names_device = versions.holds_at(
            "allocator.selectorErrorNamesDevice", target_version
        )
        self.claim_limit_per_request = versions.holds_at("allocator.claimLimitPerRequest", target_version)
        self.all_on_unready_pool_fails_node_only = versions.holds_at(
            "allocator.allOnUnreadyPoolFailsNodeOnly", target_version
        )
        # from 1.35 the search skips incomplete and invalid pools; 1.34 allocates from an incomplete one and
        # aborts at an invalid one (data/versions.yaml)
        self.skips_unready_pools = versions.holds_at("allocator.searchSkipsUnreadyPools", target_version)
        # before 1.36 the stable variant gathers pools as v0.35's stable GatherPools (data/versions.yaml)
        self.stable_pools_135 = not versions.holds_at(
            "allocator.stablePoolsSkipCounterSlices", target_version
        )
        self.exclusive_waits_for_shares = versions.holds_at(
            "allocator.exclusiveWaitsForShares", target_version
        )
        # up to 1.35 a turned-down device keeps what it reserved, every permutation of a request's devices is
        # tried, an All subrequest's later devices are looked up as subrequest 0, and shared devices do not take
        # their counters; up to 1.36 consumable capacity is summed without bound checks (data/versions.yaml)
        self.rolls_back_rejected = versions.holds_at("allocator.rollsBackRejectedDevice", target_version)
        self.tries_combinations_once = versions.holds_at("allocator.triesEachCombinationOnce", target_version)
        self.all_mode_keeps_sub = versions.holds_at("allocator.allModeKeepsSubRequest", target_version)
        self.shares_consume_counters = versions.holds_at(
            "allocator.sharedAllocationsConsumeCounters", target_version
        )
        self.capacity_checked = versions.holds_at("allocator.capacityArithmeticChecked", target_version)
        self.subrequests_own_key = versions.holds_at(
            "allocator.subRequestsValidatedUnderTheirOwnKey", target_version
        )
        # consumable capacity reads and sums quantities as the release's apimachinery does (data/versions.yaml)
        self.quantity_since_138 = versions.holds_at("quantity.nineteenDigitInt64", target_version)
        self.classes = {c.name: c for c in classes}
        self.all_slices = list(slices)
        self.allocated = allocated or AllocatedState()
        self.pool_counters = (
            versions.holds_at("dra.countersOnlySlices", target_version)
            if pool_counters is None
            else pool_counters
        )
        self.share_id_factory = share_id_factory or (lambda: str(uuid.uuid4()))
        self.matcher = selector_matcher or SelectorMatcher(
            target_version=target_version,
            consumable_capacity=features.consumable_capacity,
            list_type_attributes=features.list_type_attributes,
            sees_allow_multiple=features.implementation(target_version) != "stable",
        )
        if self.matcher.sees_allow_multiple != (features.implementation(target_version) != "stable"):
            raise ValueError(
                "selector_matcher: upstream's stable code evaluates selectors without a device's "
                "allowMultipleAllocations, the others with it (SelectorMatcher.sees_allow_multiple)"
            )
        self.slices_on_node: dict[str, list[ResourceSlice]] = {}
        self.slices_shared: list[ResourceSlice] = []
        for s in self.all_slices:
            if s.node_name:
                self.slices_on_node.setdefault(s.node_name, []).append(s)
            else:
                self.slices_shared.append(s)
        self._available_counters: dict[str, dict[str, dict[str, int]]] = {}
        # 1.38: counter key -> whether its counters need v0.38's Quantity arithmetic (Search._wide), and the
        # available counters of those pools as Quantity (rebuilt, never updated in place, when allocations change)
        self._wide_counters: dict[str, bool] = {}
        self._available_wide: dict[str, dict[str, dict[str, Quantity]]] = {}
        self._overdrawn: set[str] = set()  # counter caches with a negative counter (full check needed)
        # pool ID -> compatibility-group intersections of its allocated devices (upstream's
        # compatibilityGroupsBaseline: once per allocator, dropped with the counters when allocations change)
        self._group_baselines: dict[str, grp.Running] = {}
        self._devices_by_pool: dict[tuple[str, str], dict[str, tuple[Device, ResourceSlice]]] = {}
        # (class name, request selectors[, node]) and device -> selectable; classes and slices are fixed
        self._selectable: dict[tuple[Any, ...], bool] = {}
        self._pool_slice_names: dict[str, list[str]] = {}
        self._slices_by_name: dict[str, list[ResourceSlice]] = {}
        for s in self.all_slices:
            self._pool_slice_names.setdefault(s.pool.name, []).append(s.name)
            self._slices_by_name.setdefault(s.name, []).append(s)
        self._shared_index: set[DeviceID] = {(s[0], s[1], s[2]) for s in self.allocated.shared_ids}
        self.allocate_one_calls = 0
        # node name -> (node, its pools, its candidate devices); slices are fixed for the allocator's life
        self._pools: dict[str, tuple[Node, list[Pool], list[Dev] | None]] = {}

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

    def counter_key(self, driver: str, pool: str, slice_name: str) -> str:
        """The key of a device's counter caches: the pool ID ``driver/pool`` from 1.37, the pool name alone in
        1.35/1.36 (two drivers' pools of one name share it, as upstream's did), the slice name in the
        1.33/1.34 model."""
        if not self.pool_counters:
            return slice_name
        return f"{driver}/{pool}" if self.counters_by_pool_id else pool

    def invalidate_pool(self, pool_name: str, driver: str | None = None) -> None:
        """Forget cached available counters of a pool whose allocations changed.

        Upstream builds a new allocator per scheduling cycle; the simulator keeps one and drops only what
        a bind or an eviction made stale. Counter caches are keyed by :meth:`counter_key`."""
        self._available_counters.pop(pool_name, None)  # keyed by pool name (1.35/1.36)
        self._available_wide.pop(pool_name, None)
        if driver is not None:
            self._available_counters.pop(f"{driver}/{pool_name}", None)
            self._available_wide.pop(f"{driver}/{pool_name}", None)
            self._group_baselines.pop(f"{driver}/{pool_name}", None)
        else:
            for key in [k for k in self._available_counters if k.endswith(f"/{pool_name}")]:
                del self._available_counters[key]
            for key in [k for k in self._available_wide if k.endswith(f"/{pool_name}")]:
                del self._available_wide[key]
            for key in [k for k in self._group_baselines if k.endswith(f"/{pool_name}")]:
                del self._group_baselines[key]
        for name in self._pool_slice_names.get(pool_name, ()):
            self._available_counters.pop(name, None)
            self._available_wide.pop(name, None)

    def counters_changed(self, results: Iterable[DeviceRequestAllocationResult], sign: int) -> None:
        """Devices of ``results`` just became allocated (``sign`` -1) or free (+1) in ``self.allocated``:
        update the cached counter availability of their pools instead of dropping it (what
        :meth:`invalidate_pool` does, and still does for shared or capacity-consuming results)."""
        for r in results:
            self._group_baselines.pop(f"{r.driver}/{r.pool}", None)
            self._available_wide.pop(f"{r.driver}/{r.pool}", None)  # 1.38 Quantity sums: rebuilt in order
            if r.share_id or r.consumed_capacity:
                self.invalidate_pool(r.pool, r.driver)
                continue
            if self.pool_counters and not self.counters_by_pool_id:
                # one cache per pool name, computed from whichever driver's pool came first: recompute it
                self.invalidate_pool(r.pool, r.driver)
                continue
            key = f"{r.driver}/{r.pool}"
            if self.pool_counters and key not in self._available_counters:
                continue  # nothing cached for this pool (most pools, once searches are reused)
            entry = self._pool_devices(r.driver, r.pool).get(r.device)
            if entry is None or not entry[0].consumes_counters:
                continue
            dev, sl = entry
            if not self.pool_counters:
                key = sl.name
            avail = self._available_counters.get(key)
            if avail is None:
                continue
            negative = False
            for cset, n, q in consumed_from(dev, avail):
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

    def _pool_devices(self, driver: str, pool: str) -> dict[str, tuple[Device, ResourceSlice]]:
        """Device name -> (device, slice) in one pool, built when first asked for."""
        hit = self._devices_by_pool.get((driver, pool))
        if hit is None:
            hit = self._devices_by_pool[(driver, pool)] = {
                d.name: (d, sl)
                for name in self._pool_slice_names.get(pool, ())
                for sl in self._slices_by_name[name]
                if sl.driver == driver and sl.pool.name == pool
                for d in sl.devices
            }
        return hit

    def group_baseline(self, dev: Dev) -> grp.Running:
        """The compatibility-group intersections of the devices already allocated in ``dev``'s pool, per
        counter set, read from the pool's slices (those on other nodes too), computed once and cached."""
        hit = self._group_baselines.get(dev.pool.id)
        if hit is None:
            hit = self._group_baselines[dev.pool.id] = grp.baseline(
                d
                for s in (*dev.pool.slices, *dev.pool.slices_not_targeting_node)
                for d in s.devices
                if self.is_allocated((s.driver, s.pool.name, d.name))
            )
        return hit

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

    def shared_ids_in_use(self) -> bool:
        return bool(self._shared_index)

    def is_allocated(self, did: DeviceID) -> bool:
        a = self.allocated
        return did in a.devices or did in a.capacity or did in self._shared_index

    def takes_counters(self, did: DeviceID) -> bool:
        """Whether an allocated device's counters are taken off its pool's: any allocation, or before
        allocator.sharedAllocationsConsumeCounters only an exclusive one (AllocatedDevices)."""
        return self.is_allocated(did) if self.shares_consume_counters else did in self.allocated.devices

    def pools_for(self, node: Node) -> list[Pool]:
        """The node's pools. Slices do not change during an Allocator's life, so they are gathered once per
        node (object) and reused by later calls (the simulator calls allocate many times per node)."""
        hit = self._pools.get(node.name)
        if hit is not None and hit[0] is node:
            return hit[1]
        slices_for_node = self.slices_on_node.get(node.name, []) + self.slices_shared
        try:
            if not versions.holds_at("allocator.gatherPoolReadsEveryPoolSlice", self.target_version):
                pools = gather_pools_134(slices_for_node, node, self.features, self.target_version)
            elif self.stable_pools_135 and self.features.variant(self.target_version) == "stable":
                pools = gather_pools_135_stable(slices_for_node, node, self.features, self.all_slices)
            else:
                pools = gather_pools(
                    slices_for_node,
                    node,
                    self.features,
                    self.all_slices,
                    pool_counters=self.pool_counters,
                    release=self.target_version,
                )
        except PoolError as e:
            raise AllocationError(f"gather pool information: {e}") from None
        self._pools[node.name] = (node, pools, None)
        return pools

    def _candidates(self, node: Node, pools: list[Pool]) -> list[Dev]:
        """Every device of the node's valid pools, in pool and slice order (cached with the pools); an
        incomplete pool has devices only up to 1.34 (``allocator.searchSkipsUnreadyPools``)."""
        hit = self._pools.get(node.name)
        if hit is not None and hit[0] is node and hit[1] is pools and hit[2] is not None:
            return hit[2]
        cands = [
            Dev((p.driver, p.name, d.name), d, s, p)
            for p in pools
            if not p.invalid
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
        run = Search(self, node, list(claims), self.pools_for(node))
        run.deadline = deadline
        with quantity_rules(self.quantity_since_138):
            if not order_free(self):
                return run.allocate()
            # the answer may depend on upstream's random pool order: kubedra.allocator.orders tries the others
            answer: list[AllocationResult] | AllocationError | None
            try:
                answer = run.allocate()
            except AllocationError as e:
                answer = e
            return allocate_every_order(self, run, answer)

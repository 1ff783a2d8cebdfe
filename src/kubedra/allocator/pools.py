"""Pool gathering for one node, like upstream ``GatherPools`` (incubating allocator).

- Candidate slices: those with ``nodeName == node`` plus those without a nodeName.
- With PartitionableDevices off, slices using perDeviceNodeSelection or sharedCounters are ignored.
- A slice is relevant if nodeName/allNodes/nodeSelector match the node, or (perDeviceNodeSelection) any
  device's own node selection matches. Slices with none of these set are ignored.
- Per (driver, pool), only the highest generation is kept. A pool is complete when its slice count equals
  ``resourceSliceCount``; otherwise all slices of the pool (also those not for this node) are re-scanned:
  a newer generation anywhere makes the pool obsolete (ignored), too few slices make it incomplete.
- Pools are sorted by (driver, pool name); pools whose devices have binding conditions go last (1.36+).
  Slices inside a pool are sorted by name; before 1.36 the experimental variant puts a pool's slices with
  binding conditions after its others (``allocator.bindingSlicesKeepTheirPlace``).
- Counter model (1.35+, ``pool_counters=True``): slices with ``sharedCounters`` hold counter sets for the
  whole pool (their devices, if any, are ignored); the 1.33/1.34 model (``pool_counters=False``) keeps
  counters in the device's own slice.
- Slices whose devices declare counter ``compatibilityGroups`` (1.37 alpha) are ignored while
  DRADeviceCompatibilityGroups is off, which leaves their pool incomplete, like upstream.
- A pool is invalid on duplicate device names, duplicate counter-set names, or a device consuming a
  counter set/counter that does not exist.
- Up to 1.34 (``allocator.gatherPoolReadsEveryPoolSlice`` in data/versions.yaml) :func:`gather_pools_134`
  gathers as v0.34 did: only the slices for this node count (no re-scan), a pool is invalid only on a duplicate
  device name, slices with ``sharedCounters`` are used whatever PartitionableDevices says (their devices carry
  the counters in 1.34's layout), and the pools of an incomplete pool keep their devices (the 1.34 search
  allocates from them).
- Some upstream variants at some releases (``allocator.countersOnlySlicesOfEveryNode`` in data/versions.yaml:
  1.37's stable, every 1.36 variant, 1.35's incubating and experimental) always include counters-only slices,
  whatever node they are for ("needed to use a pool regardless of their node selector"): a pool whose devices
  are all for other nodes then still appears for this node, without devices, and may be incomplete or invalid
  there (which fails an ``All`` request, or the allocation with "invalid resource pools were encountered").
  The others take them only through the pool re-scan.
- 1.35's stable variant (before ``allocator.stablePoolsSkipCounterSlices`` in data/versions.yaml)
  :func:`gather_pools_135_stable` gathers as v0.35.10's stable ``GatherPools``: v0.34's gathering (with
  PartitionableDevices off only perDeviceNodeSelection slices are dropped, so a counters-only slice for the node
  is one of its pool's slices) plus the re-scan of an incomplete-looking pool, and every pool, incomplete ones
  too, is checked for duplicate device names only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubedra.allocator.state import Features
from kubedra.k8s import versions
from kubedra.model.nodeaffinity import NodeSelectorError, node_selector_matches
from kubedra.model.objects import CounterSet, Node, NodeSelector, ResourceSlice


class PoolError(Exception):
    """Node selection of a slice could not be evaluated (invalid selector): a fatal allocation error."""


@dataclass
class Pool:
    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[ResourceSlice] = field(default_factory=list)  # device slices targeting the node
    slices_not_targeting_node: list[ResourceSlice] = field(default_factory=list)
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)
    # up to 1.34 (gather_pools_134): put after the pools without binding conditions, as the experimental variant does
    last: bool = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def node_matches(
    node: Node, node_name: str | None, all_nodes: bool | None, selector: NodeSelector | None
) -> bool:
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        try:
            return node_selector_matches(selector, node.name, node.labels)
        except NodeSelectorError as e:
            raise PoolError(f"failed to parse node selector: {e}") from None
    return False


def uses_compatibility_groups(s: ResourceSlice) -> bool:
    return any(cc.compatibility_groups for d in s.devices for cc in d.consumes_counters)


def _relevant(s: ResourceSlice, node: Node, features: Features) -> bool:
    if not features.partitionable_devices and (s.per_device_node_selection is not None or s.shared_counters):
        return False
    if not features.compatibility_groups and uses_compatibility_groups(s):
        # the allocator cannot check co-allocation against compatibility groups: ignore the slice, which
        # leaves its pool incomplete (so the pool's other devices are not used either), like upstream
        return False
    return _node_slice(s, node)


def _counter_slice_ok(s: ResourceSlice, features: Features) -> bool:
    """A counters-only slice the stable allocator takes whatever node it is for (checks before node
    selection: compatibility groups are on devices, which such a slice has none of)."""
    return features.compatibility_groups or not uses_compatibility_groups(s)


def _has_binding_conditions(p: Pool) -> bool:
    return any(d.binding_conditions for s in p.slices for d in s.devices)


def _build(  # noqa: C901 - upstream GatherPools' slice checks in its order (pool_counters, selectors)
    driver: str,
    name: str,
    slices: list[ResourceSlice],
    features: Features,
    all_for_pool: list[ResourceSlice] | None,
    pool_counters: bool,
    binding_last: bool = False,
) -> Pool:
    # by name; before 1.36 the experimental variant adds a slice with binding conditions after the others
    slices = sorted(
        slices, key=lambda s: (binding_last and any(d.binding_conditions for d in s.devices), s.name)
    )
    device_slices: list[ResourceSlice] = []
    counter_slices: list[ResourceSlice] = []
    not_targeting: list[ResourceSlice] = []
    for s in slices:
        if pool_counters and features.partitionable_devices and s.shared_counters:
            counter_slices.append(s)
        else:
            device_slices.append(s)
    if all_for_pool is not None and len(slices) < len(all_for_pool):
        names = {s.name for s in slices}
        for s in all_for_pool:
            if s.name in names:
                continue
            if pool_counters and features.partitionable_devices and s.shared_counters:
                counter_slices.append(s)
            else:
                not_targeting.append(s)
    pool = Pool(driver=driver, name=name)
    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                return Pool(
                    driver=driver, name=name, invalid=True, invalid_reason=f"duplicate device name {d.name}"
                )
            seen.add(d.name)
    pool.slices = device_slices
    if not features.partitionable_devices:
        return pool
    if not pool_counters:
        # 1.33/1.34: counter sets live in each device's own slice
        for s in device_slices:
            sets = {cs.name: cs for cs in s.shared_counters}
            err = _check_consumption(sets, [s])
            if err:
                return Pool(driver=driver, name=name, invalid=True, invalid_reason=err)
        return pool
    counter_sets: dict[str, CounterSet] = {}
    for s in counter_slices:
        for cs in s.shared_counters:
            if cs.name in counter_sets:
                return Pool(
                    driver=driver,
                    name=name,
                    invalid=True,
                    invalid_reason=f"duplicate counter set name {cs.name}",
                )
            counter_sets[cs.name] = cs
    err = _check_consumption(counter_sets, device_slices) or _check_consumption(counter_sets, not_targeting)
    if err:
        return Pool(driver=driver, name=name, invalid=True, invalid_reason=err)
    pool.slices_not_targeting_node = not_targeting
    pool.counter_sets = counter_sets
    return pool


def _check_consumption(counter_sets: dict[str, CounterSet], slices: Sequence[ResourceSlice]) -> str:
    for s in slices:
        for d in s.devices:
            for cc in d.consumes_counters:
                cs = counter_sets.get(cc.counter_set)
                if cs is None:
                    return f"counter set {cc.counter_set} not found"
                for cname in cc.counters:
                    if cname not in cs.counters:
                        return f"counter {cname} not found in counter set {cs.name}"
    return ""


def _node_pools(
    slices_for_node: Sequence[ResourceSlice], node: Node, features: Features
) -> dict[tuple[str, str], list[ResourceSlice]]:
    """v0.34.13's and v0.35.10's stable GatherPools up to their pool checks: the slices for this node (with
    PartitionableDevices off only perDeviceNodeSelection ones are dropped), the newest generation of each pool
    among them (addSlice)."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices_for_node:
        if not features.partitionable_devices and s.per_device_node_selection is not None:
            continue
        if not _node_slice(s, node):
            continue
        _add_slice(pools, s)
    return pools


def binding_slices_last(features: Features, release: str) -> bool:
    """Whether the variant for ``features`` adds a pool's slices with binding conditions after its others (before
    1.36 the experimental one: data/versions.yaml allocator.bindingSlicesKeepTheirPlace)."""
    return features.variant(release) == "experimental" and not versions.holds(
        "allocator.bindingSlicesKeepTheirPlace", release
    )


def gather_pools_134(
    slices_for_node: Sequence[ResourceSlice], node: Node, features: Features, release: str
) -> list[Pool]:
    """k8s.io/dynamic-resource-allocation v0.34.13 structured/internal/{stable,incubating,experimental}/pools_*.go
    GatherPools: the slices for this node, the newest generation of each pool among them (addSlice), incomplete
    when they are not ``resourceSliceCount`` many, invalid on a duplicate device name (poolIsInvalid); an
    invalid pool keeps no devices here (the search stops at it, ``Search.invalid_stop``). Only the experimental
    variant (pools_experimental.go GatherPools) adds a pool's slices with binding conditions after its others
    (``allocator.bindingSlicesKeepTheirPlace``) and puts pools with binding conditions last; v0.34's stable and
    incubating GatherPools do neither. Pools are in (driver, name) order here, slices by name; upstream walks its
    pool map in Go's random order (:mod:`kubedra.allocator.orders` tries the others where that matters)."""
    binding_last = binding_slices_last(features, release)
    result: list[Pool] = []
    with_binding: list[Pool] = []
    for (driver, name), pslices in _node_pools(slices_for_node, node, features).items():
        pool = Pool(
            driver=driver,
            name=name,
            slices=sorted(
                pslices, key=lambda s: (binding_last and any(d.binding_conditions for d in s.devices), s.name)
            ),
        )
        pool.incomplete = len(pslices) != pslices[0].pool.resource_slice_count
        # poolHasBindingConditions reads the slices of an invalid pool too
        pool.last = binding_last and _has_binding_conditions(pool)
        seen: set[str] = set()
        for d in (d for s in pool.slices for d in s.devices):
            if d.name in seen:
                pool.invalid, pool.invalid_reason, pool.slices = True, f"duplicate device name {d.name}", []
                break
            seen.add(d.name)
        (with_binding if pool.last else result).append(pool)
    result.sort(key=lambda p: (p.driver, p.name))
    with_binding.sort(key=lambda p: (p.driver, p.name))
    return result + with_binding


def gather_pools_135_stable(
    slices_for_node: Sequence[ResourceSlice],
    node: Node,
    features: Features,
    all_slices: Sequence[ResourceSlice],
) -> list[Pool]:
    """k8s.io/dynamic-resource-allocation v0.35.10 structured/internal/stable/pools_stable.go GatherPools: v0.34's
    slices for this node (:func:`_node_pools`); a pool with fewer than ``resourceSliceCount`` of them is
    re-scanned over every slice (checkSlicesInPool: obsolete if a newer generation exists, else complete when
    the slices of its generation are enough); then every pool, incomplete or not, is invalid on a duplicate
    device name among its slices for the node (poolIsInvalid). Pool order is map order upstream (not sorted)."""
    result: list[Pool] = []
    for (driver, name), pslices in _node_pools(slices_for_node, node, features).items():
        gen, want = pslices[0].pool.generation, pslices[0].pool.resource_slice_count
        complete = len(pslices) == want
        if not complete:
            same = [s for s in all_slices if s.driver == driver and s.pool.name == name]
            if any(s.pool.generation > gen for s in same):
                continue  # obsolete
            complete = sum(s.pool.generation == gen for s in same) == want
        pool = Pool(
            driver=driver, name=name, incomplete=not complete, slices=sorted(pslices, key=lambda s: s.name)
        )
        seen: set[str] = set()
        for d in (d for s in pool.slices for d in s.devices):
            if d.name in seen:
                pool.invalid, pool.invalid_reason = True, f"duplicate device name {d.name}"
                break
            seen.add(d.name)
        if pool.incomplete or pool.invalid:
            pool.slices = []  # the v0.35 search takes no device of it (allocator.searchSkipsUnreadyPools)
        result.append(pool)
    result.sort(key=lambda p: (p.driver, p.name))
    return result


def _add_slice(pools: dict[tuple[str, str], list[ResourceSlice]], s: ResourceSlice) -> None:
    """Upstream's addSlice: a pool keeps the slices of its newest generation only."""
    key = (s.driver, s.pool.name)
    cur = pools.get(key)
    if cur is None or s.pool.generation > cur[0].pool.generation:
        pools[key] = [s]
    elif s.pool.generation == cur[0].pool.generation:
        cur.append(s)


def _node_slice(s: ResourceSlice, node: Node) -> bool:
    """Whether slice ``s`` is for ``node`` by its node selection, or one device's (every release's GatherPools
    asks this; v0.34's and v0.35's stable one asks nothing else)."""
    if s.node_name or s.all_nodes or s.node_selector is not None:
        try:
            return node_matches(node, s.node_name, s.all_nodes, s.node_selector)
        except PoolError as e:
            raise PoolError(f"failed to perform node selection for slice {s.name}: {e}") from None
    if s.per_device_node_selection:
        for d in s.devices:
            try:
                if node_matches(node, d.node_name, d.all_nodes, d.node_selector):
                    return True
            except PoolError as e:
                raise PoolError(
                    f"failed to perform node selection for device {d.name} in slice {s.name}: {e}"
                ) from None
    return False


def gather_pools(
    slices_for_node: Sequence[ResourceSlice],
    node: Node,
    features: Features,
    all_slices: Sequence[ResourceSlice],
    *,
    pool_counters: bool = True,
    release: str,
) -> list[Pool]:
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    counters_everywhere = (
        pool_counters
        and features.partitionable_devices
        and features.variant(release)
        in (versions.behaviour("allocator.countersOnlySlicesOfEveryNode", release) or ())
    )
    if counters_everywhere:
        slices_for_node = [
            *(s for s in slices_for_node if not s.shared_counters),
            *(s for s in all_slices if s.shared_counters and _counter_slice_ok(s, features)),
        ]
    for s in slices_for_node:
        if not (counters_everywhere and s.shared_counters) and not _relevant(s, node, features):
            continue
        _add_slice(pools, s)
    binding_last = binding_slices_last(features, release)
    result: list[Pool] = []
    with_binding: list[Pool] = []
    for (driver, name), pslices in pools.items():
        want = pslices[0].pool.resource_slice_count
        if len(pslices) == want:
            pool = _build(driver, name, pslices, features, None, pool_counters, binding_last)
        else:
            gen = pslices[0].pool.generation
            obsolete = False
            all_for_pool: list[ResourceSlice] = []
            for s in all_slices:
                if s.driver != driver or s.pool.name != name:
                    continue
                if s.pool.generation == gen:
                    all_for_pool.append(s)
                elif s.pool.generation > gen:
                    obsolete = True
                    break
            if obsolete:
                continue
            if not features.compatibility_groups:
                all_for_pool = [s for s in all_for_pool if not uses_compatibility_groups(s)]
            if len(all_for_pool) != want:
                result.append(Pool(driver=driver, name=name, incomplete=True))
                continue
            pool = _build(driver, name, pslices, features, all_for_pool, pool_counters, binding_last)
        (with_binding if _has_binding_conditions(pool) else result).append(pool)
    result.sort(key=lambda p: (p.driver, p.name))
    with_binding.sort(key=lambda p: (p.driver, p.name))
    return result + with_binding

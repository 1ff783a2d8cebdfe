"""Allocator inputs that are not objects: the feature set and what is already allocated in the cluster."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from kubedra.k8s import versions
from kubedra.k8s.quantity import Quantity
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.model.objects import ResourceClaim

DeviceID = tuple[str, str, str]  # (driver, pool, device)
SharedDeviceID = tuple[str, str, str, str]  # (driver, pool, device, shareID)


def device_id_str(d: DeviceID) -> str:
    return f"{d[0]}/{d[1]}/{d[2]}"


def parse_device_id(text: str) -> DeviceID:
    parts = text.split("/")
    if len(parts) != 3:
        raise ValueError(f"invalid device id {text!r} (expected driver/pool/device)")
    return parts[0], parts[1], parts[2]


@dataclass(frozen=True)
class Features:
    """Mirror of upstream ``structured.Features``: which optional allocator behaviours are on."""

    admin_access: bool = False
    prioritized_list: bool = False
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding_and_status: bool = False
    consumable_capacity: bool = False
    list_type_attributes: bool = False
    fractional_capacity_range: bool = False
    compatibility_groups: bool = False
    optional_node_operations: bool = False
    derived_attributes: bool = False

    # upstream Go field names, for corpus files and the oracle
    GO_NAMES: ClassVar[dict[str, str]] = {
        "AdminAccess": "admin_access",
        "PrioritizedList": "prioritized_list",
        "PartitionableDevices": "partitionable_devices",
        "DeviceTaints": "device_taints",
        "DeviceBindingAndStatus": "device_binding_and_status",
        "ConsumableCapacity": "consumable_capacity",
        "ListTypeAttributes": "list_type_attributes",
        "FractionalCapacityRange": "fractional_capacity_range",
        "CompatibilityGroups": "compatibility_groups",
        "OptionalNodeOperations": "optional_node_operations",
        "DerivedAttributes": "derived_attributes",
    }
    # Known upstream features kubedra does not implement: asking for them raises (the corpus runner skips
    # such cases, like upstream skips cases for features an allocator implementation does not support).
    UNSUPPORTED: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_names(cls, names: Iterable[str]) -> Features:
        kwargs = {}
        for n in names:
            attr = cls.GO_NAMES.get(n)
            if attr is None:
                raise ValueError(f"unknown allocator feature {n!r} (known: {', '.join(cls.GO_NAMES)})")
            kwargs[attr] = True
        return cls(**kwargs)

    @classmethod
    def from_gates(cls, gates: Mapping[str, bool]) -> Features:
        """Features as kube-scheduler derives them from its feature gates."""
        return cls(
            admin_access=gates.get("DRAAdminAccess", False),
            prioritized_list=gates.get("DRAPrioritizedList", False),
            partitionable_devices=gates.get("DRAPartitionableDevices", False),
            device_taints=gates.get("DRADeviceTaints", False),
            device_binding_and_status=gates.get("DRADeviceBindingConditions", False)
            and gates.get("DRAResourceClaimDeviceStatus", False),
            consumable_capacity=gates.get("DRAConsumableCapacity", False),
            list_type_attributes=gates.get("DRAListTypeAttributes", False),
            fractional_capacity_range=gates.get("DRAFractionalCapacityRange", False),
            compatibility_groups=gates.get("DRADeviceCompatibilityGroups", False),
            optional_node_operations=gates.get("DRAOptionalNodeOperations", False),
            derived_attributes=gates.get("DRADerivedAttributes", False),
        )

    def variant(self, release: str = DEFAULT_TARGET) -> str:
        """Which upstream allocator ``structured.NewAllocator`` picks for these features at ``release``: the
        first of stable, incubating, experimental whose supported features (those of the code it runs there,
        ``allocator.variantCode`` in data/versions.yaml) include all enabled ones."""
        return self._pick(release)[0]

    def implementation(self, release: str = DEFAULT_TARGET) -> str:
        """The code that :meth:`variant` runs at ``release``, as kubedra models it: stable, incubating or
        experimental of v0.37.2 (at 1.38 the variant called stable runs v0.37's incubating code)."""
        return self._pick(release)[1]

    def _pick(self, release: str) -> tuple[str, str]:
        enabled = set(self.names())
        code: dict[str, str] = versions.behaviour("allocator.variantCode", release) or {
            n: n for n in VARIANTS
        }
        # where a release's variants support other features than the code kubedra runs for them
        own: dict[str, list[str]] | None = versions.behaviour("allocator.variantFeatures", release)
        for name in VARIANTS:
            if enabled <= (frozenset(own[name]) if own else SUPPORTED[code[name]]):
                return name, code[name]
        raise AssertionError(f"no upstream allocator supports {sorted(enabled)}")  # experimental has all

    def names(self) -> list[str]:
        return [go for go, attr in self.GO_NAMES.items() if getattr(self, attr)]


# structured.NewAllocator's availableAllocators, in order, and the SupportedFeatures of each code (v0.37.2
# structured/internal/{stable,incubating,experimental}/allocator_*.go): the first variant whose code supports
# every enabled feature runs.
_STABLE = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
_INCUBATING = _STABLE | {"DeviceBindingAndStatus", "ConsumableCapacity", "FractionalCapacityRange"}
_EXPERIMENTAL = _INCUBATING | {
    "ListTypeAttributes",
    "OptionalNodeOperations",
    "DerivedAttributes",
    "CompatibilityGroups",
}
VARIANTS = ("stable", "incubating", "experimental")
SUPPORTED: dict[str, frozenset[str]] = {
    "stable": _STABLE,
    "incubating": _INCUBATING,
    "experimental": _EXPERIMENTAL,
}


@dataclass
class AllocatedState:
    """Devices already in use, built from all allocated claims (including in-flight ones)."""

    devices: set[DeviceID] = field(default_factory=set)
    shared_ids: set[SharedDeviceID] = field(default_factory=set)
    # aggregated consumed capacity of multi-allocatable devices
    capacity: dict[DeviceID, dict[str, Quantity]] = field(default_factory=dict)
    # (driver, pool) -> names of the devices in ``devices`` (kept by add_claim/remove_claim)
    by_pool: dict[tuple[str, str], set[str]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for driver, pool, name in self.devices:
            self.by_pool.setdefault((driver, pool), set()).add(name)

    @classmethod
    def from_claims(cls, claims: Iterable[ResourceClaim]) -> AllocatedState:
        """Like the scheduler's allocated-device tracking: admin-access results are not counted;
        results with a shareID count as shared IDs plus consumed capacity instead of exclusive use."""
        state = cls()
        for claim in claims:
            state.add_claim(claim)
        return state

    def add_claim(self, claim: ResourceClaim) -> None:
        if claim.allocation is None:
            return
        for r in claim.allocation.results:
            if r.admin_access:
                continue
            did = (r.driver, r.pool, r.device)
            if r.share_id:
                self.shared_ids.add((r.driver, r.pool, r.device, r.share_id))
                if r.consumed_capacity:
                    agg = self.capacity.setdefault(did, {})
                    for k, q in r.consumed_capacity.items():
                        agg[k] = agg[k].add(q) if k in agg else q
            else:
                self.devices.add(did)
                self.by_pool.setdefault((r.driver, r.pool), set()).add(r.device)

    def remove_claim(self, claim: ResourceClaim) -> None:
        if claim.allocation is None:
            return
        for r in claim.allocation.results:
            if r.admin_access:
                continue
            did = (r.driver, r.pool, r.device)
            if r.share_id:
                self.shared_ids.discard((r.driver, r.pool, r.device, r.share_id))
                agg = self.capacity.get(did)
                if agg is not None and r.consumed_capacity:
                    for k, q in r.consumed_capacity.items():
                        if k in agg:
                            agg[k] = agg[k].sub(q)
                    if all(v.is_zero() for v in agg.values()):
                        del self.capacity[did]
            else:
                self.devices.discard(did)
                names = self.by_pool.get((r.driver, r.pool))
                if names is not None:
                    names.discard(r.device)

    def is_allocated(self, did: DeviceID) -> bool:
        """upstream ``IsDeviceAllocated``: exclusive use, any share, or consumed capacity."""
        if did in self.devices or did in self.capacity:
            return True
        return any(s[:3] == did for s in self.shared_ids)

    def copy(self) -> AllocatedState:
        return AllocatedState(
            devices=set(self.devices),
            shared_ids=set(self.shared_ids),
            capacity={k: dict(v) for k, v in self.capacity.items()},
        )

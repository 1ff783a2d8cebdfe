"""The typed model: every resource.k8s.io object in the v1 shape, plus the parts of Pod and Node kubedra uses.

Objects of older API versions are converted to this shape by :mod:`kubedra.model.convert` before they are
parsed here (:mod:`kubedra.model.parse`). Field names follow the Go types in snake_case; JSON names are
restored by :mod:`kubedra.model.serialize`.

Dataclasses use ``slots`` and are treated as immutable by the engine (the allocator never mutates inputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from kubedra.k8s.quantity import Quantity

AttributeKind = Literal["int", "bool", "string", "version", "ints", "bools", "strings", "versions"]
ATTRIBUTE_KINDS: tuple[AttributeKind, ...] = (
    "int",
    "bool",
    "string",
    "version",
    "ints",
    "bools",
    "strings",
    "versions",
)

ALLOCATION_MODE_EXACT = "ExactCount"
ALLOCATION_MODE_ALL = "All"


@dataclass(slots=True)
class ObjectMeta:
    name: str = ""
    namespace: str = ""
    uid: str = ""
    generate_name: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    creation_timestamp: str = ""
    owner_references: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


# --------------------------------------------------------------------------- node selection (core/v1)


@dataclass(slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: list[str] = field(default_factory=list)


@dataclass(slots=True)
class NodeSelectorTerm:
    match_expressions: list[NodeSelectorRequirement] = field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = field(default_factory=list)


@dataclass(slots=True)
class NodeSelector:
    terms: list[NodeSelectorTerm] = field(default_factory=list)


# --------------------------------------------------------------------------- ResourceSlice


@dataclass(slots=True)
class DeviceAttribute:
    kind: AttributeKind
    value: Any  # int | bool | str | list[...]; versions stay as their text


@dataclass(slots=True)
class CapacityRequestPolicyRange:
    min: Quantity
    max: Quantity | None = None
    step: Quantity | None = None


@dataclass(slots=True)
class CapacityRequestPolicy:
    default: Quantity | None = None
    valid_values: list[Quantity] | None = None
    valid_range: CapacityRequestPolicyRange | None = None


@dataclass(slots=True)
class DeviceCapacity:
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


@dataclass(slots=True)
class DeviceCounterConsumption:
    counter_set: str
    counters: dict[str, Quantity] = field(default_factory=dict)
    compatibility_groups: list[str] = field(default_factory=list)  # 1.37 alpha (DRADeviceCompatibilityGroups)


@dataclass(slots=True)
class DeviceTaint:
    key: str
    effect: str
    value: str = ""
    time_added: str | None = None


@dataclass(slots=True)
class Device:
    name: str
    attributes: dict[str, DeviceAttribute] = field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = field(default_factory=dict)
    consumes_counters: list[DeviceCounterConsumption] = field(default_factory=list)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = field(default_factory=list)
    binds_to_node: bool | None = None
    binding_conditions: list[str] = field(default_factory=list)
    binding_failure_conditions: list[str] = field(default_factory=list)
    allow_multiple_allocations: bool | None = None


@dataclass(slots=True)
class CounterSet:
    name: str
    counters: dict[str, Quantity] = field(default_factory=dict)


@dataclass(slots=True)
class ResourcePool:
    name: str
    generation: int = 0
    resource_slice_count: int = 1


@dataclass(slots=True)
class ResourceSlice:
    meta: ObjectMeta
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] = field(default_factory=list)
    shared_counters: list[CounterSet] = field(default_factory=list)
    skip_node_operations: list[str] = field(default_factory=list)  # 1.37 alpha (DRAOptionalNodeOperations)

    @property
    def name(self) -> str:
        return self.meta.name


# --------------------------------------------------------------------------- claims


@dataclass(slots=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@dataclass(slots=True)
class DeviceDerivedAttribute:
    """``DeviceDerivedAttribute`` (resource.k8s.io/v1, 1.37 alpha DRADerivedAttributes): a virtual attribute
    ``name`` computed per candidate device by the CEL ``expression``, visible only to the claim's
    constraints (k8s.io/api v0.37.2 resource/v1/types.go)."""

    name: str
    expression: str


@dataclass(slots=True)
class ExactDeviceRequest:
    device_class_name: str
    selectors: list[str] = field(default_factory=list)  # CEL expressions
    allocation_mode: str = ALLOCATION_MODE_EXACT
    count: int = 1
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = field(default_factory=list)
    capacity: dict[str, Quantity] | None = None
    derived_attributes: list[DeviceDerivedAttribute] = field(default_factory=list)


@dataclass(slots=True)
class DeviceSubRequest:
    name: str
    device_class_name: str
    selectors: list[str] = field(default_factory=list)
    allocation_mode: str = ALLOCATION_MODE_EXACT
    count: int = 1
    tolerations: list[DeviceToleration] = field(default_factory=list)
    capacity: dict[str, Quantity] | None = None
    derived_attributes: list[DeviceDerivedAttribute] = field(default_factory=list)

    # a subrequest never has admin access
    @property
    def admin_access(self) -> bool | None:
        return None


@dataclass(slots=True)
class DeviceRequest:
    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = field(default_factory=list)


@dataclass(slots=True)
class DeviceConstraint:
    requests: list[str] = field(default_factory=list)
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(slots=True)
class OpaqueDeviceConfiguration:
    driver: str
    parameters: Any = None


@dataclass(slots=True)
class DeviceClaimConfiguration:
    requests: list[str] = field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


@dataclass(slots=True)
class DeviceClaim:
    requests: list[DeviceRequest] = field(default_factory=list)
    constraints: list[DeviceConstraint] = field(default_factory=list)
    config: list[DeviceClaimConfiguration] = field(default_factory=list)


@dataclass(slots=True)
class DeviceRequestAllocationResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = field(default_factory=list)
    binding_conditions: list[str] = field(default_factory=list)
    binding_failure_conditions: list[str] = field(default_factory=list)
    share_id: str | None = None
    consumed_capacity: dict[str, Quantity] | None = None
    skip_node_operations: list[str] = field(default_factory=list)  # 1.37 alpha (DRAOptionalNodeOperations)


@dataclass(slots=True)
class DeviceAllocationConfiguration:
    source: str  # FromClass | FromClaim
    requests: list[str] = field(default_factory=list)
    opaque: OpaqueDeviceConfiguration | None = None


@dataclass(slots=True)
class AllocationResult:
    results: list[DeviceRequestAllocationResult] = field(default_factory=list)
    config: list[DeviceAllocationConfiguration] = field(default_factory=list)
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


@dataclass(slots=True)
class ResourceClaimConsumerReference:
    resource: str
    name: str
    uid: str = ""
    api_group: str = ""


@dataclass(slots=True)
class ResourceClaim:
    meta: ObjectMeta
    spec: DeviceClaim = field(default_factory=DeviceClaim)
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = field(default_factory=list)
    device_statuses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.meta.key


@dataclass(slots=True)
class ResourceClaimTemplate:
    meta: ObjectMeta
    claim_labels: dict[str, str] = field(default_factory=dict)
    claim_annotations: dict[str, str] = field(default_factory=dict)
    spec: DeviceClaim = field(default_factory=DeviceClaim)


# --------------------------------------------------------------------------- classes and taint rules


@dataclass(slots=True)
class DeviceClass:
    meta: ObjectMeta
    selectors: list[str] = field(default_factory=list)
    config: list[OpaqueDeviceConfiguration] = field(default_factory=list)
    extended_resource_name: str | None = None

    @property
    def name(self) -> str:
        return self.meta.name


@dataclass(slots=True)
class DeviceTaintSelector:
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


@dataclass(slots=True)
class DeviceTaintRule:
    meta: ObjectMeta
    taint: DeviceTaint
    device_selector: DeviceTaintSelector | None = None


# --------------------------------------------------------------------------- core/v1 (the parts kubedra uses)


@dataclass(slots=True)
class Taint:
    key: str
    effect: str
    value: str = ""


@dataclass(slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@dataclass(slots=True)
class Node:
    meta: ObjectMeta
    capacity: dict[str, Quantity] = field(default_factory=dict)
    allocatable: dict[str, Quantity] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    unschedulable: bool = False
    ready: bool = True
    kubelet_version: str = ""
    declared_features: list[str] = field(default_factory=list)  # status.declaredFeatures (1.35+)

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels


@dataclass(slots=True)
class PodResourceClaim:
    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(slots=True)
class Container:
    name: str
    requests: dict[str, Quantity] = field(default_factory=dict)
    limits: dict[str, Quantity] = field(default_factory=dict)
    claims: list[str] = field(default_factory=list)  # resources.claims[].name (request suffix ignored)
    restart_policy: str | None = None  # "Always" marks a sidecar init container


@dataclass(slots=True)
class Pod:
    meta: ObjectMeta
    containers: list[Container] = field(default_factory=list)
    init_containers: list[Container] = field(default_factory=list)
    overhead: dict[str, Quantity] = field(default_factory=dict)
    resource_claims: list[PodResourceClaim] = field(default_factory=list)
    node_name: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: dict[str, Any] | None = None
    tolerations: list[Toleration] = field(default_factory=list)
    priority: int | None = None
    priority_class_name: str = ""
    host_network: bool = False
    scheduler_name: str = ""
    scheduling_group: str | None = None  # spec.schedulingGroup.podGroupName
    phase: str = ""
    # status.resourceClaimStatuses: pod claim name -> generated ResourceClaim name
    claim_statuses: dict[str, str | None] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.meta.key

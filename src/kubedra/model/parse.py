"""Parse Kubernetes object dicts (any supported resource.k8s.io version) into the typed v1 model.

``parse_object(obj, location)`` converts older DRA versions in a copy (:mod:`kubedra.model.convert`), then
builds the dataclasses, applying API defaults (``allocationMode: ExactCount``, ``count: 1``, toleration
``operator: Equal``). A value of the wrong type or an invalid quantity raises :class:`InputError` naming the
field path, e.g. ``spec.devices[0].capacity.memory.value: invalid quantity "lots"``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kubedra.errors import InputError, Location
from kubedra.model import convert
from kubedra.model.objects import (
    ALLOCATION_MODE_EXACT,
    ATTRIBUTE_KINDS,
    AllocationResult,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    Container,
    CounterSet,
    Device,
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintSelector,
    DeviceToleration,
    ExactDeviceRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OpaqueDeviceConfiguration,
    Pod,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    ResourcePool,
    ResourceSlice,
    Taint,
    Toleration,
)
from kubedra.model.quantity import Quantity, QuantityError, parse_quantity

T = TypeVar("T")

DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")
SUPPORTED_KINDS = (*DRA_KINDS, "Pod", "Node")


class ParseContext:
    """Carries the location so every error names file:line and the field path."""

    __slots__ = ("location",)

    def __init__(self, location: Location | None) -> None:
        self.location = location

    def fail(self, path: str, message: str) -> InputError:
        err = InputError(f"{path}: {message}" if path else message, self.location)
        err.field_path = path  # type: ignore[attr-defined]
        return err

    def mapping(self, v: Any, path: str) -> dict[str, Any]:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise self.fail(path, f"expected an object, found {_tname(v)}")
        return v

    def items(self, v: Any, path: str) -> list[Any]:
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.fail(path, f"expected a list, found {_tname(v)}")
        return v

    def string(self, v: Any, path: str, default: str = "") -> str:
        if v is None:
            return default
        if not isinstance(v, str):
            raise self.fail(path, f"expected a string, found {_tname(v)}")
        return v

    def opt_str(self, v: Any, path: str) -> str | None:
        return None if v is None else self.string(v, path)

    def integer(self, v: Any, path: str, default: int = 0) -> int:
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(path, f"expected an integer, found {_tname(v)}")
        return v

    def boolean(self, v: Any, path: str) -> bool | None:
        if v is None:
            return None
        if not isinstance(v, bool):
            raise self.fail(path, f"expected true or false, found {_tname(v)}")
        return v

    def qty(self, v: Any, path: str) -> Quantity:
        try:
            return parse_quantity(v)
        except QuantityError as e:
            raise self.fail(path, f"invalid quantity {v!r}: {e}") from None

    def qty_map(self, v: Any, path: str) -> dict[str, Quantity]:
        return {str(k): self.qty(x, f"{path}.{k}") for k, x in self.mapping(v, path).items()}

    def strings(self, v: Any, path: str) -> list[str]:
        return [self.string(x, f"{path}[{i}]") for i, x in enumerate(self.items(v, path))]

    def each(self, v: Any, path: str, fn: Callable[[Any, str], T]) -> list[T]:
        return [fn(x, f"{path}[{i}]") for i, x in enumerate(self.items(v, path))]


def path_steps(path: str) -> list[str | int]:
    """``spec.devices[0].name`` → ``["spec", "devices", 0, "name"]`` (for Document.line_of)."""
    steps: list[str | int] = []
    for part in path.split("."):
        name, _, rest = part.partition("[")
        if name:
            steps.append(name)
        while rest:
            idx, _, rest = rest.partition("]")
            if idx.isdigit():
                steps.append(int(idx))
            rest = rest.lstrip("[")
    return steps


def _tname(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number"}.get(
        type(v), type(v).__name__
    )


# --------------------------------------------------------------------------- pieces


def object_meta(c: ParseContext, v: Any) -> ObjectMeta:
    m = c.mapping(v, "metadata")
    return ObjectMeta(
        name=c.string(m.get("name"), "metadata.name"),
        namespace=c.string(m.get("namespace"), "metadata.namespace"),
        uid=c.string(m.get("uid"), "metadata.uid"),
        generate_name=c.string(m.get("generateName"), "metadata.generateName"),
        labels={str(k): str(x) for k, x in c.mapping(m.get("labels"), "metadata.labels").items()},
        annotations={
            str(k): str(x) for k, x in c.mapping(m.get("annotations"), "metadata.annotations").items()
        },
        creation_timestamp=str(m.get("creationTimestamp") or ""),
        owner_references=[
            r for r in c.items(m.get("ownerReferences"), "metadata.ownerReferences") if isinstance(r, dict)
        ],
    )


def _requirement(c: ParseContext, v: Any, path: str) -> NodeSelectorRequirement:
    m = c.mapping(v, path)
    return NodeSelectorRequirement(
        key=c.string(m.get("key"), f"{path}.key"),
        operator=c.string(m.get("operator"), f"{path}.operator"),
        values=[str(x) for x in c.items(m.get("values"), f"{path}.values")],
    )


def node_selector(c: ParseContext, v: Any, path: str) -> NodeSelector | None:
    if v is None:
        return None
    m = c.mapping(v, path)
    terms = []
    for i, t in enumerate(c.items(m.get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms")):
        tp = f"{path}.nodeSelectorTerms[{i}]"
        tm = c.mapping(t, tp)
        terms.append(
            NodeSelectorTerm(
                match_expressions=c.each(
                    tm.get("matchExpressions"), f"{tp}.matchExpressions", lambda x, p: _requirement(c, x, p)
                ),
                match_fields=c.each(
                    tm.get("matchFields"), f"{tp}.matchFields", lambda x, p: _requirement(c, x, p)
                ),
            )
        )
    return NodeSelector(terms=terms)


def _attribute(c: ParseContext, v: Any, path: str) -> DeviceAttribute:
    m = c.mapping(v, path)
    set_kinds = [k for k in ATTRIBUTE_KINDS if m.get(k) is not None]
    unknown = [k for k in m if k not in ATTRIBUTE_KINDS]
    if unknown:
        raise c.fail(path, f"unknown attribute value type {unknown[0]!r} (one of int, bool, string, version)")
    if len(set_kinds) != 1:
        raise c.fail(path, "exactly one of int, bool, string, version (or a list type) must be set")
    kind = set_kinds[0]
    value = m[kind]
    checks: dict[str, Callable[[Any], bool]] = {
        "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
        "bool": lambda x: isinstance(x, bool),
        "string": lambda x: isinstance(x, str),
        "version": lambda x: isinstance(x, str),
    }
    base = kind.rstrip("s") if kind.endswith("s") else kind
    ok = checks[base]
    if kind.endswith("s"):
        if not isinstance(value, list) or not all(ok(x) for x in value):
            raise c.fail(f"{path}.{kind}", f"expected a list of {base} values")
    elif not ok(value):
        raise c.fail(f"{path}.{kind}", f"expected a {base} value, found {_tname(value)}")
    return DeviceAttribute(kind=kind, value=value)


def _policy(c: ParseContext, v: Any, path: str) -> CapacityRequestPolicy | None:
    if v is None:
        return None
    m = c.mapping(v, path)
    rng = None
    if m.get("validRange") is not None:
        r = c.mapping(m["validRange"], f"{path}.validRange")
        rng = CapacityRequestPolicyRange(
            min=c.qty(r.get("min"), f"{path}.validRange.min"),
            max=c.qty(r["max"], f"{path}.validRange.max") if r.get("max") is not None else None,
            step=c.qty(r["step"], f"{path}.validRange.step") if r.get("step") is not None else None,
        )
    vals = None
    if m.get("validValues") is not None:
        vals = [c.qty(x, f"{path}.validValues[{i}]") for i, x in enumerate(c.items(m["validValues"], path))]
    return CapacityRequestPolicy(
        default=c.qty(m["default"], f"{path}.default") if m.get("default") is not None else None,
        valid_values=vals,
        valid_range=rng,
    )


def _capacity(c: ParseContext, v: Any, path: str) -> DeviceCapacity:
    if not isinstance(v, dict):  # v1alpha3 bare quantity (convert normally wraps it)
        return DeviceCapacity(value=c.qty(v, path))
    return DeviceCapacity(
        value=c.qty(v.get("value"), f"{path}.value"),
        request_policy=_policy(c, v.get("requestPolicy"), f"{path}.requestPolicy"),
    )


def _taint(c: ParseContext, v: Any, path: str) -> DeviceTaint:
    m = c.mapping(v, path)
    return DeviceTaint(
        key=c.string(m.get("key"), f"{path}.key"),
        value=c.string(m.get("value"), f"{path}.value"),
        effect=c.string(m.get("effect"), f"{path}.effect"),
        time_added=c.opt_str(m.get("timeAdded"), f"{path}.timeAdded"),
    )


def _device(c: ParseContext, v: Any, path: str) -> Device:
    m = c.mapping(v, path)
    return Device(
        name=c.string(m.get("name"), f"{path}.name"),
        attributes={
            str(k): _attribute(c, x, f"{path}.attributes.{k}")
            for k, x in c.mapping(m.get("attributes"), f"{path}.attributes").items()
        },
        capacity={
            str(k): _capacity(c, x, f"{path}.capacity.{k}")
            for k, x in c.mapping(m.get("capacity"), f"{path}.capacity").items()
        },
        consumes_counters=c.each(
            m.get("consumesCounters"),
            f"{path}.consumesCounters",
            lambda x, p: DeviceCounterConsumption(
                counter_set=c.string(c.mapping(x, p).get("counterSet"), f"{p}.counterSet"),
                counters={
                    str(k): c.qty(c.mapping(cv, f"{p}.counters.{k}").get("value"), f"{p}.counters.{k}.value")
                    for k, cv in c.mapping(x.get("counters"), f"{p}.counters").items()
                },
                compatibility_groups=c.strings(x.get("compatibilityGroups"), f"{p}.compatibilityGroups"),
            ),
        ),
        node_name=c.opt_str(m.get("nodeName"), f"{path}.nodeName"),
        node_selector=node_selector(c, m.get("nodeSelector"), f"{path}.nodeSelector"),
        all_nodes=c.boolean(m.get("allNodes"), f"{path}.allNodes"),
        taints=c.each(m.get("taints"), f"{path}.taints", lambda x, p: _taint(c, x, p)),
        binds_to_node=c.boolean(m.get("bindsToNode"), f"{path}.bindsToNode"),
        binding_conditions=c.strings(m.get("bindingConditions"), f"{path}.bindingConditions"),
        binding_failure_conditions=c.strings(
            m.get("bindingFailureConditions"), f"{path}.bindingFailureConditions"
        ),
        allow_multiple_allocations=c.boolean(
            m.get("allowMultipleAllocations"), f"{path}.allowMultipleAllocations"
        ),
    )


def _counter_set(c: ParseContext, v: Any, path: str) -> CounterSet:
    m = c.mapping(v, path)
    return CounterSet(
        name=c.string(m.get("name"), f"{path}.name"),
        counters={
            str(k): c.qty(c.mapping(x, f"{path}.counters.{k}").get("value"), f"{path}.counters.{k}.value")
            for k, x in c.mapping(m.get("counters"), f"{path}.counters").items()
        },
    )


def _toleration(c: ParseContext, v: Any, path: str) -> DeviceToleration:
    m = c.mapping(v, path)
    return DeviceToleration(
        key=c.string(m.get("key"), f"{path}.key"),
        operator=c.string(m.get("operator"), f"{path}.operator") or "Equal",
        value=c.string(m.get("value"), f"{path}.value"),
        effect=c.string(m.get("effect"), f"{path}.effect"),
        toleration_seconds=c.integer(m.get("tolerationSeconds"), f"{path}.tolerationSeconds")
        if m.get("tolerationSeconds") is not None
        else None,
    )


def _selectors(c: ParseContext, v: Any, path: str) -> list[str]:
    out = []
    for i, s in enumerate(c.items(v, path)):
        sm = c.mapping(s, f"{path}[{i}]")
        cel = c.mapping(sm.get("cel"), f"{path}[{i}].cel")
        expr = c.string(cel.get("expression"), f"{path}[{i}].cel.expression")
        if not expr:
            hint = " (found expression next to cel; indent it under cel)" if "expression" in sm else ""
            raise c.fail(f"{path}[{i}].cel.expression", f"required value{hint}")
        out.append(expr)
    return out


def _request_fields(c: ParseContext, m: dict[str, Any], path: str) -> dict[str, Any]:
    mode = c.string(m.get("allocationMode"), f"{path}.allocationMode") or ALLOCATION_MODE_EXACT
    count = c.integer(m.get("count"), f"{path}.count")
    if mode == ALLOCATION_MODE_EXACT and count == 0:
        count = 1
    cap = None
    if m.get("capacity") is not None:
        cap = c.qty_map(
            c.mapping(m["capacity"], f"{path}.capacity").get("requests"), f"{path}.capacity.requests"
        )
    return {
        "device_class_name": c.string(m.get("deviceClassName"), f"{path}.deviceClassName"),
        "selectors": _selectors(c, m.get("selectors"), f"{path}.selectors"),
        "allocation_mode": mode,
        "count": count,
        "tolerations": c.each(m.get("tolerations"), f"{path}.tolerations", lambda x, p: _toleration(c, x, p)),
        "capacity": cap,
    }


def _request(c: ParseContext, v: Any, path: str) -> DeviceRequest:
    m = c.mapping(v, path)
    exactly = None
    if m.get("exactly") is not None:
        em = c.mapping(m["exactly"], f"{path}.exactly")
        exactly = ExactDeviceRequest(
            **_request_fields(c, em, f"{path}.exactly"),
            admin_access=c.boolean(em.get("adminAccess"), f"{path}.exactly.adminAccess"),
        )
    subs = []
    for i, s in enumerate(c.items(m.get("firstAvailable"), f"{path}.firstAvailable")):
        sp = f"{path}.firstAvailable[{i}]"
        sm = c.mapping(s, sp)
        subs.append(
            DeviceSubRequest(name=c.string(sm.get("name"), f"{sp}.name"), **_request_fields(c, sm, sp))
        )
    return DeviceRequest(name=c.string(m.get("name"), f"{path}.name"), exactly=exactly, first_available=subs)


def _opaque(c: ParseContext, v: Any, path: str) -> OpaqueDeviceConfiguration | None:
    if v is None:
        return None
    m = c.mapping(v, path)
    return OpaqueDeviceConfiguration(
        driver=c.string(m.get("driver"), f"{path}.driver"), parameters=m.get("parameters")
    )


def device_claim(c: ParseContext, v: Any, path: str) -> DeviceClaim:
    spec = c.mapping(v, path)
    d = c.mapping(spec.get("devices"), f"{path}.devices")
    p = f"{path}.devices"
    return DeviceClaim(
        requests=c.each(d.get("requests"), f"{p}.requests", lambda x, q: _request(c, x, q)),
        constraints=c.each(
            d.get("constraints"),
            f"{p}.constraints",
            lambda x, q: DeviceConstraint(
                requests=c.strings(c.mapping(x, q).get("requests"), f"{q}.requests"),
                match_attribute=c.opt_str(x.get("matchAttribute"), f"{q}.matchAttribute"),
                distinct_attribute=c.opt_str(x.get("distinctAttribute"), f"{q}.distinctAttribute"),
            ),
        ),
        config=c.each(
            d.get("config"),
            f"{p}.config",
            lambda x, q: DeviceClaimConfiguration(
                requests=c.strings(c.mapping(x, q).get("requests"), f"{q}.requests"),
                opaque=_opaque(c, x.get("opaque"), f"{q}.opaque"),
            ),
        ),
    )


def _allocation(c: ParseContext, v: Any, path: str) -> AllocationResult | None:
    if v is None:
        return None
    m = c.mapping(v, path)
    devices = c.mapping(m.get("devices"), f"{path}.devices")

    def result(x: Any, p: str) -> DeviceRequestAllocationResult:
        r = c.mapping(x, p)
        return DeviceRequestAllocationResult(
            request=c.string(r.get("request"), f"{p}.request"),
            driver=c.string(r.get("driver"), f"{p}.driver"),
            pool=c.string(r.get("pool"), f"{p}.pool"),
            device=c.string(r.get("device"), f"{p}.device"),
            admin_access=c.boolean(r.get("adminAccess"), f"{p}.adminAccess"),
            tolerations=c.each(r.get("tolerations"), f"{p}.tolerations", lambda y, q: _toleration(c, y, q)),
            binding_conditions=c.strings(r.get("bindingConditions"), f"{p}.bindingConditions"),
            binding_failure_conditions=c.strings(
                r.get("bindingFailureConditions"), f"{p}.bindingFailureConditions"
            ),
            share_id=c.opt_str(r.get("shareID"), f"{p}.shareID"),
            consumed_capacity=c.qty_map(r.get("consumedCapacity"), f"{p}.consumedCapacity")
            if r.get("consumedCapacity") is not None
            else None,
        )

    return AllocationResult(
        results=c.each(devices.get("results"), f"{path}.devices.results", result),
        config=c.each(
            devices.get("config"),
            f"{path}.devices.config",
            lambda x, p: DeviceAllocationConfiguration(
                source=c.string(c.mapping(x, p).get("source"), f"{p}.source"),
                requests=c.strings(x.get("requests"), f"{p}.requests"),
                opaque=_opaque(c, x.get("opaque"), f"{p}.opaque"),
            ),
        ),
        node_selector=node_selector(c, m.get("nodeSelector"), f"{path}.nodeSelector"),
        allocation_timestamp=c.opt_str(m.get("allocationTimestamp"), f"{path}.allocationTimestamp"),
    )


# --------------------------------------------------------------------------- kinds


def _slice(c: ParseContext, obj: dict[str, Any]) -> ResourceSlice:
    spec = c.mapping(obj.get("spec"), "spec")
    pool = c.mapping(spec.get("pool"), "spec.pool")
    return ResourceSlice(
        meta=object_meta(c, obj.get("metadata")),
        driver=c.string(spec.get("driver"), "spec.driver"),
        pool=ResourcePool(
            name=c.string(pool.get("name"), "spec.pool.name"),
            generation=c.integer(pool.get("generation"), "spec.pool.generation"),
            resource_slice_count=c.integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", 1),
        ),
        node_name=c.opt_str(spec.get("nodeName"), "spec.nodeName") or None,
        node_selector=node_selector(c, spec.get("nodeSelector"), "spec.nodeSelector"),
        all_nodes=c.boolean(spec.get("allNodes"), "spec.allNodes") or None,
        per_device_node_selection=c.boolean(
            spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection"
        ),
        devices=c.each(spec.get("devices"), "spec.devices", lambda x, p: _device(c, x, p)),
        shared_counters=c.each(
            spec.get("sharedCounters"), "spec.sharedCounters", lambda x, p: _counter_set(c, x, p)
        ),
    )


def _claim(c: ParseContext, obj: dict[str, Any]) -> ResourceClaim:
    status = c.mapping(obj.get("status"), "status")
    return ResourceClaim(
        meta=object_meta(c, obj.get("metadata")),
        spec=device_claim(c, obj.get("spec"), "spec"),
        allocation=_allocation(c, status.get("allocation"), "status.allocation"),
        reserved_for=c.each(
            status.get("reservedFor"),
            "status.reservedFor",
            lambda x, p: ResourceClaimConsumerReference(
                resource=c.string(c.mapping(x, p).get("resource"), f"{p}.resource"),
                name=c.string(x.get("name"), f"{p}.name"),
                uid=c.string(x.get("uid"), f"{p}.uid"),
                api_group=c.string(x.get("apiGroup"), f"{p}.apiGroup"),
            ),
        ),
        device_statuses=[d for d in c.items(status.get("devices"), "status.devices") if isinstance(d, dict)],
    )


def _template(c: ParseContext, obj: dict[str, Any]) -> ResourceClaimTemplate:
    spec = c.mapping(obj.get("spec"), "spec")
    tmeta = c.mapping(spec.get("metadata"), "spec.metadata")
    return ResourceClaimTemplate(
        meta=object_meta(c, obj.get("metadata")),
        claim_labels={
            str(k): str(v) for k, v in c.mapping(tmeta.get("labels"), "spec.metadata.labels").items()
        },
        claim_annotations={
            str(k): str(v)
            for k, v in c.mapping(tmeta.get("annotations"), "spec.metadata.annotations").items()
        },
        spec=device_claim(c, spec.get("spec"), "spec.spec"),
    )


def _class(c: ParseContext, obj: dict[str, Any]) -> DeviceClass:
    spec = c.mapping(obj.get("spec"), "spec")
    configs = []
    for i, x in enumerate(c.items(spec.get("config"), "spec.config")):
        o = _opaque(c, c.mapping(x, f"spec.config[{i}]").get("opaque"), f"spec.config[{i}].opaque")
        if o is not None:
            configs.append(o)
    return DeviceClass(
        meta=object_meta(c, obj.get("metadata")),
        selectors=_selectors(c, spec.get("selectors"), "spec.selectors"),
        config=configs,
        extended_resource_name=c.opt_str(spec.get("extendedResourceName"), "spec.extendedResourceName"),
    )


def _taint_rule(c: ParseContext, obj: dict[str, Any]) -> DeviceTaintRule:
    spec = c.mapping(obj.get("spec"), "spec")
    sel = None
    if spec.get("deviceSelector") is not None:
        s = c.mapping(spec["deviceSelector"], "spec.deviceSelector")
        sel = DeviceTaintSelector(
            driver=c.opt_str(s.get("driver"), "spec.deviceSelector.driver"),
            pool=c.opt_str(s.get("pool"), "spec.deviceSelector.pool"),
            device=c.opt_str(s.get("device"), "spec.deviceSelector.device"),
        )
    return DeviceTaintRule(
        meta=object_meta(c, obj.get("metadata")),
        taint=_taint(c, spec.get("taint"), "spec.taint"),
        device_selector=sel,
    )


def _node(c: ParseContext, obj: dict[str, Any]) -> Node:
    spec = c.mapping(obj.get("spec"), "spec")
    status = c.mapping(obj.get("status"), "status")
    capacity = c.qty_map(status.get("capacity"), "status.capacity")
    allocatable = (
        c.qty_map(status.get("allocatable"), "status.allocatable") if "allocatable" in status else capacity
    )
    ready = True
    for cond in c.items(status.get("conditions"), "status.conditions"):
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            ready = cond.get("status") == "True"
    info = c.mapping(status.get("nodeInfo"), "status.nodeInfo")
    return Node(
        meta=object_meta(c, obj.get("metadata")),
        capacity=capacity,
        allocatable=allocatable,
        taints=c.each(
            spec.get("taints"),
            "spec.taints",
            lambda x, p: Taint(
                key=c.string(c.mapping(x, p).get("key"), f"{p}.key"),
                value=c.string(x.get("value"), f"{p}.value"),
                effect=c.string(x.get("effect"), f"{p}.effect"),
            ),
        ),
        unschedulable=bool(spec.get("unschedulable")),
        ready=ready,
        kubelet_version=str(info.get("kubeletVersion") or ""),
    )


def _container(c: ParseContext, v: Any, path: str) -> Container:
    m = c.mapping(v, path)
    res = c.mapping(m.get("resources"), f"{path}.resources")
    return Container(
        name=c.string(m.get("name"), f"{path}.name"),
        requests=c.qty_map(res.get("requests"), f"{path}.resources.requests"),
        limits=c.qty_map(res.get("limits"), f"{path}.resources.limits"),
        claims=[
            c.string(
                c.mapping(x, f"{path}.resources.claims[{i}]").get("name"),
                f"{path}.resources.claims[{i}].name",
            )
            for i, x in enumerate(c.items(res.get("claims"), f"{path}.resources.claims"))
        ],
        restart_policy=c.opt_str(m.get("restartPolicy"), f"{path}.restartPolicy"),
    )


def pod_spec(
    c: ParseContext, meta: ObjectMeta, spec: dict[str, Any], status: dict[str, Any] | None = None
) -> Pod:
    status = status or {}
    sg = c.mapping(spec.get("schedulingGroup"), "spec.schedulingGroup")
    claim_statuses: dict[str, str | None] = {}
    for x in c.items(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses"):
        if isinstance(x, dict) and x.get("name"):
            claim_statuses[str(x["name"])] = x.get("resourceClaimName")
    return Pod(
        meta=meta,
        containers=c.each(spec.get("containers"), "spec.containers", lambda x, p: _container(c, x, p)),
        init_containers=c.each(
            spec.get("initContainers"), "spec.initContainers", lambda x, p: _container(c, x, p)
        ),
        overhead=c.qty_map(spec.get("overhead"), "spec.overhead"),
        resource_claims=c.each(
            spec.get("resourceClaims"),
            "spec.resourceClaims",
            lambda x, p: PodResourceClaim(
                name=c.string(c.mapping(x, p).get("name"), f"{p}.name"),
                resource_claim_name=c.opt_str(x.get("resourceClaimName"), f"{p}.resourceClaimName"),
                resource_claim_template_name=c.opt_str(
                    x.get("resourceClaimTemplateName"), f"{p}.resourceClaimTemplateName"
                ),
            ),
        ),
        node_name=c.string(spec.get("nodeName"), "spec.nodeName"),
        node_selector={
            str(k): str(v) for k, v in c.mapping(spec.get("nodeSelector"), "spec.nodeSelector").items()
        },
        affinity=spec.get("affinity") if isinstance(spec.get("affinity"), dict) else None,
        tolerations=c.each(
            spec.get("tolerations"),
            "spec.tolerations",
            lambda x, p: Toleration(
                key=c.string(c.mapping(x, p).get("key"), f"{p}.key"),
                operator=c.string(x.get("operator"), f"{p}.operator") or "Equal",
                value=c.string(x.get("value"), f"{p}.value"),
                effect=c.string(x.get("effect"), f"{p}.effect"),
                toleration_seconds=x.get("tolerationSeconds")
                if isinstance(x.get("tolerationSeconds"), int)
                else None,
            ),
        ),
        priority=c.integer(spec["priority"], "spec.priority") if spec.get("priority") is not None else None,
        priority_class_name=c.string(spec.get("priorityClassName"), "spec.priorityClassName"),
        scheduler_name=c.string(spec.get("schedulerName"), "spec.schedulerName"),
        scheduling_group=c.opt_str(sg.get("podGroupName"), "spec.schedulingGroup.podGroupName"),
        phase=str(status.get("phase") or ""),
        claim_statuses=claim_statuses,
    )


def _pod(c: ParseContext, obj: dict[str, Any]) -> Pod:
    return pod_spec(
        c,
        object_meta(c, obj.get("metadata")),
        c.mapping(obj.get("spec"), "spec"),
        c.mapping(obj.get("status"), "status"),
    )


_PARSERS: dict[str, Callable[[ParseContext, dict[str, Any]], Any]] = {
    "ResourceSlice": _slice,
    "ResourceClaim": _claim,
    "ResourceClaimTemplate": _template,
    "DeviceClass": _class,
    "DeviceTaintRule": _taint_rule,
    "Node": _node,
    "Pod": _pod,
}


@dataclass
class Parsed:
    """An object of the typed model with where it came from and what conversion changed."""

    obj: Any
    kind: str
    location: Location | None = None
    notes: list[convert.ConversionNote] = field(default_factory=list)


def parse_object(obj: dict[str, Any], location: Location | None = None) -> Parsed | None:
    """Typed object for a supported kind (see ``SUPPORTED_KINDS``), None for other kinds.

    Raises :class:`InputError` for malformed values and :class:`convert.ClassicDRAError` for classic DRA.
    """
    kind = obj.get("kind")
    api_version = str(obj.get("apiVersion", ""))
    group, _ = convert.split_api_version(api_version)
    c = ParseContext(location)
    if group == convert.GROUP:
        if convert.is_classic(api_version):
            convert.upgrade_to_v1(obj, location=location)  # raises ClassicDRAError
        if kind not in DRA_KINDS:
            return None
    elif kind in ("Pod", "Node"):
        if api_version != "v1":
            return None
    else:
        return None
    assert isinstance(kind, str)
    notes: list[convert.ConversionNote] = []
    if convert.needs_upgrade(obj) or kind == "DeviceTaintRule":
        obj = copy.deepcopy(obj)
        notes = convert.upgrade_to_v1(obj, location=location)
    try:
        typed = _PARSERS[kind](c, obj)
    except RecursionError:  # pragma: no cover
        raise c.fail("", "object nested too deeply") from None
    return Parsed(obj=typed, kind=kind, location=location, notes=notes)


def parse_all(items: Iterable[tuple[dict[str, Any], Location | None]]) -> list[Parsed]:
    out = []
    for obj, loc in items:
        p = parse_object(obj, loc)
        if p is not None:
            out.append(p)
    return out

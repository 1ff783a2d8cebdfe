"""Typed model → resource.k8s.io/v1 JSON-shaped dicts (camelCase, empty fields omitted like ``omitempty``)."""

from __future__ import annotations

from typing import Any

from kubedra.k8s.quantity import Quantity
from kubedra.model.convert import V1
from kubedra.model.objects import (
    AllocationResult,
    CapacityRequestPolicy,
    Device,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    NodeSelector,
    ObjectMeta,
    OpaqueDeviceConfiguration,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)


def _put(d: dict[str, Any], key: str, value: Any) -> None:
    if value is None or value == [] or value == {} or value == "":
        return
    d[key] = value


def meta_dict(m: ObjectMeta) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _put(d, "name", m.name)
    _put(d, "generateName", m.generate_name)
    _put(d, "namespace", m.namespace)
    _put(d, "uid", m.uid)
    _put(d, "creationTimestamp", m.creation_timestamp)
    _put(d, "labels", dict(m.labels))
    _put(d, "annotations", dict(m.annotations))
    _put(d, "ownerReferences", list(m.owner_references))
    return d


def qty(q: Quantity) -> str:
    return q.canonical()


def qty_map(m: dict[str, Quantity] | None) -> dict[str, str] | None:
    return None if m is None else {k: qty(v) for k, v in m.items()}


def node_selector_dict(ns: NodeSelector | None) -> dict[str, Any] | None:
    if ns is None:
        return None
    terms = []
    for t in ns.terms:
        td: dict[str, Any] = {}
        _put(td, "matchExpressions", [_req(r.key, r.operator, r.values) for r in t.match_expressions])
        _put(td, "matchFields", [_req(r.key, r.operator, r.values) for r in t.match_fields])
        terms.append(td)
    return {"nodeSelectorTerms": terms}


def _req(key: str, op: str, values: list[str]) -> dict[str, Any]:
    d: dict[str, Any] = {"key": key, "operator": op}
    _put(d, "values", list(values))
    return d


def taint_dict(t: DeviceTaint) -> dict[str, Any]:
    d: dict[str, Any] = {"key": t.key}
    _put(d, "value", t.value)
    d["effect"] = t.effect
    _put(d, "timeAdded", t.time_added)
    return d


def toleration_dict(t: DeviceToleration) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _put(d, "key", t.key)
    _put(d, "operator", t.operator)
    _put(d, "value", t.value)
    _put(d, "effect", t.effect)
    if t.toleration_seconds is not None:
        d["tolerationSeconds"] = t.toleration_seconds
    return d


def _policy_dict(p: CapacityRequestPolicy | None) -> dict[str, Any] | None:
    if p is None:
        return None
    d: dict[str, Any] = {}
    if p.default is not None:
        d["default"] = qty(p.default)
    if p.valid_values is not None:
        d["validValues"] = [qty(v) for v in p.valid_values]
    if p.valid_range is not None:
        r: dict[str, Any] = {"min": qty(p.valid_range.min)}
        if p.valid_range.max is not None:
            r["max"] = qty(p.valid_range.max)
        if p.valid_range.step is not None:
            r["step"] = qty(p.valid_range.step)
        d["validRange"] = r
    return d


def device_dict(dev: Device) -> dict[str, Any]:
    d: dict[str, Any] = {"name": dev.name}
    # list values copied: devices share their attribute objects (model.facts), and YAML would alias them
    _put(
        d,
        "attributes",
        {k: {a.kind: list(a.value) if type(a.value) is list else a.value} for k, a in dev.attributes.items()},
    )
    caps: dict[str, Any] = {}
    for k, c in dev.capacity.items():
        cd: dict[str, Any] = {"value": qty(c.value)}
        _put(cd, "requestPolicy", _policy_dict(c.request_policy))
        caps[k] = cd
    _put(d, "capacity", caps)
    _put(
        d,
        "consumesCounters",
        [
            {
                "counterSet": cc.counter_set,
                "counters": {k: {"value": qty(v)} for k, v in cc.counters.items()},
                **({"compatibilityGroups": list(cc.compatibility_groups)} if cc.compatibility_groups else {}),
            }
            for cc in dev.consumes_counters
        ],
    )
    _put(d, "nodeName", dev.node_name)
    _put(d, "nodeSelector", node_selector_dict(dev.node_selector))
    if dev.all_nodes is not None:
        d["allNodes"] = dev.all_nodes
    _put(d, "taints", [taint_dict(t) for t in dev.taints])
    if dev.binds_to_node is not None:
        d["bindsToNode"] = dev.binds_to_node
    _put(d, "bindingConditions", list(dev.binding_conditions))
    _put(d, "bindingFailureConditions", list(dev.binding_failure_conditions))
    if dev.allow_multiple_allocations is not None:
        d["allowMultipleAllocations"] = dev.allow_multiple_allocations
    return d


def slice_dict(s: ResourceSlice) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": s.driver,
        "pool": {
            "name": s.pool.name,
            "generation": s.pool.generation,
            "resourceSliceCount": s.pool.resource_slice_count,
        },
    }
    _put(spec, "nodeName", s.node_name)
    _put(spec, "nodeSelector", node_selector_dict(s.node_selector))
    if s.all_nodes is not None:
        spec["allNodes"] = s.all_nodes
    if s.per_device_node_selection is not None:
        spec["perDeviceNodeSelection"] = s.per_device_node_selection
    _put(spec, "devices", [device_dict(d) for d in s.devices])
    _put(
        spec,
        "sharedCounters",
        [
            {"name": cs.name, "counters": {k: {"value": qty(v)} for k, v in cs.counters.items()}}
            for cs in s.shared_counters
        ],
    )
    _put(spec, "skipNodeOperations", list(s.skip_node_operations))
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": meta_dict(s.meta), "spec": spec}


def _selectors(sel: list[str]) -> list[dict[str, Any]]:
    return [{"cel": {"expression": e}} for e in sel]


def _request_fields(r: ExactDeviceRequest | DeviceSubRequest) -> dict[str, Any]:
    d: dict[str, Any] = {"deviceClassName": r.device_class_name}
    _put(d, "selectors", _selectors(r.selectors))
    d["allocationMode"] = r.allocation_mode
    if r.allocation_mode == "ExactCount":
        d["count"] = r.count
    _put(d, "tolerations", [toleration_dict(t) for t in r.tolerations])
    if r.capacity is not None:
        d["capacity"] = {"requests": qty_map(r.capacity)}
    _put(d, "derivedAttributes", [{"name": a.name, "expression": a.expression} for a in r.derived_attributes])
    return d


def request_dict(r: DeviceRequest) -> dict[str, Any]:
    d: dict[str, Any] = {"name": r.name}
    if r.exactly is not None:
        e = _request_fields(r.exactly)
        if r.exactly.admin_access is not None:
            e["adminAccess"] = r.exactly.admin_access
        d["exactly"] = e
    if r.first_available:
        d["firstAvailable"] = [{"name": s.name, **_request_fields(s)} for s in r.first_available]
    return d


def _opaque(o: OpaqueDeviceConfiguration | None) -> dict[str, Any] | None:
    if o is None:
        return None
    d: dict[str, Any] = {"driver": o.driver}
    if o.parameters is not None:
        d["parameters"] = o.parameters
    return d


def device_claim_dict(c: DeviceClaim) -> dict[str, Any]:
    devices: dict[str, Any] = {}
    _put(devices, "requests", [request_dict(r) for r in c.requests])
    cons = []
    for k in c.constraints:
        cd: dict[str, Any] = {}
        _put(cd, "requests", list(k.requests))
        _put(cd, "matchAttribute", k.match_attribute)
        _put(cd, "distinctAttribute", k.distinct_attribute)
        cons.append(cd)
    _put(devices, "constraints", cons)
    cfgs = []
    for cf in c.config:
        cfd: dict[str, Any] = {}
        _put(cfd, "requests", list(cf.requests))
        _put(cfd, "opaque", _opaque(cf.opaque))
        cfgs.append(cfd)
    _put(devices, "config", cfgs)
    return {"devices": devices}


def result_dict(r: DeviceRequestAllocationResult) -> dict[str, Any]:
    d: dict[str, Any] = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
    if r.admin_access:
        d["adminAccess"] = True
    _put(d, "tolerations", [toleration_dict(t) for t in r.tolerations])
    _put(d, "bindingConditions", list(r.binding_conditions))
    _put(d, "bindingFailureConditions", list(r.binding_failure_conditions))
    _put(d, "shareID", r.share_id)
    if r.consumed_capacity is not None:
        d["consumedCapacity"] = qty_map(r.consumed_capacity)
    _put(d, "skipNodeOperations", list(r.skip_node_operations))
    return d


def allocation_dict(a: AllocationResult) -> dict[str, Any]:
    devices: dict[str, Any] = {"results": [result_dict(r) for r in a.results]}
    cfgs = []
    for c in a.config:
        cd: dict[str, Any] = {"source": c.source}
        _put(cd, "requests", list(c.requests))
        _put(cd, "opaque", _opaque(c.opaque))
        cfgs.append(cd)
    _put(devices, "config", cfgs)
    d: dict[str, Any] = {"devices": devices}
    _put(d, "nodeSelector", node_selector_dict(a.node_selector))
    _put(d, "allocationTimestamp", a.allocation_timestamp)
    return d


def claim_dict(c: ResourceClaim) -> dict[str, Any]:
    d: dict[str, Any] = {
        "apiVersion": V1,
        "kind": "ResourceClaim",
        "metadata": meta_dict(c.meta),
        "spec": device_claim_dict(c.spec),
    }
    status: dict[str, Any] = {}
    if c.allocation is not None:
        status["allocation"] = allocation_dict(c.allocation)
    _put(
        status,
        "reservedFor",
        [
            {
                k: v
                for k, v in {
                    "apiGroup": r.api_group,
                    "resource": r.resource,
                    "name": r.name,
                    "uid": r.uid,
                }.items()
                if v
            }
            for r in c.reserved_for
        ],
    )
    _put(status, "devices", list(c.device_statuses))
    _put(d, "status", status)
    return d


def template_dict(t: ResourceClaimTemplate) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    tm: dict[str, Any] = {}
    _put(tm, "labels", dict(t.claim_labels))
    _put(tm, "annotations", dict(t.claim_annotations))
    _put(spec, "metadata", tm)
    spec["spec"] = device_claim_dict(t.spec)
    return {"apiVersion": V1, "kind": "ResourceClaimTemplate", "metadata": meta_dict(t.meta), "spec": spec}


def class_dict(c: DeviceClass) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    _put(spec, "selectors", _selectors(c.selectors))
    _put(spec, "config", [{"opaque": _opaque(o)} for o in c.config])
    _put(spec, "extendedResourceName", c.extended_resource_name)
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": meta_dict(c.meta), "spec": spec}


def to_dict(obj: Any) -> dict[str, Any]:
    """v1 dict for a DRA model object."""
    if isinstance(obj, ResourceSlice):
        return slice_dict(obj)
    if isinstance(obj, ResourceClaim):
        return claim_dict(obj)
    if isinstance(obj, ResourceClaimTemplate):
        return template_dict(obj)
    if isinstance(obj, DeviceClass):
        return class_dict(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__}")

"""Small builders for allocator tests (typed model objects, v1 shapes)."""

from __future__ import annotations

import dataclasses
from typing import Any

from kubedra.allocator import Features
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import (
    AttributeKind,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    Node,
    ObjectMeta,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)

# The allocator switches most tests run with: every feature the structured allocator's incubating variant has
# through 1.37 (admin access, prioritized lists, partitionable devices, taints, binding conditions, consumable
# capacity); WITH_FRACTIONS adds 1.38's FractionalCapacityRange.
ALL = Features(
    admin_access=True,
    prioritized_list=True,
    partitionable_devices=True,
    device_taints=True,
    device_binding_and_status=True,
    consumable_capacity=True,
)
WITH_FRACTIONS = dataclasses.replace(ALL, fractional_capacity_range=True)

DRIVER = "driver-a"


def q(s: str) -> Quantity:
    return Quantity.parse(s)


def node(name: str = "node-1", **labels: str) -> Node:
    return Node(meta=ObjectMeta(name=name, labels=dict(labels) or {"region": "region-1"}))


def dev(name: str, attrs: dict[str, Any] | None = None, **kw: Any) -> Device:
    attributes = {}
    for k, v in (attrs or {}).items():
        kind: AttributeKind = "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "string"
        attributes[k] = DeviceAttribute(kind, v)
    return Device(name=name, attributes=attributes, **kw)


def slice_(
    name: str,
    devices: list[Device],
    *,
    pool: str = "pool-1",
    node_name: str | None = "node-1",
    driver: str = DRIVER,
    count: int = 1,
    generation: int = 0,
    counters: list[CounterSet] | None = None,
    **kw: Any,
) -> ResourceSlice:
    return ResourceSlice(
        meta=ObjectMeta(name=name),
        driver=driver,
        pool=ResourcePool(pool, generation, count),
        node_name=node_name,
        devices=devices,
        shared_counters=counters or [],
        **kw,
    )


def cls(name: str = "class-a", *selectors: str) -> DeviceClass:
    return DeviceClass(meta=ObjectMeta(name=name), selectors=list(selectors))


def req(name: str = "req-0", count: int = 1, klass: str = "class-a", **kw: Any) -> DeviceRequest:
    return DeviceRequest(name=name, exactly=ExactDeviceRequest(device_class_name=klass, count=count, **kw))


def all_req(name: str = "req-0", klass: str = "class-a", **kw: Any) -> DeviceRequest:
    return DeviceRequest(
        name=name, exactly=ExactDeviceRequest(device_class_name=klass, allocation_mode="All", count=0, **kw)
    )


def sub(name: str, count: int = 1, klass: str = "class-a", **kw: Any) -> DeviceSubRequest:
    return DeviceSubRequest(name=name, device_class_name=klass, count=count, **kw)


def claim(
    name: str, *requests: DeviceRequest, constraints: list[DeviceConstraint] | None = None
) -> ResourceClaim:
    return ResourceClaim(
        meta=ObjectMeta(name=name, namespace="default"),
        spec=DeviceClaim(requests=list(requests), constraints=constraints or []),
    )


def counter_set(name: str, **counters: str) -> CounterSet:
    return CounterSet(name=name, counters={k: q(v) for k, v in counters.items()})


def consumes(set_name: str, **counters: str) -> list[DeviceCounterConsumption]:
    return [DeviceCounterConsumption(set_name, {k: q(v) for k, v in counters.items()})]


def taint(key: str, effect: str = "NoSchedule", value: str = "") -> DeviceTaint:
    return DeviceTaint(key=key, effect=effect, value=value)


def toleration(
    key: str = "", operator: str = "Exists", effect: str = "", value: str = ""
) -> DeviceToleration:
    return DeviceToleration(key=key, operator=operator, effect=effect, value=value)


def capacity(**caps: str) -> dict[str, DeviceCapacity]:
    return {k: DeviceCapacity(q(v)) for k, v in caps.items()}


def picked(results: Any) -> list[list[tuple[str, str]]]:
    """[(request, device), ...] per claim."""
    return [[(r.request, r.device) for r in res.results] for res in results]

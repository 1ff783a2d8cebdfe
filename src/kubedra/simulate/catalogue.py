"""Typed objects of a generated cluster, fast: one node per node group goes through the vendor's catalogue and the
parser, the others are copies with their own identities.

A vendor's catalogue returns plain dicts, which the loader parses into the typed model; for 1,000 dynamic-MIG
nodes (208,000 devices) that is a minute of work for objects that differ only in the node's name and its GPUs'
identities. Here the first node of each group (:class:`kubedra.vendors.base.SimulatedGroup`) is generated and
parsed; every other node's ResourceSlices are that node's with the metadata, pool, nodeName and the attribute
values the vendor names (:class:`kubedra.vendors.base.SliceIdentities`: NVIDIA's ``uuid``/``parentUUID``)
replaced, and every other object (capacity, counters, the other attributes) shared, since the engine never
mutates its inputs. Nodes themselves are generated and parsed one by one (cheap). Tests check the copies equal
what the parser makes of the catalogue's dicts, for each vendor.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubedra.gcpause import paused_gc
from kubedra.model.objects import (
    Device,
    DeviceAttribute,
    DeviceClass,
    Node,
    ObjectMeta,
    ResourcePool,
    ResourceSlice,
)
from kubedra.model.parse import parse_object
from kubedra.vendors.base import Vendor
from kubedra.vendors.simulated import SliceIdentities


def _parse(obj: dict[str, Any]) -> Any:
    parsed = parse_object(obj)
    assert parsed is not None, obj.get("kind")
    return parsed.obj


def _with_attributes(d: Device, attributes: dict[str, DeviceAttribute]) -> Device:
    # every field spelled out (dataclasses.replace is several times slower); the equality test against
    # the parser catches a field added to Device and missing here
    return Device(
        name=d.name,
        attributes=attributes,
        capacity=d.capacity,
        consumes_counters=d.consumes_counters,
        node_name=d.node_name,
        node_selector=d.node_selector,
        all_nodes=d.all_nodes,
        taints=d.taints,
        binds_to_node=d.binds_to_node,
        binding_conditions=d.binding_conditions,
        binding_failure_conditions=d.binding_failure_conditions,
        allow_multiple_allocations=d.allow_multiple_allocations,
    )


def share_attributes(slices: list[ResourceSlice]) -> None:
    """Devices whose attribute maps are equal (in order) get one map: the MIG devices of one GPU and
    profile differ only in their placement, which no attribute names (a node's 208 dynamic-MIG devices
    have 64 distinct maps). Maps are never mutated; clone_slices then makes one copy per shared map."""
    seen: dict[tuple[Any, ...], dict[str, DeviceAttribute]] = {}
    for s in slices:
        for d in s.devices:
            key = tuple(
                (k, a.kind, tuple(a.value) if isinstance(a.value, list) else a.value)
                for k, a in d.attributes.items()
            )
            d.attributes = seen.setdefault(key, d.attributes)


def clone_slices(slices: list[ResourceSlice], node: str, ids: SliceIdentities) -> list[ResourceSlice]:
    """``slices`` of a template node as the DRA driver publishes them on ``node`` (same hardware), on the pool named
    after the node."""
    subs = ids.values
    out = []
    # template attribute map -> this node's (devices of one GPU and profile share one; see share_attributes)
    new_attrs: dict[int, dict[str, DeviceAttribute]] = {}
    new_attr: dict[tuple[str, str], DeviceAttribute] = {}
    for s, meta in zip(slices, ids.metadata, strict=True):
        devices = []
        for d in s.devices:
            attrs = d.attributes
            made = new_attrs.get(id(attrs))
            if made is not None:
                devices.append(d if made is attrs else _with_attributes(d, made))
                continue
            changed = None
            for key, a in attrs.items():
                if isinstance(a.value, str) and a.value in subs:
                    if changed is None:
                        changed = dict(attrs)
                    ak = (a.kind, a.value)
                    na = new_attr.get(ak)
                    if na is None:
                        na = new_attr[ak] = DeviceAttribute(a.kind, subs[a.value])
                    changed[key] = na
            new_attrs[id(attrs)] = changed if changed is not None else attrs
            devices.append(d if changed is None else _with_attributes(d, changed))
        out.append(
            dataclasses.replace(
                s,
                meta=ObjectMeta(
                    name=str(meta["name"]),
                    generate_name=str(meta.get("generateName") or ""),
                    owner_references=[dict(o) for o in meta.get("ownerReferences") or ()],
                ),
                pool=ResourcePool(node, s.pool.generation, s.pool.resource_slice_count),
                node_name=node,
                devices=devices,
            )
        )
    return out


def typed_cluster(
    vendor: Vendor, spec: str, mode: str, k8s_version: str, device_plugin: bool
) -> tuple[list[Node], list[ResourceSlice], list[DeviceClass]]:
    """Nodes, slices and classes of :func:`vendor_objects`, typed."""
    nodes: list[Node] = []
    slices: list[ResourceSlice] = []
    for group in vendor.simulated_groups(spec, mode, k8s_version, device_plugin=device_plugin):
        template: list[ResourceSlice] | None = None
        first = ""
        for name in group.names:
            nodes.append(_parse(group.node(name)))
            if device_plugin:
                continue
            if template is None:
                template = [_parse(o) for o in group.slices(name)]
                share_attributes(template)
                slices += template
                first = name
            else:
                slices += clone_slices(template, name, group.clone(first, name, len(template)))
    classes = [] if device_plugin else [_parse(c) for c in vendor.simulated_device_classes(k8s_version)]
    return nodes, slices, classes


def vendor_objects(
    vendor: Vendor, spec: str, mode: str, k8s_version: str, device_plugin: bool
) -> list[dict[str, Any]]:
    """Every object of ``vendor``'s part ``spec`` of a generated cluster (for --save-cluster): the DRA driver's
    DeviceClasses, then the Nodes, then each node's slices (only the Nodes for the device-plugin view)."""
    with paused_gc():
        groups = vendor.simulated_groups(spec, mode, k8s_version, device_plugin=device_plugin)
        nodes = [group.node(name) for group in groups for name in group.names]
        if device_plugin:
            return nodes
        slices = [o for group in groups for name in group.names for o in group.slices(name)]
        return vendor.simulated_device_classes(k8s_version) + nodes + slices

"""Typed objects of a generated cluster, fast: one node per node group goes through the catalogue and the
parser, the others are copies with their own identities.

``kubedra.vendors.nvidia`` returns plain dicts, which the loader parses into the typed model; for 1,000
dynamic-MIG nodes (208,000 devices) that is a minute of work for objects that differ only in the node's
name, its UID and its GPUs' UUIDs. Here the first node of each group is generated and parsed; every other
node's ResourceSlices are that node's with the names, pool, nodeName, owner reference and the
``uuid``/``parentUUID`` attributes replaced, and every other object (capacity, counters, the other
attributes) shared, since the engine never mutates its inputs. Nodes themselves are generated and parsed
one by one (cheap). Tests check the copies equal what the parser makes of the catalogue's dicts.
"""

from __future__ import annotations

import dataclasses
from typing import Any

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
from kubedra.vendors.nvidia import dra, identity, specs
from kubedra.vendors.nvidia import nodes as nvidia_nodes
from kubedra.vendors.nvidia.cluster import mode_for, node_names


def _parse(obj: dict[str, Any]) -> Any:
    parsed = parse_object(obj)
    assert parsed is not None, obj.get("kind")
    return parsed.obj


def _gpu_keys(slices: list[ResourceSlice]) -> tuple[set[int], set[tuple[int, int, int]]]:
    """GPU minors and static MIG placements (minor, GI profile ID, start) named by the devices."""
    minors: set[int] = set()
    migs: set[tuple[int, int, int]] = set()
    for s in slices:
        for d in s.devices:
            parts = d.name.split("-")
            if len(parts) < 2 or parts[0] != "gpu" or not parts[1].isdigit():
                continue
            minors.add(int(parts[1]))
            if (
                parts[2:3] == ["mig"]
                and "uuid" in d.attributes
                and parts[-1].isdigit()
                and parts[-2].isdigit()
            ):
                migs.add((int(parts[1]), int(parts[-2]), int(parts[-1])))
    return minors, migs


def _uuid_map(template: str, node: str, keys: tuple[set[int], set[tuple[int, int, int]]]) -> dict[str, str]:
    """Template node's GPU and MIG UUIDs -> the same GPUs' UUIDs on ``node``."""
    minors, migs = keys
    subs = {identity.gpu_uuid(template, m): identity.gpu_uuid(node, m) for m in minors}
    for m, pid, start in migs:
        subs[identity.mig_uuid(template, m, pid, start)] = identity.mig_uuid(node, m, pid, start)
    return subs


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


def clone_slices(
    template: str,
    slices: list[ResourceSlice],
    node: str,
    keys: tuple[set[int], set[tuple[int, int, int]]] | None = None,
) -> list[ResourceSlice]:
    """``slices`` of node ``template`` as the DRA driver publishes them on ``node`` (same hardware)."""
    subs = _uuid_map(template, node, keys if keys is not None else _gpu_keys(slices))
    owner = [
        {"apiVersion": "v1", "kind": "Node", "name": node, "uid": identity.node_uid(node), "controller": True}
    ]
    out = []
    # template attribute map -> this node's (devices of one GPU and profile share one; see share_attributes)
    new_attrs: dict[int, dict[str, DeviceAttribute]] = {}
    new_attr: dict[tuple[str, str], DeviceAttribute] = {}
    for i, s in enumerate(slices):
        generate = s.meta.generate_name.replace(f"-{template}-", f"-{node}-")
        meta = ObjectMeta(
            name=identity.generated_name(generate, node, i),
            generate_name=generate,
            owner_references=[dict(o) for o in owner],
        )
        devices = []
        for d in s.devices:
            attrs = d.attributes
            made = new_attrs.get(id(attrs))
            if made is not None:
                devices.append(d if made is attrs else _with_attributes(d, made))
                continue
            changed = None
            for key in ("uuid", "parentUUID"):
                a = attrs.get(key)
                if a is not None and a.value in subs:
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
                meta=meta,
                pool=ResourcePool(node, s.pool.generation, s.pool.resource_slice_count),
                node_name=node,
                devices=devices,
            )
        )
    return out


def typed_cluster(
    spec: str, mode: Any, k8s_version: str, device_plugin: bool
) -> tuple[list[Node], list[ResourceSlice], list[DeviceClass]]:
    """Nodes, slices and classes of ``nvidia_cluster(spec, mode, k8s_version, device_plugin)``, typed."""
    groups = specs.parse_node_spec(spec)
    names = node_names(groups)
    nodes: list[Node] = []
    slices: list[ResourceSlice] = []
    for group, group_names in zip(groups, names, strict=True):
        gpu_mode = mode_for(mode, group.model)
        template: list[ResourceSlice] | None = None
        for name in group_names:
            if device_plugin:
                nodes.append(
                    _parse(
                        nvidia_nodes.device_plugin_node(
                            name, group.model, group.gpus_per_node, gpu_mode, k8s_version=k8s_version
                        )
                    )
                )
                continue
            nodes.append(
                _parse(
                    nvidia_nodes.dra_node(
                        name, group.model, group.gpus_per_node, gpu_mode, k8s_version=k8s_version
                    )
                )
            )
            if template is None:
                template = [
                    _parse(o)
                    for o in dra.dra_objects(name, group.model, group.gpus_per_node, gpu_mode, k8s_version)
                ]
                share_attributes(template)
                slices += template
                first = name
                keys = _gpu_keys(template)
            else:
                slices += clone_slices(first, template, name, keys)
    classes = [] if device_plugin else [_parse(c) for c in dra.device_classes(k8s_version)]
    return nodes, slices, classes

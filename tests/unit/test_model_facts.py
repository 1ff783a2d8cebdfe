"""Nodes read from files with identical slices share their device fact objects (kubedra.model.facts), which
is what lets the allocator's reuse between alike nodes apply to a cluster read from a file; values that only
look equal (1, true, "1", 1.0) are never shared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.model.facts import DeviceFacts, freeze
from kubedra.model.inventory import Inventory, build_inventory
from kubedra.model.objects import ResourceSlice
from kubedra.model.parse import parse_object
from kubedra.model.serialize import to_dict
from kubedra.simulate.inputs import load_inputs


def _slice(node: str, uuid_attr: Any = None) -> dict[str, Any]:
    def device(i: int) -> dict[str, Any]:
        return {
            "name": f"gpu-{i}",
            "attributes": {
                "uuid": {"string": f"GPU-{node}-{i}"},
                "productName": {"string": "H100"},
                "index": {"int": i},
                "driverVersion": {"version": "550.54.15"},
                "cores": {"ints": [1, 2]},
                **({"odd": uuid_attr} if uuid_attr is not None else {}),
            },
            "capacity": {"memory": {"value": "80Gi"}, "cores": {"value": "132"}},
            "consumesCounters": [
                {
                    "counterSet": f"gpu-{i}",
                    "counters": {"memory": {"value": "80Gi"}, "slices": {"value": "7"}},
                }
            ],
            "taints": [{"key": "maintenance", "value": "soon", "effect": "NoSchedule"}],
            "bindingConditions": ["ready"],
        }

    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "sharedCounters": [
                {"name": f"gpu-{i}", "counters": {"memory": {"value": "80Gi"}, "slices": {"value": "7"}}}
                for i in range(2)
            ],
            "devices": [device(0), device(1), {"name": "bare"}],
        },
    }


def _assert_shared(a: ResourceSlice, b: ResourceSlice) -> None:
    assert a.shared_counters is b.shared_counters
    for da, db in zip(a.devices, b.devices, strict=True):
        assert da is not db
        assert da.capacity is db.capacity
        assert da.consumes_counters is db.consumes_counters
        assert da.taints is db.taints
        assert da.binding_conditions is db.binding_conditions
        assert da.binding_failure_conditions is db.binding_failure_conditions
        for name in ("productName", "index", "driverVersion", "cores"):
            if name in da.attributes:
                assert da.attributes[name] is db.attributes[name]
        if "uuid" in da.attributes:
            assert da.attributes["uuid"] is not db.attributes["uuid"]  # differs: GPU-a-0 / GPU-b-0
            assert da.attributes is not db.attributes


@pytest.mark.parametrize("fmt", ["yaml", "json-list"])
def test_identical_nodes_read_from_a_file_share_device_facts(tmp_path: Path, fmt: str) -> None:
    objs = [_slice("node-a"), _slice("node-b")]
    path = tmp_path / f"cluster.{'yaml' if fmt == 'yaml' else 'json'}"
    if fmt == "yaml":
        path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    else:  # the streamed path (kubectl get -o json, kubedra snapshot -o json)
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}, indent=1))
    inputs = load_inputs([str(path)])
    inv = inputs.inventory if inputs.inventory is not None else build_inventory(inputs.documents)
    a, b = inv.slices
    _assert_shared(a, b)
    # the bare device's empty facts are one object too, and the same as the other node's
    assert a.devices[2].taints is b.devices[2].taints == []
    assert a.devices[2].attributes is b.devices[2].attributes == {}
    # sharing changes nothing of what is read
    alone = [parse_object(o) for o in objs]
    assert [to_dict(s) for s in inv.slices] == [to_dict(p.obj) for p in alone if p is not None]
    assert len(inv.facts) == 0  # the table is per build and emptied once it is done (the objects stay)


def test_devices_of_one_slice_share_without_a_table() -> None:
    sl = parse_object(_slice("node-a"))
    assert sl is not None
    d0, d1, bare = sl.obj.devices
    assert d0.capacity is d1.capacity
    assert d0.taints is d1.taints
    assert d0.attributes["productName"] is d1.attributes["productName"]
    assert d0.consumes_counters is not d1.consumes_counters  # gpu-0 / gpu-1
    assert bare.binding_conditions is not d0.binding_conditions


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"int": 1}, {"bool": True}),
        ({"int": 1}, {"string": "1"}),
        ({"string": "1.0.0"}, {"version": "1.0.0"}),
        ({"ints": [1, 0]}, {"bools": [True, False]}),
        ({"strings": ["1"]}, {"ints": [1]}),
    ],
)
def test_values_equal_only_in_looks_are_not_shared(one: dict[str, Any], other: dict[str, Any]) -> None:
    facts = DeviceFacts()
    a = parse_object(_slice("node-a", one), facts=facts)
    b = parse_object(_slice("node-b", other), facts=facts)
    assert a is not None
    assert b is not None
    for da, db in zip(a.obj.devices[:2], b.obj.devices[:2], strict=True):
        assert da.attributes["odd"] is not db.attributes["odd"]
        assert da.attributes["odd"].kind != db.attributes["odd"].kind
        assert da.attributes["productName"] is db.attributes["productName"]
    assert to_dict(a.obj)["spec"]["devices"][0]["attributes"]["odd"] == one
    assert to_dict(b.obj)["spec"]["devices"][0]["attributes"]["odd"] == other


def test_freeze_keeps_types_apart() -> None:
    assert freeze(1) != freeze(True) != freeze("1")
    assert freeze(1) != freeze(1.0)
    assert freeze({"value": "1"}) != freeze({"value": 1})
    assert freeze([]) != freeze({})
    assert freeze({1: "a"}) != freeze({True: "a"}) != freeze({"1": "a"})
    assert freeze({"a": 1, "b": 2}) != freeze({"b": 2, "a": 1})  # order is kept: maps are written in order

    class Located(str):
        pass

    assert freeze([Located("x")]) == freeze([Located("x")]) != freeze(["x"])  # not marshal: tagged by type
    assert freeze({"a": [1, "b"]}) == freeze({"a": [1, "b"]})


def test_shared_list_values_are_copied_when_serialized() -> None:
    facts = DeviceFacts()
    inv = Inventory(facts=facts)
    sl = parse_object(_slice("node-a"), facts=facts)
    assert sl is not None
    inv.slices.append(sl.obj)
    devs = to_dict(sl.obj)["spec"]["devices"]
    assert devs[0]["attributes"]["cores"] == {"ints": [1, 2]}
    assert devs[0]["attributes"]["cores"]["ints"] is not devs[1]["attributes"]["cores"]["ints"]
    assert "&id" not in yaml.safe_dump(devs)  # no YAML anchors for the shared list

"""validate.rules' checks of one ResourceSlice device, a case per rule (validation.go validateDevice): each part
of the device (name, attributes, capacities, counters, nodes, binding conditions) reports its own error, at the
field it is about, and a device that breaks none is valid."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from tests.unit.validate.test_validate import SLICE, messages


def _slice(device: dict[str, Any], *, per_device: bool = False, second: dict[str, Any] | None = None) -> dict:
    s = copy.deepcopy(SLICE)
    s["spec"]["devices"] = [{"name": "gpu-0", **device}, *([second] if second else [])]
    if per_device:
        del s["spec"]["nodeName"]
        s["spec"]["perDeviceNodeSelection"] = True
    return s


CASES = [
    ("duplicate name", {}, {}, {"name": "gpu-0"}, "spec.devices[1].name", "duplicate device name 'gpu-0'"),
    (
        "list attribute before its release",
        {"attributes": {"ids": {"ints": [1, 2]}}},
        {"target": "1.35"},
        None,
        "spec.devices[0].attributes.ids.ints",
        "list attributes need",
    ),
    (
        "two values in one attribute",
        {"attributes": {"a": {"int": 1, "string": "x"}}},
        {},
        None,
        "spec.devices[0].attributes.a",
        "exactly one of int, bool, string, version",
    ),
    (
        "a version that is no semver",
        {"attributes": {"driverVersion": {"version": "535.129"}}},
        {},
        None,
        "spec.devices[0].attributes.driverVersion.version",
        "is not a semantic version",
    ),
    (
        "request policy without multiple allocations",
        {"capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi"}}}},
        {},
        None,
        "spec.devices[0].capacity.memory.requestPolicy",
        "only allowed when allowMultipleAllocations is true",
    ),
    (
        "three counter consumptions",
        {"consumesCounters": [{"counterSet": f"s{i}", "counters": {"m": {"value": "1"}}} for i in range(3)]},
        {},
        None,
        "spec.devices[0].consumesCounters",
        "too many entries: 3, the limit is 2",
    ),
    (
        "a node field without per-device selection",
        {"nodeName": "n1"},
        {},
        None,
        "spec.devices[0].nodeName",
        "only allowed when spec.perDeviceNodeSelection is true",
    ),
    (
        "per-device selection with no node",
        {},
        {"per_device": True},
        None,
        "spec.devices[0]",
        "each device needs exactly one of nodeName, nodeSelector, allNodes",
    ),
    (
        "five binding conditions",
        {"bindingConditions": [f"c{i}" for i in range(5)], "bindingFailureConditions": ["f"]},
        {},
        None,
        "spec.devices[0].bindingConditions",
        "too many entries, the limit is 4",
    ),
]


@pytest.mark.parametrize(
    ("device", "how", "second", "path", "message"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_each_device_rule_reports_at_its_field(
    device: dict[str, Any], how: dict[str, Any], second: dict[str, Any] | None, path: str, message: str
) -> None:
    target = how.get("target", "1.37")
    found = messages(_slice(device, per_device=how.get("per_device", False), second=second), target)
    assert any(p == path and message in m for p, m in found), found


def test_a_device_within_every_rule_is_valid() -> None:
    device = {
        "attributes": {"driverVersion": {"version": "575.57.8"}, "ids": {"ints": [1, 2]}},
        "capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi"}}},
        "allowMultipleAllocations": True,
        "consumesCounters": [{"counterSet": "s0", "counters": {"m": {"value": "1"}}}],
        "nodeName": "n1",
        "bindingConditions": ["ready"],
        "bindingFailureConditions": ["failed"],
    }
    assert messages(_slice(device, per_device=True), "1.37") == []

"""Allocator behaviour that changed between k8s.io/dynamic-resource-allocation v0.37.2 and v0.38.0-beta.0
(data/versions.yaml ``allocator.*``), each on a small scenario run at 1.37 and at 1.38: kubedra agrees with
each release's oracle, and the two oracles disagree with each other, so the scenario shows the change."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubedra.testing import binaries
from kubedra.testing.oracle import Oracle
from kubedra.testing.require import unavailable

from .compare import difference, implementation, kubedra_outcome, oracle_outcome

pytestmark = pytest.mark.integration

Doc = dict[str, Any]
RELEASES = ("1.37", "1.38")


def _device(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, **extra}


def scenario(
    devices: list[dict[str, Any]],
    request: dict[str, Any],
    *,
    features: dict[str, bool] | None = None,
    slice_count: int = 1,
    constraints: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Doc:
    return {
        "features": features if features is not None else {"ConsumableCapacity": True},
        "node": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        "classes": [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": "class-0"},
                "spec": {},
            }
        ],
        "slices": [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "slice-0"},
                "spec": {
                    "driver": "driver-a",
                    "pool": {"name": "pool-a", "generation": 1, "resourceSliceCount": slice_count},
                    "nodeName": "node-1",
                    "devices": devices,
                },
            }
        ],
        "claims": [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "claim-0", "namespace": "default", "uid": "uid-claim-0"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "req-0", "exactly": {"deviceClassName": "class-0", **request}}],
                        **({"constraints": constraints} if constraints else {}),
                    }
                },
            }
        ],
        "fixedShareID": True,
        **extra,
    }


ONE = {"allocationMode": "ExactCount", "count": 1}


def _shared_units(capacity: str, *amounts: str, consumed: str | None = None) -> Doc:
    """A shared device with a ``units`` capacity, one request per amount asking for that much of it, and what
    allocated claims already consume of it."""
    extra: dict[str, Any] = (
        {"allocatedCapacity": {"driver-a/pool-a/dev-0": {"units": consumed}}} if consumed else {}
    )
    shared = _device("dev-0", allowMultipleAllocations=True, capacity={"units": {"value": capacity}})
    doc = scenario([shared], {**ONE, "capacity": {"requests": {"units": amounts[0]}}}, **extra)
    requests = doc["claims"][0]["spec"]["devices"]["requests"]
    for i, amount in enumerate(amounts[1:], 1):
        body = {"deviceClassName": "class-0", **ONE, "capacity": {"requests": {"units": amount}}}
        requests.append({"name": f"req-{i}", "exactly": body})
    return doc


def _stepped(step: str) -> Doc:
    """A shared device whose ``units`` (capacity 10^30) step from 0 by ``step``, one request asking for 1."""
    policy = {"default": "0", "validRange": {"min": "0", "step": step}}
    shared = _device(
        "dev-0", allowMultipleAllocations=True, capacity={"units": {"value": "1e30", "requestPolicy": policy}}
    )
    return scenario([shared], {**ONE, "capacity": {"requests": {"units": "1"}}})


def _partitions(total: str, *amounts: str, allocated: int = 0) -> Doc:
    """A pool whose counter set ``cs`` holds ``total`` of counter ``c`` (in a slice of its own) and one device
    per amount consuming that much of it; the first ``allocated`` devices are allocated already and the claim
    asks for all the others."""
    devices = [
        _device(f"dev-{i}", consumesCounters=[{"counterSet": "cs", "counters": {"c": {"value": amount}}}])
        for i, amount in enumerate(amounts)
    ]
    wanted = {"allocationMode": "ExactCount", "count": len(amounts) - allocated}
    doc = scenario(devices, wanted, features={"PartitionableDevices": True}, slice_count=2)
    counters = copy.deepcopy(doc["slices"][0])
    counters["metadata"]["name"] = "slice-counters"
    del counters["spec"]["devices"]
    counters["spec"]["sharedCounters"] = [{"name": "cs", "counters": {"c": {"value": total}}}]
    doc["slices"].append(counters)
    doc["allocatedDevices"] = [f"driver-a/pool-a/dev-{i}" for i in range(allocated)]
    return doc


def _selected(attributes: dict[str, Any], expression: str) -> Doc:
    """One device with these attributes and a request selecting with ``expression``."""
    request = {**ONE, "selectors": [{"cel": {"expression": expression}}]}
    return scenario([_device("dev-0", attributes=attributes)], request, features={})


SCENARIOS: dict[str, Doc] = {
    # kubernetes#141898: 1.37 error for the whole attempt, 1.38 the same message failing this node only
    "all-devices-on-an-incomplete-pool": scenario(
        [_device("dev-0")], {"allocationMode": "All"}, slice_count=2
    ),
    # kubernetes#140798: dev-0 (not allowMultipleAllocations) still has a share: 1.37 gives it, 1.38 dev-1
    "exclusive-after-a-share": scenario(
        [_device("dev-0"), _device("dev-1")], ONE, allocatedSharedDeviceIDs=["driver-a/pool-a/dev-0/share-0"]
    ),
    # v0.38's stable variant runs v0.37's incubating code: distinctAttribute is no longer "empty constraint"
    "distinct-attribute-on-the-stable-variant": scenario(
        [
            _device("dev-0", attributes={"x": {"string": "a"}}),
            _device("dev-1", attributes={"x": {"string": "a"}}),
            _device("dev-2", attributes={"x": {"string": "b"}}),
        ],
        {"allocationMode": "ExactCount", "count": 2},
        features={},
        constraints=[{"distinctAttribute": "driver-a/x"}],
    ),
    # k8s.io/apimachinery v0.38.0-beta.0 ParseQuantity keeps 29 significant digits (quantity.nineteenDigitInt64):
    # both 30-digit values read as 100000000000000000000000000020, so 1.38 allocates; 1.37 reads 19 > 11
    "capacity-of-30-digits": _shared_units(
        "100000000000000000000000000011", "100000000000000000000000000019"
    ),
    # v0.38 Quantity.Add rounds an operand more than 29 orders of magnitude finer away from zero (boundScaleGap):
    # consumed 1e39 + req-1's 1e11 - 1 (rounded to 1e11) + req-0's 1n passes 1e39 + 1e11 at 1.38 only
    "capacity-sum-past-29-orders": _shared_units(
        "10000000000000000000000000001e11", "1n", "99999999999", consumed="1e39"
    ),
    # v0.38 Quantity.Value() saturates past int64 where v0.37 wraps (quantity.nineteenDigitInt64,
    # tests/conformance/quantity/scaled-value.yaml). A step of 2^63 reads MinInt64 at 1.37, so rounding 1 up
    # "passes MaxInt64" (an error); 1.38 reads MaxInt64 and consumes that much
    "step-of-2^63": _stepped("9223372036854775808"),
    # 2^64 + 1 reads 1 at 1.37 (the request is consumed as asked), MaxInt64 at 1.38 (rounded up to it)
    "step-of-2^64+1": _stepped("18446744073709551617"),
    # partitionable devices' counters are summed with the same Add and Sub (allocator_incubating.go
    # checkAvailableCounters): 1e40 less the allocated dev-0's 1 is 1e40 - 1e11 at 1.38 (1 is 40 orders finer),
    # less than dev-1 + dev-2 (1e40 - 1e11 + 1); exactly, 1e40 - 1 holds them
    "counters-available-past-29-orders": _partitions(
        "1e40", "1", "99999999999999999999999999999e11", "1", allocated=1
    ),
    # what the claim consumes: 1e39, then + (1e11 - 1) rounded to 1e11 at 1.38, then + 1n passes 1e39 + 1e11
    "counters-consumed-past-29-orders": _partitions(
        "10000000000000000000000000001e11", "1e39", "99999999999", "1n"
    ),
    # allocator.attributeValuesTyped: v0.38 reads attributes as Go values. Without ListTypeAttributes a list
    # fails the allocation ("unsupported attribute value", the stable variant naming claim and request) even on
    # the first device, which v0.37 takes unchecked
    "list-attribute-without-list-types": scenario(
        [_device("dev-0", attributes={"x": {"strings": ["a"]}})],
        ONE,
        features={},
        constraints=[{"matchAttribute": "driver-a/x"}],
    ),
    # ... and so does a derived list (the incubating variant: the error as it is)
    "derived-list-without-list-types": scenario(
        [_device("dev-0")],
        {**ONE, "derivedAttributes": [{"name": "driver-a/x", "expression": "['a']"}]},
        features={"DerivedAttributes": True},
        constraints=[{"matchAttribute": "driver-a/x"}],
    ),
    # an empty list (API-invalid, but stored slices are not revalidated) is nil for v0.38 (attrValue): an
    # error; v0.37's attributeAsSet makes it no set, so the constraint fails and nothing is allocated
    "empty-list-attribute": scenario(
        [_device("dev-0", attributes={"x": {"strings": []}})],
        ONE,
        features={"ListTypeAttributes": True},
        constraints=[{"matchAttribute": "driver-a/x"}],
    ),
    # cel.attributeValuesLazy: v0.38's selectors read an attribute it cannot represent lazily. Reading the empty
    # list fails the selector ("attribute x: value is invalid ..."), 1.37 reads an empty list
    "selector-reads-an-empty-list": _selected(
        {"x": {"strings": []}}, 'device.attributes["driver-a"].x.size() == 0'
    ),
    # its presence test is false at 1.38 (the key is there at 1.37)
    "selector-tests-an-empty-list": _selected({"x": {"strings": []}}, '"x" in device.attributes["driver-a"]'),
    # a version semver rejects fails every selector on the device at 1.37, only one touching it at 1.38
    "selector-beside-a-bad-version": _selected(
        {"v": {"version": "99999999999999999999.0.0"}, "y": {"int": 1}},
        'device.attributes["driver-a"].y == 1',
    ),
    # ... and so does a derived attribute reading it (v0.38: "evaluate derived attribute ... failed: attribute x: ...")
    "derived-attribute-reads-an-empty-list": scenario(
        [_device("dev-0", attributes={"x": {"strings": []}})],
        {
            **ONE,
            "derivedAttributes": [
                {"name": "driver-a/z", "expression": 'device.attributes["driver-a"].x.size()'}
            ],
        },
        features={"DerivedAttributes": True},
        constraints=[{"matchAttribute": "driver-a/z"}],
    ),
    # versions compare with semver's Equals from v0.38 (build metadata ignored), as text through v0.37
    "versions-equal-without-build-metadata": scenario(
        [
            _device("dev-0", attributes={"x": {"version": "1.0.0+a"}}),
            _device("dev-1", attributes={"x": {"version": "1.0.0+b"}}),
        ],
        {"allocationMode": "ExactCount", "count": 2},
        features={},
        constraints=[{"matchAttribute": "driver-a/x"}],
    ),
}


@pytest.fixture(scope="module")
def oracles() -> dict[str, Oracle]:
    missing = [v for v in RELEASES if binaries.find(binaries.ORACLE, v) is None]
    if missing:
        unavailable(f"{binaries.ORACLE} not built for {', '.join(missing)}: run `make testbed`")
    return {v: Oracle(version=v) for v in RELEASES}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_kubedra_follows_each_release(name: str, oracles: dict[str, Oracle]) -> None:
    doc = SCENARIOS[name]
    theirs = {}
    for release in RELEASES:
        theirs[release] = oracle_outcome(oracles[release].run(doc))
        ours = kubedra_outcome(doc, version=release)
        why = difference(ours, theirs[release], implementation(doc["features"], release) != "stable")
        assert why is None, f"{name} at {release}: {why}"
    # the scenario shows the change: upstream answers differently at the two releases
    assert difference(theirs["1.37"], theirs["1.38"]) is not None, theirs

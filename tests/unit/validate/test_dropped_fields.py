"""validate checks a new DRA object as the apiserver of the target release does: without the fields it drops
while their feature gate is off by default (data/dropped-fields.yaml), each such field named in a warning.
Agreement with real 1.34 and 1.35 apiservers: tests/integration/test_validate_dryrun.py."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.k8s import datafiles, featuregates
from kubedra.k8s.versions import SUPPORTED, Version

from .test_validate import SLICE, check, rct_with

EXACTLY: dict[str, Any] = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}


def _slice(**spec: Any) -> dict[str, Any]:
    obj = {**SLICE, "spec": {**SLICE["spec"], **spec}}
    return obj


def _dropped(result: Any) -> list[tuple[str | None, str]]:
    return [(w.path, w.message) for w in result.warnings if "the apiserver drops" in w.message]


BAD_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "c"},
    "spec": {"extendedResourceName": "kubernetes.io/gpu"},
}
BAD_TOLERATION = rct_with(
    {
        **EXACTLY,
        "exactly": {**EXACTLY["exactly"], "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
    }
)
COUNTERS_AND_DEVICES = _slice(sharedCounters=[{"name": "cs", "counters": {"c": {"value": "1"}}}])


CASES = {
    "extendedResourceName": (BAD_CLASS, "DRAExtendedResource", "1.34"),
    "sharedCounters": (COUNTERS_AND_DEVICES, "DRAPartitionableDevices", "1.35"),  # an error from 1.35 only
    "tolerations": (BAD_TOLERATION, "DRADeviceTaints", "1.35"),  # 1.34 drops no claim tolerations
}


@pytest.mark.parametrize(
    ("case", "target"),
    [
        (c, t)
        for c, (_, _, first) in CASES.items()
        for t in SUPPORTED
        if Version.parse(t) >= Version.parse(first)
    ],
)
def test_a_fault_in_a_dropped_field_is_a_warning_while_its_gate_is_off(case: str, target: str) -> None:
    obj, gate, _ = CASES[case]
    result = check(obj, target)
    if not featuregates.default_gates(target)[gate]:
        assert result.valid, result.errors
        (hit,) = _dropped(result)
        assert f"{gate} is alpha and off by default in {target}" in hit[1]
    else:
        assert not result.valid
        assert not _dropped(result)


def test_claim_tolerations_are_kept_and_checked_at_134() -> None:
    # k8s.io/kubernetes v1.34.4: the resourceclaim and resourceclaimtemplate strategies drop no tolerations
    result = check(BAD_TOLERATION, "1.34")
    assert [e.message for e in result.errors] == ["must be empty when operator is Exists"]
    assert not _dropped(result)


def test_a_malformed_quantity_in_a_dropped_field_is_still_refused() -> None:
    # the decoder parses it before dropDisabledFields clears the field
    obj = rct_with(
        {**EXACTLY, "exactly": {**EXACTLY["exactly"], "capacity": {"requests": {"memory": "lots"}}}}
    )
    for target in ("1.34", "1.35"):
        result = check(obj, target)
        assert [e.path for e in result.errors] == [
            "spec.spec.devices.requests[0].exactly.capacity.requests.memory"
        ]
        assert "DRAConsumableCapacity" in _dropped(result)[0][1]
    well_formed = rct_with(
        {**EXACTLY, "exactly": {**EXACTLY["exactly"], "capacity": {"requests": {"memory": "1Gi"}}}}
    )
    assert check(well_formed, "1.35").valid


def test_the_object_is_checked_without_the_dropped_fields() -> None:
    """A slice whose only node selection is perDeviceNodeSelection has none once that is dropped (1.35), and a
    device's taints no longer lower the device limit to 64."""
    per_device = _slice(nodeName=None, perDeviceNodeSelection=True, devices=[{"name": "d", "nodeName": "n1"}])
    assert check(per_device, "1.36").valid
    result = check(per_device, "1.35")
    assert any("is required" in e.message for e in result.errors), result.errors
    paths = sorted(str(p) for p, _ in _dropped(result))
    assert paths == ["spec.devices[0].nodeName", "spec.perDeviceNodeSelection"]
    tainted = [{"name": f"d{i}", "taints": [{"key": "k", "effect": "NoSchedule"}]} for i in range(100)]
    assert not check(_slice(devices=tainted), "1.36").valid  # 64 devices at most with taints
    result = check(_slice(devices=tainted), "1.35")
    assert result.valid, result.errors
    ((path, message),) = _dropped(result)
    assert path == "spec.devices[0].taints"
    assert "spec.devices[].taints (100 places)" in message


def test_distinct_attribute_is_dropped_from_135() -> None:
    # v1.34.4's strategies clear a copy of each constraint, so the field stays (a bug fixed in v1.35)
    obj = rct_with(
        EXACTLY, constraints=[{"matchAttribute": "gpu.nvidia.com/uuid", "distinctAttribute": "x/y"}]
    )
    assert _dropped(check(obj, "1.35"))
    assert not _dropped(check(obj, "1.34"))


def test_the_data_names_known_gates_and_kinds() -> None:
    kinds = {"DeviceClass", "ResourceSlice", "claimSpec"}
    for entry in datafiles.load("dropped-fields.yaml")["dropped"]:
        assert entry["gates"]
        for gate in entry["gates"]:
            assert featuregates.gate_info(gate, entry["from"]) is not None, gate
        assert set(entry) - {"gates", "from"} <= kinds
        assert entry["from"] in SUPPORTED

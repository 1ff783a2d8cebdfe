"""A consumable capacity's requestPolicy and a DeviceConstraint's attributes, per release: kubedra.validate's answers
are the field paths each release's apiserver gave for the same objects (recorded on 2026-12-07 from the testbed's
v1.34.4, v1.35.4, v1.36.3, v1.37.2 and v1.38.0-beta.0 control planes by
tests/integration/test_validate_policy_agreement.py, which re-checks them against the live apiservers)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .test_validate import SLICE, check, rct_with

CAP = "spec.devices[0].capacity.memory"
RP = f"{CAP}.requestPolicy"
RANGE = f"{RP}.validRange"
C0 = "spec.spec.devices.constraints[0]"
UUID = "gpu.nvidia.com/uuid"


def _policy(policy: dict[str, Any], value: str = "80Gi") -> dict[str, Any]:
    obj = copy.deepcopy(SLICE)
    obj["spec"]["devices"] = [
        {
            "name": "gpu-0",
            "allowMultipleAllocations": True,
            "capacity": {"memory": {"value": value, "requestPolicy": policy}},
        }
    ]
    return obj


def _range(default: Any, value: str = "80Gi", **rng: Any) -> dict[str, Any]:
    return _policy({"default": default, "validRange": rng}, value)


def _constraint(**c: Any) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}
    return rct_with(request, constraints=[{"requests": ["gpu"], **c}])


# case -> the object, and per release the error paths (a release not named: as the newest one named before it)
CASES: dict[str, tuple[dict[str, Any], dict[str, list[str]]]] = {
    "valid range": (_range("2Gi", min="1Gi", max="8Gi", step="1Gi"), {"1.34": []}),
    "default below min": (
        _range("1Gi", min="2Gi", max="4Gi"),
        {"1.34": [], "1.36": [f"{RANGE}.min"], "1.37": [f"{RANGE}.default"]},
    ),
    "default above max": (
        _range("8Gi", min="2Gi", max="4Gi"),
        {"1.34": [], "1.36": [f"{RANGE}.max"], "1.37": [f"{RANGE}.default"]},
    ),
    "min above max": (
        _range("4Gi", min="4Gi", max="2Gi"),
        {"1.34": [], "1.36": [f"{RANGE}.max", f"{RANGE}.max"], "1.37": [f"{RANGE}.max", f"{RANGE}.default"]},
    ),
    "negative step": (_range("1", min="0", step="-1"), {"1.34": [], "1.37": [f"{RANGE}.step"]}),
    "negative min": (_range("0", min="-2", max="4", step="2"), {"1.34": [], "1.37": [f"{RANGE}.min"]}),
    "max past int64": (
        _range("1", value="1e20", min="1", max="1e19", step="1"),
        {"1.34": [], "1.37": [f"{RANGE}.max"]},
    ),
    "fractional step off its multiples": (
        _range("1", value="10", min="0", max="2", step="300m"),
        {"1.34": [], "1.38": [f"{RANGE}.step", f"{RANGE}.step"]},
    ),
    "finer than milli": (
        _range("1", value="10", min="0.0005", step="1m"),
        {"1.34": [], "1.38": [f"{RANGE}.min"]},
    ),
    "values equal after rounding": (
        _policy({"default": "1", "validValues": ["500m", "1"]}, value="10"),
        {"1.34": [], "1.36": [f"{RP}.validValues[1]"], "1.38": []},
    ),
    "values and range": (
        _policy({"default": "1Gi", "validValues": ["1Gi"], "validRange": {"min": "1Gi"}}),
        {"1.34": [], "1.36": [RP]},
    ),
    "11 values": (
        _policy({"default": "1", "validValues": [str(i) for i in range(1, 12)]}),
        {"1.34": [], "1.36": [f"{RP}.validValues", f"{RP}.validValues"]},
    ),
    "step over capacity": (_range("1Gi", min="1Gi", step="80Gi"), {"1.34": [], "1.36": [f"{RANGE}.step"]}),
    "max off the step": (_range("2", min="0", max="9", step="2"), {"1.34": [], "1.36": [f"{RANGE}.step"]}),
    "zero step": (_range("1", min="0", step="0"), {"1.34": [], "1.36": [f"{RANGE}.step"]}),
    "step reading 0 past int64": (
        _range("0", value="1e20", min="0", step="18446744073709551616"),
        {"1.34": [], "1.36": [f"{RANGE}.step"]},  # 1.36: Value() wraps to 0, the apiserver divides by it
    ),
    "values one and one point zero": (
        _policy({"default": "1", "validValues": ["1", "1.0"]}, value="10"),
        {"1.34": [], "1.36": [f"{RP}.validValues[1]"], "1.38": []},  # 1.38: keys "1" and "1.0" differ
    ),
    "fractional default on an integer range": (
        _range("1500m", value="10", min="0", max="4", step="1"),
        {"1.34": [], "1.38": [f"{RANGE}.step"]},
    ),
    "milli step past int64": (
        _range("500m", value="1e17", min="500m", step="1e16"),
        {"1.34": [], "1.38": [f"{RANGE}.step"]},
    ),
    "negative default": (
        _range("-1", min="-3", max="3", step="2"),
        {"1.34": [], "1.37": [f"{RANGE}.default", f"{RANGE}.min"]},
    ),
    "match and distinct": (_constraint(matchAttribute=UUID, distinctAttribute=UUID), {"1.34": []}),
    "match and a bad distinct": (
        _constraint(matchAttribute=UUID, distinctAttribute="uuid"),
        {"1.34": [], "1.37": [f"{C0}.distinctAttribute"]},
    ),
    "neither": (_constraint(), {"1.34": [f"{C0}.matchAttribute"], "1.36": [C0]}),
    "distinct alone": (
        _constraint(distinctAttribute=UUID),
        {"1.34": [], "1.35": [f"{C0}.matchAttribute"], "1.36": []},
    ),
}
RELEASES = ["1.34", "1.35", "1.36", "1.37", "1.38"]


def _expected(per_release: dict[str, list[str]], release: str) -> list[str]:
    named = [r for r in per_release if float(r) <= float(release)]  # "1.34".."1.38": one digit after 1.3
    return per_release[max(named, key=float)]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_release_answers_as_its_apiserver(case: str, release: str) -> None:
    obj, per_release = CASES[case]
    result = check(obj, release)
    assert sorted(e.path or "" for e in result.errors) == sorted(_expected(per_release, release)), (
        result.errors
    )
    assert not [w for w in result.warnings if "not checked" in w.message], result.warnings


def test_a_zero_step_through_136_names_the_apiservers_failure() -> None:
    # v1.36.3 validateRequestPolicyRangeStep divides by step.Value(): the apiserver's handler panics and the
    # connection closes, so there is no field error to agree with; kubedra says why the object cannot be created
    (error,) = check(CASES["zero step"][0], "1.36").errors
    assert "integer division by zero" in error.message
    (error,) = check(CASES["zero step"][0], "1.37").errors
    assert "must be greater than zero" in error.message


def test_a_malformed_policy_quantity_is_refused_and_nothing_else_is_checked() -> None:
    errors = check(_range("lots", min="2Gi", max="1Gi"), "1.37").errors
    assert [(e.path, e.message.split(" ")[0]) for e in errors] == [(f"{RP}.default", "invalid")]


def test_a_policy_is_dropped_where_consumable_capacity_is_off() -> None:
    # 1.34/1.35: the apiserver drops requestPolicy (data/dropped-fields.yaml) before validating, and says nothing
    result = check(_range("1Gi", min="2Gi", max="4Gi"), "1.35")
    assert result.errors == []
    assert [w.path for w in result.warnings] == ["spec.devices[0].allowMultipleAllocations", RP]
    assert all("DRAConsumableCapacity" in w.message for w in result.warnings)

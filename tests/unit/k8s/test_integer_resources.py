"""ValidateResourceQuantityValue's integer test per release (kubedra.k8s.podadmission.integer_resource_value):
1.36/1.37 read MilliValue()%1000 with their int64 arithmetic, 1.38 isIntegerResourceValue. The verdicts are those
of each release's real apiserver (tests/integration/test_quantity_admission.py dry-runs the same values)."""

from __future__ import annotations

import pytest

from kubedra.k8s.podadmission import extended_resource_issues, integer_resource_value, refusal
from kubedra.k8s.quantity import parse_quantity

# value: (1.36 and 1.37, 1.38)
CASES = {
    "1": (True, True),
    "1.5": (False, False),
    "100m": (False, False),
    "0.9999": (True, True),  # MilliValue rounds up to 1000 (1.38: AsMilliInt64 likewise)
    "2999.5m": (True, True),
    "1.0001": (False, False),
    "1e20": (True, True),  # 1.37: MilliValue reads 0
    "1Ei": (False, True),  # 1.37: MilliValue wraps to MinInt64, -808 modulo 1000
    "8Ei": (True, True),  # BinarySI capped at 2^63-1 units; 1.37 MilliValue -1000
    "1.5Ei": (False, True),
    "123456789012345678901234567890": (False, True),  # 1.37: MilliValue 8982045596877734992
    "1000000000000000000000000000000.5": (False, True),  # 1.38 keeps 29 significant digits: an integer
    "12345678901234567890.123": (False, False),  # 1.38: no integer, and its milli-value saturates
    "9223372036854775807500m": (False, False),
    "1e-20": (False, False),
    # API defaulting rounds up to milli-units first (10^18 + 1): 1.37's MilliValue wraps, 1.38's AsScale(0) is exact
    "1000000000000000000.9999": (False, True),
}


@pytest.mark.parametrize("value", sorted(CASES))
def test_integer_resource_value_per_release(value: str) -> None:
    old, new = CASES[value]
    q = parse_quantity(value)
    assert [integer_resource_value(q, r) for r in ("1.36", "1.37", "1.38")] == [old, old, new]


def test_an_integer_the_release_misreads_says_why() -> None:
    issues = extended_resource_issues({"limits": {"nvidia.com/gpu": "1Ei"}}, ("spec",), "1.37")
    assert issues == [
        (
            ("spec", "limits", "nvidia.com/gpu"),
            "extended resource nvidia.com/gpu must be a whole number (at 1.37 the apiserver reads '1Ei' as "
            "-9223372036854775808 milli-units: past int64)",
        )
    ]
    assert extended_resource_issues({"limits": {"nvidia.com/gpu": "1Ei"}}, ("spec",), "1.38") == []


def test_requests_equal_limits_as_the_release_parses_them() -> None:
    # 30 digits: 1.38 keeps 29 significant digits, rounding away from zero, so the two are equal there
    res = {"limits": {"example.com/gpu": "100000000000000000000000000002"}}
    res["requests"] = {"example.com/gpu": "100000000000000000000000000001"}
    assert extended_resource_issues(res, ("r",), "1.38") == []
    # 1.37 refuses them apart, and already for their milli-values (wrapped: no multiple of 1000)
    assert extended_resource_issues(res, ("r",), "1.37") == [
        (
            ("r", "requests", "example.com/gpu"),
            "extended resource example.com/gpu must be a whole number (at 1.37 the apiserver reads "
            "'100000000000000000000000000001' as -8814407033341082648 milli-units: past int64)",
        )
    ]


def test_simulate_refuses_at_the_release_the_apiserver_refuses() -> None:
    spec = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1Ei"}}}]}
    found = refusal(spec, ("spec",), None, "1.37")
    assert found is not None
    assert found[0] == ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    assert refusal(spec, ("spec",), None, "1.38") is None

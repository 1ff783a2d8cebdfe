"""The scheduler-agreement scenarios with DeviceTaintRules at the releases whose default gates leave the rules
unread (1.34, 1.35, 1.36), on a control plane of each started with the gates the rules need there: the harness
simulates with the plane's gates, so kubedra reads the rules as that kube-scheduler does.

A module of its own, so that the last plane of ``test_scheduler_agreement``'s module-scoped fixture is stopped
before these start (pytest keeps a module fixture's last parameter until the module ends).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import OTHER_RELEASES, require_testbed
from kubedra.k8s import featuregates, versions
from kubedra.testing import binaries
from kubedra.testing.controlplane import ControlPlane

from .harness import Scenario, Testbed, beds, taint_rule_api
from .test_scheduler_agreement import PARTITIONS_OFF, SCENARIOS, agree, verb_agrees, verify_health

pytestmark = pytest.mark.integration

# The testbed releases whose default gates leave DeviceTaintRules unread (1.34, 1.35, 1.36): each gets a control
# plane of its own with those gates on, shared by the scenarios that have rules.
RULES_OFF_RELEASES = [v for v in OTHER_RELEASES if featuregates.taint_rule_gates_off(v)]
TAINTED = [(s, e) for s, e in SCENARIOS if s.taint_rules]


@pytest.fixture(scope="module", params=RULES_OFF_RELEASES)
def taint_controlplane(request: pytest.FixtureRequest) -> Iterator[ControlPlane]:
    """A control plane of the release started with every gate DeviceTaintRules need there (data/versions.yaml
    apis.deviceTaintRuleGates: DRADeviceTaints alone at 1.34, DRADeviceTaintRules too from 1.35) in all three
    components, and the rule's API version (kubedra's API lifecycle data) served."""
    version: str = request.param
    require_testbed(*binaries.KUBERNETES, binaries.LAUNCHER, version=version)
    gates = dict.fromkeys(versions.api("deviceTaintRuleGates", version) or [], True)
    with ControlPlane(version, feature_gates=gates, runtime_config=[f"{taint_rule_api(version)}=true"]) as cp:
        yield cp


@pytest.fixture
def testbed_taints(taint_controlplane: ControlPlane) -> Iterator[Any]:
    yield from beds(functools.partial(Testbed, taint_controlplane))


# The scenarios with DeviceTaintRules at the releases whose default gates leave the rules unread, on a control plane
# started with those gates: the harness simulates with the plane's gates, so kubedra reads the rules as it does.
@pytest.mark.parametrize(("scenario", "expected"), TAINTED, ids=[s.name for s, _ in TAINTED])
def test_taint_rules_match_each_release_with_their_gates_on(
    scenario: Scenario,
    expected: dict[str, Any],
    testbed_taints: Any,
    taint_controlplane: ControlPlane,
    tmp_path: Path,
) -> None:
    assert not featuregates.taint_rule_gates_off(
        taint_controlplane.version,
        featuregates.effective_gates(taint_controlplane.version, taint_controlplane.gates()),
    )
    if not featuregates.default_gates(taint_controlplane.version).get("DRAPartitionableDevices"):
        expected = expected.get(PARTITIONS_OFF, expected)
    tb = testbed_taints(scenario)
    agree(tb, scenario, expected)
    err = verb_agrees(tb, tmp_path, taint_controlplane.gates())
    assert "DeviceTaintRule" not in err, err
    # kubedra verify judges the rules: the tolerating pods' claims hold the two devices they taint
    health = verify_health(tb)
    for rule in tb.rules:
        assert any(f"NoSchedule by DeviceTaintRule {rule['metadata']['name']}" in m for m in health), health

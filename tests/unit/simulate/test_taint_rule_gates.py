"""DeviceTaintRules in ``kubedra simulate`` at releases whose default gates leave them unread (1.34, 1.35, 1.36).

kube-scheduler reads the rules only with every gate data/versions.yaml ``apis.deviceTaintRuleGates`` names for its
release on (v1.34.4 pkg/scheduler/scheduler.go: DRADeviceTaints alone, the release has no DRADeviceTaintRules gate;
v1.35.4 and v1.36.3: DRADeviceTaintRules as well). With them off kubedra leaves the rules out too (the testbed's
kube-scheduler binds pods to the devices they taint: tests/integration/e2e/test_scheduler_agreement.py) and says so;
with them on it applies them.
"""

from __future__ import annotations

import pytest

from kubedra.allocator.session import engine_config
from kubedra.k8s import featuregates

from .helpers import run

# a NoSchedule rule over every GPU of the generated node, and one pod that does not tolerate it
SCENARIO = """
apiVersion: resource.k8s.io/v1alpha3
kind: DeviceTaintRule
metadata: {name: maintenance}
spec:
  deviceSelector: {driver: gpu.nvidia.com}
  taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
"""

# release -> the gates its kube-scheduler needs for the rules, and the API version the release serves them at
UNREAD = {
    "1.34": ("DRADeviceTaints=true", "resource.k8s.io/v1alpha3"),
    "1.35": ("DRADeviceTaints=true,DRADeviceTaintRules=true", "resource.k8s.io/v1alpha3"),
    "1.36": ("DRADeviceTaintRules=true", "resource.k8s.io/v1beta2"),
}


def _taint_notes(sim) -> list[str]:
    return [n for n in sim.notes if "DeviceTaintRule" in n]


@pytest.mark.parametrize("release", sorted(UNREAD))
def test_rules_unread_by_default_are_left_out_and_named(release: str) -> None:
    gates, api = UNREAD[release]
    sim = run(SCENARIO, nodes="1x2xH100-80GB", target_version=release)
    (placed,) = sim.results["dra"].pods
    assert placed.node is not None  # the rule taints nothing kube-scheduler sees
    (note,) = _taint_notes(sim)
    assert note.startswith(
        f"DeviceTaintRule maintenance: not applied: kube-scheduler {release} reads DeviceTaintRules only with "
    )
    assert f"--runtime-config={api}=true" in note
    assert note.endswith(f"simulate with --feature-gates {gates}")


@pytest.mark.parametrize("release", sorted(UNREAD))
def test_with_the_gates_the_note_names_the_rules_apply(release: str) -> None:
    gates, _ = UNREAD[release]
    sim = run(SCENARIO, nodes="1x2xH100-80GB", target_version=release, feature_gates=gates)
    (pod,) = sim.results["dra"].pods
    assert pod.node is None
    assert "untolerated taints (example.com/maintenance=planned:NoSchedule)" in (pod.reason or "")
    assert _taint_notes(sim) == []


@pytest.mark.parametrize("release", ["1.37", "1.38"])
def test_releases_that_read_the_rules_by_default_say_nothing(release: str) -> None:
    sim = run(SCENARIO.replace("v1alpha3", "v1"), nodes="1x2xH100-80GB", target_version=release)
    (pod,) = sim.results["dra"].pods
    assert pod.node is None
    assert _taint_notes(sim) == []


def test_134_reads_the_rules_with_device_taints_alone() -> None:
    """v1.34.4 has no DRADeviceTaintRules gate: kube-scheduler lists DeviceTaintRules whenever DRADeviceTaints is
    on (pkg/scheduler/scheduler.go EnableDeviceTaints); kubedra required a gate the release does not have."""
    assert featuregates.gate_info("DRADeviceTaintRules", "1.34") is None
    assert engine_config("1.34", "DRADeviceTaints=true").taint_rules
    assert not engine_config("1.34").taint_rules
    assert not engine_config("1.35", "DRADeviceTaints=true").taint_rules  # 1.35 needs both
    assert engine_config("1.35", "DRADeviceTaints=true,DRADeviceTaintRules=true").taint_rules

"""kubedra's scheduling simulation against the real kube-scheduler, end to end.

Each scenario creates catalogue GPU nodes, their ResourceSlices, DeviceClasses, ResourceClaimTemplates and
pods on the testbed's control plane (Kubernetes 1.37.2), lets kube-scheduler bind the pods and allocate
their claims, runs the same pods through :class:`kubedra.scheduler.simulator.Scheduler`, and asserts the
same number of pods bound and the same devices handed out per node class (see :mod:`harness`). Each
scenario also states the numbers it expects, so that agreement on a broken set-up cannot pass.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import kubedra_json

from kubedra.k8s import featuregates
from kubedra.testing.controlplane import ControlPlane

from .harness import NodeGroup, PodSpec, Scenario, Summary, Testbed, beds, claim, exactly, taint_rule_api

pytestmark = pytest.mark.integration

GPU = "gpu.nvidia.com"
MIG = "mig.nvidia.com"


def _profile(name: str) -> str:
    return f"device.attributes['{GPU}'].profile == '{name}'"


def _product(text: str) -> str:
    return f"device.attributes['{GPU}'].productName.contains('{text}')"


def _pods(prefix: str, template: str, n: int) -> list[PodSpec]:
    return [PodSpec(f"{prefix}-{i}", template) for i in range(n)]


TOLERATE = [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}]

# What a scenario expects at a release whose default gates leave DRAPartitionableDevices off, where that differs.
PARTITIONS_OFF = "without DRAPartitionableDevices"
# What a scenario with DeviceTaintRules expects where kube-scheduler does not read them (their gates off).
RULES_OFF = "without DeviceTaintRules"
# Set in an expectation whose device names upstream picks by chance: the allocator code 1.34 and 1.35 run with
# their default features (data/versions.yaml byRelease allocator.variantCode: the stable code) takes a pool's slices
# in the order the scheduler's informer lists them, which is random (k8s.io/dynamic-resource-allocation v0.35.4
# structured/internal/stable/pools_stable.go GatherPools: a map of pools, no sort), so where a pool has a slice per
# GPU and nothing ties the GPUs (no counters), which GPU's device a pod gets is that order's. The counts per
# device kind are still compared, with kubedra and with the expectation.
SLICE_ORDER = "devices in the informer's order"

SCENARIOS: list[tuple[Scenario, dict[str, Any]]] = [
    (
        Scenario(
            "full-gpus",
            [NodeGroup("h100", "H100-80GB", 8, count=2)],
            {
                "four": claim({"name": "gpu", "exactly": exactly(GPU, 4)}),
                "one": claim({"name": "gpu", "exactly": exactly(GPU, 1)}),
            },
            [_pods("quad", "four", 3), _pods("single", "one", 6)],
        ),
        {"bound": 7, "usage": {("h100", "gpu"): 16}},
    ),
    (
        Scenario(
            "static-mig",
            [NodeGroup("a100", "A100-80GB", 2, "mig-static:all-balanced")],
            {
                "3g": claim({"name": "mig", "exactly": exactly(MIG, cel=_profile("3g.40gb"))}),
                "1g": claim({"name": "mig", "exactly": exactly(MIG, cel=_profile("1g.10gb"))}),
            },
            [_pods("big", "3g", 3), _pods("small", "1g", 5)],
        ),
        {"bound": 6, "usage": {("a100", "mig 3g.40gb"): 2, ("a100", "mig 1g.10gb"): 4}},
    ),
    (
        Scenario(
            "dynamic-mig-counters",
            [NodeGroup("h100", "H100-80GB", 2, "mig-dynamic")],
            {
                "4g": claim({"name": "mig", "exactly": exactly(MIG, cel=_profile("4g.40gb"))}),
                "3g": claim({"name": "mig", "exactly": exactly(MIG, cel=_profile("3g.40gb"))}),
                "1g": claim({"name": "mig", "exactly": exactly(MIG, cel=_profile("1g.10gb"))}),
                "whole": claim({"name": "gpu", "exactly": exactly(GPU)}),
            },
            # 4g.40gb fits only at placement 0 (memory slices 0-3), 3g.40gb then at 4 (slices 4-7): after
            # those the counters of both GPUs are spent and neither a 1g nor a whole GPU fits.
            [
                _pods("four", "4g", 2),
                _pods("three", "3g", 3),
                _pods("one", "1g", 2),
                _pods("whole", "whole", 1),
            ],
        ),
        {
            "bound": 4,
            "usage": {("h100", "mig 4g.40gb"): 2, ("h100", "mig 3g.40gb"): 2},
            # With DRAPartitionableDevices off (its default at 1.34 and 1.35) kube-apiserver drops the slices'
            # sharedCounters and the devices' consumesCounters (data/dropped-fields.yaml): every placement is a
            # device of its own, nothing is spent, and all eight pods bind.
            PARTITIONS_OFF: {
                SLICE_ORDER: True,
                "bound": 8,
                "usage": {
                    ("h100", "mig 4g.40gb"): 2,
                    ("h100", "mig 3g.40gb"): 3,
                    ("h100", "mig 1g.10gb"): 2,
                    ("h100", "gpu"): 1,
                },
            },
        },
    ),
    (
        Scenario(
            "first-available-h100-then-a100",
            [NodeGroup("h100", "H100-80GB", 2), NodeGroup("a100", "A100-80GB", 2)],
            {
                "prefer-h100": claim(
                    {
                        "name": "gpu",
                        "firstAvailable": [
                            {"name": "h100", **exactly(GPU, cel=_product("H100"))},
                            {"name": "a100", **exactly(GPU, cel=_product("A100"))},
                        ],
                    }
                )
            },
            # one pod per phase: the DRA score prefers the node where the first subrequest fits
            [[p] for p in _pods("train", "prefer-h100", 5)],
        ),
        {
            "bound": 4,
            "usage": {("h100", "gpu"): 2, ("a100", "gpu"): 2},
            "requests": {("prefer-h100", "gpu/h100"): 2, ("prefer-h100", "gpu/a100"): 2},
        },
    ),
    (
        Scenario(
            "tainted-devices",
            [NodeGroup("h100", "H100-80GB", 4)],
            {
                "plain": claim({"name": "gpu", "exactly": exactly(GPU)}),
                "tolerating": claim({"name": "gpu", "exactly": exactly(GPU, tolerations=TOLERATE)}),
            },
            [_pods("plain", "plain", 3), _pods("tolerating", "tolerating", 2)],
            taint_rules=[
                {
                    "deviceSelector": {"driver": GPU, "pool": "{h100}", "device": dev},
                    "taint": {"key": "example.com/maintenance", "value": "planned", "effect": "NoSchedule"},
                }
                for dev in ("gpu-0", "gpu-1")
            ],
        ),
        {
            "bound": 4,
            "usage": {("h100", "gpu"): 4},
            "devices": {"h100": ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]},
            # the rules leave two GPUs to the plain pods (the third stays pending), the tainted two to the others
            "requests": {("plain", "gpu"): 2, ("tolerating", "gpu"): 2},
            # Where kube-scheduler does not read DeviceTaintRules (their gates off, the release's default at 1.34,
            # 1.35 and 1.36; the testbed still serves the kind through --runtime-config), the three plain pods
            # take three GPUs and one tolerating pod the last.
            RULES_OFF: {
                "bound": 4,
                "usage": {("h100", "gpu"): 4},
                "devices": {"h100": ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]},
                "requests": {("plain", "gpu"): 3, ("tolerating", "gpu"): 1},
            },
        },
    ),
]


@pytest.fixture
def testbed_for(controlplane: ControlPlane) -> Iterator[Any]:
    yield from beds(functools.partial(Testbed, controlplane))


@pytest.fixture
def testbed_release(release_controlplane: ControlPlane) -> Iterator[Any]:
    yield from beds(functools.partial(Testbed, release_controlplane))


def _check_expected(summary: Summary, expected: dict[str, Any]) -> None:
    got = summary.comparable()
    assert got["bound"] == expected["bound"], (
        f"bound {got['bound']}, the scenario expects {expected['bound']}"
    )
    assert summary.usage == expected["usage"]
    if "requests" in expected:
        assert summary.requests == expected["requests"]
    if "devices" in expected:
        assert summary.devices == expected["devices"]


@pytest.mark.parametrize(("scenario", "expected"), SCENARIOS, ids=[s.name for s, _ in SCENARIOS])
def test_simulation_matches_kube_scheduler(
    scenario: Scenario, expected: dict[str, Any], testbed_for: Any
) -> None:
    agree(testbed_for(scenario), scenario, expected)


# The same scenarios at the testbed's other releases (1.36, 1.35, 1.34, the 1.38 pre-release), each simulated with its
# defaults against its kube-scheduler.
@pytest.mark.parametrize(("scenario", "expected"), SCENARIOS, ids=[s.name for s, _ in SCENARIOS])
def test_simulation_matches_each_release_kube_scheduler(
    scenario: Scenario,
    expected: dict[str, Any],
    testbed_release: Any,
    release_controlplane: ControlPlane,
    tmp_path: Path,
) -> None:
    release = release_controlplane.version
    unread = bool(scenario.taint_rules and featuregates.taint_rule_gates_off(release))
    if unread:
        # kube-scheduler does not read the rules with the release's default gates: neither may kubedra
        expected = expected[RULES_OFF]
    if not featuregates.default_gates(release).get("DRAPartitionableDevices"):
        expected = expected.get(PARTITIONS_OFF, expected)
    tb = testbed_release(scenario)
    agree(tb, scenario, expected)
    if unread:
        # ... and `kubedra simulate` on the same objects leaves them out as well, saying so and how to simulate a
        # cluster that turned the gates on
        err = verb_agrees(tb, tmp_path)
        rules = ", ".join(r["metadata"]["name"] for r in tb.rules)
        assert (
            f"DeviceTaintRule {rules}: not applied: kube-scheduler {release} reads DeviceTaintRules only"
            in err
        )
        assert f"--runtime-config={taint_rule_api(release)}=true" in err
        assert "--feature-gates DRADeviceTaint" in err
        # kubedra verify on the cluster reads its gates (/metrics) and does not judge the rules by their taints
        off = " and ".join(g.split(" ")[0] for g in featuregates.taint_rule_gates_off(release))
        health = verify_health(tb)
        for rule in tb.rules:
            name = rule["metadata"]["name"]
            assert any(
                m.startswith(f"DeviceTaintRule {name} ")
                and f": not read: the cluster runs with {off} off (kube-apiserver /metrics)" in m
                for m in health
            ), health


def agree(tb: Testbed, scenario: Scenario, expected: dict[str, Any]) -> None:
    real = tb.run()
    simulated = tb.simulate()
    by_chance = {"devices"} if expected.get(SLICE_ORDER) else set()
    ours = {k: v for k, v in simulated.comparable().items() if k not in by_chance}
    theirs = {k: v for k, v in real.comparable().items() if k not in by_chance}
    assert ours == theirs, (
        f"kubedra's simulation differs from kube-scheduler in {scenario.name}:\n"
        f"  kube-scheduler {json.dumps(real.comparable(), default=str)}\n"
        f"  kubedra        {json.dumps(simulated.comparable(), default=str)}"
    )
    _check_expected(real, expected)


def verb_agrees(tb: Testbed, tmp_path: Path, gates: Mapping[str, bool] | None = None) -> str:
    """``kubedra simulate`` on the objects of ``tb`` (after it ran) at its control plane's release, with the
    plane's ``gates``: it places the pods kube-scheduler bound and leaves pending those it left. Its stderr."""
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all(tb.manifests()), encoding="utf-8")
    args = ["simulate", str(path), "--mode", "dra", "--target-version", tb.cp.version]
    if gates:
        args += ["--feature-gates", ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))]
    code, out, err = kubedra_json(*args)
    assert code == 0, err
    pods = out["modes"]["dra"]["pods"]
    pending = sorted(p["name"] for p in pods if p["node"] is None)
    assert pending == tb.pending(), (
        f"kubedra simulate leaves {pending} pending, kube-scheduler {tb.pending()}\n{err}"
    )
    assert len(pods) == len(tb.pods)
    return err


def verify_health(tb: Testbed) -> list[str]:
    """What ``kubedra verify`` on the control plane of ``tb`` says about the scenario's devices and rules."""
    _, out, err = kubedra_json("verify", "--kubeconfig", str(tb.cp.kubeconfig))
    assert out, err
    (health,) = [c for c in out["checks"] if c["id"] == "health"]
    messages: list[str] = health["messages"]
    return [m for m in messages if tb.prefix in m]

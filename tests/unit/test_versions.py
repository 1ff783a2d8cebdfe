"""Kubernetes releases in one place: data/versions.yaml read by kubedra.k8s.versions, gates by
kubedra.k8s.featuregates (that Python names no release is tests/unit/test_architecture.py's check)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kubedra.errors import UsageError
from kubedra.k8s import featuregates, versions

SRC = Path(__file__).resolve().parents[2] / "src" / "kubedra"


def test_supported_and_default_come_from_the_data_file() -> None:
    data = yaml.safe_load((SRC / "data" / "versions.yaml").read_text())
    assert tuple(data["supported"]) == versions.SUPPORTED
    assert data["default"] == versions.DEFAULT_TARGET
    assert versions.DEFAULT_TARGET in versions.SUPPORTED


def test_check_target() -> None:
    assert versions.check_target("v1.36.2") == ("1.36", None)
    with pytest.raises(UsageError, match=r"supported: 1\.34-1\.38"):
        versions.check_target("1.99")
    with pytest.raises(UsageError, match="invalid"):
        versions.check_target("latest")
    version, warning = versions.check_target("1.39", partial_ok=True)
    assert version == "1.39"
    assert warning
    assert "only partly" in warning
    with pytest.raises(UsageError, match=r"1\.20-1\.43 partly"):
        versions.check_target("1.99", partial_ok=True)


def test_gate_history_marks_removed_gates_absent() -> None:
    h = featuregates.gate_histories()
    assert h["GangScheduling"]["1.37"] == "absent"
    assert h["GangScheduling"]["1.36"] == "alpha:off"
    assert h["DynamicResourceAllocation"]["1.35"] == "ga:on:locked"
    assert "1.31" not in h["DRAExtendedResource"]  # before the gate's first release: unknown, not absent
    assert featuregates.merged_into()["GangScheduling"] == "GenericWorkload"


def test_behaviour_facts_and_api_tables() -> None:
    assert versions.holds("dra.countersOnlySlices", "1.35")
    assert not versions.holds("dra.countersOnlySlices", "1.34")
    assert versions.holds("allocator.clearsAllRequestConfigs", versions.Version(1, 37))
    assert versions.api("gang", "1.34") is None
    assert versions.api("gang", "v1.36.2")["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert versions.api("deviceTaintRule", "1.35") == "resource.k8s.io/v1alpha3"  # the 1.33 row holds
    with pytest.raises(KeyError, match="not a fact"):
        versions.since("no.such.fact")


@pytest.mark.parametrize(
    ("release", "holds"),
    [
        ("1.36", False),
        ("v1.36.6", False),
        ("v1.37.0", False),
        ("v1.37.0-rc.1", False),
        ("1.37", True),
        ("v1.37.1", True),
        ("v1.37.2-gke.100", True),
        ("1.38", True),
        (versions.Version(1, 37), True),
    ],
)
def test_a_fact_that_landed_in_a_later_patch(release: str | versions.Version, holds: bool) -> None:
    # resourceslice/tracker: a DeviceTaintRule without deviceSelector matches none from v0.37.1 only
    assert versions.holds_at("dra.taintRuleWithoutSelectorMatchesNone", release) is holds


def test_the_testbed_builds_the_releases_of_the_data_file() -> None:
    """testbed/Makefile pins a patch per minor: every minor of ``testbed`` in data/versions.yaml, and otherwise
    only supported releases built by hand until they join it (none today); it builds the
    default target unless told otherwise."""
    makefile = (SRC.parents[1] / "testbed" / "Makefile").read_text(encoding="utf-8")
    pinned = re.findall(r"^K8S_PATCH_(\S+) := v(\S+)$", makefile, re.M)
    minors = {minor for minor, _ in pinned}
    assert set(versions.testbed()) <= minors <= set(versions.SUPPORTED)
    docs = (SRC.parents[1] / "docs" / "testbed.md").read_text(encoding="utf-8")
    assert all(f"K8S_VERSION={minor}" in docs for minor in minors - set(versions.testbed()))
    assert all(patch.startswith(f"{minor}.") for minor, patch in pinned)
    default = re.search(r"^K8S_VERSION \?= (\S+)$", makefile, re.M)
    assert default is not None
    assert default.group(1) == versions.DEFAULT_TARGET


def test_make_testbed_builds_every_testbed_release() -> None:
    """The top-level `make testbed` (which `make test`, and so CI, runs) builds each release of ``testbed`` in
    data/versions.yaml: a release added there is built and its integration cases run, never skipped."""
    makefile = (SRC.parents[1] / "Makefile").read_text(encoding="utf-8")
    listed = re.search(r"^TESTBED_VERSIONS \?= (.+)$", makefile, re.M)
    assert listed is not None
    assert sorted(listed.group(1).split()) == sorted(versions.testbed())
    test_deps = re.search(r"^test: (.+)$", makefile, re.M)
    assert test_deps is not None
    deps = test_deps.group(1).split()
    # the testbed is built before the first suite: the unit suite uses its helm
    assert deps.index("testbed") < deps.index("test-unit")


@pytest.mark.parametrize(
    ("release", "off"),
    [
        (
            "1.34",
            ["DRADeviceTaints (alpha)"],
        ),  # no DRADeviceTaintRules gate at 1.34: naming it breaks a component
        ("1.35", ["DRADeviceTaints (alpha)", "DRADeviceTaintRules (alpha)"]),
        ("1.36", ["DRADeviceTaintRules (beta)"]),
        ("1.37", []),
        ("1.38", []),
    ],
)
def test_the_gates_a_device_taint_rule_needs_come_from_the_data(release: str, off: list[str]) -> None:
    assert featuregates.taint_rule_gates_off(release) == off
    for gate in versions.api("deviceTaintRuleGates", release):
        assert featuregates.gate_info(gate, release) is not None, (gate, release)  # a gate the release has

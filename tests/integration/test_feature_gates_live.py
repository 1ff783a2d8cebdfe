"""data/feature-gates.yaml (generated from each release's Go source by scripts/gen_feature_gates.py) against the
kube-apiserver of each testbed release, run with its default gates: every gate kubedra models that the apiserver
registers is on or off, and at the stage, that the data says (kube-apiserver's /metrics
kubernetes_feature_enabled; a GA gate has no stage label)."""

from __future__ import annotations

import pytest

from kubedra.k8s import featuregates
from kubedra.model.served import not_served
from kubedra.testing.controlplane import ControlPlane

pytestmark = pytest.mark.integration


def _agree(cp: ControlPlane) -> None:
    assert not cp.gates(), "the control plane must run the release's default gates"
    live = featuregates.parse_feature_metrics(cp.api.get("/metrics"))
    assert live, f"kube-apiserver {cp.version} /metrics has no kubernetes_feature_enabled"
    modelled = {g: featuregates.gate_info(g, cp.version) for g in featuregates.known_gates()}
    ours = {
        g: (bool(info["default"]), "" if info["stage"] == "ga" else info["stage"].upper())
        for g, info in modelled.items()
        if info is not None
    }
    theirs = {g: live[g] for g in ours if g in live}
    assert len(theirs) >= len(ours) // 2, (
        f"kube-apiserver {cp.version} reports few of kubedra's gates: {theirs}"
    )
    differ = {g: {"kubedra": ours[g], "kube-apiserver": theirs[g]} for g in theirs if theirs[g] != ours[g]}
    assert not differ, differ
    unknown = sorted(g for g in live if g not in ours and g in modelled)
    assert not unknown, f"registered by kube-apiserver {cp.version} but absent from the data there: {unknown}"


def test_default_gates_match_the_apiserver(controlplane: ControlPlane) -> None:
    _agree(controlplane)


def test_default_gates_match_each_release_apiserver(release_controlplane: ControlPlane) -> None:
    _agree(release_controlplane)


def _served_agree(cp: ControlPlane) -> None:
    """No object kind the apiserver serves (its discovery; beta and alpha resource.k8s.io versions switched on by
    the testbed) is one kubedra validate refuses as not served at the release (data/deprecations/)."""
    minor = int(cp.version.split(".")[1])
    served = [
        (gv["groupVersion"], r["kind"])
        for group in cp.api.get("/apis")["groups"]
        for gv in group["versions"]
        for r in cp.api.get(f"/apis/{gv['groupVersion']}")["resources"]
        if "/" not in r["name"]
    ]
    served += [("v1", r["kind"]) for r in cp.api.get("/api/v1")["resources"] if "/" not in r["name"]]
    assert ("resource.k8s.io/v1", "ResourceClaim") in served
    refused = {f"{api} {kind}": why for api, kind in served if (why := not_served(api, kind, minor))}
    assert not refused, refused


def test_served_versions_match_the_apiserver(controlplane: ControlPlane) -> None:
    _served_agree(controlplane)


def test_served_versions_match_each_release_apiserver(release_controlplane: ControlPlane) -> None:
    _served_agree(release_controlplane)

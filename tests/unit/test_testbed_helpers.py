"""kubedra.testing helpers that work without the Go testbed: binary lookup, control-plane flags, REST paths."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from kubedra.testing import binaries, oracle
from kubedra.testing.controlplane import ControlPlane, free_ports
from kubedra.testing.kubeapi import resource_path


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUBEDRA_TESTBED_BIN", str(tmp_path))
    return tmp_path


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_cache_dir_follows_kubedra_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUBEDRA_TESTBED_BIN", raising=False)
    monkeypatch.setenv("KUBEDRA_CACHE", str(tmp_path))
    assert binaries.bin_dir("1.36") == tmp_path / "testbed" / "1.36" / "bin"
    monkeypatch.delenv("KUBEDRA_CACHE")
    assert binaries.bin_dir() == Path.home() / ".cache" / "kubedra" / "testbed" / "1.37" / "bin"


def test_find_returns_none_when_absent_or_not_executable(bin_dir: Path) -> None:
    assert binaries.find("helm") is None
    (bin_dir / "helm").write_text("not executable")
    assert binaries.find("helm") is None
    helm = _executable(bin_dir / "helm")
    assert binaries.find("helm") == helm
    assert oracle.find() is None


def test_require_names_the_make_command(bin_dir: Path) -> None:
    with pytest.raises(binaries.TestbedMissing, match="make testbed"):
        binaries.require("kube-apiserver")
    with pytest.raises(binaries.TestbedMissing, match=r"K8S_VERSION=1\.36"):
        binaries.require("kube-apiserver", "1.36")


def test_gates_and_runtime_config_per_version() -> None:
    assert ControlPlane("1.37").gates() == {}
    assert ControlPlane("1.37", workload=True).gates() == {"GenericWorkload": True}
    assert ControlPlane("1.36", workload=True).gates() == {"GenericWorkload": True, "GangScheduling": True}
    assert ControlPlane("1.37", feature_gates={"DRAListTypeAttributes": True}).gates() == {
        "DRAListTypeAttributes": True
    }
    plain = ControlPlane("1.37").runtime_config_flag().split(",")
    assert plain == [
        "resource.k8s.io/v1beta1=true",
        "resource.k8s.io/v1beta2=true",
        "resource.k8s.io/v1alpha3=true",
    ]
    assert "scheduling.k8s.io/v1beta1=true" in ControlPlane("1.37", workload=True).runtime_config_flag()
    assert "scheduling.k8s.io/v1alpha2=true" in ControlPlane("1.36", workload=True).runtime_config_flag()
    assert "scheduling.k8s.io/v1alpha1=true" in ControlPlane("1.35", workload=True).runtime_config_flag()
    assert ControlPlane("1.34").gates() == {}  # in data/versions.yaml testbed, with no gang-scheduling API
    with pytest.raises(ValueError, match=r"Kubernetes 1\.34 has no gang-scheduling API"):
        ControlPlane("1.34", workload=True)
    with pytest.raises(ValueError, match=r"unsupported Kubernetes version 1\.33"):
        ControlPlane("1.33")


def test_start_without_binaries_leaves_nothing_behind(bin_dir: Path) -> None:
    before = set(os.listdir(tempfile.gettempdir()))
    with pytest.raises(binaries.TestbedMissing):
        ControlPlane("1.37").start()
    assert {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("kubedra-cp-")} <= before


def test_free_ports_are_distinct() -> None:
    ports = free_ports(5)
    assert len(set(ports)) == 5
    assert all(p > 0 for p in ports)


def test_resource_paths() -> None:
    assert resource_path("v1", "Node", "n1", subresource="status") == "/api/v1/nodes/n1/status"
    assert resource_path("resource.k8s.io/v1", "ResourceClaim", "c", "ns") == (
        "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c"
    )
    assert resource_path("resource.k8s.io/v1", "ResourceSlice") == "/apis/resource.k8s.io/v1/resourceslices"
    with pytest.raises(ValueError, match="Frobnicator"):
        resource_path("v1", "Frobnicator")


def test_oracle_scenario_document_shape() -> None:
    doc = oracle.scenario({"metadata": {"name": "n"}}, [{"metadata": {"name": "c"}}])
    assert doc["fixedShareID"] is True
    assert doc["allocatedDevices"] == []
    assert "deviceTaintRules" not in doc
    assert set(oracle.DEFAULT_FEATURES["1.36"]) < set(oracle.DEFAULT_FEATURES["1.37"])

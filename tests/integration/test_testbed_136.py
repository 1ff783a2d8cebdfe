"""Kubernetes 1.36 testbed: opt-in, since CI builds only 1.37 (`make -C testbed K8S_VERSION=1.36` first).

These skip, also under CI, when the 1.36 binaries are not built.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubedra.testing import binaries, fakecluster, gpunodes
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.kubeapi import resource_path
from kubedra.testing.oracle import DEFAULT_FEATURES, Oracle, scenario
from kubedra.testing.require import unavailable

pytestmark = pytest.mark.integration

VERSION = "1.36"


def _require_136(*names: str) -> None:
    missing = [n for n in names if binaries.find(n, VERSION) is None]
    if missing:
        unavailable(f"1.36 testbed not built ({', '.join(missing)}): run `make testbed`")


@pytest.fixture(scope="module")
def cp136() -> Iterator[ControlPlane]:
    _require_136(*binaries.KUBERNETES, binaries.LAUNCHER)
    # DeviceTaintRule is beta and off by default in 1.36: the gate is how a test asks for it.
    with ControlPlane(VERSION, workload=True, feature_gates={"DRADeviceTaintRules": True}) as cp:
        yield cp


def test_136_serves_workload_alpha_api_and_allocates(cp136: ControlPlane) -> None:
    assert cp136.api.get("/version")["gitVersion"] == "v1.36.3"
    kinds = {r["kind"] for r in cp136.api.get("/apis/scheduling.k8s.io/v1alpha2")["resources"]}
    assert {"Workload", "PodGroup"} <= kinds
    for version in ("v1beta2", "v1alpha3"):
        served = {r["kind"] for r in cp136.api.get(f"/apis/resource.k8s.io/{version}")["resources"]}
        assert "DeviceTaintRule" in served, version
    (node,) = fakecluster.add_gpu_nodes(
        cp136.api, "h100-80gb-dynamic-mig", 1, prefix="n136", kubelet_version="v1.36.3"
    )
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
        },
    }
    cp136.api.create(claim)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"claims": [{"name": "g"}]}}
            ],
            "resourceClaims": [{"name": "g", "resourceClaimName": "one-gpu"}],
        },
    }
    cp136.api.create(pod)
    path = resource_path("resource.k8s.io/v1", "ResourceClaim", "one-gpu", "default")
    allocation = cp136.api.wait_for(
        "claim allocation", lambda: (cp136.api.get(path).get("status") or {}).get("allocation"), timeout=60
    )
    assert allocation["devices"]["results"][0]["device"] == "gpu-0"
    assert allocation["devices"]["results"][0]["pool"] == node


def test_136_oracle_links_the_136_allocator() -> None:
    _require_136(binaries.ORACLE)
    oracle = Oracle(version=VERSION)
    node = {"metadata": {"name": "n1"}}
    with pytest.raises(Exception, match="unknown feature"):
        # A 1.37-only allocator feature is refused by the 1.36 oracle.
        oracle.run(scenario(node, [], features={"DerivedAttributes": False}))
    claim = {
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
        },
    }
    doc = scenario(
        node,
        [claim],
        gpunodes.resource_slices("n1", "h100-80gb"),
        gpunodes.device_classes(),
        features=DEFAULT_FEATURES[VERSION],
    )
    result = oracle.run(doc)
    assert result["allocated"] is True
    assert result["claims"][0]["results"][0]["device"] == "gpu-0"

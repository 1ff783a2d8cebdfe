"""audit's DRA-health rules ask every vendor (Vendor.driver_image_release, driver_preflight, gpu_node_labels), not
NVIDIA's tables: AMD's DRA driver (image rocm/k8s-gpu-dra-driver, ROCm/k8s-gpu-dra-driver helm-charts-k8s/
values.yaml) has no release kubedra has read, so audit says it cannot check one; an AMD GPU node still on the
device plugin is named by AMD's resource."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra import vendors
from kubedra.audit import engine
from kubedra.audit.deprecations import DeprecationDB
from kubedra.audit.model import Item, RuleBook
from kubedra.audit.scope import ClusterFacts, Scope
from kubedra.k8s.findings import Finding
from kubedra.k8s.versions import Version

DB = DeprecationDB.load()
RULES = RuleBook.load()


def _audit(objs: list[dict[str, Any]]) -> list[Finding]:
    scope = Scope(name="prod", facts=ClusterFacts(name="prod", server_version=Version.maybe("1.36.0")))
    scope.items = [Item(obj=o, cluster="prod") for o in objs]
    found, _ = engine.run([scope], target=Version.parse("1.37"), current=None, db=DB, rules=RULES)
    return found


def _ds(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "dra-kubelet-plugin", "namespace": "gpu"},
        "spec": {"template": {"spec": {"containers": [{"name": "plugin", "image": image}]}}},
    }


def _node(name: str, labels: dict[str, str], alloc: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "64", **alloc}},
    }


def test_amds_driver_release_cannot_be_checked_and_audit_says_so() -> None:
    (f,) = [
        f for f in _audit([_ds("docker.io/rocm/k8s-gpu-dra-driver:v0.1.0")]) if f.rule == "dra.driver-release"
    ]
    assert f.message.startswith("AMD DRA driver v0.1.0: kubedra has read no release of it (only ROCm/")
    assert "check its Kubernetes and API support by hand" in f.message


@pytest.mark.parametrize("image", ["rocm/k8s-device-plugin:latest", "example.com/k8s-gpu-dra-driver-fork:v1"])
def test_other_images_are_no_drivers_release(image: str) -> None:
    assert not [f for f in _audit([_ds(image)]) if f.rule == "dra.driver-release"]


def test_amd_gpu_nodes_without_slices_are_named_by_amds_resource() -> None:
    amd = vendors.get("amd")
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s", "creationTimestamp": "x"},
        "spec": {"driver": amd.driver, "nodeName": "other", "pool": {"name": "other"}, "devices": []},
    }
    objs = [
        _node("dp", {}, {amd.gpu_resource: "8"}),
        _node("labelled", dict(amd.gpu_node_labels()), {}),
        _node("cpu", {}, {}),
        slice_,
    ]
    found = {
        f.object.name: f.message for f in _audit(objs) if f.rule == "dra.gpu-node-without-slices" and f.object
    }
    assert found == {
        "dp": "GPU node still on the device plugin (amd.com/gpu: 8), no ResourceSlice: not migrated yet",
        "labelled": "GPU node (by its labels) with neither device-plugin GPUs nor ResourceSlices",
    }


def test_no_driver_release_is_named_for_a_vendor_without_one() -> None:
    amd = vendors.get("amd")
    assert amd.driver_releases == ()
    with pytest.raises(ValueError, match=r"AMD DRA driver '1\.0': kubedra has read no release"):
        amd.resolve_driver_release("1.0")


def _operator(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "gpu-operator", "namespace": "gpu-operator"},
        "spec": {"template": {"spec": {"containers": [{"name": "gpu-operator", "image": image}]}}},
    }


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (
            "nvcr.io/nvidia/gpu-operator:v25.3.0",
            "NVIDIA GPU operator deployment (nvcr.io/nvidia/gpu-operator:v25.3.0)",
        ),
        (
            "mirror.example/gpu-operator:v25.3.0",
            "GPU operator deployment (mirror.example/gpu-operator:v25.3.0)",
        ),
    ],
)
def test_the_operator_deployment_is_named_by_the_vendor_its_image_names(image: str, message: str) -> None:
    (f,) = [f for f in _audit([_operator(image)]) if f.rule == "gpu.operator"]
    assert f.message == message


def test_renamed_shared_resources_are_named_per_resource() -> None:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ts", "namespace": "kube-system"},
        "data": {
            "any": "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n"
            "    - name: nvidia.com/mig-1g.10gb\n      replicas: 2\n    - name: amd.com/gpu\n      replicas: 2\n"
        },
    }
    (f,) = [f for f in _audit([config]) if f.rule == "gpu.time-slicing-config"]
    # NVIDIA's plugin appends .shared; AMD's shares nothing, so it is not named
    assert f.message.endswith("(renameByDefault: advertised as nvidia.com/mig-1g.10gb.shared)")

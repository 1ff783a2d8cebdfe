"""What plan and verify ask each vendor (vendors.base: dra_node_labels ... operator_role): NVIDIA answers as plan and
verify read GFD and the driver's slices before the seam; AMD from data/amd-gpu.yaml, and says where it cannot."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kubedra import vendors

NVIDIA, AMD = vendors.get("nvidia"), vendors.get("amd")


@pytest.mark.parametrize(
    ("resource", "share"),
    [
        ("nvidia.com/gpu", Fraction(1)),
        ("nvidia.com/gpu.shared", Fraction(1)),
        ("nvidia.com/mig-3g.40gb", Fraction(3, 7)),
        ("nvidia.com/mig-1g.10gb.shared", Fraction(1, 7)),
        ("nvidia.com/mig-1c.3g.40gb", None),  # a compute instance: never counted by plan
        ("nvidia.com/foo", None),
        ("amd.com/gpu", Fraction(1)),
        ("amd.com/cpx_nps4", Fraction(1)),  # one device, as the node's capacity counts it
        ("amd.com/gpu.vram", None),
    ],
)
def test_gpu_fraction_is_exact_per_vendor(resource: str, share: Fraction | None) -> None:
    vendor = vendors.for_resource(resource)
    assert vendor is not None
    assert vendor.gpu_fraction(resource) == share


def test_dra_node_labels_are_each_vendors_documented_selector() -> None:
    assert NVIDIA.dra_node_labels() == (("nvidia.com/dra-kubelet-plugin", "true"),)
    assert AMD.dra_node_labels() == ()  # the chart's kubeletPlugin.nodeSelector is empty


def _device(**attrs: str) -> dict[str, Any]:
    return {"name": "gpu-9-137", "attributes": {k: {"string": v} for k, v in attrs.items()}}


def test_amd_published_gpu_is_its_pci_address_or_its_parents() -> None:
    whole = _device(type="amdgpu", pciAddr="0000:11:00.0", productName="AMD_Instinct_MI300X")
    part = {
        "name": "p",
        "attributes": {
            "gpu.amd.com/type": {"string": "amdgpu-partition"},  # fully qualified names are read too
            "gpu.amd.com/parentPciAddr": {"string": "0000:22:00.0"},
        },
    }
    assert AMD.published_gpu(whole) == ("0000:11:00.0", "AMD_Instinct_MI300X")
    assert AMD.published_gpu(part) == ("0000:22:00.0", None)
    assert AMD.published_gpu(_device(type="amdgpu")) == ("gpu-9-137", None)  # no address: its name
    assert AMD.published_gpu(_device(type="gpu")) is None  # NVIDIA's type word is not AMD's
    assert AMD.published_gpu({"name": "x", "attributes": ["not", "a", "mapping"]}) is None


def test_nvidia_published_gpu_is_its_uuid_or_its_parents() -> None:
    gpu = _device(type="gpu", uuid="GPU-1", productName="NVIDIA H100 80GB HBM3")
    mig = _device(type="mig", parentUUID="GPU-1")
    assert NVIDIA.published_gpu(gpu) == ("GPU-1", "NVIDIA-H100-80GB-HBM3")  # as GFD sanitises the label
    assert NVIDIA.published_gpu(mig) == ("GPU-1", None)
    assert NVIDIA.published_gpu(_device(type="vfio")) is None


def test_labels_say_what_each_vendor_can_and_cannot() -> None:
    assert NVIDIA.labelled_gpus({"nvidia.com/gpu.count": "8"}) == (8, "nvidia.com/gpu.count")
    assert NVIDIA.labelled_gpus({}) == (None, "nvidia.com/gpu.count")
    count, _ = AMD.labelled_gpus({"amd.com/gpu.product-name": "Instinct_MI300X"})
    assert isinstance(count, str)
    assert "writes no GPU count label" in count
    assert NVIDIA.labelled_product("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb") == "NVIDIA-A100-SXM4-80GB"
    assert AMD.labelled_product("Instinct_MI300X") == "AMD_Instinct_MI300X"
    assert AMD.labelled_product("Instinct_MI999") is None  # not in the catalogue: not related, not guessed


def test_sharing_and_operator_resources() -> None:
    assert NVIDIA.sharing_strategy({"nvidia.com/gpu.sharing-strategy": "mps"}) == "mps"
    assert NVIDIA.sharing_strategy({}) is None
    assert AMD.sharing_strategy({"nvidia.com/gpu.sharing-strategy": "mps"}) is None
    policy = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy"}
    cluster = {"apiVersion": "nvidia.com/v1alpha1", "kind": "GPUCluster"}
    assert NVIDIA.operator_role(policy) == "device-plugin"
    assert NVIDIA.operator_role(cluster) == "dra-driver"
    assert NVIDIA.operator_role({"apiVersion": "example.com/v1", "kind": "ClusterPolicy"}) is None
    assert AMD.operator_role(policy) is None
    assert AMD.operator_role({"apiVersion": "amd.com/v1alpha1", "kind": "DeviceConfig"}) is None


def test_plan_says_which_vendor_it_cannot_move() -> None:
    assert NVIDIA.unsupported("plan") is None
    why = AMD.unsupported("plan")
    assert why is not None
    assert "no wave moves AMD GPU nodes" in why


@pytest.mark.parametrize(
    "device",
    [
        {"name": "x", "attributes": ["type", "gpu"]},
        {"name": "x", "attributes": "gpu"},
        {"name": "x", "attributes": {"type": {"string": "mig"}}, "consumesCounters": "set-0"},
        {"name": "x", "attributes": {"type": {"string": "mig"}}, "consumesCounters": ["set-0"]},
    ],
)
def test_an_edited_device_is_read_without_a_crash(device: dict[str, Any]) -> None:
    for vendor in vendors.all():
        found = vendor.published_gpu(device)
        assert found is None or found[0] == "x"

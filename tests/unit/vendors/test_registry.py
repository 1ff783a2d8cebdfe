"""The vendor seam: the registry finds each vendor by resource, driver and node, and AMD's facts are its source's."""

from __future__ import annotations

import pytest

from kubedra import vendors


def test_registry_finds_each_vendor_by_resource_driver_and_node() -> None:
    assert [v.name for v in vendors.all()] == ["nvidia", "amd"]
    assert vendors.for_resource("nvidia.com/mig-1g.10gb") is vendors.get("nvidia")
    assert vendors.for_resource("amd.com/gpu") is vendors.get("amd")
    assert vendors.for_resource("gpu.intel.com/i915") is None
    assert vendors.for_driver("gpu.amd.com") is vendors.get("amd")
    assert vendors.for_driver("gpu.nvidia.com") is vendors.get("nvidia")
    assert vendors.for_driver("gpu.intel.com") is None
    assert vendors.for_node({"amd.com/gpu.product-name": "Instinct_MI210"}) is vendors.get("amd")
    assert vendors.for_node({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}) is vendors.get("nvidia")
    assert vendors.for_node({"kubernetes.io/os": "linux"}) is None


@pytest.mark.parametrize(
    ("name", "kind", "profile", "vendor"),
    [
        ("nvidia.com/gpu", "gpu", None, "nvidia"),
        ("nvidia.com/gpu.shared", "shared", None, "nvidia"),
        ("nvidia.com/mig-1g.10gb", "mig", "1g.10gb", "nvidia"),
        ("amd.com/gpu", "gpu", None, "amd"),
        ("amd.com/cpx_nps4", "partition", "cpx_nps4", "amd"),
        ("amd.com/spx_nps1", "partition", "spx_nps1", "amd"),
        ("amd.com/gpu.vram", "manual", None, "amd"),
    ],
)
def test_classify_through_the_seam(name: str, kind: str, profile: str | None, vendor: str) -> None:
    gr = vendors.classify(name)
    assert gr is not None
    assert (gr.kind, gr.profile, gr.vendor) == (kind, profile, vendor)


def test_amd_driver_facts_are_those_of_its_source() -> None:
    # ROCm/k8s-gpu-dra-driver 26224272: pkg/consts/consts.go, helm-charts-k8s/templates/deviceclass.yaml
    amd = vendors.get("amd")
    assert amd.driver == "gpu.amd.com"
    assert amd.known_class_names() == {"gpu.amd.com"}
    (dc,) = amd.device_classes()
    assert dc["spec"]["selectors"] == [{"cel": {"expression": "device.driver == 'gpu.amd.com'"}}]
    assert "extendedResourceName" not in dc["spec"]
    cls, sel = amd.claim_selectors(vendors.classify("amd.com/cpx_nps4"))  # type: ignore[arg-type]
    assert (cls, sel) == ("gpu.amd.com", ["device.attributes['gpu.amd.com'].partitionProfile == 'cpx_nps4'"])


def test_each_vendor_says_which_verbs_it_cannot_serve() -> None:
    assert all(vendors.get("nvidia").unsupported(v) is None for v in ("simulate", "discover", "sharing"))
    amd = vendors.get("amd")
    assert amd.unsupported("simulate") is None  # the catalogue has MI300X, MI325X, MI250X, MI250, MI210
    assert amd.unsupported("audit") is None
    assert amd.unsupported("migrate") is None


def test_each_vendor_answers_migrates_partition_and_sharing_questions() -> None:
    nvidia, amd = vendors.get("nvidia"), vendors.get("amd")
    # a partition profile is claimed from the vendor's class, selected by what its driver publishes
    assert nvidia.partition_claim("1g.10gb") == (
        "mig.nvidia.com",
        ["device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"],
    )
    assert amd.partition_claim("cpx_nps4") == (
        "gpu.amd.com",
        ["device.attributes['gpu.amd.com'].partitionProfile == 'cpx_nps4'"],
    )
    assert nvidia.partition_claim("cpx_nps4") is None
    assert amd.partition_claim("1g.10gb") is None
    assert nvidia.claim_classes == ("gpu.nvidia.com", "mig.nvidia.com")
    assert amd.claim_classes == ("gpu.amd.com",)
    # sharing: NVIDIA's opaque GpuConfig and its gate; AMD has none and its unsupported() says why
    ts = nvidia.sharing_config("TimeSlicing", interval="Long")
    assert ts is not None
    assert ts["driver"] == "gpu.nvidia.com"
    assert ts["parameters"]["sharing"] == {
        "strategy": "TimeSlicing",
        "timeSlicingConfig": {"interval": "Long"},
    }
    assert nvidia.sharing_gate("MPS") == "MPSSupport"
    assert nvidia.sharing_node_label == "nvidia.com/device-plugin.config"
    for ask in (
        amd.sharing_config("TimeSlicing"),
        amd.sharing_gate("MPS"),
        amd.sharing_class("gpu-ts", "TimeSlicing"),
        amd.sharing_node_label,
        amd.extended_resource_class(amd.classify("amd.com/gpu"), interval="Default"),  # type: ignore[arg-type]
    ):
        assert ask is None
    assert amd.unsupported("sharing")
    assert amd.unsupported("extended-resource")
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "data": {"any": "version: v1\nsharing:\n  timeSlicing: {}\n"},
    }
    assert amd.sharing_classes(cm, extended_resource=False, interval="Default") is None
    assert nvidia.sharing_classes(cm, extended_resource=False, interval="Default") == ([], ["any"])


def test_validate_checks_each_vendors_published_releases() -> None:
    tables, hints = vendors.get("nvidia").published_releases(None)
    assert len(tables) > 1  # every release kubedra has read, each the kinds its devices publish
    assert all(any(k["driver"] == "gpu.nvidia.com" for k in t.values()) for t in tables.values())
    assert isinstance(hints, dict)
    assert vendors.get("amd").published_releases(None) == ({}, {})  # attribute types not read: not checked
    with pytest.raises(ValueError, match="not a release kubedra has read"):
        vendors.get("nvidia").published_releases("v0.0.1")

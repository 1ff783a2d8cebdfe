"""The fake GPU nodes of kubedra.testing.gpunodes match the NVIDIA DRA driver's ResourceSlice model."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubedra.testing import gpunodes

MIG_PROFILES = Path(__file__).resolve().parents[1] / "data" / "reference" / "mig-profiles.yaml"


def _devices(slices: list[dict]) -> list[dict]:
    return [d for s in slices for d in s["spec"].get("devices") or []]


@pytest.mark.parametrize(
    ("key", "gpu"), [("A100-80GB", gpunodes.A100_80GB), ("H100-80GB", gpunodes.H100_80GB)]
)
def test_profile_tables_match_the_reference(key: str, gpu: gpunodes.Gpu) -> None:
    ref = yaml.safe_load(MIG_PROFILES.read_text())["gpus"][key]["profiles"]
    ours = {p.name: p for p in gpu.profiles}
    assert set(ours) == {r["name"] for r in ref}
    for r in ref:
        p = ours[r["name"]]
        assert (p.profile_id, p.size, list(p.starts)) == (
            r["profile_id"],
            r["memory_slices"],
            r["placements"]["starts"],
        )
        assert (p.memory_mib, p.multiprocessors, p.copy_engines) == (
            r["memory_mib"],
            r["sms"],
            r["copy_engines"],
        )
        assert (p.decoders, p.jpeg_engines, p.ofa_engines) == (r["decoders"], r["jpeg"], r["ofa"])


def test_full_gpus_one_slice_with_memory_only() -> None:
    (slice_,) = gpunodes.resource_slices("node-a", "h100-80gb")
    spec = slice_["spec"]
    assert spec["driver"] == "gpu.nvidia.com"
    assert spec["pool"] == {"name": "node-a", "generation": 1, "resourceSliceCount": 1}
    assert spec["nodeName"] == "node-a"
    assert [d["name"] for d in spec["devices"]] == [f"gpu-{i}" for i in range(8)]
    gpu0 = spec["devices"][0]
    assert gpu0["capacity"] == {"memory": {"value": "81559Mi"}}
    assert gpu0["attributes"]["type"] == {"string": "gpu"}
    assert gpu0["attributes"]["cudaComputeCapability"] == {"version": "9.0.0"}
    assert gpu0["attributes"]["uuid"]["string"].startswith("GPU-")
    assert "consumesCounters" not in gpu0


def test_static_mig_devices_have_uuid_and_memory_slices() -> None:
    devices = _devices(gpunodes.resource_slices("node-a", "a100-80gb-static-mig"))
    assert len(devices) == 32
    by_name = {d["name"]: d for d in devices}
    three_g = by_name["gpu-5-mig-3g40gb-9-4"]
    assert three_g["attributes"]["profile"] == {"string": "3g.40gb"}
    assert three_g["attributes"]["uuid"]["string"].startswith("MIG-")
    assert three_g["attributes"]["parentUUID"] == by_name["gpu-5-mig-1g10gb-19-0"]["attributes"]["parentUUID"]
    assert {k for k in three_g["capacity"] if k.startswith("memorySlice")} == {
        f"memorySlice{i}" for i in range(4, 8)
    }
    assert three_g["capacity"]["multiprocessors"] == {"value": "42"}
    # Memory slices of one GPU's instances never overlap.
    for gpu in range(8):
        used = [
            k
            for name, d in by_name.items()
            if name.startswith(f"gpu-{gpu}-")
            for k in d["capacity"]
            if "Slice" in k
        ]
        assert len(used) == len(set(used)) == 8  # 1g@0 + 1g@1 + 2g@2-3 + 3g@4-7 fill the GPU
    assert "gpu-0" not in by_name  # Ampere with MIG on: the parent GPU is not announced


def test_dynamic_mig_split_layout_and_counters() -> None:
    slices = gpunodes.resource_slices("node-a", "h100-80gb-dynamic-mig")
    assert len(slices) == 9
    counters_only = slices[0]["spec"]
    assert "devices" not in counters_only
    assert [c["name"] for c in counters_only["sharedCounters"]] == [f"gpu-{i}-counter-set" for i in range(8)]
    counters = counters_only["sharedCounters"][0]["counters"]
    assert len(counters) == 15
    assert counters["multiprocessors"] == {"value": "132"}
    assert counters["copy-engines"] == {"value": "8"}
    assert counters["memory"] == {"value": "81152Mi"}
    for s in slices[1:]:
        assert len(s["spec"]["devices"]) == 26 <= gpunodes.MAX_DEVICES_PER_SLICE
        assert s["spec"]["pool"]["resourceSliceCount"] == 9
    devices = {d["name"]: d for d in _devices(slices)}
    full = devices["gpu-3"]
    assert full["consumesCounters"] == [{"counterSet": "gpu-3-counter-set", "counters": counters}]
    mig = devices["gpu-3-mig-1g10gb-me-20-6"]
    assert "uuid" not in mig["attributes"]
    assert not any(k.startswith("memorySlice") for k in mig["capacity"])
    (consumed,) = mig["consumesCounters"]
    assert consumed["counterSet"] == "gpu-3-counter-set"
    assert consumed["counters"]["memory-slice-6"] == {"value": "1"}
    assert consumed["counters"]["ofa-engines"] == {"value": "1"}
    assert "memory-slice-7" not in consumed["counters"]


def test_device_plugin_nodes_have_extended_resource_and_no_dra_label() -> None:
    status = gpunodes.node_status("n", "h100-80gb", dra=False)
    assert status["allocatable"]["nvidia.com/gpu"] == "8"
    assert "nvidia.com/gpu" not in gpunodes.node_status("n", "h100-80gb")["allocatable"]
    assert (
        "nvidia.com/dra-kubelet-plugin"
        not in gpunodes.node("n", "h100-80gb", dra=False)["metadata"]["labels"]
    )


def test_device_classes_select_by_type() -> None:
    classes = {c["metadata"]["name"]: c for c in gpunodes.device_classes()}
    assert classes["gpu.nvidia.com"]["spec"]["extendedResourceName"] == "nvidia.com/gpu"
    expr = classes["mig.nvidia.com"]["spec"]["selectors"][0]["cel"]["expression"]
    assert expr == "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"


def test_unknown_shape_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="h100-80gb-dynamic-mig"):
        gpunodes.resource_slices("n", "b200")

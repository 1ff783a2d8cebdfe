"""NVIDIA node catalogue: models, specs, modes and the ResourceSlices the DRA driver publishes."""

from __future__ import annotations

import json
import re

import pytest

from kubedra.errors import InputError
from kubedra.vendors.nvidia import dra as nvidia_dra
from kubedra.vendors.nvidia import models as nvidia_models
from kubedra.vendors.nvidia import modes as nvidia_modes
from kubedra.vendors.nvidia import nodes as nvidia_nodes
from kubedra.vendors.nvidia import specs as nvidia_specs
from kubedra.vendors.nvidia.cluster import cluster
from kubedra.vendors.nvidia.dra import dra_objects

# ----------------------------------------------------------------- helpers


def devices(slices):
    return [d for s in slices for d in s["spec"].get("devices", [])]


def by_name(slices):
    return {d["name"]: d for d in devices(slices)}


def counter_sets(slices):
    return [cs for s in slices for cs in s["spec"].get("sharedCounters", [])]


def values(mapping):
    return {k: v["value"] for k, v in mapping.items()}


# ----------------------------------------------------------------- model data


REQUIRED = [
    "A100-40GB",
    "A100-80GB",
    "H100-80GB",
    "H100-94GB",
    "H200-141GB",
    "B200-180GB",
    "L40S-48GB",
    "T4-16GB",
]


def test_required_models_present():
    assert set(REQUIRED) <= set(nvidia_models.gpu_models())


@pytest.mark.parametrize(
    ("alias", "key"), [("h100", "H100-80GB"), ("H100-NVL", "H100-94GB"), ("b200", "B200-180GB")]
)
def test_model_aliases_case_insensitive(alias, key):
    assert nvidia_models.get_model(alias).key == key


def test_unknown_model_names_known_ones():
    with pytest.raises(InputError, match=r"unknown GPU model 'V100'.*H100-80GB"):
        nvidia_models.get_model("V100")


@pytest.mark.parametrize(
    "model", [m for m in nvidia_models.gpu_models().values() if m.mig_capable], ids=lambda m: m.key
)
def test_profile_names_follow_go_nvlib_rule(model):
    # The "<n>gb" in a profile name is derived from its memory and the board total (go-nvlib); a wrong
    # (for example inferred) MiB value in the data file would produce a different name.
    for p in model.mig_profiles:
        gb = int(re.match(r"\dg\.(\d+)gb", p.name).group(1))  # type: ignore[union-attr]  # every profile name has it
        assert nvidia_models.mig_memory_gb(p.memory_mib, model.memory_mib) == gb, p.name


@pytest.mark.parametrize(
    "model", [m for m in nvidia_models.gpu_models().values() if m.mig_capable], ids=lambda m: m.key
)
def test_profile_geometry_is_the_standard_one(model):
    sizes = {p.name: (p.compute_slices, p.size, p.starts, p.max_count) for p in model.mig_profiles}
    assert len(sizes) == 7
    for p in model.mig_profiles:
        assert all(s >= 0 and s + p.size <= 8 for s in p.starts)
        assert p.max_count <= len(p.starts)
    assert sum(len(p.starts) for p in model.mig_profiles) == 25  # 7 + 7 + 4 + 3 + 2 + 1 + 1
    assert [p.profile_id for p in model.mig_profiles] == [19, 20, 15, 14, 9, 5, 0]


def test_mig_memory_gb_rounds_half_away_from_zero():
    # H200: 4/8 of ceil(143771 MiB in GiB) = 70.5 -> "71gb" (Go math.Round), B200 1/8 x 180 = 22.5 -> 23
    assert nvidia_models.mig_memory_gb(66816, 143771) == 71
    assert nvidia_models.mig_memory_gb(22400, 183359) == 23


# ----------------------------------------------------------------- specs, versions, modes


def test_parse_node_spec():
    groups = nvidia_specs.parse_node_spec("4x8xH100-80GB, 2x8xA100-80GB")
    assert [(g.nodes, g.gpus_per_node, g.model.key) for g in groups] == [
        (4, 8, "H100-80GB"),
        (2, 8, "A100-80GB"),
    ]
    count, gpus, model = groups[0]
    assert (count, gpus, model.key) == (4, 8, "H100-80GB")


@pytest.mark.parametrize(
    ("spec", "msg"),
    [
        ("", "empty node spec"),
        ("8xH100-80GB", "expected <nodes>x<gpus>x<model>"),
        ("4x8xH100-80GB,", "invalid node spec ''"),
        ("0x8xH100-80GB", "node count must be at least 1"),
        ("1x0xH100-80GB", "GPUs per node must be between 1 and 64"),
        ("1x65xH100-80GB", "GPUs per node must be between 1 and 64"),
        ("2x8xV100", "unknown GPU model 'V100'"),
        ("2x8", "expected <nodes>x<gpus>x<model>"),
    ],
)
def test_parse_node_spec_errors(spec, msg):
    with pytest.raises(InputError, match=re.escape(msg)):
        nvidia_specs.parse_node_spec(spec)


@pytest.mark.parametrize(("text", "minor"), [("1.37", 37), ("v1.35.2", 35), ("1.34", 34)])
def test_k8s_versions(text, minor):
    assert nvidia_specs.k8s_minor(text) == minor


@pytest.mark.parametrize("text", ["1.33", "1.39", "2.0", "latest"])
def test_k8s_versions_rejected(text):
    with pytest.raises(InputError):
        nvidia_specs.k8s_minor(text)


@pytest.mark.parametrize(
    ("text", "kind", "canonical"),
    [
        ("full", "full", "full"),
        (" MIG-DYNAMIC ", "mig-dynamic", "mig-dynamic"),
        ("mig-static:all-1g.10gb", "mig-static", "mig-static:all-1g.10gb"),
        ("mig-static:3g.40gb,2g.20gb,1g.10gb", "mig-static", "mig-static:3g.40gb,2g.20gb,1g.10gb"),
        ("time-slicing:4", "time-slicing", "time-slicing:4"),
        ("mps:2", "mps", "mps:2"),
    ],
)
def test_parse_gpu_mode(text, kind, canonical):
    mode = nvidia_modes.parse_gpu_mode(text)
    assert mode.kind == kind
    assert str(mode) == canonical
    assert nvidia_modes.parse_gpu_mode(str(mode)) == mode


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("mig", "unknown GPU mode"),
        ("mig-static", "needs a layout"),
        ("mig-static:", "needs a layout"),
        ("time-slicing", "needs a replica count"),
        ("time-slicing:x", "needs a replica count"),
        ("time-slicing:1", "replicas must be between 2 and 1024"),
        ("mps:0", "replicas must be between 2"),
        ("full:2", "takes no argument"),
        ("mig-static:1g.10gb**2", "invalid MIG layout item"),
        ("mig-static:all-fancy", "unknown named MIG layout"),
    ],
)
def test_parse_gpu_mode_errors(text, msg):
    with pytest.raises(InputError, match=re.escape(msg)):
        nvidia_modes.parse_gpu_mode(text)


@pytest.mark.parametrize(
    ("raw", "semver"),
    [
        ("580.95.05", "580.95.5"),
        ("570.172.08", "570.172.8"),
        ("13.0", "13.0.0"),
        ("9.0", "9.0.0"),
        ("v12", "12.0.0"),
    ],
)
def test_nvidia_semver(raw, semver):
    assert nvidia_dra.nvidia_semver(raw) == semver


def test_nvidia_semver_rejects_garbage():
    with pytest.raises(InputError):
        nvidia_dra.nvidia_semver("580.95.05-beta")


# ----------------------------------------------------------------- dynamic MIG


def test_h100_dynamic_mig_counts_split_layout():
    slices = dra_objects("h100-80gb-0", "H100-80GB", 8, "mig-dynamic", "1.37")
    assert len(slices) == 9
    assert "devices" not in slices[0]["spec"]  # counters-only slice first
    assert [len(s["spec"]["devices"]) for s in slices[1:]] == [26] * 8
    assert all("sharedCounters" not in s["spec"] for s in slices[1:])
    assert len(devices(slices)) == 208
    sets = counter_sets(slices)
    assert [cs["name"] for cs in sets] == [f"gpu-{i}-counter-set" for i in range(8)]
    assert all(len(cs["counters"]) == 15 for cs in sets)
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in slices} == {9}
    assert {s["spec"]["pool"]["generation"] for s in slices} == {1}
    assert {s["spec"]["pool"]["name"] for s in slices} == {"h100-80gb-0"}
    assert {s["spec"]["nodeName"] for s in slices} == {"h100-80gb-0"}
    assert {s["spec"]["driver"] for s in slices} == {"gpu.nvidia.com"}


def test_h100_dynamic_mig_combined_layout_on_1_34():
    slices = dra_objects("n", "H100-80GB", 8, "mig-dynamic", "1.34")
    assert len(slices) == 8
    for i, s in enumerate(slices):
        assert [cs["name"] for cs in s["spec"]["sharedCounters"]] == [f"gpu-{i}-counter-set"]
        assert len(s["spec"]["devices"]) == 26
        assert {u["counterSet"] for d in s["spec"]["devices"] for u in d["consumesCounters"]} == {
            f"gpu-{i}-counter-set"
        }


def test_counter_set_values_are_profile_maxima():
    slices = dra_objects("n", "H100-80GB", 1, "mig-dynamic")
    (cs,) = counter_sets(slices)
    expected = {
        "multiprocessors": "132",
        "copy-engines": "8",
        "decoders": "7",
        "encoders": "0",
        "jpeg-engines": "7",
        "ofa-engines": "1",
        "memory": "81152Mi",
    } | {f"memory-slice-{i}": "1" for i in range(8)}
    assert values(cs["counters"]) == expected


def test_3g_at_start_4_consumes_memory_slices_4_to_7():
    dev = by_name(dra_objects("n", "H100-80GB", 1, "mig-dynamic"))["gpu-0-mig-3g40gb-9-4"]
    (use,) = dev["consumesCounters"]
    assert use["counterSet"] == "gpu-0-counter-set"
    assert values(use["counters"]) == {
        "multiprocessors": "60",
        "copy-engines": "3",
        "decoders": "3",
        "encoders": "0",
        "jpeg-engines": "3",
        "ofa-engines": "0",
        "memory": "40448Mi",
        "memory-slice-4": "1",
        "memory-slice-5": "1",
        "memory-slice-6": "1",
        "memory-slice-7": "1",
    }
    assert values(dev["capacity"]) == {
        "multiprocessors": "60",
        "copyEngines": "3",
        "decoders": "3",
        "encoders": "0",
        "jpegEngines": "3",
        "ofaEngines": "0",
        "memory": "40448Mi",
    }
    assert dev["attributes"]["profile"] == {"string": "3g.40gb"}
    assert "uuid" not in dev["attributes"]  # dynamic MIG devices do not exist yet


def test_full_gpu_consumes_every_counter():
    slices = dra_objects("n", "H200-141GB", 2, "mig-dynamic")
    d = by_name(slices)
    for cs in counter_sets(slices):
        minor = cs["name"].split("-")[1]
        (use,) = d[f"gpu-{minor}"]["consumesCounters"]
        assert use["counterSet"] == cs["name"]
        assert use["counters"] == cs["counters"]


def test_dynamic_device_names_sorted_like_the_driver():
    names = [d["name"] for d in dra_objects("n", "H100-80GB", 1, "mig-dynamic")[1]["spec"]["devices"]]
    assert names == sorted(names)
    assert names[:3] == ["gpu-0", "gpu-0-mig-1g10gb-19-0", "gpu-0-mig-1g10gb-19-1"]
    assert "gpu-0-mig-1g10gb-me-20-3" in names
    assert "gpu-0-mig-1g20gb-15-6" in names
    assert "gpu-0-mig-7g80gb-0-0" in names
    assert "gpu-0-mig-4g40gb-5-0" in names
    assert "gpu-0-mig-2g20gb-14-6" not in names  # 2g starts are 0, 2, 4


def test_ampere_dynamic_mig_has_no_full_gpu():
    slices = dra_objects("n", "A100-80GB", 8, "mig-dynamic")
    names = by_name(slices)
    assert len(names) == 8 * 25
    assert not any(re.fullmatch(r"gpu-\d+", n) for n in names)
    assert len(counter_sets(slices)) == 8  # the counter sets are published all the same


def test_non_mig_gpu_under_dynamic_mig_is_a_plain_full_gpu():
    slices = dra_objects("n", "L40S", 2, "mig-dynamic", "1.37")
    assert len(slices) == 3
    assert slices[0]["spec"].keys() == {"driver", "pool", "nodeName"}  # empty counters slice
    gpu0 = by_name(slices)["gpu-0"]
    assert values(gpu0["capacity"]) == {"memory": "46068Mi"}
    assert "consumesCounters" not in gpu0


def test_dynamic_mig_on_more_than_8_gpus_needs_1_34():
    with pytest.raises(InputError, match=r"9 counter sets \(max 8\)"):
        dra_objects("n", "H100-80GB", 9, "mig-dynamic", "1.35")
    assert len(dra_objects("n", "H100-80GB", 9, "mig-dynamic", "1.34")) == 9


def test_blackwell_counters():
    (cs,) = counter_sets(dra_objects("n", "B200", 1, "mig-dynamic"))
    assert values(cs["counters"])["copy-engines"] == "16"
    assert values(cs["counters"])["decoders"] == "1"


# ----------------------------------------------------------------- full GPUs and static MIG


def test_full_gpu_devices_and_attributes():
    (s,) = dra_objects("a100-80gb-0", "A100-80GB", 8, "full")
    assert [d["name"] for d in s["spec"]["devices"]] == [f"gpu-{i}" for i in range(8)]
    gpu = s["spec"]["devices"][0]
    assert gpu["capacity"] == {"memory": {"value": "80Gi"}}
    attrs = gpu["attributes"]
    assert attrs["type"] == {"string": "gpu"}
    assert attrs["productName"] == {"string": "NVIDIA A100-SXM4-80GB"}
    assert attrs["brand"] == {"string": "Nvidia"}
    assert attrs["architecture"] == {"string": "Ampere"}
    assert attrs["cudaComputeCapability"] == {"version": "8.0.0"}
    assert attrs["driverVersion"] == {"version": "580.95.5"}
    assert attrs["cudaDriverVersion"] == {"version": "13.0.0"}
    assert re.fullmatch(
        r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", attrs["resource.kubernetes.io/pciBusID"]["string"]
    )
    assert re.fullmatch(r"pci[0-9a-f]{4}:[0-9a-f]{2}", attrs["resource.kubernetes.io/pcieRoot"]["string"])
    assert re.fullmatch(r"GPU-[0-9a-f-]{36}", attrs["uuid"]["string"])
    assert list(attrs) == sorted(attrs)
    assert "consumesCounters" not in gpu


def test_h100_full_memory_is_the_nvml_total():
    gpu = dra_objects("n", "H100-80GB", 1)[0]["spec"]["devices"][0]
    assert gpu["capacity"]["memory"]["value"] == "81559Mi"


def test_time_slicing_and_mps_publish_full_gpus():
    for mode in ("time-slicing:4", "mps:2"):
        assert dra_objects("n", "H100-80GB", 8, mode) == dra_objects("n", "H100-80GB", 8, "full")


def test_uuids_are_deterministic_and_unique():
    a = dra_objects("node-a", "H100-80GB", 8)
    assert a == dra_objects("node-a", "H100-80GB", 8)
    b = dra_objects("node-b", "H100-80GB", 8)
    uuids_a = {d["attributes"]["uuid"]["string"] for d in devices(a)}
    uuids_b = {d["attributes"]["uuid"]["string"] for d in devices(b)}
    assert len(uuids_a) == 8
    assert not uuids_a & uuids_b


def test_static_mig_devices():
    (s,) = dra_objects("n", "H100-80GB", 2, "mig-static:all-balanced")
    names = [d["name"] for d in s["spec"]["devices"]]
    assert names == [
        "gpu-0-mig-1g10gb-19-0",
        "gpu-0-mig-1g10gb-19-1",
        "gpu-0-mig-2g20gb-14-2",
        "gpu-0-mig-3g40gb-9-4",
        "gpu-1-mig-1g10gb-19-0",
        "gpu-1-mig-1g10gb-19-1",
        "gpu-1-mig-2g20gb-14-2",
        "gpu-1-mig-3g40gb-9-4",
    ]
    d = s["spec"]["devices"][3]
    assert values(d["capacity"]) == {
        "copyEngines": "3",
        "decoders": "3",
        "encoders": "0",
        "jpegEngines": "3",
        "memory": "40448Mi",
        "memorySlice4": "1",
        "memorySlice5": "1",
        "memorySlice6": "1",
        "memorySlice7": "1",
        "multiprocessors": "60",
        "ofaEngines": "0",
    }
    assert d["attributes"]["type"] == {"string": "mig"}
    assert re.fullmatch(r"MIG-[0-9a-f-]{36}", d["attributes"]["uuid"]["string"])
    parent = dra_objects("n", "H100-80GB", 2)[0]["spec"]["devices"][0]["attributes"]["uuid"]
    assert d["attributes"]["parentUUID"] == parent
    assert "consumesCounters" not in d


def test_static_mig_gpu_without_mig_is_a_full_gpu():
    (s,) = dra_objects("n", "A100-40GB", 2, "mig-static:all-1g.5gb/all-disabled")
    names = [d["name"] for d in s["spec"]["devices"]]
    assert names == [f"gpu-0-mig-1g5gb-19-{i}" for i in range(7)] + ["gpu-1"]


def test_static_mig_plus_me_device_name():
    (s,) = dra_objects("n", "H100-80GB", 1, "mig-static:all-1g.10gb.me")
    (d,) = s["spec"]["devices"]
    assert d["name"] == "gpu-0-mig-1g10gb-me-20-6"
    assert d["attributes"]["profile"] == {"string": "1g.10gb+me"}


def test_all_enabled_strands_the_gpu():
    (s,) = dra_objects("n", "H100-80GB", 2, "mig-static:all-enabled")
    assert "devices" not in s["spec"]


def test_static_mig_on_non_mig_model_is_an_input_error():
    with pytest.raises(InputError, match=r"L40S-48GB .* does not support MIG"):
        dra_objects("n", "L40S", 8, "mig-static:all-balanced")


def test_static_slice_device_limit():
    with pytest.raises(InputError, match=r"129 devices \(max 128\)"):
        dra_objects("n", "H100-80GB", 43, "mig-static:1g.10gb*3")


def test_invalid_node_name():
    with pytest.raises(InputError, match="invalid node name"):
        dra_objects("Node_1", "H100-80GB", 1)


def test_slice_metadata():
    slices = dra_objects("h100-80gb-3", "H100-80GB", 8, "mig-dynamic")
    meta = slices[2]["metadata"]
    assert meta["generateName"] == "00002-gpu.nvidia.com-h100-80gb-3-"
    assert re.fullmatch(r"00002-gpu\.nvidia\.com-h100-80gb-3-[bcdfghjklmnpqrstvwxz2456789]{5}", meta["name"])
    assert len({s["metadata"]["name"] for s in slices}) == 9
    (owner,) = meta["ownerReferences"]
    node = nvidia_nodes.dra_node("h100-80gb-3", "H100-80GB", 8)
    assert owner == {
        "apiVersion": "v1",
        "kind": "Node",
        "name": "h100-80gb-3",
        "uid": node["metadata"]["uid"],
        "controller": True,
    }


def test_driver_info_override():
    drv = nvidia_dra.DriverInfo(
        driver_version="570.172.08", cuda_driver_version="12.8", addressing_mode="HMM"
    )
    attrs = dra_objects("n", "H100-80GB", 1, driver=drv)[0]["spec"]["devices"][0]["attributes"]
    assert attrs["driverVersion"] == {"version": "570.172.8"}
    assert attrs["cudaDriverVersion"] == {"version": "12.8.0"}
    assert attrs["addressingMode"] == {"string": "HMM"}


def test_objects_are_plain_json():
    objs = cluster("1x8xH100-80GB,1x2xA100-40GB", "mig-dynamic")
    assert json.loads(json.dumps(objs)) == objs


# ----------------------------------------------------------------- DeviceClasses, sharing config


def test_device_classes_v1_with_extended_resource():
    classes = {c["metadata"]["name"]: c for c in nvidia_dra.device_classes("1.37")}
    assert list(classes) == ["gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com"]
    gpu = classes["gpu.nvidia.com"]
    assert gpu["apiVersion"] == "resource.k8s.io/v1"
    assert gpu["spec"]["extendedResourceName"] == "nvidia.com/gpu"
    for name, t in (("gpu.nvidia.com", "gpu"), ("mig.nvidia.com", "mig"), ("vfio.gpu.nvidia.com", "vfio")):
        assert classes[name]["spec"]["selectors"] == [
            {
                "cel": {
                    "expression": f"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '{t}'"
                }
            }
        ]
    assert "extendedResourceName" not in classes["mig.nvidia.com"]["spec"]


@pytest.mark.parametrize(
    ("version", "has"), [("1.34", False), ("1.35", False), ("1.36", True), ("1.37", True)]
)
def test_extended_resource_name_follows_the_gate(version, has):
    gpu = nvidia_dra.device_classes(version)[0]
    assert ("extendedResourceName" in gpu["spec"]) is has
    forced = nvidia_dra.device_classes(version, extended_resource=True)[0]
    assert forced["spec"]["extendedResourceName"] == "nvidia.com/gpu"


def test_sharing_config():
    assert nvidia_dra.dra_sharing_config("full") is None
    assert nvidia_dra.dra_sharing_config("mig-dynamic") is None
    ts = nvidia_dra.dra_sharing_config("time-slicing:4", ["gpu"])
    assert ts == {
        "requests": ["gpu"],
        "opaque": {
            "driver": "gpu.nvidia.com",
            "parameters": {
                "apiVersion": "resource.nvidia.com/v1beta1",
                "kind": "GpuConfig",
                "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}},
            },
        },
    }
    mps = nvidia_dra.dra_sharing_config("mps:4", model="H100-80GB")
    assert mps is not None
    assert "requests" not in mps
    assert mps["opaque"]["parameters"]["sharing"] == {
        "strategy": "MPS",
        "mpsConfig": {"defaultActiveThreadPercentage": 25, "defaultPinnedDeviceMemoryLimit": "20389Mi"},
    }
    with pytest.raises(InputError, match="invalid request name"):
        nvidia_dra.dra_sharing_config("mps:2", ["Bad_Name"])


def test_dynamic_attribute_sets_match_the_drivers_bats_reference():
    # NVIDIA/k8s-dra-driver-gpu tests/bats/test_gpu_dynmig.bats (run on a coherent-memory GB200,
    # hence addressingMode) asserts exactly these attribute names
    common = {
        "architecture",
        "brand",
        "cudaComputeCapability",
        "cudaDriverVersion",
        "driverVersion",
        "productName",
        "resource.kubernetes.io/pciBusID",
        "resource.kubernetes.io/pcieRoot",
        "type",
        "addressingMode",
    }
    drv = nvidia_dra.DriverInfo(addressing_mode="ATS")
    d = by_name(dra_objects("n", "B200", 1, "mig-dynamic", driver=drv))
    assert set(d["gpu-0"]["attributes"]) == common | {"uuid"}
    assert set(d["gpu-0-mig-1g23gb-19-0"]["attributes"]) == common | {"parentUUID", "profile"}

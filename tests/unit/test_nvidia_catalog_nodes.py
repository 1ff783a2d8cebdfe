"""Node objects for device-plugin and DRA clusters, and whole-cluster catalogues."""

from __future__ import annotations

import json
import re

import pytest

from kubedra.errors import InputError
from kubedra.sources.files import parse_text
from kubedra.vendors.nvidia import models
from kubedra.vendors.nvidia import nodes as nvidia_nodes
from kubedra.vendors.nvidia.cluster import cluster as nvidia_cluster


def gpu_resources(node):
    return {k: v for k, v in node["status"]["capacity"].items() if k.startswith("nvidia.com/")}


def labels(node):
    return node["metadata"]["labels"]


# ----------------------------------------------------------------- device plugin resources per mode


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("full", {"nvidia.com/gpu": "8"}),
        ("time-slicing:4", {"nvidia.com/gpu": "32"}),
        ("mps:3", {"nvidia.com/gpu": "24"}),
        ("mig-static:all-1g.10gb", {"nvidia.com/mig-1g.10gb": "56"}),
        ("mig-static:all-3g.40gb", {"nvidia.com/mig-3g.40gb": "16"}),
        (
            "mig-static:all-balanced",
            {"nvidia.com/mig-1g.10gb": "16", "nvidia.com/mig-2g.20gb": "8", "nvidia.com/mig-3g.40gb": "8"},
        ),
        (
            "mig-static:all-balanced/all-disabled",
            {
                "nvidia.com/gpu": "4",
                "nvidia.com/mig-1g.10gb": "8",
                "nvidia.com/mig-2g.20gb": "4",
                "nvidia.com/mig-3g.40gb": "4",
            },
        ),
        ("mig-static:all-1g.10gb.me", {"nvidia.com/mig-1g.10gb.me": "8"}),
        ("mig-static:all-enabled", {}),
    ],
)
def test_device_plugin_resources_per_mode(mode, expected):
    node = nvidia_nodes.device_plugin_node("h100-80gb-0", "H100-80GB", 8, mode)
    assert gpu_resources(node) == expected
    alloc = {k: v for k, v in node["status"]["allocatable"].items() if k.startswith("nvidia.com/")}
    assert alloc == expected


def test_rename_by_default_advertises_gpu_shared():
    node = nvidia_nodes.device_plugin_node("n", "A100-80GB", 8, "time-slicing:10", rename_by_default=True)
    assert gpu_resources(node) == {"nvidia.com/gpu.shared": "80"}
    assert labels(node)["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"  # no -SHARED when renamed
    plain = nvidia_nodes.device_plugin_node("n", "A100-80GB", 8, "time-slicing:10")
    assert labels(plain)["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB-SHARED"
    assert labels(plain)["nvidia.com/gpu.replicas"] == "10"
    assert labels(plain)["nvidia.com/gpu.sharing-strategy"] == "time-slicing"


def test_mps_labels():
    lab = labels(nvidia_nodes.device_plugin_node("n", "H100-80GB", 8, "mps:2"))
    assert lab["nvidia.com/mps.capable"] == "true"
    assert lab["nvidia.com/gpu.sharing-strategy"] == "mps"
    assert lab["nvidia.com/gpu.replicas"] == "2"


def test_single_strategy():
    node = nvidia_nodes.device_plugin_node(
        "n", "H100-80GB", 8, "mig-static:all-1g.10gb", mig_strategy="single"
    )
    assert gpu_resources(node) == {"nvidia.com/gpu": "56"}
    lab = labels(node)
    assert lab["nvidia.com/mig.strategy"] == "single"
    assert lab["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
    assert lab["nvidia.com/gpu.count"] == "56"
    assert lab["nvidia.com/gpu.memory"] == "9984"
    assert lab["nvidia.com/gpu.multiprocessors"] == "16"
    assert lab["nvidia.com/gpu.slices.gi"] == "1"
    assert lab["nvidia.com/gpu.family"] == "hopper"


@pytest.mark.parametrize("layout", ["all-balanced", "all-1g.10gb/all-disabled", "all-enabled"])
def test_single_strategy_needs_one_profile_everywhere(layout):
    with pytest.raises(InputError, match="MIG strategy single needs every GPU in MIG mode"):
        nvidia_nodes.device_plugin_node("n", "H100-80GB", 8, f"mig-static:{layout}", mig_strategy="single")


def test_none_strategy_advertises_whole_gpus():
    node = nvidia_nodes.device_plugin_node("n", "H100-80GB", 8, "mig-static:all-1g.10gb", mig_strategy="none")
    assert gpu_resources(node) == {"nvidia.com/gpu": "8"}
    assert "nvidia.com/mig.strategy" not in labels(node)


def test_unknown_strategy():
    with pytest.raises(InputError, match="unknown MIG strategy 'odd'"):
        nvidia_nodes.device_plugin_node("n", "H100-80GB", 8, "mig-static:all-1g.10gb", mig_strategy="odd")


def test_dynamic_mig_has_no_device_plugin_equivalent():
    with pytest.raises(InputError, match="mig-dynamic has no NVIDIA device plugin equivalent"):
        nvidia_nodes.device_plugin_node("n", "H100-80GB", 8, "mig-dynamic")
    with pytest.raises(InputError, match="no NVIDIA device plugin equivalent"):
        nvidia_cluster("1x8xH100-80GB", "mig-dynamic", device_plugin=True)


# ----------------------------------------------------------------- GFD labels


def test_mixed_strategy_labels():
    lab = labels(nvidia_nodes.device_plugin_node("n", "A100-80GB", 8, "mig-static:all-balanced"))
    assert lab["nvidia.com/mig.strategy"] == "mixed"
    assert lab["nvidia.com/mig.config"] == "all-balanced"
    assert lab["nvidia.com/mig.config.state"] == "success"
    assert lab["nvidia.com/gpu.count"] == "8"
    assert lab["nvidia.com/gpu.replicas"] == "0"  # MIG-enabled GPUs are labelled without sharing
    assert lab["nvidia.com/mig-3g.40gb.count"] == "8"
    assert lab["nvidia.com/mig-3g.40gb.product"] == "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb"
    assert lab["nvidia.com/mig-3g.40gb.memory"] == "40192"
    assert lab["nvidia.com/mig-3g.40gb.multiprocessors"] == "42"
    assert lab["nvidia.com/mig-3g.40gb.slices.gi"] == "3"
    assert lab["nvidia.com/mig-3g.40gb.engines.decoder"] == "2"


def test_plus_me_labels_never_carry_a_plus():
    node = nvidia_nodes.device_plugin_node("n", "H100-80GB", 8, "mig-static:all-1g.10gb.me")
    assert not [k for k in labels(node) if "+" in k]


def test_full_gpu_labels():
    lab = labels(nvidia_nodes.device_plugin_node("h200-0", "H200", 8, "full"))
    assert lab["nvidia.com/gpu.product"] == "NVIDIA-H200"
    assert lab["nvidia.com/gpu.count"] == "8"
    assert lab["nvidia.com/gpu.memory"] == "143771"
    assert lab["nvidia.com/gpu.replicas"] == "1"
    assert lab["nvidia.com/gpu.sharing-strategy"] == "none"
    assert lab["nvidia.com/gpu.compute.major"] == "9"
    assert lab["nvidia.com/mig.capable"] == "true"
    assert lab["nvidia.com/mig.config"] == "all-disabled"
    assert lab["nvidia.com/cuda.driver-version.full"] == "580.95.05"
    assert lab["nvidia.com/cuda.runtime-version.full"] == "13.0"
    assert lab["kubernetes.io/hostname"] == "h200-0"
    assert lab["nvidia.com/gpu.present"] == "true"
    assert lab[nvidia_nodes.POOL_LABEL] == "h200-141gb-x8"


@pytest.mark.parametrize(
    ("model", "family"),
    [("T4", "turing"), ("L40S", "ada-lovelace"), ("A100-40GB", "ampere"), ("B200", "blackwell")],
)
def test_gpu_family(model, family):
    lab = labels(nvidia_nodes.device_plugin_node("n", model, 4, "full"))
    assert lab["nvidia.com/gpu.family"] == family
    assert lab["nvidia.com/mig.capable"] == str(models.get_model(model).mig_capable).lower()


def test_non_mig_board_has_no_mig_config():
    assert "nvidia.com/mig.config" not in labels(nvidia_nodes.device_plugin_node("n", "L40S", 4, "full"))


# ----------------------------------------------------------------- DRA nodes, shapes


def test_dra_node_has_no_gpu_extended_resources():
    for mode in ("full", "mig-dynamic", "mig-static:all-balanced", "time-slicing:4"):
        node = nvidia_nodes.dra_node("n", "H100-80GB", 8, mode)
        assert gpu_resources(node) == {}
        assert labels(node)["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert "nvidia.com/mig.config" not in labels(nvidia_nodes.dra_node("n", "H100-80GB", 8, "mig-dynamic"))


def test_node_ready_and_identity():
    node = nvidia_nodes.dra_node("h100-80gb-0", "H100-80GB", 8, k8s_version="1.35")
    conds = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert conds == {
        "MemoryPressure": "False",
        "DiskPressure": "False",
        "PIDPressure": "False",
        "Ready": "True",
    }
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.35.0"
    assert node["status"]["addresses"][1] == {"type": "Hostname", "address": "h100-80gb-0"}
    assert re.fullmatch(r"10\.\d+\.\d+\.\d+", node["status"]["addresses"][0]["address"])


def test_node_capacity_defaults_and_allocatable():
    node = nvidia_nodes.device_plugin_node("n", "H100-80GB", 8)
    cap, alloc = node["status"]["capacity"], node["status"]["allocatable"]
    assert (cap["cpu"], cap["memory"], cap["pods"]) == ("224", "2Ti", "110")
    assert alloc["cpu"] == "224"
    assert alloc["memory"] == "2097052Mi"  # 2Ti minus the kubelet's 100Mi hard eviction threshold


def test_node_shape_scales_with_gpus_and_can_be_overridden():
    half = nvidia_nodes.dra_node("n", "H100-80GB", 4)
    assert (half["status"]["capacity"]["cpu"], half["status"]["capacity"]["memory"]) == ("112", "1Ti")
    shape = models.NodeShape(cpu=64, memory="512Gi", pods=250)
    custom = nvidia_nodes.dra_node("n", "H100-80GB", 4, shape=shape)
    assert (custom["status"]["capacity"]["cpu"], custom["status"]["capacity"]["memory"]) == ("64", "512Gi")
    assert custom["status"]["capacity"]["pods"] == "250"


def test_extra_labels_and_pool():
    node = nvidia_nodes.dra_node("n", "H100-80GB", 8, pool="training", labels={"team": "ml"})
    assert labels(node)["team"] == "ml"
    assert labels(node)[nvidia_nodes.POOL_LABEL] == "training"
    with pytest.raises(InputError, match="invalid label key"):
        nvidia_nodes.dra_node("n", "H100-80GB", 8, labels={"bad key": "x"})
    with pytest.raises(InputError, match="invalid value"):
        nvidia_nodes.dra_node("n", "H100-80GB", 8, pool="not a label value")


# ----------------------------------------------------------------- cluster


def test_cluster_dra():
    objs = nvidia_cluster("4x8xH100-80GB,2x8xA100-80GB", "mig-dynamic", "1.37")
    kinds = [o["kind"] for o in objs]
    assert kinds.count("DeviceClass") == 3
    assert kinds.count("Node") == 6
    assert kinds.count("ResourceSlice") == 6 * 9
    nodes = [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]
    assert nodes == [f"h100-80gb-{i}" for i in range(4)] + ["a100-80gb-0", "a100-80gb-1"]
    devs = sum(len(o["spec"].get("devices", [])) for o in objs if o["kind"] == "ResourceSlice")
    assert devs == 4 * 208 + 2 * 200
    assert {o["spec"]["nodeName"] for o in objs if o["kind"] == "ResourceSlice"} == set(nodes)


def test_cluster_device_plugin():
    objs = nvidia_cluster("2x8xH100-80GB,1x4xT4", "time-slicing:2", device_plugin=True)
    assert [o["kind"] for o in objs] == ["Node"] * 3
    assert [gpu_resources(o) for o in objs] == [{"nvidia.com/gpu": "16"}] * 2 + [{"nvidia.com/gpu": "8"}]


def test_cluster_numbering_continues_across_groups_of_one_model():
    objs = nvidia_cluster("1x8xH100-80GB,2x4xH100-80GB", "full", device_plugin=True)
    assert [o["metadata"]["name"] for o in objs] == ["h100-80gb-0", "h100-80gb-1", "h100-80gb-2"]
    assert [labels(o)[nvidia_nodes.POOL_LABEL] for o in objs] == [
        "h100-80gb-x8",
        "h100-80gb-x4",
        "h100-80gb-x4",
    ]


def test_cluster_mode_map():
    objs = nvidia_cluster(
        "1x8xH100-80GB,1x4xL40S", {"H100-80GB": "mig-static:all-1g.10gb", "*": "full"}, device_plugin=True
    )
    assert [gpu_resources(o) for o in objs] == [{"nvidia.com/mig-1g.10gb": "56"}, {"nvidia.com/gpu": "4"}]
    with pytest.raises(InputError, match="no GPU mode given for L40S-48GB"):
        nvidia_cluster("1x4xL40S", {"H100": "full"})


def test_cluster_objects_load_like_user_files():
    objs = nvidia_cluster("1x2xH100-80GB", "mig-dynamic")
    result = parse_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}), "catalog.json")
    assert not result.errors
    assert [d.kind for d in result.documents] == [o["kind"] for o in objs]

"""verify's driver preflight asks each vendor which image is its DRA driver: an AMD driver image
(rocm/k8s-gpu-dra-driver, whose releases kubedra has not read) is said to be unchecked as AMD's, where it used to be
read as an unknown NVIDIA release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .helpers import run
from .test_verify import _mutate, by_id, healthy, snap, verify


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        (
            "docker.io/rocm/k8s-gpu-dra-driver:v0.2.0",
            "AMD DRA driver v0.2.0: kubedra has read no release of it",
        ),
        (
            "nvcr.io/nvidia/k8s-dra-driver-gpu:v7.0.0",
            "NVIDIA DRA driver v7.0.0 is not in kubedra's release table",
        ),
        ("example.com/dra-driver-fpga:v1.0.0", None),  # no vendor's driver: nothing to say about its release
    ],
)
def test_each_driver_image_is_judged_by_its_vendor(tmp_path: Path, image: str, expected: str | None) -> None:
    def set_image(p: dict[str, Any]) -> None:
        if "kubelet-plugin" in p["metadata"]["name"]:
            p["spec"]["containers"][0]["image"] = image

    code, data = verify("-f", snap(tmp_path, _mutate(healthy(), "Pod", set_image)))
    assert code == 0
    msgs = by_id(data)["driver"]["messages"]
    if expected is None:
        assert not [m for m in msgs if "DRA driver" in m and "release" in m], msgs
    else:
        assert [m for m in msgs if m.startswith(expected)], msgs


# --- slices: each vendor's devices against its own feature discovery's labels (AMD's were not read before) ---

AMD_NODE = "mi300x-0"
AMD_COUNT = "AMD's node labeller writes no GPU count label (ROCm/k8s-device-plugin at ed764684)"


def _amd_items(**labels: str) -> list[dict[str, Any]]:
    from kubedra import vendors

    node, *slices = vendors.get("amd").simulated_node(
        AMD_NODE, "MI300X", 8, "spx_nps1", "1.37", device_plugin=False
    )
    node["metadata"]["labels"].update(labels)
    return [node, *slices]


def test_an_amd_node_on_dra_is_checked_against_its_labeller(tmp_path: Path) -> None:
    code, data = verify("-f", snap(tmp_path, _amd_items()))
    slices = by_id(data)["slices"]
    assert code == 0
    assert slices["checked"] == 1  # was nothing-to-check: gpu.amd.com slices were not read
    # the product matches (Instinct_MI300X is AMD_Instinct_MI300X); the count cannot be compared, and it says so
    assert slices["messages"] == [
        f"Node {AMD_NODE}: its GPU count cannot be compared with its labels: {AMD_COUNT}"
    ]


def test_an_amd_node_whose_slices_name_another_product_fails(tmp_path: Path) -> None:
    items = _amd_items(**{"amd.com/gpu.product-name": "Instinct_MI210"})
    code, data = verify("-f", snap(tmp_path, items))
    assert code == 1
    assert (
        f"Node {AMD_NODE}: label amd.com/gpu.product-name=Instinct_MI210, slices say AMD_Instinct_MI300X"
        in by_id(data)["slices"]["messages"]
    )


def test_an_amd_product_label_kubedra_cannot_relate_is_said_not_guessed(tmp_path: Path) -> None:
    code, data = verify("-f", snap(tmp_path, _amd_items(**{"amd.com/gpu.product-name": "Instinct_MI999"})))
    assert code == 0
    msgs = by_id(data)["slices"]["messages"]
    assert any("Instinct_MI999 is no AMD GPU kubedra can relate" in m for m in msgs), msgs


def test_a_node_on_dra_without_slices_names_its_vendors_driver(tmp_path: Path) -> None:
    amd = [o for o in _amd_items(**{"kubedra.io/gpu-stack": "dra"}) if o["kind"] == "Node"]
    code, data = verify("-f", snap(tmp_path, amd))
    assert code == 1
    assert by_id(data)["slices"]["messages"] == [
        f"Node {AMD_NODE} is on DRA but publishes no gpu.amd.com ResourceSlice"
    ]
    # a node no vendor's labels claim: every vendor's driver could have published its slices
    amd[0]["metadata"]["labels"] = {"kubedra.io/gpu-stack": "dra"}
    code, data = verify("-f", snap(tmp_path, amd, name="bare.yaml"))
    assert code == 1
    assert by_id(data)["slices"]["messages"] == [
        f"Node {AMD_NODE} is on DRA but publishes no gpu.nvidia.com or gpu.amd.com ResourceSlice"
    ]


@pytest.mark.parametrize(
    ("devices", "refused"),
    [
        (["gpu-0", 7], True),  # the snapshot reader refuses devices that are no mappings
        ([{"name": "d", "attributes": ["type"]}], True),
        ([{"name": "d", "attributes": None}], False),  # no attributes: no GPU of the vendor's, checked
    ],
)
def test_edited_slice_devices_are_refused_or_checked_never_crashed_on(
    tmp_path: Path, devices: list[Any], refused: bool
) -> None:
    items = _amd_items()
    for o in items:
        if o["kind"] == "ResourceSlice":
            o["spec"]["devices"] = devices
    res = run("verify", "-f", snap(tmp_path, items), "-o", "json")
    if refused:
        assert res.exit_code == 2, res.output
        assert res.stderr.startswith("kubedra: error:")
        assert res.stderr.count("\n") == 1
        assert not res.stdout
    else:
        assert res.exit_code == 0, res.output
        slices = by_id(json.loads(res.stdout))["slices"]
        assert slices["checked"] == 1
        assert (
            f"Node {AMD_NODE}: its GPU count cannot be compared with its labels: {AMD_COUNT}"
            in slices["messages"]
        )

"""verify's driver preflight asks each vendor which image is its DRA driver: an AMD driver image
(rocm/k8s-gpu-dra-driver, whose releases kubedra has not read) is said to be unchecked as AMD's, where it used to be
read as an unknown NVIDIA release."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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

"""snapshot keeps every vendor's GPU workloads, infrastructure and scheduling events (it asks kubedra.vendors for
the resource domains and component names), not only NVIDIA's."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.snapshot.capture import keep


def _deploy(name: str, image: str, limits: dict[str, str] | None = None) -> dict[str, Any]:
    ctr: dict[str, Any] = {"name": "c", "image": image}
    if limits:
        ctr["resources"] = {"limits": limits}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"template": {"spec": {"containers": [ctr]}}},
    }


def _event(message: str) -> dict[str, Any]:
    return {"kind": "Event", "reason": "FailedScheduling", "message": message}


@pytest.mark.parametrize(
    ("obj", "kept"),
    [
        (_deploy("train", "rocm/pytorch:latest", {"amd.com/gpu": "1"}), True),
        (_deploy("train", "nvcr.io/nvidia/pytorch:24.01", {"nvidia.com/gpu": "1"}), True),
        (_deploy("web", "nginx:1.27"), False),
        (_deploy("amdgpu-labeller-daemonset", "example.com/labeller:1"), True),  # AMD's component by name
        (_deploy("exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:4.1"), True),  # NVIDIA's by image
        (_event("0/3 nodes are available: 3 Insufficient amd.com/gpu."), True),
        (_event("0/3 nodes are available: 3 Insufficient nvidia.com/gpu."), True),
        (_event("0/3 nodes are available: 3 Insufficient cpu."), False),
    ],
)
def test_keep_asks_every_vendor(obj: dict[str, Any], kept: bool) -> None:
    assert keep(obj) is kept

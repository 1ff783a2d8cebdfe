"""GPU settings hidden in a custom resource's own fields are found for every vendor the registry knows: the names
come from the vendors (``kubedra.vendors.gpu_names``), since k8s sits below them and spells none."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra import vendors
from kubedra.k8s import kueue
from kubedra.k8s.gpunames import GpuNames
from kubedra.k8s.workloads import custom_resource_gpu_fields


def _runtime(resources: dict[str, Any], accelerator: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "InferenceRuntime",
        "metadata": {"name": "r"},
        "spec": {
            "resourcesPerNode": resources,
            "accelerator": accelerator,
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}, {"key": "amd.com/gpu"}],
            "nodeSelector": {"amd.com/gpu.product-name": "Instinct_MI300X"},
        },
    }


@pytest.mark.parametrize(
    ("resources", "accelerator", "found"),
    [
        ({"nvidia.com/gpu": 8}, "", [("spec", "resourcesPerNode", "nvidia.com/gpu")]),
        ({"amd.com/gpu": 8}, "", [("spec", "resourcesPerNode", "amd.com/gpu")]),
        ({"cpu": 4}, "device=nvidia.com/mig-1g.10gb", [("spec", "accelerator")]),
        ({"cpu": 4}, "device=amd.com/cpx_nps4", [("spec", "accelerator")]),
        ({"cpu": 4}, "device=amd.com/cpu", []),
    ],
)
def test_every_vendors_gpu_in_a_custom_resource_is_found(
    resources: dict[str, Any], accelerator: str, found: list[tuple[object, ...]]
) -> None:
    obj = _runtime(resources, accelerator)
    assert [p for p, _ in custom_resource_gpu_fields(obj, vendors.gpu_names())] == found


def test_the_names_are_the_callers() -> None:
    """With no vendor's names nothing is a GPU but a gpus-like count: k8s knows no vendor."""
    nothing = GpuNames(domains=(), names_gpu=lambda _text: False)
    assert custom_resource_gpu_fields(_runtime({"nvidia.com/gpu": 8}), nothing) == []
    assert [p for p, _ in custom_resource_gpu_fields(_runtime({"gpus": 2}), nothing)] == [
        ("spec", "resourcesPerNode", "gpus")
    ]


def test_a_kueue_quota_names_an_amd_gpu_too() -> None:
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "q"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["amd.com/gpu"],
                    "flavors": [
                        {"name": "mi300x", "resources": [{"name": "amd.com/gpu", "nominalQuota": 16}]}
                    ],
                }
            ]
        },
    }
    (quota,) = kueue.gpu_quotas(cq, vendors.gpu_names())
    assert quota.describe() == "amd.com/gpu: 16 (flavor mi300x)"

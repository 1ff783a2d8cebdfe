"""The NVIDIA DRA driver's DeviceClasses by name, for the rewrites and the reference checks.

Kept out of :mod:`kubedra.vendors.nvidia.names`, which imports nothing of the catalogue: these need
:func:`kubedra.vendors.nvidia.dra.device_classes`, and with it the GPU models and layouts.
"""

from __future__ import annotations

import copy
from typing import Any

from kubedra.vendors.base import GpuResource
from kubedra.vendors.nvidia import names
from kubedra.vendors.nvidia.dra import device_classes


def _fallback_classes() -> list[dict[str, Any]]:
    def dc(name: str, device_type: str, ext: str | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": names.class_selector(device_type)}}]}
        if ext:
            spec["extendedResourceName"] = ext
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": spec,
        }

    return [
        dc(names.GPU_CLASS, "gpu", names.GPU_RESOURCE),
        dc(names.MIG_CLASS, "mig"),
        dc("vfio.gpu.nvidia.com", "vfio"),
    ]


def driver_device_classes() -> list[dict[str, Any]]:
    """The DeviceClasses the NVIDIA driver's chart installs (resource.k8s.io/v1 shape)."""
    out = []
    for c in device_classes():
        d = c.to_dict() if hasattr(c, "to_dict") else c
        if isinstance(d, dict) and d.get("kind") == "DeviceClass":
            out.append(copy.deepcopy(d))
    return out or _fallback_classes()


def known_class_names() -> set[str]:
    return {str(c.get("metadata", {}).get("name")) for c in driver_device_classes()} | {
        "compute-domain-daemon.nvidia.com",
        "compute-domain-default-channel.nvidia.com",
    }


def driver_class(name: str) -> dict[str, Any] | None:
    for c in driver_device_classes():
        if c.get("metadata", {}).get("name") == name:
            return c
    return None


def extended_resource_class(gr: GpuResource, *, interval: str) -> tuple[str, dict[str, Any], str] | None:
    """The DeviceClass (name, spec, change note) that maps device-plugin resource ``gr`` to DRA devices by
    ``extendedResourceName`` (KEP-5004): the chart's whole-GPU class, a class per MIG profile, or a time-sliced
    class for ``nvidia.com/gpu.shared``; ``None``: no class for that kind."""
    if gr.kind == "gpu":
        class_name = names.GPU_CLASS
        body = driver_class(class_name)
        spec: dict[str, Any] = dict(body["spec"]) if body else {}
        if not spec:
            spec = {"selectors": [{"cel": {"expression": names.class_selector("gpu")}}]}
        spec["extendedResourceName"] = gr.name
        note = (
            f"DeviceClass {class_name} maps {gr.name} to DRA GPUs; the NVIDIA DRA driver chart installs this "
            "class with the same extendedResourceName on resource.k8s.io/v1, keep only one copy"
        )
    elif gr.kind == "mig":
        assert gr.profile
        class_name = names.mig_class_name(gr.profile)
        spec = {
            "selectors": [{"cel": {"expression": names.class_selector("mig", gr.profile)}}],
            "extendedResourceName": gr.name,
        }
        if gr.shared:
            spec["config"] = [{"opaque": names.opaque(names.sharing_parameters("TimeSlicing", mig=True))}]
        note = f"DeviceClass {class_name} maps {gr.name} to MIG {gr.profile} devices"
    elif gr.kind == "shared":
        class_name = f"gpu-shared.{names.DRIVER}"
        spec = {
            "selectors": [{"cel": {"expression": names.class_selector("gpu")}}],
            "config": [{"opaque": names.opaque(names.sharing_parameters("TimeSlicing", interval=interval))}],
            "extendedResourceName": gr.name,
        }
        note = f"DeviceClass {class_name} maps {gr.name} to time-sliced GPUs"
    else:
        return None
    return class_name, spec, note

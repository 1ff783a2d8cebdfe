"""NVIDIA DRA driver names and opaque-config shapes used by the rewrites.

Source of the shapes: the NVIDIA DRA driver for GPUs (``gpu.nvidia.com``, DeviceClasses ``gpu.nvidia.com``,
``mig.nvidia.com``, ``vfio.gpu.nvidia.com``; opaque config ``resource.nvidia.com/v1beta1`` ``GpuConfig`` and
``MigDeviceConfig`` with ``sharing{strategy: TimeSlicing|MPS, timeSlicingConfig{interval}, mpsConfig{...}}``).
The driver's DeviceClasses are in :mod:`kubedra.vendors.nvidia.classes`; this module imports none of the
catalogue, so a check that needs only a name (``kubedra audit``'s) does not load it.
"""

from __future__ import annotations

import re
from typing import Any

from kubedra.k8s.dnsnames import as_dns_label

DRIVER = "gpu.nvidia.com"
GPU_CLASS = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
CONFIG_API_VERSION = "resource.nvidia.com/v1beta1"

# The DRA driver's feature gate each sharing strategy's config needs (Helm value featureGates.<Name>; both Alpha,
# default false: kubernetes-sigs/dra-driver-nvidia-gpu site/content/docs/reference/feature-gates.md @ 696d7b76, as
# data/plan/common.yaml driverFeatureGates cites it).
SHARING_GATES = {"TimeSlicing": "TimeSlicingSettings", "MPS": "MPSSupport"}

# What the driver offers instead of a GPU-sharing scheme's request (HAMi, Volcano vGPU, gpushare, KAI fractions):
# migrate's manual item says it (kubedra.k8s.gpuschemes.Scheme.manual)
SCHEME_ALTERNATIVES = (
    "the NVIDIA DRA driver has no mechanical equivalent; choose a sharing strategy (a shared claim with a "
    "TimeSlicing or MPS GpuConfig, MIG, or consumable capacity)"
)

# Device-plugin resource names.
RESOURCE_DOMAIN = "nvidia.com/"
GPU_RESOURCE = "nvidia.com/gpu"
SHARED_SUFFIX = ".shared"
# GPU feature discovery's node labels (NVIDIA/k8s-device-plugin gpu-feature-discovery: nvidia.com/gpu.product,
# .count, .memory in MiB); kubedra.vendors.nvidia.gfd reads them.
PRODUCT_LABEL = "nvidia.com/gpu.product"
COUNT_LABEL = "nvidia.com/gpu.count"
MEMORY_LABEL = "nvidia.com/gpu.memory"
# Labels on a node with NVIDIA GPUs besides GFD's: the GPU Operator's nvidia.com/gpu.present (its state-label
# step) and node feature discovery's PCI vendor label (10de: NVIDIA's PCI vendor ID).
GPU_NODE_LABELS = (
    ("nvidia.com/gpu.present", "true"),
    ("feature.node.kubernetes.io/pci-10de.present", "true"),
)
# The node label NVIDIA's DRA driver is installed to select (its kubelet plugin's nodeSelector): NVIDIA
# cloud-native-docs gpu-operator/dra-intro-install.rst, the page for DRA driver v25.12.0 and later ("kubectl label
# node $HOSTNAME nvidia.com/dra-kubelet-plugin=true"; "kubeletPlugin: nodeSelector: nvidia.com/dra-kubelet-plugin:
# "true""; the GPU Operator's driver manager evicts the plugin by the same label, NODE_LABEL_FOR_GPU_POD_EVICTION).
DRA_NODE_LABELS = (("nvidia.com/dra-kubelet-plugin", "true"),)
# a MIG profile as nvidia.com/mig-<profile> and the GKE partition-size label spell it (1g.5gb, 1c.2g.10gb, 1g.10gb+me)
MIG_PROFILE = re.compile(r"\d+(?:c\.\d+)?g\.\d+gb(?:[+-][a-z.]+)?")
MIG_RESOURCE = re.compile(r"^nvidia\.com/mig-(?P<profile>\d+(?:c\.\d+)?g\.\d+gb(?:[+-][a-z.]+)?)$")


def class_selector(device_type: str, profile: str | None = None) -> str:
    expr = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == '{device_type}'"
    if profile:
        expr += f" && device.attributes['{DRIVER}'].profile == '{profile}'"
    return expr


def profile_selector(profile: str) -> str:
    return f"device.attributes['{DRIVER}'].profile == '{profile}'"


def min_memory_selector(quantity: str) -> str:
    return f"device.capacity['{DRIVER}'].memory.compareTo(quantity('{quantity}')) >= 0"


def product_selector(model: str) -> str:
    return f"device.attributes['{DRIVER}'].productName.upperAscii().contains('{model.upper()}')"


def sharing_parameters(
    strategy: str, *, mig: bool = False, interval: str = "Default", replicas: int = 0
) -> dict[str, Any]:
    """Opaque parameters for ``GpuConfig``/``MigDeviceConfig`` with TimeSlicing or MPS sharing."""
    sharing: dict[str, Any]
    if strategy == "TimeSlicing":
        sharing = {"strategy": "TimeSlicing"}
        if not mig:  # MigDeviceConfig has no timeSlicingConfig
            sharing["timeSlicingConfig"] = {"interval": interval}
    else:
        sharing = {"strategy": "MPS"}
        if replicas > 1:
            sharing["mpsConfig"] = {"defaultActiveThreadPercentage": max(1, 100 // replicas)}
    return {
        "apiVersion": CONFIG_API_VERSION,
        "kind": "MigDeviceConfig" if mig else "GpuConfig",
        "sharing": sharing,
    }


def opaque(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"driver": DRIVER, "parameters": parameters}


def dns_label(text: str, limit: int = 63) -> str:
    return as_dns_label(text, limit)


def mig_class_name(profile: str) -> str:
    return f"mig-{dns_label(profile.replace('.', '-').replace('+', '-'))}.{DRIVER}"

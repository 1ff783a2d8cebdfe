"""A catalogue of NVIDIA GPU nodes: what the NVIDIA DRA driver and the NVIDIA device plugin publish.

Everything returns plain, JSON-serialisable Kubernetes objects (camelCase dicts: core/v1 Node,
resource.k8s.io/v1 ResourceSlice and DeviceClass), so callers feed them through the same loader
as user manifests.

    from kubedra.vendors import nvidia
    nvidia.cluster("4x8xH100-80GB,2x8xA100-80GB", "mig-static:all-balanced", "1.37", device_plugin=False)
    nvidia.dra_objects("h100-80gb-0", "H100-80GB", 8, "mig-dynamic")      # 9 slices, 208 devices
    nvidia.device_plugin_node("a100-80gb-0", "A100-80GB", 8, "mig-static:all-1g.10gb")

Modes: ``full``, ``mig-static:<layout>``, ``mig-dynamic``, ``time-slicing:<n>``, ``mps:<n>``
(see :mod:`kubedra.vendors.nvidia.modes` and :mod:`kubedra.vendors.nvidia.layouts`).
"""

from kubedra.vendors.nvidia.cluster import cluster, node_names
from kubedra.vendors.nvidia.dra import (
    DRIVER_NAME,
    DriverInfo,
    counter_set_name,
    device_classes,
    dra_objects,
    dra_sharing_config,
    mig_device_name,
    nvidia_semver,
)
from kubedra.vendors.nvidia.layouts import GpuLayout, MigPlacement, parse_layout, place
from kubedra.vendors.nvidia.limits import pool_violations, slice_violations
from kubedra.vendors.nvidia.models import (
    GpuModel,
    MigProfile,
    NodeShape,
    get_model,
    gpu_models,
    mig_memory_gb,
)
from kubedra.vendors.nvidia.modes import GpuMode, parse_gpu_mode
from kubedra.vendors.nvidia.nodes import (
    POOL_LABEL,
    device_plugin_node,
    device_plugin_resources,
    dra_node,
    gfd_labels,
    mig_resource_name,
)
from kubedra.vendors.nvidia.specs import NodeGroup, k8s_minor, parse_node_spec

__all__ = [
    "DRIVER_NAME",
    "POOL_LABEL",
    "DriverInfo",
    "GpuLayout",
    "GpuMode",
    "GpuModel",
    "MigPlacement",
    "MigProfile",
    "NodeGroup",
    "NodeShape",
    "cluster",
    "counter_set_name",
    "device_classes",
    "device_plugin_node",
    "device_plugin_resources",
    "dra_node",
    "dra_objects",
    "dra_sharing_config",
    "get_model",
    "gfd_labels",
    "gpu_models",
    "k8s_minor",
    "mig_device_name",
    "mig_memory_gb",
    "mig_resource_name",
    "node_names",
    "nvidia_semver",
    "parse_gpu_mode",
    "parse_layout",
    "parse_node_spec",
    "place",
    "pool_violations",
    "slice_violations",
]

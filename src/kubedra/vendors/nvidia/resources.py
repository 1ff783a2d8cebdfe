"""What an NVIDIA device-plugin resource name means: a whole GPU, a shared (time-sliced/MPS) GPU, a MIG profile,
or something that has no DRA counterpart and must be a manual item."""

from __future__ import annotations

from kubedra.k8s.gpuschemes import resource_scheme
from kubedra.vendors.base import GpuResource
from kubedra.vendors.nvidia import names as nvidia

_VENDOR = "nvidia"  # the Vendor.name (kubedra.vendors.nvidia.vendor.Nvidia.name)

__all__ = ["GpuResource", "classify"]


def classify(name: str) -> GpuResource | None:
    """What a resource name means for the migration; ``None`` when it is not an NVIDIA GPU resource."""
    if not name.startswith(nvidia.RESOURCE_DOMAIN):
        return None
    if name == nvidia.GPU_RESOURCE:
        return GpuResource(name, "gpu", vendor=_VENDOR)
    if name == nvidia.GPU_RESOURCE + nvidia.SHARED_SUFFIX:
        return GpuResource(name, "shared", shared=True, vendor=_VENDOR)
    base, shared = (
        (name[: -len(nvidia.SHARED_SUFFIX)], True) if name.endswith(nvidia.SHARED_SUFFIX) else (name, False)
    )
    m = nvidia.MIG_RESOURCE.match(base)
    if m:
        return GpuResource(name, "mig", profile=m.group("profile"), shared=shared, vendor=_VENDOR)
    other = resource_scheme(name)
    if other is not None:
        reason = other.manual("NVIDIA's DRA driver", nvidia.SCHEME_ALTERNATIVES)
        return GpuResource(name, "manual", reason=reason, vendor=_VENDOR)
    return GpuResource(name, "manual", reason="unknown NVIDIA resource name", vendor=_VENDOR)

"""What an NVIDIA device-plugin resource name means: a whole GPU, a shared (time-sliced/MPS) GPU, a MIG profile,
or something that has no DRA counterpart and must be a manual item."""

from __future__ import annotations

from kubedra.k8s.gpuschemes import resource_scheme
from kubedra.vendors.base import GpuResource
from kubedra.vendors.nvidia import names as nvidia

__all__ = ["GpuResource", "classify"]


def classify(name: str) -> GpuResource | None:
    """What a resource name means for the migration; ``None`` when it is not an NVIDIA GPU resource."""
    if not name.startswith(nvidia.RESOURCE_DOMAIN):
        return None
    if name == nvidia.GPU_RESOURCE:
        return GpuResource(name, "gpu")
    if name == nvidia.GPU_RESOURCE + nvidia.SHARED_SUFFIX:
        return GpuResource(name, "shared", shared=True)
    base, shared = (
        (name[: -len(nvidia.SHARED_SUFFIX)], True) if name.endswith(nvidia.SHARED_SUFFIX) else (name, False)
    )
    m = nvidia.MIG_RESOURCE.match(base)
    if m:
        return GpuResource(name, "mig", profile=m.group("profile"), shared=shared)
    other = resource_scheme(name)
    if other is not None:
        return GpuResource(name, "manual", reason=other.manual())
    return GpuResource(name, "manual", reason="unknown NVIDIA resource name")

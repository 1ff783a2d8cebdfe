"""What names a vendor's GPU in a custom resource's own fields, as the vendors pass it down to
:func:`kubedra.k8s.workloads.custom_resource_gpu_fields` (k8s sits below the vendors and spells none): kept apart
from :mod:`kubedra.k8s.workloads` so that the vendor registry, which builds it, does not load the workload facts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuNames:
    """How the vendors' GPUs are named in a custom resource's own fields: their device-plugin resource domains (a key
    ``nvidia.com/...``) and whether a string value names one of their GPU resources. The vendors know both; callers
    pass :func:`kubedra.vendors.gpu_names` (k8s sits below the vendors)."""

    domains: tuple[str, ...]
    names_gpu: Callable[[str], bool]

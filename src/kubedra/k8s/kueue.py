"""Kueue's configuration objects (facts in ``data/workloads.yaml`` ``kueue``): queues, flavors and quotas.

A ClusterQueue, LocalQueue, ResourceFlavor, Cohort... is configuration, not a pod creator and not a device
request: a ClusterQueue's ``nvidia.com/gpu`` quota caps how many GPUs the workloads Kueue admits through it may
request in all. Every verb describes it as that (audit ``gpu.kueue-quota``, a migrate warning, a simulate note)
instead of treating it as a GPU request hidden in a custom resource's fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubedra.k8s.gpunames import GpuNames
from kubedra.k8s.workloads import Path, api_group, deep_gpu_fields, facts, get_path


@dataclass(frozen=True)
class GpuQuota:
    """One GPU resource of a ClusterQueue's (or Cohort's) resource group, in one flavor."""

    path: Path  # to the quota's resource entry (…resources[k].name)
    flavor: str
    resource: str
    nominal: Any  # nominalQuota as written

    def describe(self) -> str:
        return f"{self.resource}: {self.nominal} (flavor {self.flavor})"


def is_config(obj: Mapping[str, Any]) -> bool:
    """A Kueue configuration object (ClusterQueue, LocalQueue, ResourceFlavor...): never a pod creator."""
    kueue = facts()["kueue"]
    return (
        api_group(str(obj.get("apiVersion") or "")) == kueue["group"]
        and obj.get("kind") in kueue["config_kinds"]
    )


def gpu_quotas(obj: Mapping[str, Any], names: GpuNames) -> list[GpuQuota]:
    """The GPU quotas of a ClusterQueue or Cohort: each ``spec.resourceGroups[i].flavors[j].resources[k]``
    whose ``name`` is a GPU resource (the names :func:`~kubedra.k8s.workloads.deep_gpu_fields` flags)."""
    if not is_config(obj) or obj.get("kind") not in facts()["kueue"]["quota_kinds"]:
        return []
    out = []
    for path, value in deep_gpu_fields(obj, names):
        if (
            len(path) != 8
            or path[:2] != ("spec", "resourceGroups")
            or path[3::2] != ("flavors", "resources", "name")
        ):
            continue  # coveredResources lists the same names: the quota entries describe them
        flavor = get_path(obj, (*path[:5], "name"))
        entry = get_path(obj, path[:-1])
        nominal = entry.get("nominalQuota") if isinstance(entry, Mapping) else None
        out.append(GpuQuota(path, str(flavor or "?"), str(value), nominal))
    return out


def quota_message(kind: str, quotas: list[GpuQuota]) -> str:
    """What a GPU quota means for the migration, one line."""
    kueue = facts()["kueue"]
    return (
        f"Kueue {kind} quota for {'; '.join(q.describe() for q in quotas)}: a quota, not a pod creator nor a GPU "
        f"request. Workloads left on {quotas[0].resource} (--gpu-strategy extended-resource, or DeviceClass "
        "extendedResourceName) are charged to it as before; a workload migrated to ResourceClaimTemplates is charged "
        f"to it only through {kueue['device_class_mappings']} in the Kueue Configuration (its DeviceClass mapped to "
        f"this resource name), which kubedra cannot see ({kueue['dra_docs']})"
    )


def not_simulated(quotas: list[GpuQuota]) -> str:
    """What simulate says of a GPU quota (after the object's name)."""
    return f"is a Kueue quota ({'; '.join(q.describe() for q in quotas)}), not a pod creator: queue quotas are not simulated"

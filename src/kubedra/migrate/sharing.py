"""The device plugin's sharing ConfigMap (time-slicing / MPS) → DeviceClasses with the same sharing config.

The NVIDIA device plugin reads ``sharing.timeSlicing.resources[{name, replicas}]`` (and
``sharing.mps.resources``), usually from a ConfigMap whose data values are the config file as a string.
In DRA, sharing is per claim: containers that reference one allocated GPU share it, and the
``GpuConfig``/``MigDeviceConfig`` opaque config selects TimeSlicing or MPS. The ``replicas``
oversubscription across *pods* has no per-pod equivalent, which is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubedra.vendors.nvidia import names as nvidia


@dataclass
class SharedClass:
    resource: str  # the advertised name (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-...)
    data_key: str
    device_class: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    replicas: int = 1  # pods the device plugin let share one GPU (sharing.*.resources[].replicas)
    strategy: str = "TimeSlicing"  # or MPS
    who: str = (
        "the device plugin"  # what shared the GPUs: the device plugin's config, or a platform's node pool
    )

    @property
    def name(self) -> str:
        return str(self.device_class["metadata"]["name"])


def _config_of(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        return value
    if not isinstance(value, str) or "sharing" not in value:
        return None
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        return None
    return parsed if isinstance(parsed, Mapping) else None


def _plugin_config(value: Any) -> Mapping[str, Any] | None:
    """A device-plugin config file (``version``/``flags``/``sharing``), as a mapping or a YAML string."""
    if isinstance(value, str):
        if not any(k in value for k in ("version:", "flags:", "sharing:")):
            return None
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            return None
    if isinstance(value, Mapping) and ("sharing" in value or "flags" in value or "version" in value):
        return value
    return None


def config_keys(obj: Mapping[str, Any]) -> list[str]:
    """The named device-plugin configs of a ConfigMap (with or without sharing), in data order."""
    data = obj.get("data")
    if not isinstance(data, Mapping):
        return []
    return [str(k) for k, v in data.items() if _plugin_config(v) is not None]


def is_sharing_configmap(obj: Mapping[str, Any]) -> bool:
    if obj.get("kind") != "ConfigMap" or obj.get("apiVersion") != "v1":
        return False
    data = obj.get("data")
    return isinstance(data, Mapping) and any(_sharing(_config_of(v)) for v in data.values())


def _sharing(cfg: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if not cfg:
        return None
    sharing = cfg.get("sharing")
    if isinstance(sharing, Mapping) and (
        isinstance(sharing.get("timeSlicing"), Mapping) or isinstance(sharing.get("mps"), Mapping)
    ):
        return sharing
    return None


def plan(obj: Mapping[str, Any], *, extended_resource: bool, interval: str = "Default") -> list[SharedClass]:
    """DeviceClasses equivalent to the sharing config in a device-plugin ConfigMap."""
    data = obj.get("data")
    if not isinstance(data, Mapping):
        return []
    configs = [(str(k), _sharing(_config_of(v))) for k, v in data.items()]
    configs = [(k, s) for k, s in configs if s is not None]
    out: list[SharedClass] = []
    for key, sharing in configs:
        assert sharing is not None
        for mode, strategy in (("timeSlicing", "TimeSlicing"), ("mps", "MPS")):
            block = sharing.get(mode)
            if not isinstance(block, Mapping):
                continue
            rename = bool(block.get("renameByDefault"))
            for res in block.get("resources") or []:
                if not isinstance(res, Mapping) or not res.get("name"):
                    continue
                rname = str(res["name"])
                replicas = int(res.get("replicas") or 0) if str(res.get("replicas", "0")).isdigit() else 0
                advertised = rname + (nvidia.SHARED_SUFFIX if rename or res.get("rename") else "")
                m = nvidia.MIG_RESOURCE.match(rname)
                mig = m is not None
                base = f"mig-{nvidia.dns_label(m.group('profile').replace('.', '-'))}" if m else "gpu"
                suffix = "time-slicing" if strategy == "TimeSlicing" else "mps"
                keypart = f"-{nvidia.dns_label(key)}" if len(configs) > 1 else ""
                class_name = f"{base}-{suffix}{keypart}.{nvidia.DRIVER}"
                selector = (
                    nvidia.class_selector("mig", m.group("profile")) if m else nvidia.class_selector("gpu")
                )
                params = nvidia.sharing_parameters(strategy, mig=mig, interval=interval, replicas=replicas)
                spec: dict[str, Any] = {
                    "selectors": [{"cel": {"expression": selector}}],
                    "config": [{"opaque": nvidia.opaque(params)}],
                }
                warnings = [
                    f"{rname} replicas: {replicas} — the device plugin let {replicas} pods share one GPU; with DRA "
                    f"only pods that reference the same ResourceClaim share it (class {class_name} sets the sharing "
                    "strategy): with --gpu-strategy claim-template Deployments become groups of "
                    f"{replicas} pods sharing one ResourceClaim, Jobs and StatefulSets of at most {replicas} pods "
                    "share one; other workloads of several pods are manual items",
                    f"NVIDIA DRA driver feature gate {'TimeSlicingSettings' if strategy == 'TimeSlicing' else 'MPSSupport'}"
                    " (alpha, off by default) must be enabled for this config",
                ]
                if block.get("failRequestsGreaterThanOne"):
                    warnings.append("failRequestsGreaterThanOne has no DRA equivalent; dropped")
                if strategy == "MPS" and replicas > 1:
                    warnings.append(
                        f"MPS replicas {replicas} -> defaultActiveThreadPercentage {max(1, 100 // replicas)}; "
                        "set mpsConfig.defaultPinnedDeviceMemoryLimit by hand if memory was split too"
                    )
                if extended_resource and advertised != nvidia.GPU_RESOURCE:
                    spec["extendedResourceName"] = advertised
                device_class = {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "DeviceClass",
                    "metadata": {"name": class_name},
                    "spec": spec,
                }
                out.append(SharedClass(advertised, key, device_class, warnings, max(replicas, 1), strategy))
    return out


def platform_class(describe: str, base: str, clients: int, *, interval: str = "Default") -> SharedClass:
    """The DeviceClass for a platform's time-sharing node pool (GKE ``time-sharing`` with up to ``clients``
    containers per GPU, ``data/platforms.yaml``): TimeSlicing, groups of ``clients`` pods per shared claim."""
    class_name = f"{base}-{clients}.{nvidia.DRIVER}"
    params = nvidia.sharing_parameters("TimeSlicing", interval=interval)
    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": class_name},
        "spec": {
            "selectors": [{"cel": {"expression": nvidia.class_selector("gpu")}}],
            "config": [{"opaque": nvidia.opaque(params)}],
        },
    }
    warnings = [
        f"{describe}: up to {clients} containers shared one GPU; with DRA only pods that reference the same "
        f"ResourceClaim share it (DeviceClass {class_name} sets TimeSlicing): with --gpu-strategy claim-template "
        f"Deployments become groups of {clients} pods sharing one ResourceClaim, Jobs and StatefulSets of at most "
        f"{clients} pods share one; other workloads of several pods are manual items",
        f"{describe}: those labels are GKE's time-sharing node pool settings, served by GKE's own device plugin; "
        "the DRA node pool these pods move to must carry the labels, or remove them from the nodeSelector",
    ]
    return SharedClass(
        nvidia.GPU_RESOURCE, "gke", device_class, warnings, clients, "TimeSlicing", "GKE time-sharing"
    )

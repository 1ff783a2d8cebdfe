"""The NVIDIA device plugin's sharing ConfigMap (time-slicing / MPS) → DeviceClasses with the same sharing config,
and what the plugin's DaemonSet or the GPU Operator's ClusterPolicy says about that ConfigMap (migrate's
:mod:`kubedra.migrate.sharing_scope` decides with it which config applies to a pod).

The NVIDIA device plugin reads ``sharing.timeSlicing.resources[{name, replicas}]`` (and
``sharing.mps.resources``), usually from a ConfigMap whose data values are the config file as a string.
In DRA, sharing is per claim: containers that reference one allocated GPU share it, and the
``GpuConfig``/``MigDeviceConfig`` opaque config selects TimeSlicing or MPS. The ``replicas``
oversubscription across *pods* has no per-pod equivalent, which is reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from kubedra.k8s import namespaces
from kubedra.vendors.base import SharedClass, SharingConfigRef
from kubedra.vendors.nvidia import daemonsets
from kubedra.vendors.nvidia import names as nvidia

# k8s-device-plugin cmd/config-manager: the node label naming a node's config, and the Helm chart's fallbacks
NODE_LABEL = "nvidia.com/device-plugin.config"
NAMED_FALLBACK = "default"
DEFAULT_FALLBACKS = ("named", "single")  # the Helm chart's config.fallbackStrategies


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
                    f"NVIDIA DRA driver feature gate {nvidia.SHARING_GATES[strategy]}"
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


def sharing_class(name_base: str, strategy: str, *, interval: str = "Default") -> dict[str, Any]:
    """DeviceClass ``<name_base>.gpu.nvidia.com``: whole GPUs shared by ``strategy``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": f"{name_base}.{nvidia.DRIVER}"},
        "spec": {
            "selectors": [{"cel": {"expression": nvidia.class_selector("gpu")}}],
            "config": [{"opaque": nvidia.opaque(nvidia.sharing_parameters(strategy, interval=interval))}],
        },
    }


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _env(container: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in _list(container.get("env")):
        if isinstance(e, Mapping) and e.get("name") and isinstance(e.get("value"), str | int):
            out[str(e["name"])] = str(e["value"])
    for a in [*_list(container.get("args")), *_list(container.get("command"))]:
        if isinstance(a, str) and a.startswith("--default-config="):
            out["DEFAULT_CONFIG"] = a.split("=", 1)[1]
        if isinstance(a, str) and a.startswith("--node-label="):
            out["NODE_LABEL"] = a.split("=", 1)[1]
    return out


def config_refs(objects: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], SharingConfigRef]:
    """(namespace, ConfigMap name) -> what a plugin DaemonSet or ClusterPolicy in the input says about it."""
    refs: dict[tuple[str, str], SharingConfigRef] = {}
    for obj in objects:
        kind = obj.get("kind")
        ns = namespaces.effective(_map(obj.get("metadata")).get("namespace"))
        if kind == "ClusterPolicy" and str(obj.get("apiVersion", "")).startswith(nvidia.RESOURCE_DOMAIN):
            cfg = _map(_map(_map(obj.get("spec")).get("devicePlugin")).get("config"))
            if cfg.get("name"):
                # the GPU Operator puts the ConfigMap in its own namespace; match it by name in any namespace
                refs[("*", str(cfg["name"]))] = SharingConfigRef(
                    default=str(cfg.get("default") or "") or None,
                    fallbacks=("empty",),
                    node_selector={},
                    label="",
                )
            continue
        if kind != "DaemonSet":
            continue
        component = daemonsets.daemonset_component(obj)
        if component is not None and component.key != "device-plugin":
            continue  # GFD and the MPS daemon read the same configs, but the device plugin's nodes are the scope
        pod = _map(_map(_map(obj.get("spec")).get("template")).get("spec"))
        containers = [
            c
            for c in [*_list(pod.get("initContainers")), *_list(pod.get("containers"))]
            if isinstance(c, Mapping)
        ]
        envs = [_env(c) for c in containers]
        manager = [
            e
            for c, e in zip(containers, envs, strict=True)
            if "config-manager" in " ".join(map(str, _list(c.get("command")))) or "CONFIG_FILE_SRCDIR" in e
        ]
        plugin = any(
            "k8s-device-plugin" in str(c.get("image", "")) or "nvidia-device-plugin" in str(c.get("name", ""))
            for c in containers
        )
        if not manager and not plugin:
            continue
        selector = _map(pod.get("nodeSelector"))
        for v in _list(pod.get("volumes")):
            cm = v.get("configMap") if isinstance(v, Mapping) else None
            if not isinstance(cm, Mapping) or not cm.get("name"):
                continue
            env = manager[0] if manager else (envs[0] if envs else {})
            fallbacks = [f.strip() for f in env.get("FALLBACK_STRATEGIES", "").split(",") if f.strip()]
            refs[(ns, str(cm["name"]))] = SharingConfigRef(
                default=env.get("DEFAULT_CONFIG") or None,
                fallbacks=tuple(fallbacks) if manager else ("single",),
                node_selector={str(k): str(x) for k, x in selector.items()},
                label=env.get("NODE_LABEL") or NODE_LABEL,
            )
    return refs


def _default_of(
    keys: Sequence[str], explicit: str | None, fallbacks: Sequence[str]
) -> tuple[str | None, str]:
    if explicit:
        return explicit, f"default config {explicit!r} (DEFAULT_CONFIG / config.default)"
    for f in fallbacks:
        if f == "named" and NAMED_FALLBACK in keys:
            return NAMED_FALLBACK, "default config 'default' (the plugin's 'named' fallback)"
        if f == "single" and len(keys) == 1:
            return keys[0], f"default config {keys[0]!r} (the only config: the plugin's 'single' fallback)"
    return None, "no default config: nodes without the label get no sharing"


def defaults(keys: Sequence[str], ref: SharingConfigRef | None) -> tuple[tuple[str | None, ...], str]:
    """The configs (of ``keys``) a node without the config label may use (None: no config), and why: the default
    the plugin's DaemonSet or ClusterPolicy names, else the config-manager's fallbacks."""
    if ref is not None:
        default, why = _default_of(keys, ref.default, ref.fallbacks)
        return (default,), why
    # Helm chart (fallbacks named, single) or GPU Operator (fallback empty): not in the input
    default, why = _default_of(keys, None, DEFAULT_FALLBACKS)
    if default is None:
        return (default,), why
    return (default, None), (
        f"nodes without the label use {default!r} if the plugin was installed with its Helm chart "
        "(fallbacks named, single) but no config if by the GPU Operator without "
        "devicePlugin.config.default (fallback empty); neither is in the input"
    )

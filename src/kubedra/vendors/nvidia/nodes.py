"""core/v1 Node objects for GPU nodes, as the kubelet, GPU Feature Discovery and the NVIDIA device
plugin leave them.

Labels follow GPU Feature Discovery (NVIDIA/k8s-device-plugin ``internal/lm``): ``nvidia.com/gpu.*``
for the full GPU, ``nvidia.com/mig-<profile>.*`` under the mixed MIG strategy, CUDA/driver versions,
plus the GPU Operator's ``nvidia.com/gpu.present`` and ``nvidia.com/mig.config`` and NFD's PCI label.

Extended resources (device-plugin nodes only; a DRA node advertises none, its GPUs are in
ResourceSlices):
- ``full``: ``nvidia.com/gpu: N``;
- ``time-slicing:r`` / ``mps:r``: ``nvidia.com/gpu: N*r``, or ``nvidia.com/gpu.shared`` with
  ``renameByDefault``;
- ``mig-static`` with strategy ``mixed``: ``nvidia.com/mig-<profile>: k`` per profile (``+`` becomes
  ``.``: ``nvidia.com/mig-1g.10gb.me``) and ``nvidia.com/gpu`` for GPUs without MIG; strategy
  ``single``: ``nvidia.com/gpu`` = MIG devices (every GPU one profile); ``none``: whole GPUs;
- ``mig-dynamic`` has no device-plugin equivalent: InputError.

Node capacity comes from the model's node shape, scaled to the GPU count; allocatable subtracts the
kubelet's default hard eviction thresholds (memory 100Mi, nodefs 10%).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Any

from kubedra.errors import InputError
from kubedra.k8s.quantity import Quantity, parse_quantity
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.vendors.nvidia import identity
from kubedra.vendors.nvidia.dra import DriverInfo, check_node_name
from kubedra.vendors.nvidia.layouts import GpuLayout
from kubedra.vendors.nvidia.models import GpuModel, MigProfile, NodeShape, get_model
from kubedra.vendors.nvidia.modes import GpuMode, parse_gpu_mode
from kubedra.vendors.nvidia.specs import k8s_minor

POOL_LABEL = "kubedra.io/node-pool"
GFD_TIMESTAMP = "1767225600"  # nvidia.com/gfd.timestamp is the labelling time; fixed for stable output
HEARTBEAT = "2026-01-01T00:00:00Z"
MIG_STRATEGIES = ("none", "single", "mixed")

_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)


_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def sanitise(text: str) -> str:
    """GFD's sanitise(): drop characters outside [A-Za-z0-9-_. ], join words with '-'."""
    return "-".join(re.sub(r"[^A-Za-z0-9\-_. ]", "", text).split())


def _valid_label_key(key: str) -> bool:
    name = key.rpartition("/")[2]
    return len(name) <= 63 and bool(_LABEL_KEY.match(key))


def node_pool_name(model: GpuModel, gpus: int) -> str:
    """Default ``kubedra.io/node-pool`` value: ``<model>-x<gpus>`` (``h100-80gb-x8``)."""
    return f"{model.slug}-x{gpus}"


def scaled_shape(model: GpuModel, gpus: int, shape: NodeShape | None = None) -> NodeShape:
    """The model's node shape with cpu and memory scaled to ``gpus`` GPUs; an explicit ``shape`` is used as is."""
    base = shape or model.node
    if shape is not None or gpus == base.gpus:
        return replace(base, gpus=gpus)
    mem = parse_quantity(base.memory)
    gib = max(1, -(-mem.value() * gpus // base.gpus // 2**30))
    return replace(base, gpus=gpus, cpu=max(1, -(-base.cpu * gpus // base.gpus)), memory=f"{gib}Gi")


def _mib_label(value_mib: int) -> str:
    return str(value_mib)


def _version_labels(driver: DriverInfo) -> dict[str, str]:
    parts = driver.driver_version.split(".")
    if not 2 <= len(parts) <= 3:
        raise InputError(f"invalid NVIDIA driver version {driver.driver_version!r} (expected X.Y[.Z])")
    major, minor, rev = parts[0], parts[1], parts[2] if len(parts) > 2 else ""
    cuda = driver.cuda_driver_version.split(".")
    cmaj, cmin = str(int(cuda[0])), str(int(cuda[1]) if len(cuda) > 1 else 0)
    return {
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev,
        "nvidia.com/cuda.runtime.major": cmaj,
        "nvidia.com/cuda.runtime.minor": cmin,
        "nvidia.com/cuda.driver-version.major": major,
        "nvidia.com/cuda.driver-version.minor": minor,
        "nvidia.com/cuda.driver-version.revision": rev,
        "nvidia.com/cuda.driver-version.full": driver.driver_version,
        "nvidia.com/cuda.runtime-version.major": cmaj,
        "nvidia.com/cuda.runtime-version.minor": cmin,
        "nvidia.com/cuda.runtime-version.full": f"{cmaj}.{cmin}",
    }


def _mig_attribute_labels(prefix: str, profile: MigProfile) -> dict[str, str]:
    return {
        f"{prefix}.memory": _mib_label(profile.memory_mib),
        f"{prefix}.multiprocessors": str(profile.multiprocessors),
        f"{prefix}.slices.gi": str(profile.compute_slices),
        f"{prefix}.slices.ci": str(profile.compute_slices),
        f"{prefix}.engines.copy": str(profile.copy_engines),
        f"{prefix}.engines.decoder": str(profile.decoders),
        f"{prefix}.engines.encoder": str(profile.encoders),
        f"{prefix}.engines.jpeg": str(profile.jpeg_engines),
        f"{prefix}.engines.ofa": str(profile.ofa_engines),
    }


def _mig_profile_counts(layouts: list[GpuLayout]) -> Counter[str]:
    return Counter(p.profile.name for layout in layouts if layout for p in layout)


def mig_resource_name(profile: str) -> str:
    """The device plugin's mixed-strategy resource: ``nvidia.com/mig-1g.10gb`` (``+`` -> ``.``)."""
    return "nvidia.com/mig-" + profile.replace("+", ".")


def _mig_config_label(mode: GpuMode, model: GpuModel) -> str | None:
    """GPU Operator mig-manager's ``nvidia.com/mig.config`` (None: not managed, e.g. DynamicMIG)."""
    if not model.mig_capable or mode.kind == "mig-dynamic":
        return None
    if mode.kind != "mig-static":
        return "all-disabled"
    if len(mode.layout) == 1 and mode.layout[0].named:
        return mode.layout[0].named
    return "custom"


def gfd_labels(
    model: GpuModel,
    layouts: list[GpuLayout],
    mode: GpuMode,
    *,
    mig_strategy: str = "none",
    rename_by_default: bool = False,
    driver: DriverInfo | None = None,
    machine: str = "unknown",
) -> dict[str, str]:
    """Labels GPU Feature Discovery (plus GPU Operator / NFD basics) puts on a node."""
    driver = driver or DriverInfo()
    gpus = len(layouts)
    labels: dict[str, str] = {
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gfd.timestamp": GFD_TIMESTAMP,
        "nvidia.com/gpu.machine": sanitise(machine),
        "nvidia.com/gpu.mode": "compute",
    }
    labels.update(_version_labels(driver))
    labels["nvidia.com/mig.capable"] = str(model.mig_capable).lower()
    labels["nvidia.com/mps.capable"] = str(mode.kind == "mps").lower()

    # full-GPU labeler: with sharing when any GPU has MIG off, without (replicas 0) when all have MIG on
    any_full = any(layout is None for layout in layouts)
    shared = mode.is_shared and any_full
    product = sanitise(model.product_name)
    major, minor = model.compute_capability.split(".")
    labels.update(
        {
            "nvidia.com/gpu.product": f"{product}-SHARED" if shared and not rename_by_default else product,
            "nvidia.com/gpu.count": str(gpus),
            "nvidia.com/gpu.replicas": str(mode.replicas if shared else (1 if any_full else 0)),
            "nvidia.com/gpu.sharing-strategy": mode.kind if shared else "none",
            "nvidia.com/gpu.memory": _mib_label(model.memory_mib),
            "nvidia.com/gpu.family": model.gfd_family,
            "nvidia.com/gpu.compute.major": major,
            "nvidia.com/gpu.compute.minor": minor,
        }
    )

    if mig_strategy != "none":
        labels["nvidia.com/mig.strategy"] = mig_strategy
        counts = _mig_profile_counts(layouts)
        if mig_strategy == "single" and counts:
            name = next(iter(counts))
            profile = model.profile(name)
            labels.update(
                {
                    "nvidia.com/gpu.product": f"{product}-MIG-{sanitise(name)}",
                    "nvidia.com/gpu.count": str(counts[name]),
                    "nvidia.com/gpu.replicas": "1",
                    "nvidia.com/gpu.sharing-strategy": "none",
                }
            )
            labels.update(_mig_attribute_labels("nvidia.com/gpu", profile))
        elif mig_strategy == "mixed":
            for name, n in counts.items():
                profile = model.profile(name)
                prefix = "nvidia.com/mig-" + name
                # GFD names these labels after the raw profile; "1g.10gb+me" yields invalid label keys
                # that NFD drops, so they never reach the Node.
                if not _valid_label_key(prefix + ".count"):
                    continue
                labels.update(
                    {
                        f"{prefix}.count": str(n),
                        f"{prefix}.replicas": "1",
                        f"{prefix}.sharing-strategy": "none",
                        f"{prefix}.product": f"{product}-MIG-{sanitise(name)}",
                    }
                )
                labels.update(_mig_attribute_labels(prefix, profile))

    config = _mig_config_label(mode, model)
    if config is not None:
        labels["nvidia.com/mig.config"] = config
        labels["nvidia.com/mig.config.state"] = "success"
    return labels


def device_plugin_resources(
    model: GpuModel,
    layouts: list[GpuLayout],
    mode: GpuMode,
    *,
    mig_strategy: str = "mixed",
    rename_by_default: bool = False,
) -> dict[str, int]:
    """Extended resources the NVIDIA device plugin advertises on the node (name -> count)."""
    if mode.kind == "mig-dynamic":
        raise InputError(
            "mig-dynamic has no NVIDIA device plugin equivalent (MIG devices must exist before the plugin "
            "starts); use mig-static:<layout> for the device-plugin side"
        )
    if mig_strategy not in MIG_STRATEGIES:
        raise InputError(
            f"unknown MIG strategy {mig_strategy!r} (expected one of {', '.join(MIG_STRATEGIES)})"
        )
    gpus = len(layouts)
    full = sum(1 for layout in layouts if layout is None)
    if mode.is_shared:
        name = "nvidia.com/gpu.shared" if rename_by_default else "nvidia.com/gpu"
        return {name: gpus * mode.replicas}
    if mode.kind == "full" or mig_strategy == "none":
        return {"nvidia.com/gpu": gpus}
    counts = _mig_profile_counts(layouts)
    if mig_strategy == "single":
        if full or len(counts) != 1 or any(layout == () for layout in layouts):
            raise InputError(
                "MIG strategy single needs every GPU in MIG mode with instances of one profile "
                f"(got {dict(counts) or 'no MIG devices'}{f' and {full} GPUs without MIG' if full else ''}); "
                "use the mixed strategy"
            )
        return {"nvidia.com/gpu": sum(counts.values())}
    out: dict[str, int] = {}
    if full:
        out["nvidia.com/gpu"] = full
    for name in sorted(counts):
        out[mig_resource_name(name)] = counts[name]
    return out


def _node(
    node_name: str, labels: dict[str, str], shape: NodeShape, extended: dict[str, int], k8s_version: str
) -> dict[str, Any]:
    minor = k8s_minor(k8s_version)
    memory = parse_quantity(shape.memory)
    storage = parse_quantity(shape.ephemeral_storage)
    capacity: dict[str, str] = {
        "cpu": str(shape.cpu),
        "ephemeral-storage": storage.canonical(),
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": memory.canonical(),
        "pods": str(shape.pods),
    }
    allocatable = dict(capacity)
    allocatable["memory"] = memory.sub(Quantity.from_int(100 * 2**20, "BinarySI")).canonical()
    allocatable["ephemeral-storage"] = Quantity.from_int(storage.value() * 9 // 10, "DecimalSI").canonical()
    for name, count in extended.items():
        capacity[name] = allocatable[name] = str(count)
    conditions = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    uid = identity.node_uid(node_name)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "uid": uid, "labels": {k: labels[k] for k in sorted(labels)}},
        "spec": {},
        "status": {
            "capacity": {k: capacity[k] for k in sorted(capacity)},
            "allocatable": {k: allocatable[k] for k in sorted(allocatable)},
            "conditions": [
                {
                    "type": t,
                    "status": s,
                    "reason": r,
                    "message": m,
                    "lastHeartbeatTime": HEARTBEAT,
                    "lastTransitionTime": HEARTBEAT,
                }
                for t, s, r, m in conditions
            ],
            "addresses": [
                {"type": "InternalIP", "address": identity.internal_ip(node_name)},
                {"type": "Hostname", "address": node_name},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": str(identity.node_uid(node_name + "/boot")),
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.8.0-85-generic",
                "kubeProxyVersion": "",
                "kubeletVersion": f"v1.{minor}.0",
                "machineID": uid.replace("-", ""),
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.3 LTS",
                "systemUUID": uid,
            },
        },
    }


def _labels(node_name: str, pool: str, gfd: dict[str, str], extra: dict[str, str] | None) -> dict[str, str]:
    """Kubelet's well-known labels, the node-pool label, GFD's labels, then the caller's (which win)."""
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": node_name,
        "kubernetes.io/os": "linux",
        POOL_LABEL: pool,
    }
    labels.update(gfd)
    labels.update({k: str(v) for k, v in (extra or {}).items()})
    for k, v in labels.items():
        if not _valid_label_key(k):
            raise InputError(f"invalid label key {k!r}")
        if len(v) > 63 or not _LABEL_VALUE.match(v):
            raise InputError(f"invalid value {v!r} for label {k}")
    return labels


def _check_gpus(gpus: int) -> None:
    if gpus < 1:
        raise InputError(f"a GPU node needs at least one GPU (got {gpus})")


def device_plugin_node(  # noqa: PLR0913 - a node's facts, options keyword-only
    node_name: str,
    model: str | GpuModel,
    gpus: int,
    mode: str | GpuMode = "full",
    *,
    mig_strategy: str | None = None,
    rename_by_default: bool = False,
    shape: NodeShape | None = None,
    driver: DriverInfo | None = None,
    pool: str | None = None,
    labels: dict[str, str] | None = None,
    k8s_version: str = DEFAULT_TARGET,
) -> dict[str, Any]:
    """A Node as the NVIDIA device plugin + GFD leave it (extended resources ``nvidia.com/...``).

    ``mig_strategy`` defaults to ``mixed`` for MIG modes and ``none`` otherwise.
    """
    check_node_name(node_name)
    gpu_model = get_model(model)
    gpu_mode = parse_gpu_mode(mode)
    _check_gpus(gpus)
    strategy = mig_strategy or ("mixed" if gpu_mode.is_mig else "none")
    layouts = gpu_mode.gpu_layouts(gpu_model, gpus)
    extended = device_plugin_resources(
        gpu_model, layouts, gpu_mode, mig_strategy=strategy, rename_by_default=rename_by_default
    )
    node_shape = scaled_shape(gpu_model, gpus, shape)
    gfd = gfd_labels(
        gpu_model,
        layouts,
        gpu_mode,
        mig_strategy=strategy,
        rename_by_default=rename_by_default,
        driver=driver,
        machine=node_shape.machine,
    )
    all_labels = _labels(node_name, pool or node_pool_name(gpu_model, gpus), gfd, labels)
    return _node(node_name, all_labels, node_shape, extended, k8s_version)


def dra_node(  # noqa: PLR0913 - a node's facts, options keyword-only
    node_name: str,
    model: str | GpuModel,
    gpus: int,
    mode: str | GpuMode = "full",
    *,
    shape: NodeShape | None = None,
    driver: DriverInfo | None = None,
    pool: str | None = None,
    labels: dict[str, str] | None = None,
    k8s_version: str = DEFAULT_TARGET,
) -> dict[str, Any]:
    """A Node of a DRA cluster: same kubelet/GFD labels, no GPU extended resources (GPUs are in slices)."""
    check_node_name(node_name)
    gpu_model = get_model(model)
    gpu_mode = parse_gpu_mode(mode)
    _check_gpus(gpus)
    layouts = gpu_mode.gpu_layouts(gpu_model, gpus)
    node_shape = scaled_shape(gpu_model, gpus, shape)
    # GFD without the device plugin's sharing config: sharing is per claim in DRA
    plain = GpuMode("full") if gpu_mode.is_shared else gpu_mode
    gfd = gfd_labels(gpu_model, layouts, plain, driver=driver, machine=node_shape.machine)
    all_labels = _labels(node_name, pool or node_pool_name(gpu_model, gpus), gfd, labels)
    return _node(node_name, all_labels, node_shape, {}, k8s_version)

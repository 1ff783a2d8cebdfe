"""Fake GPU nodes for the test control plane: Node objects and the ResourceSlices/DeviceClasses the
NVIDIA DRA driver (``gpu.nvidia.com``) would publish for them, as ``resource.k8s.io/v1`` dicts.

Three node shapes (8 GPUs each):

``a100-80gb-static-mig``   8×A100-SXM4-80GB with pre-created MIG devices (mig-parted "all-balanced":
                           2×1g.10gb, 1×2g.20gb, 1×3g.40gb per GPU), one slice per node
``h100-80gb``              8×H100 80GB HBM3 full GPUs, one slice per node
``h100-80gb-dynamic-mig``  8×H100 80GB HBM3 with DynamicMIG: per GPU the full GPU plus every
                           (profile, placement) = 26 devices consuming shared counters; Kubernetes 1.35+
                           split layout: one counters-only slice + one device slice per GPU

Names, attributes and capacities follow the driver (NVIDIA/k8s-dra-driver-gpu ``cmd/gpu-kubelet-plugin``,
as :mod:`kubedra.vendors.nvidia.dra` models it). With ``dra=False`` a node is a device-plugin node instead:
``nvidia.com/gpu`` in capacity/allocatable and no slices.

This is a minimal stand-in kept in ``kubedra.testing`` until the catalogue in ``kubedra.vendors.nvidia``
generates the same objects; the two should then be unified.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from kubedra.k8s.versions import DEFAULT_TARGET

KUBELET_VERSION = f"v{DEFAULT_TARGET}.2"  # what fake nodes report: a patch of the default target

DRIVER = "gpu.nvidia.com"
RESOURCE_API = "resource.k8s.io/v1"
MEMORY_SLICES = 8
MAX_DEVICES_PER_SLICE = 64  # with counters ("advanced features"), ResourceSliceMaxDevicesWithAdvancedFeatures

_DRIVER_VERSION = "570.133.20"  # a semver without leading zeros: version attributes must parse
_CUDA_DRIVER_VERSION = "12.8.0"
# PCI bus numbers of the 8 GPUs on an HGX baseboard.
_PCI_BUSES = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")


@dataclass(frozen=True)
class Profile:
    name: str
    profile_id: int
    size: int  # memory slices
    starts: tuple[int, ...]
    memory_mib: int
    multiprocessors: int
    copy_engines: int
    decoders: int
    jpeg_engines: int
    ofa_engines: int
    encoders: int = 0


@dataclass(frozen=True)
class Gpu:
    product_name: str
    architecture: str
    compute_capability: str  # semver
    memory_mib: int  # whole-board memory as NVML reports it (full-GPU capacity outside DynamicMIG)
    profiles: tuple[Profile, ...]
    node_label: str


_ONE = (0, 1, 2, 3, 4, 5, 6)
A100_80GB = Gpu(
    "NVIDIA A100-SXM4-80GB",
    "Ampere",
    "8.0.0",
    81920,
    (
        Profile("1g.10gb", 19, 1, _ONE, 9728, 14, 1, 0, 0, 0),
        Profile("1g.10gb+me", 20, 1, _ONE, 9728, 14, 1, 1, 1, 1),
        Profile("1g.20gb", 15, 2, (0, 2, 4, 6), 19968, 14, 1, 1, 0, 0),
        Profile("2g.20gb", 14, 2, (0, 2, 4), 19968, 28, 2, 1, 0, 0),
        Profile("3g.40gb", 9, 4, (0, 4), 40192, 42, 3, 2, 0, 0),
        Profile("4g.40gb", 5, 4, (0,), 40192, 56, 4, 2, 0, 0),
        Profile("7g.80gb", 0, 8, (0,), 80896, 98, 7, 5, 1, 1),
    ),
    "NVIDIA-A100-SXM4-80GB",
)
H100_80GB = Gpu(
    "NVIDIA H100 80GB HBM3",
    "Hopper",
    "9.0.0",
    81559,
    (
        Profile("1g.10gb", 19, 1, _ONE, 9984, 16, 1, 1, 1, 0),
        Profile("1g.10gb+me", 20, 1, _ONE, 9984, 16, 1, 1, 1, 1),
        Profile("1g.20gb", 15, 2, (0, 2, 4, 6), 20096, 26, 1, 1, 1, 0),
        Profile("2g.20gb", 14, 2, (0, 2, 4), 20096, 32, 2, 2, 2, 0),
        Profile("3g.40gb", 9, 4, (0, 4), 40448, 60, 3, 3, 3, 0),
        Profile("4g.40gb", 5, 4, (0,), 40448, 64, 4, 4, 4, 0),
        Profile("7g.80gb", 0, 8, (0,), 81152, 132, 8, 7, 7, 1),
    ),
    "NVIDIA-H100-80GB-HBM3",
)

# Static MIG layout per GPU (profile name, placement start): mig-parted "all-balanced" on A100-80GB.
_STATIC_LAYOUT = (("1g.10gb", 0), ("1g.10gb", 1), ("2g.20gb", 2), ("3g.40gb", 4))


@dataclass(frozen=True)
class Shape:
    name: str
    gpu: Gpu
    mode: str  # "full" | "static-mig" | "dynamic-mig"
    gpus: int = 8
    cpu: str = "224"
    memory: str = "2Ti"
    pods: str = "110"


SHAPES: dict[str, Shape] = {
    "a100-80gb-static-mig": Shape("a100-80gb-static-mig", A100_80GB, "static-mig", cpu="256"),
    "h100-80gb": Shape("h100-80gb", H100_80GB, "full"),
    "h100-80gb-dynamic-mig": Shape("h100-80gb-dynamic-mig", H100_80GB, "dynamic-mig"),
}


def shape(name: str) -> Shape:
    try:
        return SHAPES[name]
    except KeyError:
        raise ValueError(f"unknown node shape {name!r} (known: {', '.join(SHAPES)})") from None


# ---------------------------------------------------------------------------------------------- helpers


def _uid(kind: str, *parts: object) -> str:
    """A stable UUID per node/GPU/MIG device, so slices are identical from run to run."""
    return f"{kind}-{uuid.uuid5(uuid.NAMESPACE_URL, 'kubedra-testbed/' + '/'.join(str(p) for p in parts))}"


def _string(v: str) -> dict[str, str]:
    return {"string": v}


def _version(v: str) -> dict[str, str]:
    return {"version": v}


def _q(v: int | str) -> dict[str, str]:
    return {"value": str(v)}


def _dns_name(capacity_name: str) -> str:
    """``copyEngines`` -> ``copy-engines`` (the driver's camelToDNSName for counter names)."""
    out = []
    for ch in capacity_name:
        if ch.isupper():
            out.append("-" + ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def _common_attributes(gpu: Gpu, minor: int) -> dict[str, dict[str, str]]:
    bus = _PCI_BUSES[minor % len(_PCI_BUSES)]
    return {
        "productName": _string(gpu.product_name),
        "brand": _string("Nvidia"),
        "architecture": _string(gpu.architecture),
        "cudaComputeCapability": _version(gpu.compute_capability),
        "driverVersion": _version(_DRIVER_VERSION),
        "cudaDriverVersion": _version(_CUDA_DRIVER_VERSION),
        "resource.kubernetes.io/pciBusID": _string(f"0000:{bus}:00.0"),
        "resource.kubernetes.io/pcieRoot": _string(f"pci0000:{bus}"),
    }


def _profile_capacity(p: Profile) -> dict[str, int | str]:
    return {
        "multiprocessors": p.multiprocessors,
        "copyEngines": p.copy_engines,
        "decoders": p.decoders,
        "encoders": p.encoders,
        "jpegEngines": p.jpeg_engines,
        "ofaEngines": p.ofa_engines,
        "memory": f"{p.memory_mib}Mi",
    }


def mig_device_name(minor: int, profile: Profile, start: int) -> str:
    """``gpu-0-mig-1g10gb-19-0``; ``1g.10gb+me`` becomes ``1g10gb-me``."""
    canonical = profile.name.replace(".", "").replace("+", "-")
    return f"gpu-{minor}-mig-{canonical}-{profile.profile_id}-{start}"


def counter_set_name(minor: int) -> str:
    return f"gpu-{minor}-counter-set"


def _full_gpu(node: str, gpu: Gpu, minor: int, capacity: dict[str, int | str]) -> dict[str, Any]:
    attrs = {
        "type": _string("gpu"),
        "uuid": _string(_uid("GPU", node, minor)),
        **_common_attributes(gpu, minor),
    }
    return {"name": f"gpu-{minor}", "attributes": attrs, "capacity": {k: _q(v) for k, v in capacity.items()}}


def _mig_device(node: str, gpu: Gpu, minor: int, p: Profile, start: int, static: bool) -> dict[str, Any]:
    attrs: dict[str, dict[str, str]] = {"type": _string("mig")}
    if static:
        attrs["uuid"] = _string(_uid("MIG", node, minor, p.name, start))
    attrs.update(_common_attributes(gpu, minor))
    attrs["parentUUID"] = _string(_uid("GPU", node, minor))
    attrs["profile"] = _string(p.name)
    capacity = {k: _q(v) for k, v in _profile_capacity(p).items()}
    device: dict[str, Any] = {
        "name": mig_device_name(minor, p, start),
        "attributes": attrs,
        "capacity": capacity,
    }
    if static:
        for s in range(start, start + p.size):
            capacity[f"memorySlice{s}"] = _q(1)
    else:
        counters = {_dns_name(k): _q(v) for k, v in _profile_capacity(p).items()}
        for s in range(start, start + p.size):
            counters[f"memory-slice-{s}"] = _q(1)
        device["consumesCounters"] = [{"counterSet": counter_set_name(minor), "counters": counters}]
    return device


def _max_capacity(gpu: Gpu) -> dict[str, int | str]:
    """Per-dimension maximum over all profiles (the 7g profile): the counter-set and full-GPU values."""
    biggest = max(gpu.profiles, key=lambda p: (p.size, p.multiprocessors))
    return _profile_capacity(biggest)


def _slice(node: str, index: int, count: int, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}-{index}"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": count},
            "nodeName": node,
            **spec,
        },
    }


# ---------------------------------------------------------------------------------------------- public


def resource_slices(node: str, shape_name: str) -> list[dict[str, Any]]:
    """The ResourceSlices the NVIDIA DRA driver publishes for ``node`` of shape ``shape_name``."""
    sh = shape(shape_name)
    gpu = sh.gpu
    if sh.mode == "full":
        devices = [_full_gpu(node, gpu, m, {"memory": f"{gpu.memory_mib}Mi"}) for m in range(sh.gpus)]
        return [_slice(node, 0, 1, {"devices": devices})]
    if sh.mode == "static-mig":
        by_name = {p.name: p for p in gpu.profiles}
        devices = [
            _mig_device(node, gpu, m, by_name[name], start, static=True)
            for m in range(sh.gpus)
            for name, start in _STATIC_LAYOUT
        ]
        return [_slice(node, 0, 1, {"devices": devices})]
    # dynamic MIG, Kubernetes >= 1.35 split layout: counters-only slice first, then one slice per GPU.
    maxima = _max_capacity(gpu)
    counter_values = {_dns_name(k): _q(v) for k, v in maxima.items()}
    counter_values.update({f"memory-slice-{s}": _q(1) for s in range(MEMORY_SLICES)})
    counter_sets = [{"name": counter_set_name(m), "counters": dict(counter_values)} for m in range(sh.gpus)]
    slices = [_slice(node, 0, sh.gpus + 1, {"sharedCounters": counter_sets})]
    for m in range(sh.gpus):
        full = _full_gpu(node, gpu, m, maxima)
        full["consumesCounters"] = [{"counterSet": counter_set_name(m), "counters": dict(counter_values)}]
        devices = [full]
        for p in gpu.profiles:
            for start in p.starts:
                devices.append(_mig_device(node, gpu, m, p, start, static=False))
        assert len(devices) <= MAX_DEVICES_PER_SLICE
        slices.append(_slice(node, m + 1, sh.gpus + 1, {"devices": devices}))
    return slices


def device_classes() -> list[dict[str, Any]]:
    """The driver's DeviceClasses for GPUs and MIG devices (helm chart ``deviceclass-*.yaml``)."""

    def cls(name: str, device_type: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        expr = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == '{device_type}'"
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expr}}]}
        spec.update(extra or {})
        return {"apiVersion": RESOURCE_API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}

    return [
        cls("gpu.nvidia.com", "gpu", {"extendedResourceName": "nvidia.com/gpu"}),
        cls("mig.nvidia.com", "mig"),
    ]


def node(name: str, shape_name: str, dra: bool = True) -> dict[str, Any]:
    """A Node object (metadata + spec; status is set separately through the status subresource)."""
    sh = shape(shape_name)
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": sh.gpu.node_label,
        "nvidia.com/gpu.count": str(sh.gpus),
        "kubedra.dev/testbed-shape": sh.name,
    }
    if sh.mode == "static-mig":
        labels["nvidia.com/mig.config"] = "all-balanced"
    if dra:
        labels["nvidia.com/dra-kubelet-plugin"] = "true"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {}}


def node_status(
    name: str, shape_name: str, dra: bool = True, kubelet_version: str = KUBELET_VERSION
) -> dict[str, Any]:
    """Capacity, allocatable, a Ready condition and node info as a kubelet would report them."""
    sh = shape(shape_name)
    resources = {"cpu": sh.cpu, "memory": sh.memory, "pods": sh.pods, "ephemeral-storage": "1Ti"}
    if not dra:
        resources["nvidia.com/gpu"] = str(sh.gpus)
    return {
        "capacity": dict(resources),
        "allocatable": dict(resources),
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status (kubedra testbed fake node)",
                "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
        "nodeInfo": {
            "architecture": "amd64",
            "operatingSystem": "linux",
            "osImage": "kubedra testbed",
            "kernelVersion": "6.8.0",
            "containerRuntimeVersion": "containerd://2.1.0",
            "kubeletVersion": kubelet_version,
            "kubeProxyVersion": "",
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
        },
        "addresses": [{"type": "Hostname", "address": name}],
    }

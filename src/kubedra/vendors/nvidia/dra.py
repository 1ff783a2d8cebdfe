"""What the NVIDIA DRA driver (``gpu.nvidia.com``) publishes: ResourceSlices and DeviceClasses.

Modelled on NVIDIA/k8s-dra-driver-gpu ``cmd/gpu-kubelet-plugin`` (deviceinfo.go, mig.go,
partitions.go, nvlib.go, driver.go) and its Helm DeviceClass templates:

- One pool per node, named after the node; every slice has ``nodeName`` and is owned by the Node.
- Without DynamicMIG (modes ``full``, ``mig-static``, ``time-slicing``, ``mps``): one slice with a
  device per full GPU (``gpu-<minor>``, capacity ``memory``) or, on a GPU with MIG enabled, one
  device per existing MIG device (``gpu-<minor>-mig-<profile w/o dots>-<giProfileId>-<start>``,
  with ``uuid`` and ``memorySlice<i>`` capacities). Upstream orders this slice by Go map
  iteration (random); here devices are sorted by GPU, then name.
- With DynamicMIG (mode ``mig-dynamic``): per GPU a device for every (profile, placement), plus the
  full GPU when MIG can be toggled without a reset (Hopper+, or MIG off); a counter set
  ``gpu-<minor>-counter-set`` with the per-capacity maxima over all profiles and
  ``memory-slice-0..7``; each device consumes its capacities and memory slices, the full GPU
  consumes everything. Kubernetes >= 1.35: a counters-only slice first, then one device slice per
  GPU; 1.34: one slice per GPU holding its counter set and devices. Devices sorted by name, GPUs
  by PCI bus ID, like the driver.
- Time-slicing and MPS are not devices in DRA: the slices hold full GPUs and the sharing is an
  opaque ``GpuConfig`` on the claim or class (:func:`dra_sharing_config`).

What a device publishes is the chosen release's (``release``, default the newest in
``data/nvidia-dra-driver.yaml``): its attribute and capacity names per device kind, its MIG device names
(``gpu-<minor>-mig-<giProfileId>-<start>-<size>`` before v25.12.0), and DynamicMIG only where the release has the
gate. Names a release publishes that the catalogue has no value for (``resource.kubernetes.io/numaNode``, which the
driver too leaves out where sysfs has none) are left out.

Slice names follow the resourceslice controller the driver vendors (k8s.io/dynamic-resource-allocation
0.36): ``<index as 5 hex digits>-gpu.nvidia.com-<node>-<5 random characters>``; the suffix here is
derived from the node name so output is stable.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError
from kubedra.gcpause import paused_gc
from kubedra.k8s.featuregates import gate_info
from kubedra.k8s.quantity import Quantity
from kubedra.k8s.versions import DEFAULT_TARGET, Version, holds
from kubedra.vendors.nvidia import driver_releases, identity
from kubedra.vendors.nvidia.layouts import GpuLayout, MigPlacement
from kubedra.vendors.nvidia.limits import is_dns_label, is_dns_subdomain, pool_violations, slice_violations
from kubedra.vendors.nvidia.models import GpuModel, MigProfile, default_driver_versions, get_model
from kubedra.vendors.nvidia.modes import GpuMode, parse_gpu_mode
from kubedra.vendors.nvidia.specs import k8s_minor

DRIVER_NAME = "gpu.nvidia.com"
RESOURCE_API = "resource.k8s.io/v1"
PCI_BUS_ID = "resource.kubernetes.io/pciBusID"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
GPU_CONFIG_API = "resource.nvidia.com/v1beta1"

_SEMVER_IN = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


@functools.lru_cache(maxsize=256)
def nvidia_semver(text: str) -> str:
    """Normalise an NVIDIA version (``580.95.05``, ``13.0``, ``9.0``) to semver (``580.95.5``, ``13.0.0``).

    Same result as the driver's ``semver.MustParse(v).String()`` (Masterminds semver: missing parts
    become 0, leading zeros are dropped).
    """
    m = _SEMVER_IN.match(str(text).strip())
    if not m:
        raise InputError(f"invalid NVIDIA version {text!r} (expected e.g. 580.95.05)")
    return ".".join(str(int(p or 0)) for p in m.groups())


def _default_driver() -> str:
    return default_driver_versions()[0]


def _default_cuda() -> str:
    return default_driver_versions()[1]


@dataclass(frozen=True)
class DriverInfo:
    """Node-wide NVIDIA driver facts, as nvidia-smi prints them."""

    driver_version: str = field(default_factory=_default_driver)  # "580.95.05"
    cuda_driver_version: str = field(default_factory=_default_cuda)  # "13.0"
    addressing_mode: str | None = None  # "HMM" / "ATS" / "None" on coherent-memory systems; None: absent


@dataclass(frozen=True)
class _Schema:
    """What one driver release publishes for the GPU plugin's device kinds."""

    release: str
    gpu_attributes: frozenset[str]
    mig_attributes: frozenset[str]
    gpu_capacities: tuple[str, ...]  # a name ending in * stands for it followed by digits
    mig_capacities: tuple[str, ...]
    mig_name: str  # a format with minor, profile, profileId, start, size
    dynamic_mig: bool  # the release has the DynamicMIG gate


@functools.lru_cache(maxsize=32)
def release_schema(release: str | None = None) -> _Schema:
    """The schema of NVIDIA DRA driver ``release`` (None: the newest kubedra has read); InputError naming the
    known releases for another."""
    try:
        version = driver_releases.resolve_one(release)
    except ValueError as e:
        raise InputError(str(e)) from None
    kinds = driver_releases.device_kinds(version)
    return _Schema(
        release=version,
        gpu_attributes=frozenset(kinds["gpu"]["attributes"]),
        mig_attributes=frozenset(kinds["mig"]["attributes"]),
        gpu_capacities=tuple(kinds["gpu"]["capacities"]),
        mig_capacities=tuple(kinds["mig"]["capacities"]),
        mig_name=str(driver_releases.schema(version)["migDeviceName"]),
        dynamic_mig=driver_releases.has_gate(version, "DynamicMIG"),
    )


def _capacity_published(name: str, published: tuple[str, ...]) -> bool:
    return any(
        name == p or (p.endswith("*") and name.startswith(p[:-1]) and name[len(p) - 1 :].isdigit())
        for p in published
    )


def _only(capacity: dict[str, Any], published: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in capacity.items() if _capacity_published(k, published)}


@dataclass(frozen=True)
class _Gpu:
    minor: int
    uuid: str
    bus_id: str
    root: str
    layout: GpuLayout  # None: MIG off


@functools.lru_cache(maxsize=4096)
def _qstr(n: int) -> str:
    """Canonical quantity of an integer, like resource.NewQuantity(n, BinarySI).String()."""
    return Quantity.from_int(n, "BinarySI").canonical()


def _q(n: int) -> dict[str, str]:
    return {"value": _qstr(n)}


Items = tuple[tuple[str, str], ...]  # sorted (name, canonical quantity) pairs


def _qmap(items: Items) -> dict[str, Any]:
    return {k: {"value": v} for k, v in items}


def _gpus(node: str, model: GpuModel, layouts: list[GpuLayout]) -> list[_Gpu]:
    out = []
    for minor, layout in enumerate(layouts):
        bus_id, root = identity.pci_address(model, minor)
        out.append(_Gpu(minor, identity.gpu_uuid(node, minor), bus_id, root, layout))
    return out


AttrItems = tuple[tuple[str, str, str | int], ...]  # (name, value type, value)


def _common_attributes(model: GpuModel, gpu: _Gpu, driver: DriverInfo) -> AttrItems:
    """Every attribute a GPU's devices share in some release; each kind keeps those its release publishes."""
    items: list[tuple[str, str, str | int]] = [
        ("productName", "string", model.product_name),
        ("brand", "string", model.brand),
        ("architecture", "string", model.architecture),
        ("cudaComputeCapability", "version", nvidia_semver(model.compute_capability)),
        ("driverVersion", "version", nvidia_semver(driver.driver_version)),
        ("cudaDriverVersion", "version", nvidia_semver(driver.cuda_driver_version)),
        (PCI_BUS_ID, "string", gpu.bus_id),
        ("pcieBusID", "string", gpu.bus_id),  # the name before v25.12.0
        (PCIE_ROOT, "string", gpu.root),
    ]
    if driver.addressing_mode is not None:
        items.append(("addressingMode", "string", driver.addressing_mode))
    return tuple(items)


def _attrs(published: frozenset[str], *groups: AttrItems) -> dict[str, Any]:
    """Fresh attribute dicts (no sharing between devices) of the names the release publishes, keys sorted like
    Go's JSON."""
    return {k: {t: v} for k, t, v in sorted(item for g in groups for item in g if item[0] in published)}


def _gpu_attributes(common: AttrItems, gpu: _Gpu, schema: _Schema) -> dict[str, Any]:
    extra: AttrItems = (
        ("type", "string", "gpu"),
        ("uuid", "string", gpu.uuid),
        ("minor", "int", gpu.minor),
        ("index", "int", gpu.minor),  # NVML's enumeration index: the minor order on the catalogue's nodes
    )
    return _attrs(schema.gpu_attributes, common, extra)


def _mig_attributes(
    common: AttrItems,
    gpu: _Gpu,
    profile: MigProfile,
    schema: _Schema,
    uuid: str | None = None,
    index: int | None = None,
) -> dict[str, Any]:
    extra: list[tuple[str, str, str | int]] = [
        ("type", "string", "mig"),
        ("parentUUID", "string", gpu.uuid),
        ("profile", "string", profile.name),
        ("parentIndex", "int", gpu.minor),
    ]
    if uuid is not None:
        extra.append(("uuid", "string", uuid))
    if index is not None:
        extra.append(
            ("index", "int", index)
        )  # the MIG device's index under its GPU (releases before v25.8.0)
    return _attrs(schema.mig_attributes, common, tuple(extra))


@functools.lru_cache(maxsize=256)
def _profile_slug(profile_name: str) -> str:
    """toRFC1123Compliant(profile without dots): ``1g.10gb+me`` -> ``1g10gb-me``."""
    return re.sub(r"[^a-z0-9-.]", "-", profile_name.replace(".", "").lower()).strip("-").rstrip(".")


def mig_device_name(minor: int, profile: MigProfile, start: int, schema: _Schema | None = None) -> str:
    """The driver's canonical MIG device name: ``gpu-<minor>-mig-<profile w/o dots>-<id>-<start>`` (v25.12.0 on;
    ``gpu-<minor>-mig-<id>-<start>-<size>`` before)."""
    fmt = (schema or release_schema()).mig_name
    return fmt.format(
        minor=minor,
        profile=_profile_slug(profile.name),
        profileId=profile.profile_id,
        start=start,
        size=profile.size,
    )


def counter_set_name(minor: int) -> str:
    return f"gpu-{minor}-counter-set"


_CAPACITY_FIELDS = (
    ("multiprocessors", "multiprocessors"),
    ("copyEngines", "copy_engines"),
    ("decoders", "decoders"),
    ("encoders", "encoders"),
    ("jpegEngines", "jpeg_engines"),
    ("ofaEngines", "ofa_engines"),
)


def _mig_capacity_values(profile: MigProfile) -> dict[str, int]:
    values = {cap: int(getattr(profile, attr)) for cap, attr in _CAPACITY_FIELDS}
    values["memory"] = profile.memory_bytes
    return values


def _counter_name(capacity: str) -> str:
    """camelToDNSName of a capacity name (``copyEngines`` -> ``copy-engines``)."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", capacity).lower()


def _capacity_items(values: dict[str, int]) -> Items:
    return tuple(sorted((k, _qstr(v)) for k, v in values.items()))


def _counter_items(values: dict[str, int], start: int, size: int) -> Items:
    counters = {_counter_name(k): _qstr(v) for k, v in values.items()}
    counters.update({f"memory-slice-{i}": _qstr(1) for i in range(start, start + size)})
    return tuple(sorted(counters.items()))


# ----------------------------------------------------------------- devices, no DynamicMIG


def _full_gpu_device(model: GpuModel, gpu: _Gpu, common: AttrItems, schema: _Schema) -> dict[str, Any]:
    return {
        "name": f"gpu-{gpu.minor}",
        "attributes": _gpu_attributes(common, gpu, schema),
        "capacity": _only({"memory": _q(model.memory_bytes)}, schema.gpu_capacities),
    }


def _static_mig_device(
    node: str, gpu: _Gpu, placement: MigPlacement, common: AttrItems, schema: _Schema, index: int
) -> dict[str, Any]:
    profile = placement.profile
    uuid = identity.mig_uuid(node, gpu.minor, profile.profile_id, placement.start)
    capacity = dict(_capacity_items(_mig_capacity_values(profile)))
    capacity.update({f"memorySlice{i}": _qstr(1) for i in placement.slots})
    return {
        "name": mig_device_name(gpu.minor, profile, placement.start, schema),
        "attributes": _mig_attributes(common, gpu, profile, schema, uuid, index),
        "capacity": _only(_qmap(tuple(sorted(capacity.items()))), schema.mig_capacities),
    }


def _static_devices(
    node: str, model: GpuModel, gpus: list[_Gpu], driver: DriverInfo, schema: _Schema
) -> list[dict[str, Any]]:
    devices = []
    for gpu in gpus:
        common = _common_attributes(model, gpu, driver)
        if gpu.layout is None:
            devices.append(_full_gpu_device(model, gpu, common, schema))
            continue
        # MIG enabled: only the pre-created MIG devices (none: capacity stranded, as upstream warns)
        mine = [_static_mig_device(node, gpu, p, common, schema, i) for i, p in enumerate(gpu.layout)]
        devices += sorted(mine, key=lambda d: d["name"])
    return devices


# ----------------------------------------------------------------- devices, DynamicMIG


@dataclass(frozen=True)
class _MigSpec:
    """One abstract (profile, placement) device, with its rendered capacity and counters."""

    profile: MigProfile
    start: int
    capacity: Items
    counters: Items


@dataclass(frozen=True)
class _DynamicTemplate:
    specs: tuple[_MigSpec, ...]
    full_capacity: Items  # per-capacity maxima over all profiles and placements
    all_counters: Items  # the counter set, also what the full GPU consumes


@functools.lru_cache(maxsize=64)
def _dynamic_template(model: GpuModel) -> _DynamicTemplate:
    pairs = [(p, s) for p in model.mig_profiles for s in p.starts]
    maxima: dict[str, int] = {}
    for profile, _ in pairs:
        for cap, value in _mig_capacity_values(profile).items():
            maxima[cap] = max(maxima.get(cap, value), value)
    mem_slices = max(p.size for p, _ in pairs)  # the driver assumes the largest placement spans all slices
    specs = tuple(
        _MigSpec(
            p,
            s,
            _capacity_items(_mig_capacity_values(p)),
            _counter_items(_mig_capacity_values(p), s, p.size),
        )
        for p, s in pairs
    )
    return _DynamicTemplate(specs, _capacity_items(maxima), _counter_items(maxima, 0, mem_slices))


@dataclass
class _GpuSlice:
    devices: list[dict[str, Any]]
    counter_set: dict[str, Any] | None


def _dynamic_gpu(model: GpuModel, gpu: _Gpu, driver: DriverInfo, schema: _Schema) -> _GpuSlice:
    common = _common_attributes(model, gpu, driver)
    capable = model.mig_capable and (model.mig_toggle_without_reset or gpu.layout is not None)
    if not capable:
        # not DynamicMIG-capable: the full GPU through PartGetDevice, memory only, no counters
        return _GpuSlice([_full_gpu_device(model, gpu, common, schema)], None)

    tpl = _dynamic_template(model)
    set_name = counter_set_name(gpu.minor)
    devices: list[dict[str, Any]] = [
        {
            "name": mig_device_name(gpu.minor, spec.profile, spec.start, schema),
            "attributes": _mig_attributes(common, gpu, spec.profile, schema),
            "capacity": _qmap(spec.capacity),
            "consumesCounters": [{"counterSet": set_name, "counters": _qmap(spec.counters)}],
        }
        for spec in tpl.specs
    ]
    if model.mig_toggle_without_reset or gpu.layout is None:
        devices.append(
            {
                "name": f"gpu-{gpu.minor}",
                "attributes": _gpu_attributes(common, gpu, schema),
                "capacity": _qmap(tpl.full_capacity),
                "consumesCounters": [{"counterSet": set_name, "counters": _qmap(tpl.all_counters)}],
            }
        )
    devices.sort(key=lambda d: d["name"])
    return _GpuSlice(devices, {"name": set_name, "counters": _qmap(tpl.all_counters)})


# ----------------------------------------------------------------- slices


def slice_metadata(node: str, index: int, count: int) -> dict[str, Any]:
    """The metadata of slice ``index`` of the ``count`` the driver publishes on ``node``: the name the API server
    makes of its generateName, owned by the Node."""
    width = max(5, len(f"{count - 1:x}"))
    generate_name = f"{index:0{width}x}-{DRIVER_NAME}-{node}-"
    return {
        "name": identity.generated_name(generate_name, node, index),
        "generateName": generate_name,
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "name": node,
                "uid": identity.node_uid(node),
                "controller": True,
            }
        ],
    }


def _slice(node: str, index: int, count: int, body: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": DRIVER_NAME,
        "pool": {"name": node, "generation": 1, "resourceSliceCount": count},
        "nodeName": node,
    }
    spec.update(body)
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceSlice",
        "metadata": slice_metadata(node, index, count),
        "spec": spec,
    }


_CHECKED: set[tuple[object, ...]] = set()


def check_node_name(node: str) -> None:
    if not is_dns_subdomain(node):
        raise InputError(f"invalid node name {node!r} (must be a lower-case DNS subdomain)")


def dra_objects(
    node_name: str,
    model: str | GpuModel,
    gpus: int,
    mode: str | GpuMode = "full",
    k8s_version: str = DEFAULT_TARGET,
    *,
    driver: DriverInfo | None = None,
    release: str | None = None,
) -> list[dict[str, Any]]:
    """The ResourceSlices NVIDIA DRA driver ``release`` (default: the newest kubedra has read) publishes for one
    node (plain resource.k8s.io/v1 dicts)."""
    check_node_name(node_name)
    schema = release_schema(release)
    gpu_model = get_model(model)
    gpu_mode = parse_gpu_mode(mode)
    minor = k8s_minor(k8s_version)
    driver = driver or DriverInfo()
    if gpus < 1:
        raise InputError(f"a GPU node needs at least one GPU (got {gpus})")
    gpu_list = _gpus(node_name, gpu_model, gpu_mode.gpu_layouts(gpu_model, gpus))

    bodies: list[dict[str, Any]] = []
    if gpu_mode.kind == "mig-dynamic" and not schema.dynamic_mig:
        raise InputError(
            f"NVIDIA DRA driver {schema.release} has no DynamicMIG feature gate (from v25.12.0): it publishes "
            "no dynamic MIG devices (use mode mig-static, or a newer release)"
        )
    if gpu_mode.kind != "mig-dynamic":
        devices = _static_devices(node_name, gpu_model, gpu_list, driver, schema)
        bodies.append({"devices": devices} if devices else {})
    else:
        with paused_gc():
            per_gpu = [
                _dynamic_gpu(gpu_model, g, driver, schema) for g in sorted(gpu_list, key=lambda g: g.bus_id)
            ]
        sets = [s.counter_set for s in per_gpu if s.counter_set is not None]
        if holds("dra.countersOnlySlices", Version(1, minor)):  # counter sets in a slice of their own
            bodies.append({"sharedCounters": sets} if sets else {})
            bodies += [{"devices": s.devices} for s in per_gpu]
        else:
            for s in per_gpu:
                body: dict[str, Any] = {"devices": s.devices}
                if s.counter_set is not None:
                    body["sharedCounters"] = [s.counter_set]
                bodies.append(body)

    slices = [_slice(node_name, i, len(bodies), b) for i, b in enumerate(bodies)]
    # Which checks fail depends on the hardware, mode, version and driver strings, never on the
    # (valid) node name: check each combination once.
    key = (gpu_model, gpus, str(gpu_mode), minor, driver, schema.release)
    if key in _CHECKED:
        return slices
    problems = [p for s in slices for p in slice_violations(s, minor)] + pool_violations(slices, minor)
    if not problems:
        _CHECKED.add(key)
    if problems:
        raise InputError(
            f"{gpus} x {gpu_model.key} in mode {gpu_mode} cannot be published by the NVIDIA DRA driver on "
            f"Kubernetes 1.{minor}: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
        )
    return slices


# ----------------------------------------------------------------- DeviceClasses and sharing config


def device_classes(
    k8s_version: str = DEFAULT_TARGET,
    *,
    extended_resource: bool | None = None,
    release: str | None = None,
    compute_domains: bool = False,
) -> list[dict[str, Any]]:
    """The DeviceClasses NVIDIA DRA driver ``release``'s Helm chart installs (default: the newest kubedra has
    read), as recorded in ``data/nvidia-dra-driver.yaml``: ``gpu.nvidia.com`` and ``mig.nvidia.com``, from v25.12.0
    ``vfio.gpu.nvidia.com``; the ComputeDomain classes only with ``compute_domains``.

    From v25.12.0 the chart sets ``extendedResourceName: nvidia.com/gpu`` on ``gpu.nvidia.com`` for
    resource.k8s.io/v1; the API server keeps it only with the DRAExtendedResource gate (beta, on by default from
    1.36), so by default it is included from 1.36 on. Pass ``extended_resource`` to force (a release whose chart
    never sets it gets none either way).
    """
    try:
        version = driver_releases.resolve_one(release)
        specs = driver_releases.device_class_specs(version)
    except ValueError as e:
        raise InputError(str(e)) from None
    on_by_default = bool(
        (gate_info("DRAExtendedResource", Version(1, k8s_minor(k8s_version))) or {}).get("default")
    )
    with_ext = on_by_default if extended_resource is None else extended_resource
    out = []
    for c in specs:
        if c["plugin"] != "gpu" and not compute_domains:
            continue
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": c["expression"]}}]}
        if with_ext and c.get("extendedResourceName"):
            spec["extendedResourceName"] = c["extendedResourceName"]
        out.append(
            {"apiVersion": RESOURCE_API, "kind": "DeviceClass", "metadata": {"name": c["name"]}, "spec": spec}
        )
    return out


def dra_sharing_config(
    mode: str | GpuMode,
    requests: list[str] | None = None,
    *,
    model: str | GpuModel | None = None,
    interval: str = "Default",
) -> dict[str, Any] | None:
    """The claim/class config entry (opaque ``GpuConfig``) that gives DRA the mode's GPU sharing.

    None for modes without sharing. For MPS the per-client limits mirror what the device plugin's
    MPS daemon sets for ``n`` replicas: ``100 // n`` percent of the threads and ``memory / n`` MiB of
    pinned memory (the latter only when ``model`` is given). Time-slicing and MPS need the driver's
    TimeSlicingSettings / MPSSupport feature gates (alpha, off by default).
    """
    gpu_mode = parse_gpu_mode(mode)
    if not gpu_mode.is_shared:
        return None
    sharing: dict[str, Any]
    if gpu_mode.kind == "time-slicing":
        sharing = {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": interval}}
    else:
        mps: dict[str, Any] = {"defaultActiveThreadPercentage": 100 // gpu_mode.replicas}
        if model is not None:
            mps["defaultPinnedDeviceMemoryLimit"] = f"{get_model(model).memory_mib // gpu_mode.replicas}Mi"
        sharing = {"strategy": "MPS", "mpsConfig": mps}
    entry: dict[str, Any] = {}
    if requests:
        for r in requests:
            if not is_dns_label(r):
                raise InputError(f"invalid request name {r!r} (must be a DNS label)")
        entry["requests"] = list(requests)
    entry["opaque"] = {
        "driver": DRIVER_NAME,
        "parameters": {"apiVersion": GPU_CONFIG_API, "kind": "GpuConfig", "sharing": sharing},
    }
    return entry

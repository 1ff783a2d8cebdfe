"""``kubedra discover`` for NVIDIA GPUs: from a node's GPU inventory (``nvidia-smi -q -x`` or NVML,
:mod:`kubedra.vendors.nvidia.inventory`) to the ResourceSlices the NVIDIA DRA driver would publish there.

The slices come from the catalogue (:func:`kubedra.vendors.nvidia.dra_objects`), so discover and every other
part of kubedra agree on the driver's model: the GPU model is recognised from its PCI device ID or product name,
the node's MIG layout is written as one ``mig-static`` layout per GPU (``profile@start``), and the driver and
CUDA versions are the node's. The real hardware identities then replace the catalogue's stand-ins: GPU UUIDs,
MIG device UUIDs (when known), PCI bus IDs and PCIe roots, and ``gpu-<minor>`` names from the real minor numbers.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError
from kubedra.k8s.featuregates import gate_info
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.k8s.versions import require_supported as parse_version
from kubedra.text import count, noun
from kubedra.vendors.discovery import DiscoveredNode, DiscoverInput, DiscoverRequest
from kubedra.vendors.nvidia import dra as nvidia_dra
from kubedra.vendors.nvidia import health as nvhealth
from kubedra.vendors.nvidia import identity, inventory, nodes
from kubedra.vendors.nvidia import models as nvidia_models
from kubedra.vendors.nvidia import modes as nvidia_modes
from kubedra.vendors.nvidia.inventory import GpuInfo, MigInstance, NodeInventory
from kubedra.vendors.nvidia.models import GpuModel, MigProfile, platform

MODES = ("auto", "full", "mig-static", "mig-dynamic")
PCI_BUS_ID = "resource.kubernetes.io/pciBusID"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"

XML_INPUT = DiscoverInput("--nvidia-smi-xml", "Output of `nvidia-smi -q -x` (- for stdin).")
NVML_INPUT = DiscoverInput(
    "--nvml", "Read the GPUs through NVML (needs kubedra[nvml] and an NVIDIA driver).", metavar=None
)
INPUTS = (XML_INPUT, NVML_INPUT)


@dataclass
class Discovered:
    objects: list[dict[str, Any]]
    model: GpuModel
    mode: str
    notes: list[str] = field(default_factory=list)
    driver_release: str = ""


def find_model(gpus: list[GpuInfo]) -> GpuModel:
    found: set[str] = set()
    model: GpuModel | None = None
    for g in gpus:
        m = _model_of(g)
        same_id = _same_id_other_name(g)
        if same_id is not None:
            raise InputError(
                f"GPU {g.minor} ({g.product_name}, PCI device {g.pci_device_id}) is not in kubedra's catalogue: "
                f"that PCI device is {same_id.product_name} ({same_id.key}) there, but NVML names this one "
                f"{g.product_name!r} (a vGPU profile or another variant), whose memory kubedra does not know"
            )
        if m is None:
            known = ", ".join(
                f"{x.product_name} ({x.pci_device_id})" for x in nvidia_models.gpu_models().values()
            )
            raise InputError(
                f"GPU {g.minor} ({g.product_name}, PCI device {g.pci_device_id or '?'}) is not in kubedra's "
                f"catalogue (known: {known})"
            )
        found.add(m.key)
        model = m
    if len(found) > 1:
        raise InputError(
            f"the node mixes GPU models ({', '.join(sorted(found))}): the catalogue models one per node"
        )
    assert model is not None
    return model


def _same_id_other_name(g: GpuInfo) -> GpuModel | None:
    """The catalogue model with this GPU's PCI device ID when NVML gives the GPU another product name.

    vGPU profiles keep the board's device ID (Azure's "NVIDIA A10-4Q" is 0x223610DE, as the A10) but have a
    fraction of its memory and their own name, which the DRA driver publishes as productName."""
    if not g.product_name or not g.pci_device_id:
        return None
    models = nvidia_models.gpu_models().values()
    by_id = [m for m in models if m.pci_device_id.upper() == g.pci_device_id.upper()]
    if not by_id or any(m.product_name == g.product_name for m in by_id):
        return None
    return by_id[0]


def _model_of(g: GpuInfo) -> GpuModel | None:
    models = list(nvidia_models.gpu_models().values())
    by_id = [m for m in models if g.pci_device_id and m.pci_device_id.upper() == g.pci_device_id.upper()]
    if len(by_id) == 1:
        return by_id[0]
    by_name = [m for m in models if m.product_name == g.product_name]
    if by_id:
        by_name = [m for m in by_name if m in by_id] or by_id
    if len(by_name) > 1:
        by_name.sort(key=lambda m: abs(m.memory_mib - g.memory_mib))
    return by_name[0] if by_name else None


def match_profile(model: GpuModel, inst: MigInstance, where: str) -> MigProfile:
    """The GPU-instance profile of a MIG device: by NVML profile ID, else by its engines and memory."""
    if inst.profile_id is not None:
        for p in model.mig_profiles:
            if p.profile_id == inst.profile_id:
                return p
    same = [
        p
        for p in model.mig_profiles
        if (p.multiprocessors, p.copy_engines, p.decoders, p.encoders, p.jpeg_engines, p.ofa_engines)
        == (
            inst.multiprocessors,
            inst.copy_engines,
            inst.decoders,
            inst.encoders,
            inst.jpeg_engines,
            inst.ofa_engines,
        )
    ]
    if not same:
        raise InputError(
            f"{where}: MIG device (GPU instance {inst.gpu_instance_id}, {inst.multiprocessors} SMs, "
            f"{inst.memory_mib} MiB) matches no {model.key} MIG profile (compute instances smaller than their "
            "GPU instance are not modelled)"
        )
    return min(same, key=lambda p: (abs(p.memory_mib - inst.memory_mib), p.name))


def layout_text(model: GpuModel, gpu: GpuInfo) -> str:
    if not gpu.mig_enabled:
        return "all-disabled"
    if not gpu.mig:
        return "all-enabled"
    items = []
    # one compute instance per GPU instance is modelled; several CIs of one GI count once
    seen: set[int] = set()
    for inst in sorted(gpu.mig, key=lambda i: i.gpu_instance_id):
        if inst.gpu_instance_id in seen:
            continue
        seen.add(inst.gpu_instance_id)
        p = match_profile(model, inst, f"GPU {gpu.minor}")
        items.append(p.name + (f"@{inst.placement_start}" if inst.placement_start is not None else ""))
    return ",".join(items)


def _pcie_root(bus_id: str) -> str | None:
    """The PCIe root complex of a device: sysfs when discover runs on the node, else a known platform's table."""
    path = f"/sys/bus/pci/devices/{bus_id}"
    if os.path.exists(path):
        real = os.path.realpath(path)
        m = re.search(r"/(pci[0-9a-f]{4}:[0-9a-f]{2})/", real)
        if m:
            return m.group(1)
    for name in ("dgx-a100", "dgx-h100", "pcie-server"):
        try:
            plat = platform(name)
        except InputError:
            continue
        if bus_id in plat.bus_ids:
            return plat.roots[plat.bus_ids.index(bus_id)]
    return None


def discover(
    inv: NodeInventory,
    node_name: str,
    mode: str = "auto",
    k8s_version: str = DEFAULT_TARGET,
    *,
    include_classes: bool = True,
    include_node: bool = False,
    health_taints: bool = True,
    driver_release: str | None = None,
) -> Discovered:
    """``driver_release``: the NVIDIA DRA driver release whose devices and DeviceClasses to publish (None: the
    newest kubedra has read)."""
    if mode not in MODES:
        raise InputError(f"unknown --mode {mode!r} (expected {', '.join(MODES)})")
    gpus = sorted(inv.gpus, key=lambda g: g.minor)
    model = find_model(gpus)
    notes: list[str] = []
    any_mig = any(g.mig_enabled for g in gpus)
    if mode == "auto":
        mode = "mig-static" if any_mig else "full"
    if mode == "full" and any_mig:
        raise InputError(
            f"MIG is enabled on {noun(sum(g.mig_enabled for g in gpus), 'GPU')} "
            + ", ".join(str(g.minor) for g in gpus if g.mig_enabled)
            + ": the driver publishes their MIG devices, not full GPUs (use --mode mig-static, or disable MIG)"
        )
    if mode == "mig-dynamic":
        gpu_mode = "mig-dynamic"
        nvidia_modes.parse_gpu_mode(gpu_mode).check_model(model)  # a GPU without MIG has no MIG devices
        if any(g.mig for g in gpus):
            notes.append(
                "mig-dynamic: existing MIG instances are ignored; the driver creates instances per claim"
            )
        if not model.mig_toggle_without_reset and not all(g.mig_enabled for g in gpus):
            notes.append(
                f"{model.key}: DynamicMIG needs MIG mode enabled first on every GPU (Ampere needs a reset)"
            )
    elif mode == "mig-static" and any_mig:
        gpu_mode = "mig-static:" + "/".join(layout_text(model, g) for g in gpus)
        if any(i.placement_start is None for g in gpus for i in g.mig):
            notes.append(
                "MIG placements inferred (nvidia-smi -q does not print them): NVML's default placement for the "
                "instances found; run discover --nvml on the node for the exact ones"
            )
        if any(i.uuid is None for g in gpus for i in g.mig):
            notes.append(
                "MIG device UUIDs are not in nvidia-smi -q output: the uuid attributes of MIG devices are placeholders"
            )
    else:
        gpu_mode = "full"
    driver = nvidia_dra.DriverInfo(
        driver_version=inv.driver_version,
        cuda_driver_version=inv.cuda_version,
        addressing_mode=inv.addressing_mode,
    )
    slices = nvidia_dra.dra_objects(
        node_name, model, len(gpus), gpu_mode, k8s_version, driver=driver, release=driver_release
    )
    _apply_identities(slices, node_name, model, gpus, notes)
    if health_taints:
        apply_health(slices, model, gpus, gpu_mode, k8s_version, notes)
    objects: list[dict[str, Any]] = []
    if include_classes:
        objects += nvidia_dra.device_classes(k8s_version, release=driver_release)
    if include_node:
        objects.append(
            nodes.dra_node(node_name, model, len(gpus), gpu_mode, driver=driver, k8s_version=k8s_version)
        )
    objects += slices
    release = nvidia_dra.release_schema(driver_release).release
    return Discovered(objects=objects, model=model, mode=gpu_mode, notes=notes, driver_release=release)


_GPU_NAME = re.compile(r"^gpu-(\d+)(?=-|$)")


def _apply_identities(  # noqa: C901 - one walk of the slices swapping each stand-in identity for the real one
    slices: list[dict[str, Any]], node: str, model: GpuModel, gpus: list[GpuInfo], notes: list[str]
) -> None:
    uuids = {identity.gpu_uuid(node, i): g.uuid for i, g in enumerate(gpus) if g.uuid}
    bus = {identity.pci_address(model, i)[0]: (g.bus_id, _pcie_root(g.bus_id)) for i, g in enumerate(gpus)}
    minors = {i: g.minor for i, g in enumerate(gpus)}
    renumber = any(i != m for i, m in minors.items())
    mig_uuids: dict[str, str] = {}  # the catalogue's stand-in MIG UUID -> the real one
    for i, g in enumerate(gpus):
        for inst in g.mig:
            if inst.uuid:
                p = match_profile(model, inst, f"GPU {g.minor}")
                if inst.placement_start is not None:
                    mig_uuids[identity.mig_uuid(node, i, p.profile_id, inst.placement_start)] = inst.uuid
    missing_root = False

    def rename(name: str) -> str:
        if not renumber:
            return name
        return _GPU_NAME.sub(lambda m: f"gpu-{minors.get(int(m.group(1)), int(m.group(1)))}", name)

    for s in slices:
        spec = s["spec"]
        for cs in spec.get("sharedCounters") or []:
            cs["name"] = rename(cs["name"])
        for d in spec.get("devices") or []:
            attrs = d.get("attributes") or {}
            for key in ("uuid", "parentUUID"):
                v = (attrs.get(key) or {}).get("string")
                if v in uuids:
                    attrs[key] = {"string": uuids[v]}
            if (attrs.get("type") or {}).get("string") == "mig":
                real = mig_uuids.get((attrs.get("uuid") or {}).get("string") or "")
                if real:
                    attrs["uuid"] = {"string": real}
            if isinstance((attrs.get("minor") or {}).get("int"), int):  # releases before v25.8.0
                attrs["minor"] = {"int": minors.get(attrs["minor"]["int"], attrs["minor"]["int"])}
            bus_key = PCI_BUS_ID if PCI_BUS_ID in attrs else "pcieBusID"  # the name before v25.12.0
            b = (attrs.get(bus_key) or {}).get("string")
            if b in bus:
                real_bus, root = bus[b]
                attrs[bus_key] = {"string": real_bus}
                if root:
                    attrs[PCIE_ROOT] = {"string": root}
                else:
                    attrs.pop(PCIE_ROOT, None)
                    missing_root = True
            d["attributes"] = {k: attrs[k] for k in sorted(attrs)}
            d["name"] = rename(d["name"])
            for cc in d.get("consumesCounters") or []:
                cc["counterSet"] = rename(cc["counterSet"])
    if missing_root:
        notes.append(
            "PCIe roots unknown off the node (no /sys/bus/pci here and not a known platform): the pcieRoot "
            "attribute is left out; run discover on the node itself"
        )


def _gpu_devices(slices: list[dict[str, Any]], minor: int | None, dynamic: bool) -> list[dict[str, Any]]:
    """Devices the driver's health monitor watches: full GPUs and static MIG devices (of one GPU, or all).
    (``dynamic`` is kept for when the driver monitors dynamic MIG devices; today the gates exclude it.)"""
    out = []
    for s in slices:
        for d in s["spec"].get("devices") or []:
            m = _GPU_NAME.match(d["name"])
            if m is None or (minor is not None and int(m.group(1)) != minor):
                continue
            typ = ((d.get("attributes") or {}).get("type") or {}).get("string")
            if typ == "gpu" or (typ == "mig" and not dynamic):
                out.append(d)
    return out


def _add_taint(device: dict[str, Any], taint: nvhealth.HealthTaint) -> None:
    taints = device.setdefault("taints", [])
    if not any(t.get("key") == taint.key for t in taints):  # one taint per key per device
        taints.append(taint.to_dict())


def apply_health(
    slices: list[dict[str, Any]],
    model: GpuModel,
    gpus: list[GpuInfo],
    gpu_mode: str,
    k8s_version: str,
    notes: list[str],
) -> None:
    """Taint the devices of unhealthy GPUs as the driver's NVML health monitor would (see
    :mod:`kubedra.vendors.nvidia.health`); healthy GPUs are left alone."""
    dynamic = gpu_mode == "mig-dynamic"
    unhealthy = sum(not g.health.healthy for g in gpus)
    if dynamic and unhealthy:
        notes.append(
            f"{count(unhealthy, 'unhealthy GPU')} published untainted: the driver's DynamicMIG and NVMLDeviceHealthCheck feature gates "
            "are mutually exclusive (dra-driver-nvidia-gpu docs/reference/feature-gates.md), so with dynamic MIG "
            "nothing taints them; drain them with kubedra discover --drain-rule NODE/DEVICE"
        )
        return
    tainted = False
    lost = [g for g in gpus if g.health.lost]
    if lost:
        lost_taint = nvhealth.HealthTaint(nvhealth.KEY_GPU_LOST, nvhealth.NO_SCHEDULE)
        for d in _gpu_devices(slices, None, dynamic):
            _add_taint(d, lost_taint)
        tainted = True
        notes.append(
            f"{noun(len(lost), 'GPU')} {', '.join(f'{g.minor} ({g.bus_id})' for g in lost)} lost (fallen off the bus, XID 79): the "
            f"driver taints every device it publishes {nvhealth.KEY_GPU_LOST}:NoSchedule"
        )
    for g in gpus:
        t = nvhealth.xid_taint(g.health, model.architecture)
        if t is None:
            continue
        devices = _gpu_devices(slices, g.minor, dynamic)
        for d in devices:
            _add_taint(d, t)
        tainted = True
        value = f"={t.value}" if t.value else ""
        notes.append(
            f"GPU {g.minor} ({g.bus_id}): {t.why}: {count(len(devices), 'device')} tainted {t.key}{value}:{t.effect}"
            + ("" if t.value else " (the driver writes the XID NVML reported)")
        )
    if not tainted:
        return
    notes.append(
        f"health taints as the driver publishes them with its {nvhealth.HEALTH_GATE} feature gate (alpha, off by "
        "default; without it the devices are published untainted, --no-health-taints); it never uses NoExecute: "
        "running pods stay, to drain a device: kubedra discover --drain-rule NODE/DEVICE"
    )
    if dynamic:
        notes.append(
            "the driver's health monitor does not watch dynamic MIG devices: only full GPUs are tainted"
        )
    taints = gate_info("DRADeviceTaints", parse_version(k8s_version)) or {}  # data/feature-gates.yaml
    if not taints.get("default"):
        notes.append(
            f"Kubernetes {k8s_version}: device taints need the DRADeviceTaints feature gate "
            f"({taints.get('stage', 'not in this release')}, off); without it the API server drops them"
        )


def discover_node(given: DiscoverInput, value: str | None, request: DiscoverRequest) -> DiscoveredNode:
    """:meth:`kubedra.vendors.base.Vendor.discover_node` for NVIDIA: ``--nvidia-smi-xml FILE`` or ``--nvml``."""
    inv = inventory.read_xml(value or "-") if given == XML_INPUT else inventory.read_nvml()
    found = discover(
        inv,
        request.node,
        request.mode,
        request.k8s_version,
        include_classes=request.include_classes,
        include_node=request.include_node,
        health_taints=request.health_taints,
        driver_release=request.driver_release,
    )
    summary = f"{len(inv.gpus)} x {found.model.product_name}, mode {found.mode}, NVIDIA DRA driver {found.driver_release}"
    return DiscoveredNode(objects=found.objects, summary=summary, notes=found.notes)

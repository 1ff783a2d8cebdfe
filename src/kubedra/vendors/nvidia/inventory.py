"""A node's NVIDIA GPU inventory for ``kubedra discover``, read from ``nvidia-smi -q -x`` output or from NVML
(``nvidia-ml-py``).

What is read per GPU: product name, PCI device ID, UUID, minor number, PCI bus ID, total memory, current MIG
mode, and its MIG devices (GPU/compute instance IDs, shared engine counts, memory, and, from NVML only, the
placement start and MIG device UUID), and its health (volatile uncorrectable ECC errors, pending or failed row
remaps and page retirements, "GPU requires reset", a lost GPU: :class:`kubedra.vendors.nvidia.health.GpuHealth`).
A GPU nvidia-smi reports lost may have unreadable fields; it is kept (its identity from the others) so its
devices can be published tainted. ``nvidia-smi -q`` does not print a MIG device's profile, placement or
UUID: the profile is recognised from its engine counts and memory, the placement is the one NVML picks when
instances are created without one (:func:`kubedra.vendors.nvidia.place`), and the MIG UUID stays unknown.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError, Location, UsageError
from kubedra.sources.files import read_text
from kubedra.text import count
from kubedra.vendors.nvidia.health import GpuHealth


@dataclass(frozen=True)
class MigInstance:
    gpu_instance_id: int
    compute_instance_id: int
    multiprocessors: int
    copy_engines: int
    encoders: int
    decoders: int
    ofa_engines: int
    jpeg_engines: int
    memory_mib: int
    placement_start: int | None = None  # NVML only
    profile_id: int | None = None  # NVML only (GPU instance profile ID)
    uuid: str | None = None


@dataclass
class GpuInfo:
    product_name: str
    pci_device_id: str  # "0x233010DE"
    uuid: str
    minor: int
    bus_id: str  # "0000:18:00.0", as the DRA driver writes it
    memory_mib: int
    mig_enabled: bool
    mig: list[MigInstance] = field(default_factory=list)
    health: GpuHealth = field(default_factory=GpuHealth)


@dataclass
class NodeInventory:
    driver_version: str
    cuda_version: str
    gpus: list[GpuInfo]
    source: str
    addressing_mode: str | None = None


_MIB = re.compile(r"^\s*(\d+)\s*MiB\s*$")


def normalise_bus_id(text: str) -> str:
    """``00000000:18:00.0`` (NVML/nvidia-smi) -> ``0000:18:00.0`` (the DRA driver's pciBusID attribute)."""
    m = re.match(r"^\s*([0-9A-Fa-f]+):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])\s*$", text)
    if not m:
        raise InputError(f"invalid PCI bus ID {text!r}")
    return f"{int(m.group(1), 16):04x}:{m.group(2).lower()}:{m.group(3).lower()}.{m.group(4)}"


def _text(el: ET.Element | None, path: str, where: Location, required: bool = True) -> str:
    node = el.find(path) if el is not None else None
    if node is None or node.text is None or not node.text.strip():
        if required:
            raise InputError(f"nvidia-smi XML: missing <{path}>", where)
        return ""
    return node.text.strip()


def _int(el: ET.Element, path: str, where: Location, default: int | None = None) -> int:
    text = _text(el, path, where, required=default is None)
    if not text and default is not None:
        return default
    try:
        return int(text)
    except ValueError:
        if default is not None and text in ("N/A", "[N/A]"):
            return default
        raise InputError(f"nvidia-smi XML: <{path}> is not a number: {text!r}", where) from None


def _mib(el: ET.Element, path: str, where: Location) -> int:
    text = _text(el, path, where)
    m = _MIB.match(text)
    if not m:
        raise InputError(f"nvidia-smi XML: <{path}> is not '<n> MiB': {text!r}", where)
    return int(m.group(1))


_LOST = re.compile(r"gpu is lost|fallen off the bus", re.I)
_RESET = re.compile(r"requires reset", re.I)


def _count(el: ET.Element | None) -> int:
    text = (el.text or "").strip() if el is not None else ""
    return int(text) if text.isdigit() else 0


def _yes(g: ET.Element, path: str) -> bool:
    return (g.findtext(path) or "").strip().lower() == "yes"


def parse_health(g: ET.Element) -> GpuHealth:
    """Health signals of one ``<gpu>`` (elements of nvidia-smi's DTD v12 and older; absent ones are healthy)."""
    h = GpuHealth()
    vol = g.find("ecc_errors/volatile")
    if vol is not None:
        h.uncorrectable_ecc = sum(_count(el) for el in vol if "uncorrectable" in el.tag) + _count(
            vol.find("double_bit/total")
        )
        if h.uncorrectable_ecc:
            h.signals.append(count(h.uncorrectable_ecc, "volatile uncorrectable ECC error"))
    h.retirement_pending = _yes(g, "retired_pages/pending_retirement") or _yes(
        g, "retired_pages/pending_blacklist"
    )
    if h.retirement_pending:
        h.signals.append("page retirement pending")
    h.remap_pending = _yes(g, "remapped_rows/remapped_row_pending")
    if h.remap_pending:
        h.signals.append("row remap pending")
    h.remap_failure = _yes(g, "remapped_rows/remapped_row_failure")
    if h.remap_failure:
        h.signals.append("row remap failure")
    action = (g.findtext("gpu_recovery_action") or "").strip().lower()
    texts = [t.strip() for t in g.itertext() if t.strip()]
    h.reset_required = "reset" in action or "reboot" in action or any(_RESET.search(t) for t in texts)
    if h.reset_required:
        h.signals.append(f"GPU requires reset (recovery action {action or 'n/a'})")
    h.lost = any(_LOST.search(t) for t in texts)
    if h.lost:
        h.signals.append("GPU is lost (fallen off the bus, XID 79)")
    return h


def _readable(text: str) -> str:
    return "" if _LOST.search(text) or _RESET.search(text) or text.startswith("[") else text


def parse_xml(text: str, name: str) -> NodeInventory:
    where = Location(file=name)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        line = e.position[0] if hasattr(e, "position") else None
        raise InputError(f"not valid XML: {e}", Location(file=name, line=line)) from e
    if root.tag != "nvidia_smi_log":
        raise InputError(f"not nvidia-smi -q -x output (root element <{root.tag}>)", where)
    gpus: list[GpuInfo] = []
    for g in root.findall("gpu"):
        gwhere = Location(file=name, cluster=None)
        bus = g.get("id") or _text(g, "pci/pci_bus_id", gwhere)
        migs: list[MigInstance] = []
        mig_mode = _text(g, "mig_mode/current_mig", gwhere, required=False)
        for md in g.findall("mig_devices/mig_device"):
            shared = "device_attributes/shared/"
            migs.append(
                MigInstance(
                    gpu_instance_id=_int(md, "gpu_instance_id", gwhere),
                    compute_instance_id=_int(md, "compute_instance_id", gwhere, 0),
                    multiprocessors=_int(md, shared + "multiprocessor_count", gwhere),
                    copy_engines=_int(md, shared + "copy_engine_count", gwhere, 0),
                    encoders=_int(md, shared + "encoder_count", gwhere, 0),
                    decoders=_int(md, shared + "decoder_count", gwhere, 0),
                    ofa_engines=_int(md, shared + "ofa_count", gwhere, 0),
                    jpeg_engines=_int(md, shared + "jpg_count", gwhere, 0),
                    memory_mib=_mib(md, "fb_memory_usage/total", gwhere),
                    uuid=_text(md, "uuid", gwhere, required=False) or None,
                )
            )
        device_id = _readable(_text(g, "pci/pci_device_id", gwhere, required=False))
        health = parse_health(g)
        if health.lost:  # what nvidia-smi could not read is taken from the node's other GPUs
            minor = _readable(_text(g, "minor_number", gwhere, required=False))
            mem = _MIB.match(_readable(_text(g, "fb_memory_usage/total", gwhere, required=False)))
            info = GpuInfo(
                product_name=_readable(_text(g, "product_name", gwhere, required=False)),
                pci_device_id=f"0x{device_id.upper().removeprefix('0X')}" if device_id else "",
                uuid=_readable(_text(g, "uuid", gwhere, required=False)),
                minor=int(minor) if minor.isdigit() else -1,
                bus_id=normalise_bus_id(bus),
                memory_mib=int(mem.group(1)) if mem else 0,
                mig_enabled=False,
                health=health,
            )
            gpus.append(info)
            continue
        gpus.append(
            GpuInfo(
                product_name=_text(g, "product_name", gwhere),
                pci_device_id=f"0x{device_id.upper().removeprefix('0X')}" if device_id else "",
                uuid=_text(g, "uuid", gwhere),
                minor=_int(g, "minor_number", gwhere),
                bus_id=normalise_bus_id(bus),
                memory_mib=_mib(g, "fb_memory_usage/total", gwhere),
                mig_enabled=mig_mode == "Enabled",
                mig=migs,
                health=health,
            )
        )
    if not gpus:
        raise InputError("nvidia-smi XML lists no <gpu>", where)
    _fill_lost(gpus, where)
    addressing = _text(root, "gpu/addressing_mode", where, required=False) or None
    return NodeInventory(
        driver_version=_text(root, "driver_version", where),
        cuda_version=_text(root, "cuda_version", where),
        gpus=gpus,
        source=name,
        # the driver publishes addressingMode only on coherent-memory systems (HMM or ATS)
        addressing_mode=addressing if addressing in ("HMM", "ATS") else None,
    )


def _fill_lost(gpus: list[GpuInfo], where: Location) -> None:
    """A lost GPU gets the product and memory of the node's readable GPUs and a free minor number."""
    readable = [g for g in gpus if g.product_name]
    if not readable:
        raise InputError(
            "every GPU is lost (nvidia-smi reads none of them): the driver publishes nothing it can describe",
            where,
        )
    used = {g.minor for g in gpus if g.minor >= 0}
    free = (m for m in range(len(gpus) * 2) if m not in used)
    for g in gpus:
        if not g.product_name:
            g.product_name, g.pci_device_id = readable[0].product_name, readable[0].pci_device_id
        if not g.memory_mib:
            g.memory_mib = readable[0].memory_mib
        if g.minor < 0:
            g.minor = next(free)


def read_xml(path: str) -> NodeInventory:

    return parse_xml(read_text(path), "<stdin>" if path == "-" else path)


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _nvml_health(pynvml: Any, h: Any) -> GpuHealth:  # pragma: no cover - needs an NVIDIA GPU
    """The same signals as :func:`parse_health`, from NVML (a query a GPU does not support counts as healthy)."""
    out = GpuHealth()

    def ask(fn: str, *args: Any) -> Any:
        try:
            return getattr(pynvml, fn)(h, *args)
        except pynvml.NVMLError_GpuIsLost:
            out.lost = True
        except pynvml.NVMLError_ResetRequired:
            out.reset_required = True
        except (pynvml.NVMLError, AttributeError):
            pass
        return None

    ecc = ask(
        "nvmlDeviceGetTotalEccErrors", pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, pynvml.NVML_VOLATILE_ECC
    )
    out.uncorrectable_ecc = int(ecc or 0)
    rows = ask("nvmlDeviceGetRemappedRows")  # (correctable, uncorrectable, isPending, failureOccurred)
    if rows:
        out.remap_pending, out.remap_failure = bool(rows[2]), bool(rows[3])
    out.retirement_pending = bool(ask("nvmlDeviceGetRetiredPagesPendingStatus"))
    action = ask("nvmlDeviceGetGpuRecoveryAction")
    if action:  # NVML_GPU_RECOVERY_ACTION_NONE is 0
        out.reset_required = True
    for flag, text in (
        (out.uncorrectable_ecc, count(out.uncorrectable_ecc, "volatile uncorrectable ECC error")),
        (out.retirement_pending, "page retirement pending"),
        (out.remap_pending, "row remap pending"),
        (out.remap_failure, "row remap failure"),
        (out.reset_required, "GPU requires reset"),
        (out.lost, "GPU is lost (fallen off the bus, XID 79)"),
    ):
        if flag:
            out.signals.append(text)
    return out


def read_nvml() -> NodeInventory:  # pragma: no cover - needs an NVIDIA GPU; run on a GPU machine
    """The same inventory through NVML (``pip install 'kubedra[nvml]'``), with MIG placements and UUIDs."""
    try:
        import pynvml  # noqa: PLC0415
    except ImportError as e:
        raise UsageError("--nvml needs nvidia-ml-py: pip install 'kubedra[nvml]'") from e
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        raise UsageError(f"NVML could not be initialised (no NVIDIA driver here?): {e}") from e
    try:
        cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        inv = NodeInventory(
            driver_version=_s(pynvml.nvmlSystemGetDriverVersion()),
            cuda_version=f"{cuda // 1000}.{(cuda % 1000) // 10}",
            gpus=[],
            source="nvml",
        )
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            pci = pynvml.nvmlDeviceGetPciInfo(h)
            try:
                current, _pending = pynvml.nvmlDeviceGetMigMode(h)
                mig_on = current == pynvml.NVML_DEVICE_MIG_ENABLE
            except pynvml.NVMLError:
                mig_on = False
            gpu = GpuInfo(
                product_name=_s(pynvml.nvmlDeviceGetName(h)),
                pci_device_id=f"0x{pci.pciDeviceId:08X}",
                uuid=_s(pynvml.nvmlDeviceGetUUID(h)),
                minor=int(pynvml.nvmlDeviceGetMinorNumber(h)),
                bus_id=normalise_bus_id(_s(pci.busId)),
                memory_mib=int(pynvml.nvmlDeviceGetMemoryInfo(h).total) // (1024 * 1024),
                mig_enabled=mig_on,
            )
            gpu.health = _nvml_health(pynvml, h)
            if mig_on:
                for j in range(pynvml.nvmlDeviceGetMaxMigDeviceCount(h)):
                    try:
                        m = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(h, j)
                    except pynvml.NVMLError:
                        continue
                    gi_id = int(pynvml.nvmlDeviceGetGpuInstanceId(m))
                    attrs = pynvml.nvmlDeviceGetAttributes(m)
                    gi_info = pynvml.nvmlGpuInstanceGetInfo(pynvml.nvmlDeviceGetGpuInstanceById(h, gi_id))
                    gpu.mig.append(
                        MigInstance(
                            gpu_instance_id=gi_id,
                            compute_instance_id=int(pynvml.nvmlDeviceGetComputeInstanceId(m)),
                            multiprocessors=int(attrs.multiprocessorCount),
                            copy_engines=int(attrs.sharedCopyEngineCount),
                            encoders=int(attrs.sharedEncoderCount),
                            decoders=int(attrs.sharedDecoderCount),
                            ofa_engines=int(attrs.sharedOfaCount),
                            jpeg_engines=int(attrs.sharedJpegCount),
                            memory_mib=int(attrs.memorySizeMB),
                            placement_start=int(gi_info.placement.start),
                            profile_id=int(gi_info.profileId),
                            uuid=_s(pynvml.nvmlDeviceGetUUID(m)),
                        )
                    )
            inv.gpus.append(gpu)
        return inv
    finally:
        pynvml.nvmlShutdown()

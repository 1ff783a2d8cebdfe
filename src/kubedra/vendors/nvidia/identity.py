"""Deterministic identities for simulated hardware: UUIDs, PCI addresses, object names.

Everything is derived from the node name (and GPU minor, MIG placement), so the same catalogue
always yields the same objects and two nodes never share an identity.
"""

from __future__ import annotations

import hashlib
import uuid

from kubedra.vendors.nvidia.models import GpuModel, platform

_NAMESPACE = uuid.UUID("6f1c8a52-2b9e-5c3d-9a61-6b7564726101")  # kubedra's own uuid5 namespace

# k8s.io/apiserver names.SimpleNameGenerator: 5 random characters from this alphabet, base cut to 58.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_BASE = 63 - 5


def _uuid(*parts: object) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, "/".join(str(p) for p in parts))


def gpu_uuid(node: str, minor: int) -> str:
    """NVML-style GPU UUID (``GPU-xxxxxxxx-...``)."""
    return f"GPU-{_uuid('gpu', node, minor)}"


def mig_uuid(node: str, minor: int, profile_id: int, start: int) -> str:
    """NVML-style MIG device UUID (``MIG-xxxxxxxx-...``) of a pre-created (static) MIG device."""
    return f"MIG-{_uuid('mig', node, minor, profile_id, start)}"


def node_uid(node: str) -> str:
    """metadata.uid of the simulated Node (ResourceSlices are owned by it)."""
    return str(_uuid("node", node))


def generated_name(generate_name: str, *seed: object) -> str:
    """A name as the API server builds it from ``generateName``, with a deterministic suffix."""
    base = generate_name[:_MAX_GENERATED_BASE]
    digest = hashlib.sha256("/".join(str(s) for s in (generate_name, *seed)).encode()).digest()
    return base + "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


def pci_address(model: GpuModel, minor: int) -> tuple[str, str]:
    """(PCI bus ID, PCIe root) of GPU ``minor``: the model's platform table, then synthetic ones."""
    plat = platform(model.node.platform)
    if minor < len(plat.bus_ids):
        return plat.bus_ids[minor], plat.roots[minor]
    # synthetic: a second PCI domain, one root per GPU
    bus = (minor % 16) * 15 + 0x10
    domain = 1 + minor // 16
    return f"{domain:04x}:{bus:02x}:00.0", f"pci{domain:04x}:{bus - 1:02x}"


def internal_ip(node: str) -> str:
    """A stable 10.x.y.z address for the node."""
    d = hashlib.sha256(node.encode()).digest()
    return f"10.{d[0]}.{d[1]}.{max(d[2], 1)}"

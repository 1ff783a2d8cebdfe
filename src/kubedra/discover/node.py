"""``kubedra discover`` for every vendor: the GPU inputs each vendor reads, and the one given handed to its vendor.

Each vendor names its inputs (:meth:`kubedra.vendors.base.Vendor.discover_inputs`: NVIDIA's ``nvidia-smi -q -x`` XML
and NVML, AMD's ``amd-smi static --json``), each an option of the command, and builds its DRA driver's objects
from the one given (:meth:`kubedra.vendors.base.Vendor.discover_node`); this module only finds whose input it is."""

from __future__ import annotations

from kubedra import vendors
from kubedra.vendors.base import Vendor
from kubedra.vendors.discovery import DiscoveredNode, DiscoverInput, DiscoverRequest


def inputs() -> list[tuple[Vendor, DiscoverInput]]:
    """Every vendor's discover inputs, in registry order."""
    return [(v, i) for v in vendors.all() for i in v.discover_inputs()]


def discover(dest: str, value: str | None, request: DiscoverRequest) -> DiscoveredNode:
    """The objects from the input whose parameter is ``dest`` (``value``: its file, None for a flag)."""
    vendor, given = next((v, i) for v, i in inputs() if i.dest == dest)
    return vendor.discover_node(given, value, request)

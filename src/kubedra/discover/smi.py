"""``kubedra discover`` for a vendor that reads its own SMI JSON (AMD: ``amd-smi static --json``): the vendor builds
the DRA driver's objects (:meth:`kubedra.vendors.base.Vendor.smi_objects`); this module reads the file and
checks the options that only NVIDIA's path honours."""

from __future__ import annotations

from typing import Any

from kubedra import vendors
from kubedra.errors import UsageError
from kubedra.sources.files import read_text


def discover(
    vendor_name: str, path: str, node: str, *, include_classes: bool
) -> tuple[list[dict[str, Any]], list[str]]:
    """(objects, notes) for ``node`` from the vendor's SMI output in ``path`` (``-``: stdin)."""
    vendor = vendors.get(vendor_name)
    got = vendor.smi_objects(read_text(path), node)
    if got is None:
        raise UsageError(f"discover reads {vendor.title} GPUs through its own options, not SMI JSON")
    objects, notes = got
    if not include_classes:
        objects = [o for o in objects if o.get("kind") != "DeviceClass"]
    return objects, notes

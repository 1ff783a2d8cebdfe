"""A pod's GPU request in both worlds, model-free (the vendors sit below :mod:`kubedra.model`): what a vendor says a
device-plugin resource is as a request of a DRA claim, and a DRA request as a device-plugin resource
(:meth:`kubedra.vendors.base.Vendor.claim_request`, :meth:`~kubedra.vendors.base.Vendor.device_plugin_request`;
:mod:`kubedra.scheduler.convert` builds the model's objects from them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ClaimRequest:
    """One device-plugin resource as one request of a pod's DRA claim (simulate's DRA version of a pod), model-free:
    the DeviceClass and CEL selectors a device of it is claimed with, the opaque config (``{driver, parameters}``)
    that keeps the device plugin's own sharing of it (``nvidia.com/gpu.shared``: time-slicing), and how the run's
    options may reshape the request."""

    device_class: str
    selectors: tuple[str, ...] = ()
    config: dict[str, Any] | None = None
    sized: bool = (
        True  # a declared GPU memory adds the vendor's min_memory_selector (False: the profile fixes it)
    )
    shareable: bool = True  # one device per claim of it may be shared by several pods (--sharing)
    partitions: bool = (
        False  # --dra-sizing mig may offer the vendor's partition profiles instead (firstAvailable)
    )


@dataclass(frozen=True)
class DevicePluginRequest:
    """One DRA request (its DeviceClass and selectors) as the device plugin would hand it out (simulate's
    device-plugin version of a pod): the resource one device of it is, or why the device plugin cannot express it
    (the words after "claim <c> request <r>")."""

    resource: str | None = None
    reason: str | None = None

"""A pod's NVIDIA GPUs in both worlds (simulate, through :class:`kubedra.vendors.base.Vendor`): a device-plugin
resource as a request of a DRA claim, and a DRA request as a device-plugin resource.

Device plugin → DRA: ``nvidia.com/gpu`` is a device of DeviceClass ``gpu.nvidia.com``; ``nvidia.com/mig-<p>`` one
of ``mig.nvidia.com`` with the selector ``profile == '<p>'``; ``nvidia.com/gpu.shared`` (and a ``.shared`` MIG
profile) a device with the driver's time-slicing config (``GpuConfig``/``MigDeviceConfig``, :mod:`.names`).

DRA → device plugin: a request for ``gpu.nvidia.com`` without selectors is ``nvidia.com/gpu``, one for
``mig.nvidia.com`` whose only selector names a profile is ``nvidia.com/mig-<profile>`` (the device plugin spells
``+`` as ``.``), and an input DeviceClass whose one selector is the driver's class selector counts as that class.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from kubedra.vendors.base import GpuResource
from kubedra.vendors.claimshape import ClaimRequest, DevicePluginRequest
from kubedra.vendors.nvidia import names, resources

MIG_RESOURCE_PREFIX = names.RESOURCE_DOMAIN + "mig-"

# the device plugin's own spelling of a MIG profile with attributes: nvidia.com/mig-1g.10gb.me (profile 1g.10gb+me)
_MIG_DOTTED = re.compile(r"^nvidia\.com/mig-(?P<p>\d+g\.\d+gb)\.(?P<attrs>[a-z][a-z.]*)$")
# a whole GPU or a MIG device named in free text (a custom resource's field)
_GPU_TEXT = re.compile(r"nvidia\.com/(gpu|mig-)")
_CLASS_MIG = re.compile(
    r"^device\.driver == 'gpu\.nvidia\.com' && device\.attributes\['gpu\.nvidia\.com'\]\.type == 'mig' && "
    r"device\.attributes\['gpu\.nvidia\.com'\]\.profile == '(?P<p>[^']+)'$"
)
_PROFILE_SELECTOR = re.compile(
    r"""^\s*device\.attributes\[\s*['"]gpu\.nvidia\.com['"]\s*\]\.profile\s*==\s*['"](?P<p>[^'"]+)['"]\s*$"""
)


def pod_resource(name: str) -> GpuResource | None:
    """:func:`.resources.classify`, plus the device plugin's spelling of MIG profiles with attributes."""
    gr = resources.classify(name)
    if gr is not None and gr.kind == "manual":
        m = _MIG_DOTTED.match(name)
        if m:
            profile = f"{m.group('p')}+{m.group('attrs').replace('.', '+')}"
            return dataclasses.replace(gr, kind="mig", profile=profile, reason="", shared=False)
    return gr


def claim_request(gr: GpuResource) -> ClaimRequest:
    if gr.kind == "mig":
        assert gr.profile is not None
        config = names.opaque(names.sharing_parameters("TimeSlicing", mig=True)) if gr.shared else None
        return ClaimRequest(
            names.MIG_CLASS, (names.profile_selector(gr.profile),), config, sized=False, shareable=False
        )
    config = names.opaque(names.sharing_parameters("TimeSlicing")) if gr.kind == "shared" else None
    return ClaimRequest(names.GPU_CLASS, (), config, partitions=not gr.shared)


def _mig_resource(profile: str) -> str:
    return MIG_RESOURCE_PREFIX + profile.replace("+", ".")


def device_plugin_request(
    device_class: str, selectors: Sequence[str], class_selectors: Sequence[str] | None
) -> DevicePluginRequest | None:
    cls, profile = device_class, None
    if class_selectors is not None and len(class_selectors) == 1:
        sel = class_selectors[0].strip()
        if sel == names.class_selector("gpu"):
            cls = names.GPU_CLASS
        elif m := _CLASS_MIG.match(sel):
            cls, profile = names.MIG_CLASS, m.group("p")
    if profile is not None and not selectors:
        return DevicePluginRequest(_mig_resource(profile))
    if cls == names.GPU_CLASS and not selectors:
        return DevicePluginRequest(names.GPU_RESOURCE)
    if device_class == names.MIG_CLASS and len(selectors) == 1:
        m = _PROFILE_SELECTOR.match(selectors[0])
        if m:
            return DevicePluginRequest(_mig_resource(m.group("p")))
    if device_class in (names.GPU_CLASS, names.MIG_CLASS):
        return DevicePluginRequest(reason=f"selects devices with CEL ({'; '.join(selectors)})")
    return None


def names_gpu_resource(text: str) -> bool:
    return _GPU_TEXT.search(text) is not None

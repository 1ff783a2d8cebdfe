"""What plan and verify read back from an NVIDIA GPU node: the GPUs its GFD labels count (and what a message names
the count after), the physical GPU each device of the DRA driver's ResourceSlice is, and the whole-GPU share of a
device-plugin resource (a MIG profile ``<g>g`` is g of a GPU's 7 compute slices, as plan has always counted it)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from kubedra.vendors.nvidia import gfd, names
from kubedra.vendors.nvidia.nodes import sanitise

_MIG = re.compile(r"^nvidia\.com/mig-(\d+)g\.")
_WHOLE = (names.GPU_RESOURCE, names.GPU_RESOURCE + names.SHARED_SUFFIX)
# the driver's device types that are a GPU or part of one (cmd/gpu-kubelet-plugin: gpu, mig; vfio re-announces a GPU)
_GPU, _MIG_TYPE = "gpu", "mig"


def gpu_fraction(resource: str) -> Fraction | None:
    """Whole-GPU equivalents of one unit of ``resource``: 1 for ``nvidia.com/gpu`` and ``nvidia.com/gpu.shared``,
    g/7 for a MIG profile ``<g>g.*``; None for any other name."""
    m = _MIG.match(resource)
    if m:
        return Fraction(int(m.group(1)), 7)
    return Fraction(1) if resource in _WHOLE else None


def labelled_gpus(labels: Mapping[str, str], resources: Iterable[str] = ()) -> tuple[int | str | None, str]:
    """GFD's GPU count (:func:`kubedra.vendors.nvidia.gfd.physical_gpus`), and the label it is read from: under the
    single MIG strategy it counts MIG devices, which the layout turns into GPUs."""
    source = names.COUNT_LABEL + (
        f" of {gfd.mig_profile(labels)} MIG devices, over its mig.config layout"
        if gfd.single_strategy(labels)
        else ""
    )
    return gfd.physical_gpus(labels, resources), source


def _attr(device: Mapping[str, Any], name: str) -> Any:
    attrs = device.get("attributes")
    if not isinstance(attrs, Mapping):  # an edited snapshot's may be anything
        return None
    a = attrs.get(name) or attrs.get(f"{names.DRIVER}/{name}")
    if not isinstance(a, dict) or not a:
        return None
    return next(iter(a.values()))


def published_gpu(device: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """A ``gpu`` device's UUID, a ``mig`` device's parent UUID (a dynamic-MIG device without one: its counter set),
    else its name; and its ``productName`` as GFD sanitises it into ``nvidia.com/gpu.product``."""
    typ = _attr(device, "type")
    if typ not in (_GPU, _MIG_TYPE):
        return None
    ident = _attr(device, "uuid") if typ == _GPU else _attr(device, "parentUUID")
    counters = device.get("consumesCounters")
    if ident is None and isinstance(counters, list) and counters and isinstance(counters[0], dict):
        ident = counters[0].get("counterSet")
    product = _attr(device, "productName")
    return str(ident or device.get("name")), sanitise(str(product)) if product else None

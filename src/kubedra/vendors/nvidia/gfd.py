"""What GPU Feature Discovery's Node labels say about a node's GPUs, read back.

GFD (NVIDIA/k8s-device-plugin ``internal/lm``) writes the labels :mod:`kubedra.vendors.nvidia.nodes` generates;
this module is the other direction, for Nodes read from a cluster or a snapshot. Two facts from its code that
reading the labels naively gets wrong:

- ``nvidia.com/mig.strategy`` is set on every node when the strategy is single or mixed (the GPU Operator's
  default is single), MIG-capable or not; it does not say that MIG is on.
- Under the single strategy, once MIG is on, the MIG labeler replaces the full-GPU labels
  (``mig-strategy.go``, ``newMigStrategySingleLabeler``): ``nvidia.com/gpu.product`` becomes
  ``<product>-MIG-<profile>`` (``-MIG-INVALID`` when the set-up breaks the strategy's rules) and
  ``nvidia.com/gpu.count`` is the number of MIG devices, not of GPUs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from kubedra.errors import InputError
from kubedra.k8s.workloads import as_int
from kubedra.vendors.nvidia import models, names
from kubedra.vendors.nvidia import modes as nvidia_modes
from kubedra.vendors.nvidia.nodes import sanitise
from kubedra.vendors.nvidia.specs import MAX_GPUS_PER_NODE

PRODUCT = names.PRODUCT_LABEL
COUNT = names.COUNT_LABEL
MIG_CONFIG = "nvidia.com/mig.config"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
# GFD's sharing label: time-slicing or mps when the device plugin's config shares the GPUs, none otherwise
SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy"


def base_product(label: str) -> str:
    """The board's sanitised product name, without GFD's ``-SHARED`` and ``-MIG-<profile>`` suffixes."""
    return re.sub(r"-(SHARED|MIG-.*)$", "", label)


def product_model(label: str) -> models.GpuModel | None:
    """The catalogue's model for a ``nvidia.com/gpu.product`` value; None when the board is not in it."""
    base = base_product(label)
    for model in models.gpu_models().values():
        if sanitise(model.product_name) == base:
            return model
    return None


def single_strategy(labels: Mapping[str, str]) -> bool:
    """The single MIG strategy in effect (MIG on): GFD names the product ``<model>-MIG-<profile>``."""
    return "-MIG-" in labels.get(PRODUCT, "")


def mig_profile(labels: Mapping[str, str]) -> str:
    """The MIG profile every ``nvidia.com/gpu`` is under the single strategy ("" when it is not in effect)."""
    return labels.get(PRODUCT, "").rpartition("-MIG-")[2] if single_strategy(labels) else ""


def int_label(labels: Mapping[str, str], key: str) -> int | None:
    """A label's whole number (ASCII digits, as GFD writes them); None otherwise ("²" is a digit to
    ``str.isdigit`` and no number to ``int``)."""
    return as_int(labels.get(key))


def gpu_mode(labels: Mapping[str, str], resources: Iterable[str]) -> str | None:
    """The node's GPU set-up as a ``--gpu-mode`` text, from its labels and its extended resource names; None
    when MIG is on but its layout is not in the labels (``nvidia.com/mig.config`` absent or ``custom``).

    MIG is on when the node has mixed-strategy resources (``nvidia.com/mig-*``), a single-strategy product,
    or a ``mig.config`` other than ``all-disabled`` (mig-parted's layout names, as the GPU Operator sets them)."""
    config = labels.get(MIG_CONFIG)
    mig_on = any(r.startswith(MIG_RESOURCE_PREFIX) for r in resources) or single_strategy(labels)
    if mig_on or (config and config != "all-disabled"):
        if config and config not in ("custom", "all-disabled"):
            return f"mig-static:{config}"
        return None
    replicas = int_label(labels, "nvidia.com/gpu.replicas") or 1
    strategy = labels.get(SHARING_STRATEGY, "none")
    if replicas > 1:
        return f"{'mps' if strategy == 'mps' else 'time-slicing'}:{replicas}"
    return "full"


def physical_gpus(labels: Mapping[str, str], resources: Iterable[str] = ()) -> int | str | None:
    """The node's physical GPUs as its labels tell them: ``nvidia.com/gpu.count``, or under the single MIG
    strategy that many MIG devices over the instances per GPU of the node's ``mig.config`` layout. None without a
    count label; a reason (str) when the labels do not tell."""
    count = int_label(labels, COUNT)
    if count is None:
        return None
    if not single_strategy(labels):
        if count > MAX_GPUS_PER_NODE:  # an edited label: never a loop or a slice per claimed GPU
            return (
                f"nvidia.com/gpu.count {count} is more GPUs than a node holds (at most {MAX_GPUS_PER_NODE})"
            )
        return count
    product = labels.get(PRODUCT, "")
    if product.endswith("-MIG-INVALID"):
        return f"GPU Feature Discovery marks its MIG set-up invalid for the single strategy ({product})"
    model = product_model(product)
    mode = gpu_mode(labels, resources)
    if model is None or mode is None or not mode.startswith("mig-static:"):
        return (
            f"under the single MIG strategy nvidia.com/gpu.count ({count}) counts MIG devices, and "
            + (
                "the GPU model is not in kubedra's catalogue"
                if model is None
                else "nvidia.com/mig.config does not"
            )
            + " tell how many a GPU holds"
        )
    return gpus_for_mig_devices(model, count, mode)


def gpus_for_mig_devices(model: models.GpuModel, migs: int, mode: str) -> int | str:
    """The GPUs whose ``mode`` layout holds exactly ``migs`` MIG instances; a reason (str) when none does."""
    try:
        parsed = nvidia_modes.parse_gpu_mode(mode)
    except InputError as e:
        return f"its MIG set-up {mode!r} is not one kubedra knows ({e})"
    for gpus in range(1, min(migs, MAX_GPUS_PER_NODE) + 1):  # bounded: a label may say anything
        try:
            instances = sum(len(layout or ()) for layout in parsed.gpu_layouts(model, gpus))
        except InputError as e:
            return f"its MIG layout {parsed.layout_text!r} does not apply to {model.key} ({e})"
        if instances == migs:
            return gpus
        if instances > migs or instances == 0:
            break
    return (
        f"nvidia.com/gpu.count {migs} (MIG devices under the single MIG strategy) is no whole number of GPUs "
        f"with layout {parsed.layout_text!r}"
    )

"""simulate's two views of a cluster, for NVIDIA GPUs (:class:`kubedra.vendors.base.Vendor`'s simulate block): the
device plugin's mode and notes for a generated cluster, the device plugin's resources and GPU Feature Discovery's
labels for a node known from the DRA driver's slices, and the driver's slices for a node known from GFD's labels.

Moved here from :mod:`kubedra.simulate.cluster` (the vendor seam): simulate asks, NVIDIA answers.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from kubedra.errors import InputError
from kubedra.text import noun
from kubedra.vendors.base import ClaimSharing, DerivedView, PublishedDevice
from kubedra.vendors.nvidia import cluster, dra, gfd, identity, modes, names, nodes, specs
from kubedra.vendors.simulated import SimulatedGroup, SliceIdentities

MIB = 1024 * 1024


def device_plugin_mode(mode: str) -> tuple[str, str | None]:
    if modes.parse_gpu_mode(mode).kind == "mig-dynamic":
        return "full", (
            "mig-dynamic has no device-plugin equivalent: the device-plugin view runs the GPUs whole "
            f"(MIG off, {names.GPU_RESOURCE}); set --dp-gpu-mode mig-static:<layout> to compare with a fixed MIG "
            "layout"
        )
    return mode, None


def check_mode(spec: str, mode: str) -> None:
    parsed = modes.parse_gpu_mode(mode)
    for group in specs.parse_node_spec(spec):
        parsed.check_model(group.model)


def generated_notes(spec: str, dra_mode: str) -> list[str]:
    if modes.parse_gpu_mode(dra_mode).kind != "mig-dynamic":
        return []
    return [
        "mig-dynamic: the NVIDIA DRA driver's DynamicMIG feature gate (alpha, off by default) announces "
        "every MIG profile and placement and creates the instance when a claim is prepared"
        + (
            "; on Ampere (A100) this needs MIG mode enabled, and the full GPU is then not announced"
            if "A100" in spec.upper()
            else ""
        )
    ]


def device_plugin_view(node: str, devices: Sequence[PublishedDevice]) -> DerivedView:
    """The device plugin's extended resources (and GFD's memory and count labels) for the devices the DRA driver
    publishes on ``node``: full GPUs, static MIG devices; dynamic MIG counts as whole GPUs."""
    out = DerivedView()
    gpus, labels = out.resources, out.labels
    gpu = names.GPU_RESOURCE
    sets: set[str] = set()
    full_sets: set[str] = set()
    count = 0
    for d in devices:
        if d.counter_set is not None:
            sets.add(d.counter_set)
            if d.type == "gpu":
                full_sets.add(d.counter_set)
                gpus[gpu] = gpus.get(gpu, 0) + 1
                labels.setdefault(names.MEMORY_LABEL, str(d.memory // MIB))
            continue
        if d.type == "gpu":
            gpus[gpu] = gpus.get(gpu, 0) + 1
            labels.setdefault(names.MEMORY_LABEL, str(d.memory // MIB))
            count += 1
        elif d.type == "mig":
            res = nodes.mig_resource_name(str(d.profile))
            gpus[res] = gpus.get(res, 0) + 1
            labels.setdefault(f"{res}.memory", str(d.memory // MIB))
    dynamic_only = sets - full_sets
    if dynamic_only:
        gpus[gpu] = gpus.get(gpu, 0) + len(dynamic_only)
        out.notes.append(
            f"node {node}: dynamic MIG has no device-plugin equivalent; the device-plugin view counts "
            f"its {len(dynamic_only)} MIG-only {noun(len(dynamic_only), 'GPU')} as whole GPUs"
        )
    count += len(sets)
    count += len({d.parent for d in devices if d.counter_set is None} - {None})
    if count:
        labels[names.COUNT_LABEL] = str(count)  # the caller keeps a count label the node already has
    return out


def dra_view(
    node: str, labels: Mapping[str, str], alloc: Mapping[str, int], mode: str | None, k8s_version: str
) -> DerivedView:
    """The DRA driver's slices for a device-plugin node, from its GFD labels and the catalogue."""
    product = labels.get(names.PRODUCT_LABEL, "")
    model = gfd.product_model(product)
    if model is None:
        what = (
            f"GPU model {product!r} is not in kubedra's catalogue"
            if product
            else f"no {names.PRODUCT_LABEL} label (GPU Feature Discovery)"
        )
        return DerivedView(reason=f"no DRA view: {what}; add its ResourceSlices, or use --nodes")
    mode = mode or gfd.gpu_mode(labels, alloc)
    if mode is None:
        return DerivedView(
            reason=f"no DRA view: its MIG layout is not known from the labels ({gfd.MIG_CONFIG}); "
            "pass --gpu-mode for the DRA view"
        )
    # under the single MIG strategy GFD counts MIG devices: the GPUs come from the layout the node runs, not from
    # --gpu-mode's
    gpus = gfd.physical_gpus(labels, alloc)
    if not isinstance(gpus, int):
        why = gpus or f"no {names.COUNT_LABEL} label (GPU Feature Discovery)"
        return DerivedView(reason=f"no DRA view: {why}; add its ResourceSlices, or use --nodes")
    out = DerivedView(objects=dra.dra_objects(node, model, gpus, mode, k8s_version))
    if gfd.single_strategy(labels):
        out.notes.append(
            f"node {node} runs mig-strategy single: its {names.GPU_RESOURCE} devices are "
            f"{gfd.mig_profile(labels)} MIG instances, while a pod's DRA version asks for a whole GPU "
            "unless --dra-sizing mig (with --gpu-memory or the kubedra.io/gpu-memory annotation)"
        )
    return out


def resource_label(name: str) -> str:
    return "whole GPU" if name == names.GPU_RESOURCE else name.removeprefix(names.RESOURCE_DOMAIN)


def claim_sharing(mode: str) -> ClaimSharing | None:
    """A claim shared in time (``time-slicing:<n>``) or through MPS (``mps:<n>``): the driver's ``GpuConfig``."""
    try:
        parsed = modes.parse_gpu_mode(mode)
    except InputError:
        return None
    cfg = dra.dra_sharing_config(parsed)
    if cfg is None:
        return None
    return ClaimSharing(str(parsed), parsed.replicas, cfg["opaque"]["driver"], cfg["opaque"]["parameters"])


def _gpu_keys(slices: list[dict[str, Any]]) -> tuple[set[int], set[tuple[int, int, int]]]:
    """GPU minors and static MIG placements (minor, GI profile ID, start) that the devices' names give."""
    minors: set[int] = set()
    migs: set[tuple[int, int, int]] = set()
    for s in slices:
        for d in s["spec"].get("devices") or ():
            parts = str(d["name"]).split("-")
            if len(parts) < 2 or parts[0] != "gpu" or not parts[1].isdigit():
                continue
            minors.add(int(parts[1]))
            if (
                parts[2:3] == ["mig"]
                and "uuid" in (d.get("attributes") or {})
                and parts[-1].isdigit()
                and parts[-2].isdigit()
            ):
                migs.add((int(parts[1]), int(parts[-2]), int(parts[-1])))
    return minors, migs


def _clone(
    keys: tuple[set[int], set[tuple[int, int, int]]], template: str, node: str, count: int
) -> SliceIdentities:
    minors, migs = keys
    values = {identity.gpu_uuid(template, m): identity.gpu_uuid(node, m) for m in minors}
    for m, pid, start in migs:
        values[identity.mig_uuid(template, m, pid, start)] = identity.mig_uuid(node, m, pid, start)
    return SliceIdentities(values, [dra.slice_metadata(node, i, count) for i in range(count)])


def simulated_groups(spec: str, mode: str, k8s_version: str, device_plugin: bool) -> list[SimulatedGroup]:
    """The catalogue's nodes group by group: UUIDs from the node name and the GPU minor (MIG placement), so a
    copy's identities are the template's with the node renamed."""
    groups = specs.parse_node_spec(spec)
    out = []
    for group, group_names in zip(groups, cluster.node_names(groups), strict=True):
        gpu_mode = cluster.mode_for(mode, group.model)
        make = nodes.device_plugin_node if device_plugin else nodes.dra_node
        node = functools.partial(
            make, model=group.model, gpus=group.gpus_per_node, mode=gpu_mode, k8s_version=k8s_version
        )
        slices = functools.partial(
            _slices, model=group.model, gpus=group.gpus_per_node, mode=gpu_mode, k8s_version=k8s_version
        )
        out.append(SimulatedGroup(group_names, node, slices, _Cloner(slices)))
    return out


def _slices(node: str, **kw: Any) -> list[dict[str, Any]]:
    return dra.dra_objects(node, kw["model"], kw["gpus"], kw["mode"], kw["k8s_version"])


class _Cloner:
    """A group's clone: the template's GPU keys read once, from its own objects."""

    def __init__(self, slices: Any) -> None:
        self._slices = slices
        self._keys: dict[str, tuple[set[int], set[tuple[int, int, int]]]] = {}

    def __call__(self, template: str, node: str, count: int) -> SliceIdentities:
        keys = self._keys.get(template)
        if keys is None:
            keys = self._keys[template] = _gpu_keys(self._slices(template))
        return _clone(keys, template, node, count)

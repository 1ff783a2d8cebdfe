"""simulate's two views of a cluster, for AMD GPUs (:class:`kubedra.vendors.base.Vendor`'s simulate block).

Facts (``kubedra/data/amd-gpu.yaml``, with their upstream files): the ROCm device plugin's default "single" naming
strategy advertises every device, whole GPU or partition, as ``amd.com/gpu``, its "mixed" strategy a partition
style as ``amd.com/<compute>_<memory>``; the node labeller writes ``amd.com/gpu.product-name`` and
``amd.com/gpu.vram`` (GiB, "192G") and no GPU count; AMD's DRA driver publishes type ``amdgpu`` (whole) or
``amdgpu-partition``. So a device-plugin node's DRA view needs its model (the product label) and its partition
mode: a mixed resource name says it, ``amd.com/gpu`` does not (``--gpu-mode`` then says it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubedra.errors import InputError
from kubedra.vendors.amd import cluster
from kubedra.vendors.base import DerivedView, PublishedDevice

GIB = 1024**3


def generated_notes(dra_mode: str, dp_mode: str) -> list[str]:
    if all(m.startswith("spx_") for m in (dra_mode, dp_mode)):
        return []
    return [
        "partitioned AMD GPUs: each partition counts as a GPU in 'GPUs used / physical', and the device-plugin "
        "memory figures are the whole GPU's (the device plugin does not say which GPU a partition is part of)"
    ]


def check_mode(spec: str, mode: str) -> None:
    for group in cluster.parse_spec(spec):
        group.model.partitions(mode)


def device_plugin_view(
    gpu_resource: str, vram_label: str, types: Mapping[str, str], devices: Sequence[PublishedDevice]
) -> DerivedView:
    """The "single" strategy's ``amd.com/gpu``: one unit per device the driver publishes, whole or partition; the
    labeller's VRAM label from a whole device's memory (it reads the card's total, in GiB)."""
    out = DerivedView()
    mine = [d for d in devices if d.type in types.values()]
    if mine:
        out.resources[gpu_resource] = len(mine)
    whole = [d.memory for d in mine if d.memory and d.type == types["gpu"]]
    if whole:
        out.labels[vram_label] = f"{round(max(whole) / GIB)}G"
    return out


def dra_view(
    node: str,
    labels: Mapping[str, str],
    alloc: Mapping[str, int],
    mode: str | None,
    names: tuple[str, str, str],
) -> DerivedView:
    """AMD's DRA driver's slice for a device-plugin node (``names``: the product label, the VRAM label and the
    device plugin's whole-GPU resource)."""
    product_label, vram_label, gpu_resource = names
    label = labels.get(product_label, "")
    model = next((m for m in cluster.models() if m.label == label), None)
    if model is None:
        what = f"AMD GPU {label!r} is not in kubedra's catalogue" if label else f"no {product_label} label"
        return DerivedView(
            reason=f"no DRA view: {what} (ROCm node labeller); add its ResourceSlices, or use --nodes"
        )
    devices = sum(alloc.values())
    mixed = [k.split("/", 1)[1] for k in alloc if k != gpu_resource]
    profile = mode or (mixed[0] if len(mixed) == 1 and gpu_resource not in alloc else None)
    if profile is None:
        return DerivedView(
            reason=f"no DRA view: its partition mode is not known ({gpu_resource} counts whole GPUs and partitions "
            "alike); pass --gpu-mode spx_nps1 (or the mode it runs) for the DRA view"
        )
    try:
        per_gpu = model.devices_per_board * model.partitions(profile)
    except InputError as e:
        return DerivedView(reason=f"no DRA view: {e}")
    if devices % per_gpu:
        return DerivedView(
            reason=f"no DRA view: {devices} devices are not whole {model.key} GPUs in {profile} ({per_gpu} per GPU)"
        )
    raw = labels.get(vram_label, "")
    memory = (
        int(raw[:-1]) * GIB
        if raw.endswith("G") and raw[:-1].isdigit() and profile.startswith("spx_")
        else None
    )
    objects = cluster.cluster(
        f"1x{devices // per_gpu}x{model.key}", profile, device_plugin=False, node=node, memory=memory
    )
    return DerivedView(objects=[o for o in objects if o["kind"] == "ResourceSlice"])

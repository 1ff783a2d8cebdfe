"""A device-plugin Node's NVIDIA GPUs as its extended resources and GPU Feature Discovery labels tell them:
physical GPUs, a GPU's memory, time-slicing replicas and the memory of one unit of each resource
(:class:`kubedra.vendors.base.DevicePluginGpus`), and how many GPUs a set of used units occupies."""

from __future__ import annotations

import re
from collections.abc import Mapping

from kubedra.vendors.base import DevicePluginGpus
from kubedra.vendors.nvidia import gfd, names

MIB = 1024 * 1024
GPU = names.GPU_RESOURCE
GPU_SHARED = names.RESOURCE_DOMAIN + "gpu.shared"
MIG_PREFIX = names.RESOURCE_DOMAIN + "mig-"
_MIG_GB = re.compile(r"^\d+g\.(\d+)gb")


def device_plugin_gpus(labels: Mapping[str, str], alloc: Mapping[str, int]) -> DevicePluginGpus:
    """``alloc``: the node's allocatable GPU resources (name -> count)."""
    replicas = gfd.int_label(labels, names.RESOURCE_DOMAIN + "gpu.replicas") or 1
    gpu_mib = gfd.int_label(labels, names.MEMORY_LABEL) or 0
    # the single MIG strategy in effect (not merely configured: GFD labels mig.strategy on every node)
    single = gfd.single_strategy(labels)
    info = DevicePluginGpus(gpu_memory=gpu_mib * MIB, replicas=max(replicas, 1), vendor="nvidia")
    for res in alloc:
        if res.startswith(MIG_PREFIX):
            profile = res[len(MIG_PREFIX) :]
            mib = gfd.int_label(labels, f"{res}.memory")
            if mib is None:
                m = _MIG_GB.match(profile)
                info.unit_memory[res] = int(m.group(1)) * 10**9 if m else 0
            else:
                info.unit_memory[res] = mib * MIB
        elif res == GPU and single:
            info.unit_memory[res] = gpu_mib * MIB
        else:
            info.unit_memory[res] = info.gpu_memory // info.replicas
    gpus = gfd.physical_gpus(labels, alloc)  # under the single strategy GFD counts MIG devices
    if isinstance(gpus, int):
        info.physical = gpus
    else:
        whole = alloc.get(GPU, 0) + alloc.get(GPU_SHARED, 0)
        info.physical = -(-whole // info.replicas) if not single else 0
        mig = sum(n * info.unit_memory.get(r, 0) for r, n in alloc.items() if r.startswith(MIG_PREFIX))
        if mig and info.gpu_memory:
            info.physical += -(-mig // info.gpu_memory)
    return info


def used_gpus(info: DevicePluginGpus, used: Mapping[str, int]) -> int:
    """GPUs with at least one unit in use. Whole GPUs: one per unit; shared replicas: the device plugin
    spreads them over the GPUs (distributed allocation); MIG instances: packed onto as few GPUs as
    their memory needs (a lower bound: the device plugin does not say which GPU holds an instance)."""
    whole = shared = 0
    mig_bytes = 0
    mig_units = 0
    for res, n in used.items():
        if n <= 0:
            continue
        if res == GPU and info.replicas <= 1:
            whole += n
        elif res in (GPU, GPU_SHARED):
            shared += n
        elif res.startswith(MIG_PREFIX):
            mig_bytes += n * info.unit_memory.get(res, 0)
            mig_units += n
        else:  # another vendor's device on the same node: one GPU each
            whole += n
    gpus = whole + min(shared, max(info.physical - whole, 0))
    if mig_units:
        gpus += max(1, -(-mig_bytes // info.gpu_memory)) if info.gpu_memory else 1
    return min(gpus, info.physical) if info.physical else gpus

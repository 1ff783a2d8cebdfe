"""A node's AMD GPUs from ``amd-smi static --json``, as the ResourceSlice AMD's DRA driver would publish for them.

The format is amd-smi's (ROCm/amdsmi ``amdsmi_cli/amdsmi_commands.py`` ``static`` and ``amdsmi_logger.py``
``_print_json_output`` at 0ceca28f, after amdsmi_pkg_ver-24.5.3, ROCm 6.2): a JSON list with one object per
GPU (per partition when the GPU is partitioned), each with ``gpu`` (its index), ``asic.market_name``
(``AMD Instinct MI300X``), ``asic.num_compute_units``, ``bus.bdf``, ``vram.size`` (``{"value": N, "unit": "MB"}``,
MiB as amdgpu reports them) and ``partition`` (``compute_partition`` ``SPX``/``CPX``..., ``memory_partition``
``NPS1``/``NPS4``, ``N/A`` on GPUs without partitioning). Newer amd-smi releases wrap the list as
``{"gpu_data": [...]}``; both are read.

What is not in the output, and so comes from elsewhere (each said in a note): the driver names a device
``gpu-<card>-<renderD minor>`` from sysfs, which amd-smi static does not print (numbered here from the GPU
index); a partition's memory is the GPU's divided by its partition count (the catalogue's, since amd-smi reports
per-partition VRAM differently across releases).
"""

from __future__ import annotations

import json
from typing import Any

from kubedra.errors import InputError, UsageError
from kubedra.vendors.amd import cluster
from kubedra.vendors.discovery import DiscoveredNode, DiscoverInput, DiscoverRequest

MAX_GPUS = 512  # 64 GPUs of 8 partitions: more is not one node's amd-smi output

INPUT = DiscoverInput(
    "--amd-smi-json",
    "Output of `amd-smi static --json` (- for stdin): the slice AMD's DRA driver (gpu.amd.com) would publish.",
)


def _entries(text: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise InputError(f"amd-smi output is not JSON: {str(e)[:120]}") from None
    if isinstance(data, dict) and isinstance(data.get("gpu_data"), list):
        data = data["gpu_data"]
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise InputError("amd-smi output is not a list of GPUs (expected `amd-smi static --json`)")
    if not data:
        raise InputError("amd-smi output lists no GPU")
    if len(data) > MAX_GPUS:
        raise InputError(
            f"amd-smi output lists {len(data)} GPUs, more than one node has (at most {MAX_GPUS})"
        )
    return data


def _model(entry: dict[str, Any]) -> cluster.AmdModel:
    asic = entry.get("asic")
    name = asic.get("market_name") if isinstance(asic, dict) else None
    if not isinstance(name, str):
        raise InputError(f"GPU {entry.get('gpu')}: no asic.market_name (run `amd-smi static --json`)")
    words = name.replace("_", " ").upper().split()
    model = next((m for m in cluster.models() if m.key.upper() in words), None)
    if model is None:
        known = ", ".join(m.key for m in cluster.models())
        raise InputError(f"GPU {entry.get('gpu')}: {name!r} is not in kubedra's AMD catalogue ({known})")
    return model


def _profile(entry: dict[str, Any]) -> str:
    part = entry.get("partition")
    if not isinstance(part, dict):
        return "spx_nps1"
    compute, memory = str(part.get("compute_partition", "N/A")), str(part.get("memory_partition", "N/A"))
    if compute == "N/A" and memory == "N/A":
        return "spx_nps1"  # a GPU without partitioning (MI200 series)
    return f"{compute.lower()}_{memory.lower()}"


def _vram_bytes(entry: dict[str, Any]) -> int | None:
    vram = entry.get("vram")
    size = vram.get("size") if isinstance(vram, dict) else None
    if isinstance(size, dict) and size.get("unit") == "MB" and isinstance(size.get("value"), int):
        return int(size["value"]) * 1024 * 1024
    return None


def node_objects(text: str, node: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The DRA driver's DeviceClass and one ResourceSlice for ``node`` from amd-smi's JSON; notes say what was
    not read from it."""
    entries = _entries(text)
    models = {_model(e).key: _model(e) for e in entries}
    if len(models) > 1:
        raise InputError(
            f"amd-smi lists more than one GPU model ({', '.join(models)}); kubedra models one per node"
        )
    (model,) = models.values()
    profiles = {_profile(e) for e in entries}
    if len(profiles) > 1:
        raise InputError(f"amd-smi lists GPUs in different partition modes ({', '.join(sorted(profiles))})")
    (profile,) = profiles
    parts = model.partitions(profile)
    per_board = parts * model.devices_per_board
    if len(entries) % per_board:
        raise InputError(
            f"{len(entries)} amd-smi entries are not whole {model.key} boards in {profile} ({per_board} each)"
        )
    gpus = len(entries) // per_board
    memory = _vram_bytes(entries[0]) if parts == 1 else None
    notes = [
        "device names gpu-<card>-<render> are numbered from the GPU index: amd-smi static does not print the "
        "card and renderD minors the driver names devices after"
    ]
    if memory is None:
        notes.append(f"device memory from the catalogue ({model.key}, {profile}), not from amd-smi")
    objects = cluster.cluster(f"1x{gpus}x{model.key}", profile, device_plugin=False, node=node, memory=memory)
    return [o for o in objects if o["kind"] != "Node"], notes


def refuse_options(request: DiscoverRequest) -> None:
    """UsageError naming each option of ``request`` that ``--amd-smi-json`` cannot honour, and why: checked before
    the file is read."""
    refused = {
        "--mode": request.mode != "auto",
        "--with-node": request.include_node,
        "--driver-version": bool(request.driver_release),
        "--no-health-taints": not request.health_taints,
    }
    given = [o for o, on in refused.items() if on]
    if given:
        raise UsageError(
            f"{', '.join(given)}: not taken with {INPUT.option} (the partition mode is amd-smi's, AMD's "
            "Node labels and driver releases are not modelled, and amd-smi static reports no health)"
        )


def discovered(objects: list[dict[str, Any]], notes: list[str], request: DiscoverRequest) -> DiscoveredNode:
    """:func:`node_objects`' objects and notes as ``kubedra discover`` writes them (``--no-classes``: no
    DeviceClass)."""
    driver = next(o["spec"]["driver"] for o in objects if o["kind"] == "ResourceSlice")
    if not request.include_classes:
        objects = [o for o in objects if o["kind"] != "DeviceClass"]
    return DiscoveredNode(objects=objects, summary=f"amd-smi, AMD DRA driver {driver}", notes=notes)

"""Simulated AMD GPU nodes from the catalogue in ``kubedra/data/amd-gpu.yaml``: what the ROCm device plugin and node
labeller leave on a Node, and what AMD's DRA driver (``gpu.amd.com``) publishes in its ResourceSlices.

A node runs its GPUs in one partition mode, ``<compute>_<memory>`` as the driver spells ``partitionProfile``
(``spx_nps1``: whole GPUs, the default; ``cpx_nps4``: eight partitions per MI300X). The device plugin under its
default "single" naming strategy advertises every device, whole GPU or partition, as ``amd.com/gpu``; the DRA
driver publishes a whole GPU as type ``amdgpu`` and a partition as ``amdgpu-partition``, each with its own memory
(the GPU's divided by the partition count), compute units and ``partitionProfile``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from kubedra.errors import InputError
from kubedra.k8s import datafiles
from kubedra.vendors.simulated import SimulatedGroup, SliceIdentities, numbered_node_names, single_node_slice

MAX_GPUS_PER_NODE = 64
_GROUP = re.compile(r"^(?P<count>\d{1,12})x(?P<gpus>\d{1,6})x(?P<model>[A-Za-z0-9][A-Za-z0-9.\-]*)$")
_PROFILE = re.compile(r"^(?P<compute>[a-z]+)_(?P<memory>nps\d+)$")
GIB = 1024**3


@dataclass(frozen=True)
class AmdModel:
    key: str
    aliases: tuple[str, ...]
    product: str
    label: str
    vram_gib: int
    compute_units: int
    devices_per_board: int
    compute_partitions: dict[str, int]
    memory_partitions: dict[str, list[str]]

    @property
    def device_memory(self) -> int:
        """Bytes of one device (a GCD on MI250/MI250X, the whole GPU otherwise)."""
        return self.vram_gib * GIB // self.devices_per_board

    @property
    def device_cus(self) -> int:
        return self.compute_units // self.devices_per_board

    @property
    def slug(self) -> str:
        return self.key.lower()

    def partitions(self, profile: str) -> int:
        """Devices per GPU in ``profile`` (``cpx_nps4``); InputError when the model cannot run it."""
        m = _PROFILE.match(profile)
        if not m or m.group("compute") not in self.compute_partitions:
            modes = ", ".join(f"{c}_{n}" for n, cs in self.memory_partitions.items() for c in cs)
            raise InputError(f"{self.key} cannot run partition mode {profile!r} (it runs {modes})")
        if m.group("compute") not in self.memory_partitions.get(m.group("memory"), []):
            raise InputError(
                f"{self.key}: compute partition {m.group('compute').upper()} is not allowed with memory partition "
                f"{m.group('memory').upper()} (allowed: "
                + ", ".join(
                    f"{c.upper()}+{n.upper()}" for n, cs in self.memory_partitions.items() for c in cs
                )
                + ")"
            )
        return self.compute_partitions[m.group("compute")]


@dataclass(frozen=True)
class AmdGroup:
    nodes: int
    gpus_per_node: int
    model: AmdModel


@functools.cache
def _data() -> dict[str, Any]:
    data = datafiles.load("amd-gpu.yaml")
    assert isinstance(data, dict)
    return data


@functools.cache
def models() -> tuple[AmdModel, ...]:
    return tuple(
        AmdModel(
            key=str(m["key"]),
            aliases=tuple(str(a) for a in m.get("aliases") or ()),
            product=str(m["product"]),
            label=str(m["label"]),
            vram_gib=int(m["vram_gib"]),
            compute_units=int(m["compute_units"]),
            devices_per_board=int(m["devices_per_board"]),
            compute_partitions={str(k): int(v) for k, v in m["compute_partitions"].items()},
            memory_partitions={str(k): [str(c) for c in v] for k, v in m["memory_partitions"].items()},
        )
        for m in _data()["models"]
    )


def find_model(name: str) -> AmdModel | None:
    low = name.lower()
    return next((m for m in models() if low == m.key.lower() or low in (a.lower() for a in m.aliases)), None)


def owns_spec(part: str) -> bool:
    """Whether one ``<nodes>x<gpus>x<model>`` group names an AMD model."""
    m = _GROUP.match(part.strip())
    return m is not None and find_model(m.group("model")) is not None


def parse_spec(text: str) -> list[AmdGroup]:
    groups = []
    for part in text.split(","):
        m = _GROUP.match(part.strip())
        if m is None:
            raise InputError(f"invalid AMD node spec {part!r}")
        model = find_model(m.group("model"))
        if model is None:
            raise InputError(f"invalid AMD node spec {part!r}")
        count, gpus = int(m.group("count")), int(m.group("gpus"))
        if count < 1 or not 1 <= gpus <= MAX_GPUS_PER_NODE:
            raise InputError(
                f"invalid node spec {part!r}: at least one node, and 1 to {MAX_GPUS_PER_NODE} GPUs per node"
            )
        groups.append(AmdGroup(count, gpus, model))
    return groups


def is_profile(mode: str | None) -> bool:
    """Whether a ``--gpu-mode`` value is an AMD partition mode (``spx_nps1``, ``cpx_nps4``)."""
    return bool(mode) and _PROFILE.match(str(mode)) is not None


def _node(name: str, model: AmdModel, gpus: int, extended: dict[str, int]) -> dict[str, Any]:
    shape = _data()["node"]
    labels_spec = _data()["devicePlugin"]["labels"]
    capacity = {"cpu": str(shape["cpu"]), "memory": str(shape["memory"]), "pods": str(shape["pods"])}
    capacity.update({k: str(v) for k, v in extended.items()})
    labels = {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        labels_spec["present"]: "true",
        labels_spec["product"]: model.label,
        labels_spec["memory"]: f"{model.device_memory // GIB}G",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def _devices(model: AmdModel, gpus: int, profile: str, memory: int | None = None) -> list[dict[str, Any]]:
    parts = model.partitions(profile)
    device_memory = memory or model.device_memory
    driver = _data()["draDriver"]
    types = driver["deviceTypes"]
    out = []
    index = 0
    for _gpu in range(gpus * model.devices_per_board):
        for _p in range(parts):
            # INFERRED numbering: the driver names a device gpu-<card>-<renderD minor>; real indices vary by host
            out.append(
                {
                    "name": f"gpu-{index + 1}-{128 + index}",
                    "attributes": {
                        "type": {"string": types["gpu"] if parts == 1 else types["partition"]},
                        "productName": {"string": model.product},
                        "partitionProfile": {"string": profile},
                    },
                    "capacity": {
                        "memory": {"value": str(device_memory // parts)},
                        "computeUnits": {"value": str(model.device_cus // parts)},
                    },
                }
            )
            index += 1
    return out


def node_names(groups: list[AmdGroup]) -> list[list[str]]:
    return numbered_node_names((g.model.slug, g.nodes) for g in groups)


def _slice(name: str, model: AmdModel, gpus: int, profile: str, memory: int | None = None) -> dict[str, Any]:
    return single_node_slice(
        name, str(_data()["draDriver"]["driver"]), _devices(model, gpus, profile, memory)
    )


def groups(spec: str, profile: str, *, device_plugin: bool) -> list[SimulatedGroup]:
    """:func:`cluster`'s nodes group by group (simulate's typed copies): a node's one slice differs from another's
    only in its name (no device carries a UUID)."""
    gpu_resource = str(_data()["devicePlugin"]["gpuResource"])
    out = []
    for group, names in zip(parse_spec(spec), node_names(parse_spec(spec)), strict=True):
        parts = group.model.partitions(profile)
        extended = (
            {gpu_resource: group.gpus_per_node * group.model.devices_per_board * parts}
            if device_plugin
            else {}
        )
        out.append(
            SimulatedGroup(
                names,
                functools.partial(_node, model=group.model, gpus=group.gpus_per_node, extended=extended),
                functools.partial(_one_slice, model=group.model, gpus=group.gpus_per_node, profile=profile),
                _clone,
            )
        )
    return out


def _one_slice(name: str, *, model: AmdModel, gpus: int, profile: str) -> list[dict[str, Any]]:
    return [_slice(name, model, gpus, profile)]


def _clone(template: str, node: str, count: int) -> SliceIdentities:
    driver = str(_data()["draDriver"]["driver"])
    return SliceIdentities({}, [{"name": f"{node}-{driver}"} for _ in range(count)])


def cluster(
    spec: str,
    profile: str = "spx_nps1",
    *,
    device_plugin: bool,
    node: str | None = None,
    memory: int | None = None,
) -> list[dict[str, Any]]:
    """Every object of the AMD part of a simulated cluster: device-plugin Nodes (``amd.com/gpu``), or the DRA
    driver's DeviceClass, Nodes and ResourceSlices. ``node`` names the one node of a one-node spec (discover);
    ``memory`` is a whole device's memory in bytes when known better than the catalogue's (amd-smi's)."""
    groups = parse_spec(spec)
    driver = _data()["draDriver"]
    gpu_resource = str(_data()["devicePlugin"]["gpuResource"])
    nodes: list[dict[str, Any]] = []
    slices: list[dict[str, Any]] = []
    all_names = [[node]] if node is not None else node_names(groups)
    for group, names in zip(groups, all_names, strict=True):
        parts = group.model.partitions(profile)
        devices_per_node = group.gpus_per_node * group.model.devices_per_board * parts
        for name in names:
            if device_plugin:
                nodes.append(_node(name, group.model, group.gpus_per_node, {gpu_resource: devices_per_node}))
                continue
            nodes.append(_node(name, group.model, group.gpus_per_node, {}))
            slices.append(_slice(name, group.model, group.gpus_per_node, profile, memory))
    if device_plugin:
        return nodes
    classes = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": c["name"]},
            "spec": {"selectors": [{"cel": {"expression": c["selector"]}}]},
        }
        for c in driver["deviceClasses"]
    ]
    return classes + nodes + slices

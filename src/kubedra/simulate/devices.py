"""Per-device accounting facts of the DRA view: which physical GPU a device is (or is part of), its memory,
its node and what a pod gets from it (a whole GPU or a MIG profile)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubedra import vendors
from kubedra.model.objects import ResourceSlice


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    gpu: str  # physical GPU identity
    memory: int  # bytes (0: unknown)
    node: str  # "" for devices not local to one node
    label: str = "whole GPU"  # what a pod gets: "whole GPU" or the MIG profile


class DeviceInfos(Mapping[tuple[str, str, str], DeviceInfo]):
    """(driver, pool, device) -> DeviceInfo, kept per pool: a fleet's millions of devices need no key
    tuple each (their names repeat from node to node)."""

    def __init__(self) -> None:
        self._pools: dict[tuple[str, str], dict[str, DeviceInfo]] = {}
        self._len = 0

    def put(self, driver: str, pool: str, name: str, info: DeviceInfo) -> None:
        devices = self._pools.setdefault((driver, pool), {})
        self._len += name not in devices
        devices[name] = info

    def __getitem__(self, key: tuple[str, str, str]) -> DeviceInfo:
        return self._pools[(key[0], key[1])][key[2]]

    def get(self, key: tuple[str, str, str], default: Any = None) -> Any:
        devices = self._pools.get((key[0], key[1]))
        return default if devices is None else devices.get(key[2], default)

    def __iter__(self) -> Iterator[tuple[str, str, str]]:
        for (driver, pool), devices in self._pools.items():
            for name in devices:
                yield (driver, pool, name)

    def __len__(self) -> int:
        return self._len

    def values(self) -> Iterator[DeviceInfo]:  # type: ignore[override]
        for devices in self._pools.values():
            yield from devices.values()


def device_infos(slices: Iterable[ResourceSlice]) -> DeviceInfos:
    """Physical GPU and memory of every GPU device: MIG devices and partitions belong to their parent
    (``parentUUID``, else the counter set they consume), a whole GPU is itself (``uuid``, else its name).
    A vendor's devices of a type it does not account (NVIDIA's ``vfio``: a GPU re-announced for passthrough) are
    not counted, nor any device of a vendor's other drivers (``Vendor.drivers`` beside its GPU driver). Devices that
    consume the same counter set are one GPU, named after the first of them."""
    out = DeviceInfos()
    by_set: dict[tuple[str, str, str], str] = {}
    # a fleet has a few distinct facts per GPU: one DeviceInfo and one GPU name each, shared by its devices
    infos: dict[tuple[str, int, str, str], DeviceInfo] = {}
    names: dict[tuple[str, str], str] = {}
    sizes: dict[int, int] = {}  # id(DeviceCapacity) -> bytes; the capacities live as long as the slices
    accounted = {v.driver: v.accounted_types for v in vendors.all()}
    # a vendor's other drivers publish no GPUs (NVIDIA's compute-domain.nvidia.com: IMEX channels and daemons)
    not_gpus = {d for v in vendors.all() for d in v.drivers if d != v.driver}
    for s in slices:
        driver = s.driver
        if driver in not_gpus:
            continue
        pool = s.pool.name
        types = accounted.get(driver)
        prefix = f"{driver}/"
        for d in s.devices:
            attrs = d.attributes
            t = attrs.get("type") or attrs.get(prefix + "type")
            typ = t.value if t is not None else None
            if types is not None and typ not in types:
                continue
            node = s.node_name or d.node_name or ""
            parent = attrs.get("parentUUID") or attrs.get(prefix + "parentUUID")
            if parent is None:
                parent = attrs.get("uuid") or attrs.get(prefix + "uuid")
            if parent is not None:
                gpu = names.get((node, parent.value)) or names.setdefault(
                    (node, parent.value), f"{node}/{parent.value}"
                )
            elif d.consumes_counters:
                gpu = f"{driver}/{pool}/{d.consumes_counters[0].counter_set}"
            else:
                gpu = f"{driver}/{pool}/{d.name}"
            if d.consumes_counters:
                gpu = by_set.setdefault((driver, pool, d.consumes_counters[0].counter_set), gpu)
            cap = d.capacity.get("memory") or d.capacity.get(prefix + "memory")
            size = 0
            if cap is not None:
                size = sizes.get(id(cap), -1)
                if size < 0:
                    size = sizes[id(cap)] = cap.value.value()
            label = "whole GPU"
            if typ == "mig":
                prof = attrs.get("profile") or attrs.get(prefix + "profile")
                label = str(prof.value) if prof is not None else "MIG device"
            key = (gpu, size, node, label)
            info = infos.get(key)
            if info is None:
                info = infos[key] = DeviceInfo(gpu, size, node, label)
            out.put(driver, pool, d.name, info)
    return out

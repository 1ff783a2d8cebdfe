"""DRA selector speed: compile time and evaluations/s over 1,000 devices (memo miss and hit).

Run: .venv/bin/python benchmarks/cel.py   (prints figures; not a timed test)
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from kubedra.cel import SelectorEnvironment
from kubedra.k8s.quantity import Quantity

DRIVER = "gpu.nvidia.com"
SELECTORS = {
    "driver ==": 'device.driver == "gpu.nvidia.com"',
    "attribute string ==": 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"',
    "quantity compareTo": 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0',
    "semver": 'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("535.0.0"))',
    "combined": (
        'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].index < 4 && '
        'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi")) && '
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("535.0.0"))'
    ),
}


@dataclass
class Attr:
    kind: str
    value: Any


@dataclass
class Cap:
    value: Quantity


@dataclass
class Dev:
    name: str
    attributes: dict[str, Attr] = field(default_factory=dict)
    capacity: dict[str, Cap] = field(default_factory=dict)
    allow_multiple_allocations: bool | None = None


def devices(n: int) -> list[Dev]:
    products = ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "NVIDIA L4"]
    mems = ["80Gi", "40Gi", "24Gi"]
    return [
        Dev(
            f"gpu-{i}",
            {
                "productName": Attr("string", products[i % 3]),
                "index": Attr("int", i % 8),
                "driverVersion": Attr("version", f"5{30 + i % 30}.{i % 100}.{i % 7}"),
                "uuid": Attr("string", f"GPU-{i:08x}"),
                "resource.kubernetes.io/pcieRoot": Attr("string", f"pci{i % 4:04x}:00"),
            },
            {"memory": Cap(Quantity.parse(mems[i % 3]))},
        )
        for i in range(n)
    ]


def main() -> None:
    devs = devices(1000)
    env = SelectorEnvironment("1.37", stored=True)
    print("DRA selectors, 1,000 devices (5 attributes + 1 capacity each), target 1.37 stored env")
    print(f"{'selector':24} {'compile µs':>11} {'miss eval/s':>12} {'hit eval/s':>12}")
    # warm the per-device activations once (the allocator builds them once per device)
    warm = SelectorEnvironment("1.37", stored=True)
    t0 = time.perf_counter()
    for i, d in enumerate(devs):
        warm.activation(d, DRIVER, key=i)
    act_us = (time.perf_counter() - t0) / len(devs) * 1e6
    for label, expr in SELECTORS.items():
        times = []
        for i in range(20):
            fresh = SelectorEnvironment("1.37", stored=True) if i == 0 else env
            t = time.perf_counter()
            fresh._env.compile(expr + " " * i)  # bypass the LRU: measure a real compile
            times.append(time.perf_counter() - t)
        sel = warm.compile(expr)
        for i, d in enumerate(devs):
            warm.activation(d, DRIVER, key=i)
        warm._memo.clear()
        t = time.perf_counter()
        for i, d in enumerate(devs):
            sel.matches(d, DRIVER, key=i)
        miss = len(devs) / (time.perf_counter() - t)
        t = time.perf_counter()
        for _ in range(20):
            for i, d in enumerate(devs):
                sel.matches(d, DRIVER, key=i)
        hit = 20 * len(devs) / (time.perf_counter() - t)
        print(f"{label:24} {statistics.median(times) * 1e6:11.0f} {miss:12,.0f} {hit:12,.0f}")
    print(f"activation build per device: {act_us:.1f} µs")


if __name__ == "__main__":
    main()

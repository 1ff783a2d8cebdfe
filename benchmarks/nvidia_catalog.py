"""How fast the NVIDIA node catalogue builds simulated clusters (prints figures, asserts nothing).

Run: .venv/bin/python benchmarks/nvidia_catalog.py [nodes]
"""

from __future__ import annotations

import sys
import time

from kubedra.vendors.nvidia.cluster import cluster

SHAPES = [
    ("8xH100-80GB", "mig-dynamic", False),
    ("8xA100-80GB", "mig-static:all-balanced", False),
    ("8xH100-80GB", "full", False),
    ("8xH100-80GB", "time-slicing:4", True),
]


def main() -> None:
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    cluster("1x8xH100-80GB", "mig-dynamic")  # load data, warm caches
    print(f"{'shape':<16} {'mode':<26} {'side':<14} {'objects':>8} {'devices':>8} {'ms/node':>8}")
    for shape, mode, device_plugin in SHAPES:
        t0 = time.perf_counter()
        objs = cluster(f"{nodes}x{shape}", mode, "1.37", device_plugin=device_plugin)
        dt = time.perf_counter() - t0
        devices = sum(len(o["spec"].get("devices", [])) for o in objs if o["kind"] == "ResourceSlice")
        side = "device-plugin" if device_plugin else "dra"
        print(f"{shape:<16} {mode:<26} {side:<14} {len(objs):>8} {devices:>8} {dt / nodes * 1000:>8.2f}")


if __name__ == "__main__":
    main()

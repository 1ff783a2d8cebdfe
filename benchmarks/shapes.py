"""Input shapes shared by the benchmark scripts (plain Kubernetes objects as dicts)."""

from __future__ import annotations

from typing import Any


def scheduler_perf_slice(node: str, devices: int, driver: str) -> dict[str, Any]:
    """The ResourceSlice upstream scheduler_perf's createResourceDriver publishes for one node: devices
    ``instance-<i>`` with model/family/driverVersion/numa attributes and 1Gi of memory."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"instance-{i}",
                    "attributes": {
                        "model": {"string": "A100"},
                        "family": {"string": "GPU"},
                        "driverVersion": {"version": "1.2.3"},
                        "dra.example.com/numa": {"int": i},
                    },
                    "capacity": {"memory": {"value": "1Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def driver_class(name: str, driver: str) -> dict[str, Any]:
    """A DeviceClass selecting every device of ``driver``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }

"""Copied catalogue nodes are exactly what the parser makes of the catalogue's own objects."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra import vendors
from kubedra.model.parse import parse_object
from kubedra.simulate.catalogue import typed_cluster, vendor_objects
from kubedra.vendors.nvidia.cluster import cluster

NVIDIA = vendors.get("nvidia")
AMD = vendors.get("amd")


def typed(obj: dict[str, Any]) -> object:
    parsed = parse_object(obj)
    assert parsed is not None, obj.get("kind")
    return parsed.obj


@pytest.mark.parametrize(
    ("spec", "mode", "version"),
    [
        ("3x8xH100-80GB", "mig-dynamic", "1.37"),
        ("2x4xA100-80GB", "mig-dynamic", "1.34"),
        ("3x2xA100-40GB", "mig-static:all-balanced", "1.37"),
        ("2x2xH100-80GB,2x1xL40S", "full", "1.36"),
        ("2x2xH200", "time-slicing:4", "1.35"),
    ],
)
def test_copies_equal_parsed_catalogue_objects(spec, mode, version):
    nodes, slices, classes = typed_cluster(NVIDIA, spec, mode, version, device_plugin=False)
    want = [typed(o) for o in cluster(spec, mode, version, device_plugin=False)]
    assert vendor_objects(NVIDIA, spec, mode, version, device_plugin=False) == cluster(
        spec, mode, version, device_plugin=False
    )
    assert [o for o in want if o.__class__.__name__ == "ResourceSlice"] == slices
    assert [o for o in want if o.__class__.__name__ == "Node"] == nodes
    assert [o for o in want if o.__class__.__name__ == "DeviceClass"] == classes


def test_device_plugin_nodes_equal_parsed_catalogue_nodes():
    nodes, slices, classes = typed_cluster(
        NVIDIA, "2x8xA100-80GB", "mig-static:all-1g.10gb", "1.37", device_plugin=True
    )
    want = [typed(o) for o in cluster("2x8xA100-80GB", "mig-static:all-1g.10gb", "1.37", device_plugin=True)]
    assert nodes == want
    assert not slices
    assert not classes


@pytest.mark.parametrize(("spec", "mode"), [("3x8xMI300X", "cpx_nps4"), ("2x4xMI250,2x2xMI210", "spx_nps1")])
@pytest.mark.parametrize("device_plugin", [False, True])
def test_amd_copies_equal_parsed_catalogue_objects(spec, mode, device_plugin):
    nodes, slices, classes = typed_cluster(AMD, spec, mode, "1.37", device_plugin=device_plugin)
    objects = AMD.simulated_cluster(spec, mode, device_plugin=device_plugin)
    assert vendor_objects(AMD, spec, mode, "1.37", device_plugin=device_plugin) == objects
    want = [typed(o) for o in objects]
    assert [o for o in want if o.__class__.__name__ == "ResourceSlice"] == slices
    assert [o for o in want if o.__class__.__name__ == "Node"] == nodes
    assert [o for o in want if o.__class__.__name__ == "DeviceClass"] == classes

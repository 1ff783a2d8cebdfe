"""Round trip: a time-slicing fleet simulated with the device plugin on the original manifests
places no more pods than DRA on `kubedra migrate`'s output, on the same nodes; and simulate maps migrate's own
sharing DeviceClasses back to nvidia.com/gpu in device-plugin mode."""

from __future__ import annotations

import pytest
from tests.unit.migrate.test_gpu import TS_CONFIGMAP, TS_POLICY

from kubedra.migrate.context import MigrateOptions
from kubedra.migrate.engine import Migrator, SourceFile
from kubedra.sources.yamldoc import YamlFile

from .helpers import deployment, run

CONFIG = TS_CONFIGMAP + "---\n" + TS_POLICY  # GPU Operator docs: time-slicing replicas 4, default on


def migrated(text: str) -> str:
    rep = Migrator(MigrateOptions()).migrate([SourceFile("in.yaml", text, YamlFile(text, "in.yaml"))])
    assert not [f for f in rep.findings if f.level == "manual"]
    return rep.files[0].output


def placed(result) -> int:
    return sum(1 for p in result.pods if p.node)


@pytest.mark.parametrize(
    ("replicas", "nodes"),
    [
        ((30,), "1x8xH100-80GB"),
        ((12, 8, 4), "1x8xH100-80GB"),
        ((16, 16), "2x4xA100-80GB"),
        ((64,), "2x8xH100-80GB"),
        ((10, 10, 10), "1x8xH100-80GB"),  # partial groups of several Deployments share GPUs
        ((1,) * 12, "1x2xH100-80GB"),  # many one-pod Deployments, as the device plugin packed them
        ((3, 5, 7, 2, 1, 6), "1x8xA100-80GB"),
    ],
)
def test_time_slicing_fleet_keeps_its_density(replicas: tuple[int, ...], nodes: str):
    fleet = CONFIG + "".join(deployment(f"d{i}", n, namespace="ml") for i, n in enumerate(replicas))
    before = run(fleet, nodes=nodes, gpu_mode="time-slicing:4", modes=("device-plugin",))
    after = run(migrated(fleet), nodes=nodes, modes=("dra",))
    dp, dra = placed(before.results["device-plugin"]), placed(after.results["dra"])
    assert dp == min(sum(replicas), 4 * int(nodes.split("x")[0]) * int(nodes.split("x")[1]))
    assert dra >= dp


def test_simulate_maps_migrates_sharing_class_back_to_the_device_plugin():
    fleet = CONFIG + deployment("d", 8, namespace="ml")
    both = run(migrated(fleet), nodes="1x2xH100-80GB", gpu_mode="time-slicing:4")
    assert placed(both.results["device-plugin"]) == 8
    assert placed(both.results["dra"]) == 8
    assert not any("not expressible" in (p.reason or "") for p in both.results["device-plugin"].pods)

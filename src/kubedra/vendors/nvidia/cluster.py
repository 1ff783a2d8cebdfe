"""A whole simulated GPU cluster from a catalogue spec: Nodes, and for DRA the slices and classes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubedra.errors import InputError
from kubedra.gcpause import paused_gc
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.vendors.nvidia.dra import DriverInfo, device_classes, dra_objects
from kubedra.vendors.nvidia.models import GpuModel
from kubedra.vendors.nvidia.modes import GpuMode, parse_gpu_mode
from kubedra.vendors.nvidia.nodes import device_plugin_node, dra_node
from kubedra.vendors.nvidia.specs import NodeGroup, parse_node_spec
from kubedra.vendors.simulated import numbered_node_names

ModeArg = str | GpuMode | Mapping[str, str | GpuMode]


def mode_for(mode: ModeArg, model: GpuModel) -> GpuMode:
    if isinstance(mode, str | GpuMode):
        return parse_gpu_mode(mode)
    for key, value in mode.items():
        if key.lower() == model.key.lower() or key.lower() in (a.lower() for a in model.aliases):
            return parse_gpu_mode(value)
    if "*" in mode:
        return parse_gpu_mode(mode["*"])
    raise InputError(f"no GPU mode given for {model.key} (add it, or a '*' default, to the mode map)")


def node_names(groups: list[NodeGroup]) -> list[list[str]]:
    """Node names per group: ``<model>-<i>``, numbered across groups of the same model."""
    return numbered_node_names((g.model.slug, g.nodes) for g in groups)


def cluster(
    spec: str | list[NodeGroup],
    mode: ModeArg = "full",
    k8s_version: str = DEFAULT_TARGET,
    device_plugin: bool = False,
    *,
    driver: DriverInfo | None = None,
    mig_strategy: str | None = None,
    rename_by_default: bool = False,
) -> list[dict[str, Any]]:
    """Every object of a simulated cluster, ready for the manifest loader.

    ``device_plugin=True``: Nodes with ``nvidia.com/...`` extended resources (device plugin + GFD).
    ``device_plugin=False``: the DRA driver's DeviceClasses, then Nodes, then each node's slices.
    ``mode`` is one GPU mode for all nodes, or a map from model key (or ``*``) to mode.
    """
    with paused_gc():
        return _cluster(spec, mode, k8s_version, device_plugin, driver, mig_strategy, rename_by_default)


def _cluster(
    spec: str | list[NodeGroup],
    mode: ModeArg,
    k8s_version: str,
    device_plugin: bool,
    driver: DriverInfo | None,
    mig_strategy: str | None,
    rename_by_default: bool,
) -> list[dict[str, Any]]:
    groups = parse_node_spec(spec) if isinstance(spec, str) else list(spec)
    names = node_names(groups)
    nodes: list[dict[str, Any]] = []
    slices: list[dict[str, Any]] = []
    for group, group_names in zip(groups, names, strict=True):
        gpu_mode = mode_for(mode, group.model)
        for name in group_names:
            if device_plugin:
                nodes.append(
                    device_plugin_node(
                        name,
                        group.model,
                        group.gpus_per_node,
                        gpu_mode,
                        mig_strategy=mig_strategy,
                        rename_by_default=rename_by_default,
                        driver=driver,
                        k8s_version=k8s_version,
                    )
                )
            else:
                nodes.append(
                    dra_node(
                        name,
                        group.model,
                        group.gpus_per_node,
                        gpu_mode,
                        driver=driver,
                        k8s_version=k8s_version,
                    )
                )
                slices += dra_objects(
                    name, group.model, group.gpus_per_node, gpu_mode, k8s_version, driver=driver
                )
    if device_plugin:
        return nodes
    return device_classes(k8s_version) + nodes + slices

"""What an AMD node DaemonSet or container runs: the ROCm device plugin or its node labeller, which ship from one
image repository (``rocm/k8s-device-plugin``; facts and sources in ``data/amd-gpu.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubedra.vendors.base import NodeComponent

DEVICE_PLUGIN = NodeComponent("device-plugin", "device plugin")
LABELLER = NodeComponent("node-labeller", "node labeller")


def container_component(container: Mapping[str, Any], plugin: Mapping[str, Any]) -> NodeComponent | None:
    """The device plugin or the node labeller when the container runs the plugin's image (``plugin``: the
    ``devicePlugin`` block of the data); None otherwise."""
    repo = str(container.get("image") or "").lower().split("@", 1)[0]
    name, tag = repo, ""
    if ":" in repo.rsplit("/", 1)[-1]:
        name, _, tag = repo.rpartition(":")
    want = str(plugin["image"])
    if name != want and not name.endswith("/" + want):
        return None
    command = container.get("command")
    first = str(command[0]).rsplit("/", 1)[-1] if isinstance(command, list) and command else ""
    labeller = plugin["labeller"]
    if tag.startswith(str(labeller["tagPrefix"])) or first == labeller["command"]:
        return LABELLER
    return DEVICE_PLUGIN


def daemonset_component(obj: Mapping[str, Any], plugin: Mapping[str, Any]) -> NodeComponent | None:
    """The device plugin when a main container runs it, else the node labeller when one runs that; None: neither."""
    tmpl = obj.get("spec")
    for step in ("template", "spec"):
        tmpl = tmpl.get(step) if isinstance(tmpl, Mapping) else None
    containers = tmpl.get("containers") if isinstance(tmpl, Mapping) else None
    found = {
        c.key: c
        for ctr in (containers if isinstance(containers, list) else [])
        if isinstance(ctr, Mapping) and (c := container_component(ctr, plugin)) is not None
    }
    return found.get(DEVICE_PLUGIN.key) or found.get(LABELLER.key)

"""What each NVIDIA node DaemonSet is: device plugin, GPU feature discovery, MPS control daemon, DCGM exporter.

The device-plugin image runs all of the first three and the device plugin's Helm chart labels their DaemonSets
alike, so a DaemonSet is told by what its main containers run (command, image, container name), then by the GPU
Operator's ``nvidia.com/gpu.deploy.<component>`` node selector (facts and sources in
``data/nvidia-daemonsets.yaml``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kubedra.k8s import datafiles
from kubedra.vendors.base import NodeComponent

_DEPLOY_PREFIX = "nvidia.com/gpu.deploy."
# the config-manager sidecar the device plugin, GFD and MPS charts all run: it tells nothing about its DaemonSet
SIDECAR = NodeComponent("config-manager", "device-plugin config manager")
_SHELLS = frozenset({"sh", "bash", "dash", "ash"})


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = datafiles.load("nvidia-daemonsets.yaml")
    return data


def _base(text: Any) -> str:
    return str(text).rsplit("/", 1)[-1] if text else ""


def _image_name(image: Any) -> str:
    last = _base(image).split("@", 1)[0]
    return last.split(":", 1)[0].lower()


def container_component(container: Mapping[str, Any]) -> NodeComponent | None:
    """The component a container runs (:data:`SIDECAR` for the config manager); None when nothing about it is
    NVIDIA's."""
    command = container.get("command")
    first = _base(command[0]) if isinstance(command, list) and command else ""
    if first in _SHELLS:
        first = ""
    if first in _data()["sidecars"]:
        return SIDECAR
    image_ref = str(container.get("image") or "")
    # other vendors ship images of the same name (rocm/k8s-device-plugin): only an NVIDIA image counts
    image = _image_name(image_ref) if _data()["imageOwner"] in image_ref.lower() else ""
    name = str(container.get("name") or "")
    for c in _data()["components"]:
        if first in c["commands"] or image in c["images"] or name in c["containers"]:
            return NodeComponent(c["key"], c["title"])
    return None


def daemonset_component(obj: Mapping[str, Any]) -> NodeComponent | None:
    """What DaemonSet ``obj`` runs: the first component (in the data's order) one of its main containers is, else
    the one its GPU Operator node selector names; None: none of NVIDIA's node components."""
    pod = _get(obj, "spec", "template", "spec")
    containers = pod.get("containers") if isinstance(pod, Mapping) else None
    found: dict[str, NodeComponent] = {}
    for ctr in containers if isinstance(containers, list) else []:
        comp = container_component(ctr) if isinstance(ctr, Mapping) else None
        if comp is not None and comp is not SIDECAR:
            found.setdefault(comp.key, comp)
    for c in _data()["components"]:
        if c["key"] in found:
            return found[c["key"]]
    selector = pod.get("nodeSelector") if isinstance(pod, Mapping) else None
    for key in selector if isinstance(selector, Mapping) else {}:
        if str(key).startswith(_DEPLOY_PREFIX):
            want = str(key)[len(_DEPLOY_PREFIX) :]
            for c in _data()["components"]:
                if c.get("deploySelector") == want:
                    return NodeComponent(c["key"], c["title"])
    return None


def _get(obj: Any, *path: str) -> Any:
    for step in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(step)
    return obj

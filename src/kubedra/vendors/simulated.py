"""What every vendor's simulated cluster (``simulate --nodes``) is made of: a ``--nodes`` group node by node, what
differs between copies of one node's ResourceSlices, the one slice a node-local driver publishes, and the node
names of each group."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SliceIdentities:
    """What differs between a generated node's ResourceSlices and the same hardware's on another node: attribute
    string values (GPU UUIDs) and each slice's metadata (name, generateName, owner)."""

    values: dict[str, str]  # the template node's attribute value -> this node's
    metadata: list[dict[str, Any]]  # per slice, in order


@dataclass(frozen=True)
class SimulatedGroup:
    """One ``--nodes`` group of a generated cluster, node by node, so that simulate can parse the first node's
    slices once and copy them for the others (a fleet of 1,000 dynamic-MIG nodes has 208,000 devices)."""

    names: list[str]
    node: Callable[[str], dict[str, Any]]  # the Node (device-plugin or DRA view, as asked)
    slices: Callable[[str], list[dict[str, Any]]]  # the ResourceSlices the driver publishes on it (DRA view)
    clone: Callable[[str, str, int], SliceIdentities]  # (template node, node, slice count) -> what differs


def single_node_slice(node: str, driver: str, devices: list[dict[str, Any]]) -> dict[str, Any]:
    """The one ResourceSlice a node-local driver publishes on ``node`` (its pool named after the node, one slice
    in generation 1), as the simulated clusters of every vendor write it."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def numbered_node_names(groups: Iterable[tuple[str, int]]) -> list[list[str]]:
    """Simulated node names per group of (model slug, node count): ``<slug>-<i>``, numbered across the groups of
    one model, for every vendor alike."""
    seen: dict[str, int] = {}
    out = []
    for slug, nodes in groups:
        start = seen.get(slug, 0)
        out.append([f"{slug}-{i}" for i in range(start, start + nodes)])
        seen[slug] = start + nodes
    return out

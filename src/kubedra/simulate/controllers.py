"""Objects a vendor's controller creates from the inputs (the ResourceClaimTemplate NVIDIA's ComputeDomain
controller creates), and the devices its kubelet plugin publishes for them on the vendor's GPU nodes: added to the
model so the pods that use them are placed as in the cluster (:func:`kubedra.vendors.controller_output`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubedra import vendors
from kubedra.model.inventory import Inventory, add_document, build_inventory
from kubedra.sources.files import Document
from kubedra.vendors.base import ControllerOutput


def add_created_objects(inv: Inventory, k8s_version: str) -> list[ControllerOutput]:
    """Model what vendor controllers create from ``inv.others`` into ``inv`` (an object the inputs already hold,
    same kind, namespace and name, is kept as given); returns what each controller makes."""
    outputs: list[ControllerOutput] = []
    have = {(t.meta.namespace or "", t.meta.name) for t in inv.templates}
    for doc in list(inv.others):
        out = vendors.controller_output(doc.obj, k8s_version)
        if out is None:
            continue
        outputs.append(out)
        for obj in out.objects:
            meta = obj["metadata"]
            key = (meta.get("namespace") or "", meta["name"])
            if obj.get("kind") == "ResourceClaimTemplate" and key in have:
                continue
            have.add(key)
            add_document(inv, Document(obj=obj, file=doc.file, line=doc.line, index=doc.index))
        made = ", ".join(f"{o['kind']} {o['metadata']['name']}" for o in out.objects)
        inv.notes.append(f"{made}: {out.origin} (modelled from the controller's own template)")
    inv.facts.clear()
    return outputs


def plugin_objects(
    outputs: Sequence[ControllerOutput],
    gpu_nodes: Sequence[str],
    have_slices: set[tuple[str, str]],
    have_classes: set[str],
) -> list[dict[str, Any]]:
    """The DeviceClasses and per-node ResourceSlices the controllers' drivers need on ``gpu_nodes`` that the
    cluster does not already have (``have_slices``: (driver, node) pairs; ``have_classes``: class names)."""
    objects: list[dict[str, Any]] = []
    drivers: set[str] = set()
    for out in outputs:
        for c in out.classes:
            name = c["metadata"]["name"]
            if name not in have_classes:
                have_classes.add(name)
                objects.append(c)
        if out.node_slice is None or out.driver in drivers:
            continue
        drivers.add(out.driver)
        objects += [out.node_slice(n) for n in gpu_nodes if (out.driver, n) not in have_slices]
    return objects


def add_plugin_devices(view: Any, outputs: Sequence[ControllerOutput]) -> int:
    """Add to DRA ``view`` the classes and slices ``outputs`` need on its GPU nodes (nodes with a slice of some
    vendor's GPU driver); the GPU accounting (``view.devices``) is left as it is. Returns the slices added."""
    if not outputs:
        return 0
    gpu = {s.node_name for s in view.slices if s.node_name and vendors.for_driver(s.driver) is not None}
    nodes = [n.name for n in view.nodes if n.name in gpu]
    objects = plugin_objects(
        outputs, nodes, {(s.driver, s.node_name) for s in view.slices}, {c.name for c in view.classes}
    )
    if not objects:
        return 0
    extra = build_inventory(Document(obj=o, file="<derived>", line=0, index=i) for i, o in enumerate(objects))
    view.classes += extra.classes
    view.slices += extra.slices
    if view.source is not None:
        source = view.source
        view.source = lambda: source() + objects
    else:
        view.objects += objects
    return len(extra.slices)

"""Sort loaded manifests into the typed model: what the allocator and simulator work on.

Objects of kinds kubedra does not model are counted and skipped (``Inventory.skipped``); an object without
``apiVersion``/``kind``, a malformed value or a classic-DRA object is an :class:`InputError` naming file:line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError, Location
from kubedra.model.facts import DeviceFacts
from kubedra.model.fields import path_steps
from kubedra.model.objects import (
    DeviceClass,
    DeviceTaintRule,
    Node,
    ObjectMeta,
    Pod,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kubedra.model.parse import Parsed, parse_object
from kubedra.sources.files import Document


@dataclass
class Inventory:
    classes: list[DeviceClass] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    taint_rules: list[DeviceTaintRule] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    templates: list[ResourceClaimTemplate] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    # everything else, for verbs that expand workloads (Deployments, Jobs, CRDs...)
    others: list[Document] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    sources: dict[int, Document] = field(default_factory=dict)  # id(model object) -> document
    # equal device facts of the slices added, one object each (kubedra.model.facts): alike nodes read from
    # files then look alike to the allocator's reuse; emptied by build_inventory once it is done
    facts: DeviceFacts = field(default_factory=DeviceFacts, repr=False, compare=False)

    def source_of(self, obj: Any) -> Document | None:
        return self.sources.get(id(obj))

    def nodes_or_synthesized(self) -> list[Node]:
        """The Node objects given, or one bare Node per nodeName seen in ResourceSlices."""
        if self.nodes:
            return self.nodes
        names: list[str] = []
        for s in self.slices:
            for n in [s.node_name, *(d.node_name for d in s.devices)]:
                if n and n not in names:
                    names.append(n)
        return [Node(meta=ObjectMeta(name=n)) for n in names]


_TARGETS = {
    "DeviceClass": "classes",
    "ResourceSlice": "slices",
    "DeviceTaintRule": "taint_rules",
    "Node": "nodes",
    "ResourceClaim": "claims",
    "ResourceClaimTemplate": "templates",
    "Pod": "pods",
}


def build_inventory(documents: Iterable[Document]) -> Inventory:
    inv = Inventory()
    for doc in documents:
        add_document(inv, doc)
    inv.facts.clear()  # the objects stay shared; the table is only needed while parsing
    return inv


def add_document(inv: Inventory, doc: Document, parts: dict[Any, Any] | None = None) -> Any:
    """Model ``doc`` into ``inv``; returns the model object (None for kinds kept as documents in ``others``).
    ``parts``: equal parts of Pods share one model (:func:`kubedra.model.parse.parse_object`)."""
    parsed = _parse(doc, inv.facts, None, parts)
    if parsed is None:
        inv.others.append(doc)
        inv.skipped[f"{doc.api_version}/{doc.kind}"] += 1
        return None
    getattr(inv, _TARGETS[parsed.kind]).append(parsed.obj)
    inv.sources[id(parsed.obj)] = doc
    for n in parsed.notes:
        if n.warning:
            inv.notes.append(f"{doc.location}: {doc.describe()}: {n}")
    return parsed.obj


def check_document(doc: Document, seen: dict[tuple[int, str], tuple[Any, Any]] | None = None) -> None:
    """What :func:`add_document` refuses in ``doc`` (the same errors), its model not kept. ``seen``: the models
    of its parts already made (:func:`kubedra.model.parse.parse_object`), for documents whose equal parts
    are one object."""
    _parse(doc, None, seen)


def _parse(
    doc: Document,
    facts: DeviceFacts | None,
    seen: dict[tuple[int, str], tuple[Any, Any]] | None,
    parts: dict[Any, Any] | None = None,
) -> Parsed | None:
    if not doc.api_version or not doc.kind:
        raise InputError("object has no apiVersion or kind", doc.location)
    try:
        return parse_object(doc.obj, doc.location, facts, seen, parts)
    except InputError as e:
        path = getattr(e, "field_path", None)
        if path:
            e.location = Location(file=doc.file, line=doc.line_of(path_steps(path)))
        raise

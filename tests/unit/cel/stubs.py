"""Stand-in Device dataclasses with the shape of kubedra.model.objects (duck-typed by kubedra.cel)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubedra.k8s.quantity import Quantity


@dataclass(slots=True)
class Attr:
    kind: str
    value: Any


@dataclass(slots=True)
class Cap:
    value: Quantity


@dataclass(slots=True)
class Dev:
    name: str = "device-0"
    attributes: dict[str, Attr] = field(default_factory=dict)
    capacity: dict[str, Cap] = field(default_factory=dict)
    allow_multiple_allocations: bool | None = None


def device_from_case(case: dict[str, Any]) -> Dev:
    attrs = {}
    for name, spec in (case.get("attributes") or {}).items():
        ((kind, value),) = spec.items()
        attrs[name] = Attr(kind, value)
    caps = {name: Cap(Quantity.parse(str(v))) for name, v in (case.get("capacity") or {}).items()}
    return Dev("device-0", attrs, caps, case.get("allowMultipleAllocations"))

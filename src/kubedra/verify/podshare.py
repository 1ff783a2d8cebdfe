"""One copy of each piece of a slimmed Pod that repeats across a large snapshot's pods (``verify -f``)."""

from __future__ import annotations

import json
from typing import Any

from kubedra.verify.checks import slim_pod

# the pieces of a slimmed Pod that repeat across the pods of a workload (PodShare keeps one copy of each) and
# what the checks read of the list items among them (the rest, transition times and uids, differ per pod)
_SHARED = {
    ("metadata", "labels"): None,
    ("metadata", "ownerReferences"): ("kind", "name", "controller"),
    ("spec", "resourceClaims"): None,
    ("spec", "containers"): None,
    ("status", "conditions"): ("type", "status", "reason", "message"),
}


class PodShare:
    """:func:`slim_pod` keeping one copy of each piece that repeats across pods (labels, owners, claims,
    containers, conditions): a large snapshot's Pods are most of what ``verify`` keeps, and the pods of one
    workload differ in little more than their names. The checks only read what is kept, never change it."""

    def __init__(self) -> None:
        self.memo: dict[str, Any] = {}

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        out = slim_pod(obj)
        if out is obj:
            return out
        for (part, key), fields in _SHARED.items():
            holder = out[part]
            value = holder.get(key)
            if not value or not isinstance(value, dict | list):
                continue
            if fields is not None and isinstance(value, list):
                value = [{k: x[k] for k in fields if k in x} if isinstance(x, dict) else x for x in value]
            try:
                text = json.dumps(value)
            except (TypeError, ValueError):  # not JSON data (never from a snapshot file): kept as it is
                continue
            holder[key] = self.memo.setdefault(f"{part}.{key}:{text}", value)
        return out

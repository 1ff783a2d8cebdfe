"""One copy of each piece of a slimmed Pod that repeats across a large snapshot's pods (``verify -f``)."""

from __future__ import annotations

from typing import Any

from kubedra.sources.jsonstream import shared
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
    workload differ in little more than their names. The checks only read what is kept, never change it.
    What it keeps has one copy of each key and short string (:func:`kubedra.sources.jsonstream.shared`): the
    snapshot reader leaves that to it, so that what a Pod drops is never walked."""

    def __init__(self) -> None:
        self.memo: dict[tuple[str, str, str], Any] = {}
        self.strings: dict[str, str] = {}

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        out = slim_pod(obj)
        if out is obj:
            whole: dict[str, Any] = shared(out, self.strings)
            return whole
        pieces: dict[tuple[str, str], Any] = {}
        for (part, key), fields in _SHARED.items():
            holder = out[part]
            value = holder.get(key)
            if not value or not isinstance(value, dict | list):
                continue
            if fields is not None and isinstance(value, list):
                value = [{k: x[k] for k in fields if k in x} if isinstance(x, dict) else x for x in value]
            # JSON data (strings, numbers, booleans, null, lists, mappings): equal reprs are equal values, of
            # the same types (``1``, ``1.0`` and ``True`` read apart); half the cost of json.dumps per call
            memo_key = (part, key, repr(value))
            kept = self.memo.get(memo_key)
            if kept is None:
                kept = self.memo[memo_key] = shared(value, self.strings)
            pieces[part, key] = kept
            holder[key] = None  # not walked below: set again afterwards
        slimmed: dict[str, Any] = shared(out, self.strings)
        for (part, key), kept in pieces.items():
            slimmed[part][key] = kept
        return slimmed

"""Objects defined more than once in the files audited (:mod:`kubedra.model.identity`)."""

from __future__ import annotations

from collections import Counter

from kubedra.audit.model import Item
from kubedra.audit.scope import Context, Scope, check
from kubedra.model.identity import Key, duplicate_message, duplicates, key_of


@check("input.duplicate-object")
def duplicate_objects(ctx: Context, scope: Scope) -> None:
    named: list[tuple[Key, Item]] = []
    for it in scope.items:
        key = key_of(it.doc) if it.doc is not None else None
        if key is not None:
            named.append((key, it))
    defined = Counter(key for key, _ in named)  # places only for the keys defined more than once
    for group in duplicates((key, it.where(), (key, it)) for key, it in named if defined[key] > 1):
        key, first = group[0][1]
        ctx.emit(
            "input.duplicate-object",
            first,
            duplicate_message(first.kind, key, [where for where, _ in group]),
            last=str(group[-1][0]),
        )

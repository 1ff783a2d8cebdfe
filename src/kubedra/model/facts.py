"""One object for equal device facts read from files: what lets alike nodes share the allocator's work.

A cluster generated with ``--nodes`` clones one node's slices, so identical nodes hold the very same attribute,
capacity, counter and taint objects, and the allocator's reuse between alike nodes (which compares those by
identity, :mod:`kubedra.allocator.reuse`) applies. A cluster read from a file (a saved cluster, a snapshot)
would otherwise get fresh objects per device from the parser and no two nodes would match.

:class:`DeviceFacts` is the table the parser consults while it builds devices: each fact is keyed by its
parsed-from content (:func:`freeze`, which keeps the type of every value, so ``1``, ``true``, ``"1"``
and ``1.0`` never share) and the first object built for a content is handed out for every equal one. The objects
are immutable by convention from then on (nothing in kubedra changes a device's facts after parsing; taint
rules copy the device and its list). The table lives with one inventory build and is dropped or cleared with
it, never kept process-wide.
"""

from __future__ import annotations

import marshal
from typing import Any, TypeVar

T = TypeVar("T")


def freeze(v: Any) -> Any:
    """A hashable key for a parsed JSON/YAML value, equal only for values of the same types and content.

    ``marshal`` (format 2: no back-references, so the bytes depend on the content alone) writes the built-in
    types exactly, each with its type (``1``, ``True``, ``"1"`` and ``1.0`` differ; so do a list and a dict,
    and two dicts in another key order), in C: a device's counter consumption in about 2 us, less than parsing
    it. Anything else it refuses (a ``str`` subclass, a date) is keyed by :func:`_tagged` instead."""
    try:
        return marshal.dumps(v, 2)
    except ValueError:
        return _tagged(v)


def _tagged(v: Any) -> Any:
    t = type(v)
    if t is dict:
        return (dict, *[(_tagged(k), _tagged(x)) for k, x in v.items()])
    if t is list:
        return (list, *[_tagged(x) for x in v])
    return (t, v)


class DeviceFacts:
    """Equal device facts parsed once: ``get(key)`` / ``put(key, fact)`` with keys from :func:`freeze`, and
    ``values(kind, type)``: attributes of one kind and value type by their value (no key tuple kept per value:
    most attribute values of a fleet, GPU UUIDs and serial numbers, are distinct). ``made`` counts the facts
    stored, which tells a caller whether what it just parsed was new."""

    __slots__ = ("_table", "_values", "made")

    def __init__(self) -> None:
        self._table: dict[Any, Any] = {}
        self._values: dict[tuple[str, type], dict[Any, Any]] = {}
        self.made = 0

    def get(self, key: Any) -> Any:
        try:
            return self._table.get(key)
        except TypeError:  # a value that is not hashable: never shared
            return None

    def put(self, key: Any, fact: T) -> T:
        """Keep ``fact`` for ``key`` (which ``get`` did not find)."""
        try:
            self._table[key] = fact
        except TypeError:
            return fact
        self.made += 1
        return fact

    def values(self, kind: str, typ: type) -> dict[Any, Any]:
        """The table of attributes of ``kind`` whose value is of type ``typ``, by value (new ones: ``made``)."""
        table = self._values.get((kind, typ))
        if table is None:
            table = self._values[(kind, typ)] = {}
        return table

    def clear(self) -> None:
        self._table.clear()
        self._values.clear()

    def __len__(self) -> int:
        return len(self._table) + sum(map(len, self._values.values()))

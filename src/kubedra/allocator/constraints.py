"""Claim constraints: ``matchAttribute`` and ``distinctAttribute`` (upstream incubating/experimental).

Constraints apply to the requests they name (empty = all); ``req`` matches all of its subrequests,
``req/sub`` only that one. Attribute lookup tries the fully-qualified name first, then the bare ID when the
domain equals the device's driver.

Upstream quirks reproduced on purpose:
- distinctAttribute keeps the values it has seen in a map keyed by *request name*: inside one request with
  count > 2 only the most recently added device's value is remembered, and removing a device forgets the
  request's whole entry.
- matchAttribute fixes the value with the first device and only counts devices afterwards; when the count
  returns to zero the next device fixes a new value.
- With DRAListTypeAttributes (experimental allocator) matchAttribute keeps a running intersection of value
  sets that narrows on add and is not widened on remove; distinctAttribute needs pairwise-disjoint sets.
"""

from __future__ import annotations

from typing import Any

from kubedra.model.objects import Device, DeviceAttribute


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


def _as_set(attr: DeviceAttribute) -> tuple[str, frozenset[Any]] | None:
    kind = attr.kind
    if kind.endswith("s"):
        if not attr.value:
            return None
        return kind[:-1], frozenset(attr.value)
    return kind, frozenset([attr.value])


class Constraint:
    def __init__(self, requests: list[str], attribute: str, list_types: bool) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.list_types = list_types
        self.num = 0

    def applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str, device: Device, driver: str) -> bool:
        raise NotImplementedError

    def remove(self, request: str, sub: str, device: Device, driver: str) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class MatchAttribute(Constraint):
    def __init__(self, requests: list[str], attribute: str, list_types: bool) -> None:
        super().__init__(requests, attribute, list_types)
        self.value: DeviceAttribute | None = None
        self.intersection: tuple[str, frozenset[Any]] | None = None

    def describe(self) -> str:
        return f"matchAttribute {self.attribute}"

    def add(self, request: str, sub: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.num == 0:
            if self.list_types:
                s = _as_set(attr)
                if s is None:
                    return False
                self.intersection = s
            else:
                self.value = attr
            self.num = 1
            return True
        if self.list_types:
            s = _as_set(attr)
            cur = self.intersection
            if s is None or cur is None or s[0] != cur[0] or not (s[1] & cur[1]):
                return False
            self.intersection = (cur[0], cur[1] & s[1])
        else:
            if attr.kind not in ("string", "int", "bool", "version"):
                return False
            if self.value is None or self.value.kind != attr.kind or self.value.value != attr.value:
                return False
        self.num += 1
        return True

    def remove(self, request: str, sub: str, device: Device, driver: str) -> None:
        if not self.applies(request, sub):
            return
        self.num -= 1


class DistinctAttribute(Constraint):
    def __init__(self, requests: list[str], attribute: str, list_types: bool) -> None:
        super().__init__(requests, attribute, list_types)
        self.values: dict[str, DeviceAttribute] = {}  # keyed by request name (upstream quirk)

    def describe(self) -> str:
        return f"distinctAttribute {self.attribute}"

    def add(self, request: str, sub: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.num == 0:
            self.values[request] = attr
            self.num = 1
            return True
        if not self._distinct(attr):
            return False
        self.values[request] = attr
        self.num += 1
        return True

    def _distinct(self, attr: DeviceAttribute) -> bool:
        if self.list_types:
            s = _as_set(attr)
            if s is None:
                return False
            for other in self.values.values():
                o = _as_set(other)
                if o is not None and o[0] == s[0] and (o[1] & s[1]):
                    return False
            return True
        for other in self.values.values():
            if attr.kind not in ("string", "int", "bool", "version"):
                return False  # unknown value type, only when there is something to compare with
            if other.kind == attr.kind and other.value == attr.value:
                return False
        return True

    def remove(self, request: str, sub: str, device: Device, driver: str) -> None:
        if not self.applies(request, sub):
            return
        self.values.pop(request, None)
        self.num -= 1

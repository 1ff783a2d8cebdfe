"""Claim constraints: ``matchAttribute`` and ``distinctAttribute`` (upstream incubating/experimental).

Constraints apply to the requests they name (empty = all); ``req`` matches all of its subrequests,
``req/sub`` only that one. Attribute lookup tries the fully-qualified name first, then the bare ID when the
domain equals the device's driver.

Semantics of k8s.io/dynamic-resource-allocation v0.37:
- matchAttribute fixes the value with the first device and only counts devices afterwards; when the count
  returns to zero the next device fixes a new value. A device whose attribute has another type never
  matches.
- distinctAttribute keeps a stack of the values added so far; a new device must differ from all of them.
  Up to v0.36 (``allocator.distinctAttributeKeepsEveryValue`` in data/versions.yaml) the values were kept per
  request name, so a device was compared only with the latest device of each request, the claim's first
  device was taken unchecked and removing a device forgot its request's value (:class:`DistinctPerRequest`).
- With DRAListTypeAttributes (experimental allocator) scalars count as one-element sets; matchAttribute
  keeps a stack of running intersections (narrowed on add, restored on remove) and needs a non-empty one;
  distinctAttribute needs pairwise-disjoint sets.
- From v0.38 (``allocator.attributeValuesTyped`` in data/versions.yaml; :class:`TypedValues`) the allocator
  reads attributes as Go values: a device attribute it cannot represent (an empty list, a version semver
  rejects) and, without DRAListTypeAttributes, any list fail the allocation (``device D: unsupported
  attribute value for A``), even for the first device; a derived empty list is an empty set (so it is a
  first device of matchAttribute and disjoint from everything); versions compare without build metadata.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from kubedra.allocator.errors import AllocationError
from kubedra.allocator.requests import claim_ref
from kubedra.model.objects import Device, DeviceAttribute, ResourceClaim
from kubedra.model.semver import Semver

# (request, subrequest or "", device, driver, attribute name) -> the attribute the constraint sees
Lookup = Callable[[str, str, Device, str, str], DeviceAttribute | None]


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


def _as_set(attr: DeviceAttribute, typed: bool = False) -> tuple[str, frozenset[Any]] | None:
    """An attribute as a set; up to v0.37 an empty list is no set, from v0.38 (``typed``) an empty one."""
    kind = attr.kind
    if kind.endswith("s"):
        if not attr.value and not typed:
            return None
        return kind[:-1], frozenset(_comparable(kind[:-1], v, typed) for v in attr.value)
    return kind, frozenset([_comparable(kind, attr.value, typed)])


def _comparable(kind: str, value: Any, typed: bool) -> Any:
    """A value as upstream compares it: from v0.38 a version as semver's Equals does, without build metadata
    (``versionWithoutBuild``); up to v0.37 as its text."""
    if typed and kind == "version":
        return value.partition("+")[0]
    return value


class TypedValues:
    """Attribute values as k8s.io/dynamic-resource-allocation v0.38.0-beta.0 reads them for a claim's
    constraints (``api.DeviceAttributes``: ``attrValue`` turns an empty list or a version ``semver.New``
    rejects into nil; ``structured/internal/*/constraint.go`` and ``allocator_*.go`` matchAttributeConstraint
    ``add`` return "device %s: unsupported attribute value for %s" for it and, without ListTypeAttributes, for
    any list). ``wraps``: the stable variant (v0.37's incubating code) prefixes the error with the claim and
    request (allocateDevice ``"claim %s, request %s: %w"``); the incubating/experimental code returns it as is."""

    def __init__(self, claim: ResourceClaim, wraps: bool, pool_of: Callable[[Device], str]) -> None:
        self.claim = claim
        self.wraps = wraps
        self.pool_of = pool_of

    def check(
        self, c: Constraint, request: str, sub: str, device: Device, driver: str, attr: DeviceAttribute
    ) -> None:
        """Raise the allocation's error where v0.38 cannot use ``attr`` for constraint ``c``."""
        own = attr is lookup_attribute(device, driver, c.attribute)  # a derived value is a new object
        unrepresentable = own and (
            (attr.kind.endswith("s") and not attr.value)
            or (attr.kind == "version" and not _semver(attr.value))
            or (attr.kind == "versions" and not all(_semver(v) for v in attr.value))
        )
        if unrepresentable or (not c.list_types and attr.kind.endswith("s")):
            msg = f"device {driver}/{self.pool_of(device)}/{device.name}: unsupported attribute value for {c.attribute}"
            if self.wraps:
                msg = f"claim {claim_ref(self.claim)}, request {sub or request}: {msg}"
            raise AllocationError(msg)


@functools.lru_cache(maxsize=4096)
def _semver(text: str) -> bool:
    """Whether v0.38's ``semver.New`` reads ``text`` (strict); cached, since it runs for every device tried."""
    return Semver.is_valid(text)


def _static(request: str, sub: str, device: Device, driver: str, name: str) -> DeviceAttribute | None:
    return lookup_attribute(device, driver, name)


class Constraint:
    def __init__(
        self, requests: list[str], attribute: str, list_types: bool, lookup: Lookup | None = None
    ) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.list_types = list_types
        self.num = 0
        # how a device's attribute is found: the device's own, or a request's derived attribute (derived.py)
        self.lookup: Lookup = lookup or _static
        self.typed: TypedValues | None = None  # from v0.38: set by build()

    def value(self, request: str, sub: str, device: Device, driver: str) -> DeviceAttribute | None:
        """The attribute this constraint sees on ``device``; None when it has none."""
        attr = self.lookup(request, sub, device, driver, self.attribute)
        if attr is not None and self.typed is not None:
            self.typed.check(self, request, sub, device, driver, attr)
        return attr

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
    def __init__(
        self, requests: list[str], attribute: str, list_types: bool, lookup: Lookup | None = None
    ) -> None:
        super().__init__(requests, attribute, list_types, lookup)
        self.first: DeviceAttribute | None = None
        self.stack: list[tuple[str, frozenset[Any]]] = []

    def describe(self) -> str:
        return f"matchAttribute {self.attribute}"

    def add(self, request: str, sub: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub):
            return True
        attr = self.value(request, sub, device, driver)
        if attr is None:
            return False
        typed = self.typed is not None
        if self.num == 0:
            if self.list_types:
                s = _as_set(attr, typed)
                if s is None:
                    return False
                self.stack.append(s)
            else:
                self.first = attr
            self.num = 1
            return True
        if self.list_types:
            s = _as_set(attr, typed)
            cur = self.stack[self.num - 1]
            if s is None or s[0] != cur[0] or not (s[1] & cur[1]):
                return False
            self.stack.append((cur[0], cur[1] & s[1]))
        else:
            if attr.kind not in ("string", "int", "bool", "version"):
                return False
            first = self.first
            if first is None or first.kind != attr.kind:
                return False
            if _comparable(attr.kind, first.value, typed) != _comparable(attr.kind, attr.value, typed):
                return False
        self.num += 1
        return True

    def remove(self, request: str, sub: str, device: Device, driver: str) -> None:
        if not self.applies(request, sub):
            return
        self.num -= 1
        if self.list_types and self.stack:
            self.stack.pop()


class DistinctAttribute(Constraint):
    def __init__(
        self, requests: list[str], attribute: str, list_types: bool, lookup: Lookup | None = None
    ) -> None:
        super().__init__(requests, attribute, list_types, lookup)
        self.values: list[DeviceAttribute] = []

    def describe(self) -> str:
        return f"distinctAttribute {self.attribute}"

    def add(self, request: str, sub: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub):
            return True
        attr = self.value(request, sub, device, driver)
        if attr is None or not self._distinct(attr, self.values):
            return False
        self.values.append(attr)
        return True

    def _distinct(self, attr: DeviceAttribute, values: Iterable[DeviceAttribute]) -> bool:
        typed = self.typed is not None
        if self.list_types:
            s = _as_set(attr, typed)
            if s is None:
                return False
            for other in values:
                o = _as_set(other, typed)
                if o is not None and o[0] == s[0] and (o[1] & s[1]):
                    return False
            return True
        mine = _comparable(attr.kind, attr.value, typed)
        for other in values:
            if attr.kind not in ("string", "int", "bool", "version"):
                return False  # unknown value type, only when there is something to compare with
            if other.kind == attr.kind and _comparable(other.kind, other.value, typed) == mine:
                return False
        return True

    def remove(self, request: str, sub: str, device: Device, driver: str) -> None:
        if not self.applies(request, sub):
            return
        if self.values:
            self.values.pop()


class DistinctPerRequest(DistinctAttribute):
    """distinctAttribute up to k8s.io/dynamic-resource-allocation v0.36 (incubating and experimental
    ``constraint.go``): one value per (parent) request name, overwritten by the request's next device and
    deleted when any of its devices is removed; the first device of the claim is taken without comparison."""

    def __init__(
        self, requests: list[str], attribute: str, list_types: bool, lookup: Lookup | None = None
    ) -> None:
        super().__init__(requests, attribute, list_types, lookup)
        self.by_request: dict[str, DeviceAttribute] = {}

    def add(self, request: str, sub: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub):
            return True
        attr = self.lookup(request, sub, device, driver, self.attribute)
        if attr is None:
            return False
        if self.num != 0 and self._clashes(attr, device):
            return False
        self.by_request[request] = attr
        self._kept(request, device)
        self.num += 1
        return True

    def _clashes(self, attr: DeviceAttribute, device: Device) -> bool:
        """Whether ``device`` (its value ``attr``) clashes with a value already kept."""
        return not self._distinct(attr, self.by_request.values())

    def _kept(self, request: str, device: Device) -> None:
        """What a subclass keeps beside the value when ``request``'s device is added."""

    def remove(self, request: str, sub: str, device: Device, driver: str) -> None:
        if not self.applies(request, sub):
            return
        self.by_request.pop(request, None)
        self.num -= 1


class DistinctSameDevice(DistinctPerRequest):
    """distinctAttribute in k8s.io/dynamic-resource-allocation v0.34 (experimental ``constraint.go``
    matchesAttribute): :class:`DistinctPerRequest`, but comparing the values' pointers (``attribute.StringValue
    == attr.StringValue``), so only a device whose own attribute is already kept clashes (one device allocated
    again, allowMultipleAllocations); two devices with equal values do not. Within one search a device is one
    object, so kubedra compares the devices' identity."""

    def __init__(
        self, requests: list[str], attribute: str, list_types: bool, lookup: Lookup | None = None
    ) -> None:
        super().__init__(requests, attribute, list_types, lookup)
        self.devices: dict[str, Device] = {}

    def _clashes(self, attr: DeviceAttribute, device: Device) -> bool:
        return any(d is device for d in self.devices.values())

    def _kept(self, request: str, device: Device) -> None:
        self.devices[request] = device

    def remove(self, request: str, sub: str, device: Device, driver: str) -> None:
        if self.applies(request, sub):
            self.devices.pop(request, None)
        super().remove(request, sub, device, driver)


def build(
    claim: ResourceClaim,
    list_types: bool,
    stable: bool,
    keeps_every_value: bool,
    lookup: Lookup | None,
    compares_values: bool = True,
    typed: TypedValues | None = None,
) -> list[Constraint]:
    """A claim's constraints as the allocator checks them; ``stable``: upstream's stable allocator (chosen when
    the enabled features allow it), which knows only matchAttribute (distinctAttribute falls into its
    "unsupported constraint" branch); ``keeps_every_value``: distinctAttribute as v0.37 keeps it (else
    :class:`DistinctPerRequest`); ``compares_values`` False: as v0.34 compares them (:class:`DistinctSameDevice`);
    ``typed``: attribute values as v0.38 reads them (:class:`TypedValues`)."""
    out: list[Constraint] = []
    for i, c in enumerate(claim.spec.constraints):
        if c.match_attribute is not None:
            out.append(MatchAttribute(c.requests, c.match_attribute, list_types, lookup))
        elif c.distinct_attribute is not None and not stable:
            distinct = (
                DistinctAttribute
                if keeps_every_value
                else DistinctPerRequest
                if compares_values
                else DistinctSameDevice
            )
            out.append(distinct(c.requests, c.distinct_attribute, list_types, lookup))
        else:
            raise AllocationError(
                f"claim {claim_ref(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
            )
        out[-1].typed = typed
    return out

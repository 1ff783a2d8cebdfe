"""Derived attributes (1.37 alpha, allocator feature DerivedAttributes, gate DRADerivedAttributes).

After k8s.io/dynamic-resource-allocation v0.37.2 ``structured/internal/experimental/allocator_experimental.go``
(``validateDeviceRequest``, ``lookupAttribute``, ``derivedAttributesCache``) and the stable/incubating variants:

- A request or subrequest with ``derivedAttributes`` fails the whole allocation when the feature is off (the
  stable and incubating variants never support it): ``claim X, request R: cannot handle request with derived
  attributes, the feature is disabled``. This is the first check of the request.
- Derived attributes are visible only to the claim's constraints. A constraint looking up attribute name N for
  a device picked for a request that derives N evaluates the request's expression on that device instead of
  reading the device's attributes (the exact fully-qualified name, no driver-domain fallback); other requests
  read the device's own attributes. Duplicate names: the last one wins (a map built in order).
- The evaluated attribute is cached per (device, expression) for the Allocate call; compile and evaluation
  errors fail the allocation (``compile derived attribute N failed: ...``, ``evaluate derived attribute N on
  device D failed: ...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubedra.allocator.constraints import Lookup, TypedValues, lookup_attribute
from kubedra.allocator.errors import AllocationError
from kubedra.allocator.requests import Req, claim_ref
from kubedra.cel import CELCompileError, CELRuntimeError, SelectorEnvironment
from kubedra.cel.derived import CompiledDerived, compile_derived
from kubedra.model.objects import Device, DeviceAttribute, DeviceDerivedAttribute, ResourceClaim

if TYPE_CHECKING:
    from kubedra.allocator.pools import Pool
    from kubedra.allocator.selectors import SelectorMatcher


def derived_of(claim: ResourceClaim, request: str, sub: str) -> list[DeviceDerivedAttribute]:
    """The ``derivedAttributes`` of request ``request`` (or its subrequest ``sub``) of ``claim``."""
    for r in claim.spec.requests:
        if r.name != request:
            continue
        if sub:
            return next((s.derived_attributes for s in r.first_available if s.name == sub), [])
        return r.exactly.derived_attributes if r.exactly is not None else []
    return []


def check_request(claim: ResourceClaim, r: Req, enabled: bool) -> None:
    """``validateDeviceRequest``'s first check: derived attributes need the feature."""
    if not enabled and derived_of(claim, r.parent or r.name, r.name if r.parent else ""):
        raise AllocationError(
            f"claim {claim_ref(claim)}, request {r.name}: cannot handle request with derived attributes, "
            "the feature is disabled"
        )


class DerivedAttributes:
    """Attribute lookup for the constraints of one Allocate call (upstream's ``lookupAttribute``)."""

    def __init__(self, matcher: SelectorMatcher, pools: Sequence[Pool]) -> None:
        self._matcher = matcher
        self._pools = pools
        self._env: SelectorEnvironment | None = None
        self._programs: dict[str, CompiledDerived | CELCompileError] = {}
        self._values: dict[tuple[int, str, str], DeviceAttribute] = {}
        self._pool_of: dict[int, str] | None = None

    def for_claim(self, claim: ResourceClaim) -> Lookup | None:
        """The lookup for ``claim``'s constraints, None when none of its requests derives an attribute."""
        exprs: dict[tuple[str, str], dict[str, str]] = {}
        for r in claim.spec.requests:
            if r.exactly is not None and r.exactly.derived_attributes:
                exprs[(r.name, "")] = {a.name: a.expression for a in r.exactly.derived_attributes}
            for s in r.first_available:
                if s.derived_attributes:
                    exprs[(r.name, s.name)] = {a.name: a.expression for a in s.derived_attributes}
        if not exprs:
            return None

        def lookup(request: str, sub: str, device: Device, driver: str, name: str) -> DeviceAttribute | None:
            expression = exprs.get((request, sub), {}).get(name)
            if expression is None:
                return lookup_attribute(device, driver, name)
            return self.evaluate(name, expression, device, driver)

        return lookup

    def typed(self, claim: ResourceClaim, wraps: bool) -> TypedValues:
        """How v0.38 reads ``claim``'s constraint values (allocator.attributeValuesTyped); ``wraps``: the
        variant runs the stable code, which names the claim and request in the error."""
        return TypedValues(claim, wraps, self.pool_of)

    def evaluate(self, name: str, expression: str, device: Device, driver: str) -> DeviceAttribute:
        key = (id(device), driver, expression)
        hit = self._values.get(key)
        if hit is not None:
            return hit
        program = self._compile(expression)
        if isinstance(program, CELCompileError):
            raise AllocationError(f"compile derived attribute {name} failed: {program.detail}")
        try:
            value = program.evaluate(device, driver)
        except CELRuntimeError as e:
            raise AllocationError(
                f"evaluate derived attribute {name} on device {driver}/{self.pool_of(device)}/{device.name} "
                f"failed: {e.detail}"
            ) from None
        self._values[key] = value
        return value

    def _compile(self, expression: str) -> CompiledDerived | CELCompileError:
        hit = self._programs.get(expression)
        if hit is None:
            if self._env is None:
                m = self._matcher
                self._env = SelectorEnvironment(
                    m.target_version,
                    consumable_capacity=m.consumable_capacity,
                    list_type_attributes=m.list_type_attributes,
                    stored=True,
                )
            try:
                hit = compile_derived(self._env, expression)
            except CELCompileError as e:
                hit = e
            self._programs[expression] = hit
        return hit

    def pool_of(self, device: Device) -> str:
        if self._pool_of is None:
            self._pool_of = {id(d): p.name for p in self._pools for s in p.slices for d in s.devices}
        return self._pool_of.get(id(device), "?")

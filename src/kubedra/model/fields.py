"""ParseContext (locations and typed reads with field paths) and the parsers of the fields DRA objects share:
metadata, node selectors, attributes, capacity, devices, counters, taints, tolerations, requests,
allocations. :mod:`kubedra.model.parse` builds whole objects from them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from itertools import chain
from typing import Any, TypeVar

from kubedra.errors import InputError, Location
from kubedra.k8s.quantity import Quantity, QuantityError, QuantityNotModelled, parse_quantity
from kubedra.model.facts import DeviceFacts, freeze
from kubedra.model.objects import (
    ALLOCATION_MODE_EXACT,
    ATTRIBUTE_KINDS,
    AllocationResult,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CounterSet,
    Device,
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceDerivedAttribute,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OpaqueDeviceConfiguration,
)

T = TypeVar("T")
_NONE: Any = object()  # ParseContext.alike: no model kept for this key

# A slice repeats a handful of quantity strings thousands of times (8 dynamic-MIG nodes: 26,880 counter values,
# 17 distinct); Quantity is immutable, so equal strings share one parse.
_cached_quantity = functools.lru_cache(maxsize=4096)(parse_quantity)


class ParseContext:
    """Carries the location so every error names file:line and the field path, the table of device facts
    shared between the devices parsed with it (:mod:`kubedra.model.facts`; one per slice when not given), and
    ``seen``: for objects that are only checked (their model is dropped) and whose equal parts the reader made
    one object (:func:`kubedra.sources.jsonstream.shared_tree`), what each part parsed into (:meth:`once`);
    and ``parts``: for a caller whose models may share their equal parts, what each part parsed into by its
    content (:meth:`alike`)."""

    __slots__ = ("facts", "location", "parts", "seen")

    def __init__(
        self,
        location: Location | None,
        facts: DeviceFacts | None = None,
        seen: dict[tuple[int, str], tuple[Any, Any]] | None = None,
        parts: dict[Any, Any] | None = None,
    ) -> None:
        self.location = location
        self.facts = facts
        self.seen = seen
        self.parts = parts

    def alike(self, v: Any, path: str, key: Callable[[Any], Any], fn: Callable[[Any, str], T]) -> T:
        """``fn(v, path)``; with ``parts``, parsed once per content and path: ``key(v)`` is a key of all that
        ``fn`` reads of ``v`` (None: ``v`` has no such key, it is parsed), so an equal key parses to an equal
        model (or failed the first time, and nothing went on) and the model made first is handed out again
        (the models then share it: for callers that never change a part of a model)."""
        parts = self.parts
        if parts is None:
            return fn(v, path)
        k = key(v)
        if k is None:
            return fn(v, path)
        k = (path, k)
        hit = parts.get(k, _NONE)
        if hit is not _NONE:
            out: T = hit
            return out
        out = fn(v, path)
        parts[k] = out
        return out

    def once(self, v: Any, path: str, fn: Callable[[Any, str], T]) -> T:
        """``fn(v, path)``; with ``seen``, parsed once per object and path: the same object at the same path
        parses the same (or failed the first time, and nothing went on), so the model it gave is handed out
        again (to a caller that drops it: the models then share it). ``seen`` keeps each object with its
        model, so that its ``id`` is not reused while the entry lives."""
        seen = self.seen
        if seen is None or (type(v) is not list and type(v) is not dict):
            return fn(v, path)
        key = (id(v), path)
        hit = seen.get(key)
        if hit is not None and hit[0] is v:
            out: T = hit[1]
            return out
        out = fn(v, path)
        seen[key] = (v, out)
        return out

    def fail(self, path: str, message: str) -> InputError:
        err = InputError(f"{path}: {message}" if path else message, self.location)
        err.field_path = path  # type: ignore[attr-defined]
        return err

    def mapping(self, v: Any, path: str) -> dict[str, Any]:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise self.fail(path, f"expected an object, found {_tname(v)}")
        return v

    def items(self, v: Any, path: str) -> list[Any]:
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.fail(path, f"expected a list, found {_tname(v)}")
        return v

    def string(self, v: Any, path: str, default: str = "") -> str:
        if v is None:
            return default
        if not isinstance(v, str):
            raise self.fail(path, f"expected a string, found {_tname(v)}")
        return v

    def opt_str(self, v: Any, path: str) -> str | None:
        return None if v is None else self.string(v, path)

    def integer(self, v: Any, path: str, default: int = 0) -> int:
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(path, f"expected an integer, found {_tname(v)}")
        return v

    def boolean(self, v: Any, path: str) -> bool | None:
        if v is None:
            return None
        if not isinstance(v, bool):
            raise self.fail(path, f"expected true or false, found {_tname(v)}")
        return v

    def qty(self, v: Any, path: str) -> Quantity:
        try:
            return _cached_quantity(v) if isinstance(v, str) else parse_quantity(v)
        except QuantityNotModelled as e:
            raise self.fail(path, f"{e} (not invalid: the apiserver may accept it)") from None
        except QuantityError as e:
            raise self.fail(path, f"invalid quantity {v!r}: {e}") from None

    def qty_map(self, v: Any, path: str) -> dict[str, Quantity]:
        return {str(k): self.qty(x, f"{path}.{k}") for k, x in self.mapping(v, path).items()}

    def strings(self, v: Any, path: str) -> list[str]:
        return [self.string(x, f"{path}[{i}]") for i, x in enumerate(self.items(v, path))]

    def each(self, v: Any, path: str, fn: Callable[[Any, str], T]) -> list[T]:
        return [fn(x, f"{path}[{i}]") for i, x in enumerate(self.items(v, path))]


def path_steps(path: str) -> list[str | int]:
    """``spec.devices[0].name`` → ``["spec", "devices", 0, "name"]`` (for Document.line_of)."""
    steps: list[str | int] = []
    for part in path.split("."):
        name, _, rest = part.partition("[")
        if name:
            steps.append(name)
        while rest:
            idx, _, rest = rest.partition("]")
            if idx.isdigit():
                steps.append(int(idx))
            rest = rest.lstrip("[")
    return steps


def _tname(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number"}.get(
        type(v), type(v).__name__
    )


# --------------------------------------------------------------------------- pieces


def object_meta(c: ParseContext, v: Any) -> ObjectMeta:
    m = c.mapping(v, "metadata")
    return ObjectMeta(
        name=c.string(m.get("name"), "metadata.name"),
        namespace=c.string(m.get("namespace"), "metadata.namespace"),
        uid=c.string(m.get("uid"), "metadata.uid"),
        generate_name=c.string(m.get("generateName"), "metadata.generateName"),
        labels={str(k): str(x) for k, x in c.mapping(m.get("labels"), "metadata.labels").items()},
        annotations={
            str(k): str(x) for k, x in c.mapping(m.get("annotations"), "metadata.annotations").items()
        },
        creation_timestamp=str(m.get("creationTimestamp") or ""),
        owner_references=[
            r for r in c.items(m.get("ownerReferences"), "metadata.ownerReferences") if isinstance(r, dict)
        ],
    )


def _requirement(c: ParseContext, v: Any, path: str) -> NodeSelectorRequirement:
    m = c.mapping(v, path)
    return NodeSelectorRequirement(
        key=c.string(m.get("key"), f"{path}.key"),
        operator=c.string(m.get("operator"), f"{path}.operator"),
        values=[str(x) for x in c.items(m.get("values"), f"{path}.values")],
    )


def node_selector(c: ParseContext, v: Any, path: str) -> NodeSelector | None:
    if v is None:
        return None
    m = c.mapping(v, path)
    terms = []
    for i, t in enumerate(c.items(m.get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms")):
        tp = f"{path}.nodeSelectorTerms[{i}]"
        tm = c.mapping(t, tp)
        terms.append(
            NodeSelectorTerm(
                match_expressions=c.each(
                    tm.get("matchExpressions"), f"{tp}.matchExpressions", lambda x, p: _requirement(c, x, p)
                ),
                match_fields=c.each(
                    tm.get("matchFields"), f"{tp}.matchFields", lambda x, p: _requirement(c, x, p)
                ),
            )
        )
    return NodeSelector(terms=terms)


_ATTRIBUTE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
    "bool": lambda x: isinstance(x, bool),
    "string": lambda x: isinstance(x, str),
    "version": lambda x: isinstance(x, str),
}


def _attribute(c: ParseContext, facts: DeviceFacts, v: Any, path: str) -> DeviceAttribute:
    if type(v) is dict and len(v) == 1:  # the common case, {kind: scalar}: what the checks below accept
        ((kind, value),) = v.items()
        ok = _ATTRIBUTE_CHECKS.get(kind)
        if ok is not None and value is not None and ok(value):
            table = facts.values(kind, type(value))  # by kind and type: 1, true and "1" never share
            hit: DeviceAttribute | None = table.get(value)
            if hit is None:
                hit = table[value] = DeviceAttribute(kind=kind, value=value)
                facts.made += 1
            return hit
    return _shared(facts, ("attribute", freeze(v)), lambda: _checked_attribute(c, v, path))


def _checked_attribute(c: ParseContext, v: Any, path: str) -> DeviceAttribute:
    m = c.mapping(v, path)
    set_kinds = [k for k in ATTRIBUTE_KINDS if m.get(k) is not None]
    unknown = [k for k in m if k not in ATTRIBUTE_KINDS]
    if unknown:
        raise c.fail(path, f"unknown attribute value type {unknown[0]!r} (one of int, bool, string, version)")
    if len(set_kinds) != 1:
        raise c.fail(path, "exactly one of int, bool, string, version (or a list type) must be set")
    kind = set_kinds[0]
    value = m[kind]
    base = kind.rstrip("s") if kind.endswith("s") else kind
    ok = _ATTRIBUTE_CHECKS[base]
    if kind.endswith("s"):
        if not isinstance(value, list) or not all(ok(x) for x in value):
            raise c.fail(f"{path}.{kind}", f"expected a list of {base} values")
    elif not ok(value):
        raise c.fail(f"{path}.{kind}", f"expected a {base} value, found {_tname(value)}")
    return DeviceAttribute(kind=kind, value=value)


def _policy(c: ParseContext, v: Any, path: str) -> CapacityRequestPolicy | None:
    if v is None:
        return None
    m = c.mapping(v, path)
    rng = None
    if m.get("validRange") is not None:
        r = c.mapping(m["validRange"], f"{path}.validRange")
        rng = CapacityRequestPolicyRange(
            min=c.qty(r.get("min"), f"{path}.validRange.min"),
            max=c.qty(r["max"], f"{path}.validRange.max") if r.get("max") is not None else None,
            step=c.qty(r["step"], f"{path}.validRange.step") if r.get("step") is not None else None,
        )
    vals = None
    if m.get("validValues") is not None:
        vals = [c.qty(x, f"{path}.validValues[{i}]") for i, x in enumerate(c.items(m["validValues"], path))]
    return CapacityRequestPolicy(
        default=c.qty(m["default"], f"{path}.default") if m.get("default") is not None else None,
        valid_values=vals,
        valid_range=rng,
    )


def _capacity(c: ParseContext, v: Any, path: str) -> DeviceCapacity:
    # the common case, {value: "..."}
    if type(v) is dict and len(v) == 1 and type(q := v.get("value")) is str:
        try:
            return DeviceCapacity(value=_cached_quantity(q))
        except QuantityError:
            pass
    if not isinstance(v, dict):  # v1alpha3 bare quantity (convert normally wraps it)
        return DeviceCapacity(value=c.qty(v, path))
    return DeviceCapacity(
        value=c.qty(v.get("value"), f"{path}.value"),
        request_policy=_policy(c, v.get("requestPolicy"), f"{path}.requestPolicy"),
    )


def parse_taint(c: ParseContext, v: Any, path: str) -> DeviceTaint:
    m = c.mapping(v, path)
    return DeviceTaint(
        key=c.string(m.get("key"), f"{path}.key"),
        value=c.string(m.get("value"), f"{path}.value"),
        effect=c.string(m.get("effect"), f"{path}.effect"),
        time_added=c.opt_str(m.get("timeAdded"), f"{path}.timeAdded"),
    )


def _shared(facts: DeviceFacts, key: Any, build: Callable[[], T]) -> T:
    """The fact already parsed for ``key`` (content), else ``build()`` kept for the next equal one."""
    hit: T | None = facts.get(key)
    return hit if hit is not None else facts.put(key, build())


def _attributes(c: ParseContext, facts: DeviceFacts, v: Any, path: str) -> dict[str, DeviceAttribute]:
    """Each attribute shared with its equals, then the map with equal maps (the ids of shared attributes,
    which the table keeps alive, stand for their content). A map with an attribute seen for the first time (a
    GPU's UUID) cannot equal an earlier map and is not kept: most of a fleet's maps are such."""
    made = facts.made
    attrs = {str(k): _attribute(c, facts, x, f"{path}.{k}") for k, x in c.mapping(v, path).items()}
    if facts.made != made:
        return attrs
    key = ("attributes", *chain.from_iterable((k, id(a)) for k, a in attrs.items()))
    hit: dict[str, DeviceAttribute] | None = facts.get(key)
    return hit if hit is not None else facts.put(key, attrs)


def parse_device(c: ParseContext, v: Any, path: str) -> Device:
    m = c.mapping(v, path)
    facts = c.facts
    if facts is None:
        facts = c.facts = DeviceFacts()
    return Device(
        name=c.string(m.get("name"), f"{path}.name"),
        attributes=_attributes(c, facts, m.get("attributes"), f"{path}.attributes"),
        capacity=_shared(
            facts,
            ("capacity", freeze(m.get("capacity"))),
            lambda: {
                str(k): _capacity(c, x, f"{path}.capacity.{k}")
                for k, x in c.mapping(m.get("capacity"), f"{path}.capacity").items()
            },
        ),
        consumes_counters=_shared(
            facts,
            ("consumesCounters", freeze(m.get("consumesCounters"))),
            lambda: c.each(
                m.get("consumesCounters"),
                f"{path}.consumesCounters",
                lambda x, p: DeviceCounterConsumption(
                    counter_set=c.string((x := c.mapping(x, p)).get("counterSet"), f"{p}.counterSet"),
                    counters=_counters(c, x.get("counters"), f"{p}.counters"),
                    compatibility_groups=c.strings(x.get("compatibilityGroups"), f"{p}.compatibilityGroups"),
                ),
            ),
        ),
        node_name=c.opt_str(m.get("nodeName"), f"{path}.nodeName"),
        node_selector=node_selector(c, m.get("nodeSelector"), f"{path}.nodeSelector"),
        all_nodes=c.boolean(m.get("allNodes"), f"{path}.allNodes"),
        taints=_shared(
            facts,
            ("taints", freeze(m.get("taints"))),
            lambda: c.each(m.get("taints"), f"{path}.taints", lambda x, p: parse_taint(c, x, p)),
        ),
        binds_to_node=c.boolean(m.get("bindsToNode"), f"{path}.bindsToNode"),
        binding_conditions=_shared(
            facts,
            ("strings", freeze(m.get("bindingConditions"))),
            lambda: c.strings(m.get("bindingConditions"), f"{path}.bindingConditions"),
        ),
        binding_failure_conditions=_shared(
            facts,
            ("strings", freeze(m.get("bindingFailureConditions"))),
            lambda: c.strings(m.get("bindingFailureConditions"), f"{path}.bindingFailureConditions"),
        ),
        allow_multiple_allocations=c.boolean(
            m.get("allowMultipleAllocations"), f"{path}.allowMultipleAllocations"
        ),
    )


def _counters(c: ParseContext, v: Any, path: str) -> dict[str, Quantity]:
    """``{name: {value: quantity}}``; the field path is spelled out only for an error (thousands per slice)."""
    out: dict[str, Quantity] = {}
    for k, x in c.mapping(v, path).items():
        q = x.get("value") if type(x) is dict else None
        if type(q) is str:
            try:
                out[str(k)] = _cached_quantity(q)
                continue
            except QuantityError:
                pass
        out[str(k)] = c.qty(c.mapping(x, f"{path}.{k}").get("value"), f"{path}.{k}.value")
    return out


def shared_counters(c: ParseContext, v: Any) -> list[CounterSet]:
    """A slice's ``sharedCounters``, one list for equal ones (the same hardware on every node)."""
    facts = c.facts
    build: Callable[[], list[CounterSet]] = lambda: c.each(  # noqa: E731
        v, "spec.sharedCounters", lambda x, p: parse_counter_set(c, x, p)
    )
    return build() if facts is None else _shared(facts, ("sharedCounters", freeze(v)), build)


def parse_counter_set(c: ParseContext, v: Any, path: str) -> CounterSet:
    m = c.mapping(v, path)
    return CounterSet(
        name=c.string(m.get("name"), f"{path}.name"),
        counters=_counters(c, m.get("counters"), f"{path}.counters"),
    )


def _toleration(c: ParseContext, v: Any, path: str) -> DeviceToleration:
    m = c.mapping(v, path)
    return DeviceToleration(
        key=c.string(m.get("key"), f"{path}.key"),
        operator=c.string(m.get("operator"), f"{path}.operator") or "Equal",
        value=c.string(m.get("value"), f"{path}.value"),
        effect=c.string(m.get("effect"), f"{path}.effect"),
        toleration_seconds=c.integer(m.get("tolerationSeconds"), f"{path}.tolerationSeconds")
        if m.get("tolerationSeconds") is not None
        else None,
    )


def parse_selectors(c: ParseContext, v: Any, path: str) -> list[str]:
    out = []
    for i, s in enumerate(c.items(v, path)):
        sm = c.mapping(s, f"{path}[{i}]")
        cel = c.mapping(sm.get("cel"), f"{path}[{i}].cel")
        expr = c.string(cel.get("expression"), f"{path}[{i}].cel.expression")
        if not expr:
            hint = " (found expression next to cel; indent it under cel)" if "expression" in sm else ""
            raise c.fail(f"{path}[{i}].cel.expression", f"required value{hint}")
        out.append(expr)
    return out


def _request_fields(c: ParseContext, m: dict[str, Any], path: str) -> dict[str, Any]:
    mode = c.string(m.get("allocationMode"), f"{path}.allocationMode") or ALLOCATION_MODE_EXACT
    count = c.integer(m.get("count"), f"{path}.count")
    if mode == ALLOCATION_MODE_EXACT and count == 0:
        count = 1
    cap = None
    if m.get("capacity") is not None:
        cap = c.qty_map(
            c.mapping(m["capacity"], f"{path}.capacity").get("requests"), f"{path}.capacity.requests"
        )
    return {
        "device_class_name": c.string(m.get("deviceClassName"), f"{path}.deviceClassName"),
        "selectors": parse_selectors(c, m.get("selectors"), f"{path}.selectors"),
        "allocation_mode": mode,
        "count": count,
        "tolerations": c.each(m.get("tolerations"), f"{path}.tolerations", lambda x, p: _toleration(c, x, p)),
        "capacity": cap,
        "derived_attributes": c.each(
            m.get("derivedAttributes"), f"{path}.derivedAttributes", lambda x, p: _derived(c, x, p)
        ),
    }


def _derived(c: ParseContext, v: Any, path: str) -> DeviceDerivedAttribute:
    m = c.mapping(v, path)
    return DeviceDerivedAttribute(
        name=c.string(m.get("name"), f"{path}.name"),
        expression=c.string(m.get("expression"), f"{path}.expression"),
    )


def _request(c: ParseContext, v: Any, path: str) -> DeviceRequest:
    m = c.mapping(v, path)
    exactly = None
    if m.get("exactly") is not None:
        em = c.mapping(m["exactly"], f"{path}.exactly")
        exactly = ExactDeviceRequest(
            **_request_fields(c, em, f"{path}.exactly"),
            admin_access=c.boolean(em.get("adminAccess"), f"{path}.exactly.adminAccess"),
        )
    subs = []
    for i, s in enumerate(c.items(m.get("firstAvailable"), f"{path}.firstAvailable")):
        sp = f"{path}.firstAvailable[{i}]"
        sm = c.mapping(s, sp)
        subs.append(
            DeviceSubRequest(name=c.string(sm.get("name"), f"{sp}.name"), **_request_fields(c, sm, sp))
        )
    return DeviceRequest(name=c.string(m.get("name"), f"{path}.name"), exactly=exactly, first_available=subs)


def parse_opaque(c: ParseContext, v: Any, path: str) -> OpaqueDeviceConfiguration | None:
    if v is None:
        return None
    m = c.mapping(v, path)
    return OpaqueDeviceConfiguration(
        driver=c.string(m.get("driver"), f"{path}.driver"), parameters=m.get("parameters")
    )


def device_claim(c: ParseContext, v: Any, path: str) -> DeviceClaim:
    spec = c.mapping(v, path)
    d = c.mapping(spec.get("devices"), f"{path}.devices")
    p = f"{path}.devices"
    return DeviceClaim(
        requests=c.each(d.get("requests"), f"{p}.requests", lambda x, q: _request(c, x, q)),
        constraints=c.each(
            d.get("constraints"),
            f"{p}.constraints",
            lambda x, q: DeviceConstraint(
                requests=c.strings((x := c.mapping(x, q)).get("requests"), f"{q}.requests"),
                match_attribute=c.opt_str(x.get("matchAttribute"), f"{q}.matchAttribute"),
                distinct_attribute=c.opt_str(x.get("distinctAttribute"), f"{q}.distinctAttribute"),
            ),
        ),
        config=c.each(
            d.get("config"),
            f"{p}.config",
            lambda x, q: DeviceClaimConfiguration(
                requests=c.strings((x := c.mapping(x, q)).get("requests"), f"{q}.requests"),
                opaque=parse_opaque(c, x.get("opaque"), f"{q}.opaque"),
            ),
        ),
    )


def parse_allocation(c: ParseContext, v: Any, path: str) -> AllocationResult | None:
    if v is None:
        return None
    m = c.mapping(v, path)
    devices = c.mapping(m.get("devices"), f"{path}.devices")

    def result(x: Any, p: str) -> DeviceRequestAllocationResult:
        r = c.mapping(x, p)
        return DeviceRequestAllocationResult(
            request=c.string(r.get("request"), f"{p}.request"),
            driver=c.string(r.get("driver"), f"{p}.driver"),
            pool=c.string(r.get("pool"), f"{p}.pool"),
            device=c.string(r.get("device"), f"{p}.device"),
            admin_access=c.boolean(r.get("adminAccess"), f"{p}.adminAccess"),
            tolerations=c.each(r.get("tolerations"), f"{p}.tolerations", lambda y, q: _toleration(c, y, q)),
            binding_conditions=c.strings(r.get("bindingConditions"), f"{p}.bindingConditions"),
            binding_failure_conditions=c.strings(
                r.get("bindingFailureConditions"), f"{p}.bindingFailureConditions"
            ),
            share_id=c.opt_str(r.get("shareID"), f"{p}.shareID"),
            consumed_capacity=c.qty_map(r.get("consumedCapacity"), f"{p}.consumedCapacity")
            if r.get("consumedCapacity") is not None
            else None,
            skip_node_operations=c.strings(r.get("skipNodeOperations"), f"{p}.skipNodeOperations"),
        )

    return AllocationResult(
        results=c.each(devices.get("results"), f"{path}.devices.results", result),
        config=c.each(
            devices.get("config"),
            f"{path}.devices.config",
            lambda x, p: DeviceAllocationConfiguration(
                source=c.string((x := c.mapping(x, p)).get("source"), f"{p}.source"),
                requests=c.strings(x.get("requests"), f"{p}.requests"),
                opaque=parse_opaque(c, x.get("opaque"), f"{p}.opaque"),
            ),
        ),
        node_selector=node_selector(c, m.get("nodeSelector"), f"{path}.nodeSelector"),
        allocation_timestamp=c.opt_str(m.get("allocationTimestamp"), f"{path}.allocationTimestamp"),
    )

"""Bridge from the allocator to the CEL engine, with the caches that keep selectors off the hot path.

- compiled programs are cached per expression (many claims share a DeviceClass selector);
- results are memoised per (expression, device object): slices are immutable while an Allocator lives,
  so a selector is evaluated at most once per device; runtime errors are memoised too and re-raised each
  time, because upstream treats them as errors on every attempt;
- results are also shared between devices that look the same *to the expression*: the memo key is the
  driver plus the attributes and capacities whose name the expression mentions (and the set of domains
  present). A node with 208 MIG partitions has only a few dozen distinct (type, profile) combinations, so
  a cluster of 1,000 such nodes needs a few hundred CEL evaluations instead of 208,000. Expressions that
  could look at a whole attribute map (macros, ``size``, map literals, ``format``/``string``) are never
  shared this way.

The scheduler compiles selectors in the "stored expressions" environment (every library ever introduced)
without a cost estimate; :mod:`kubedra.validate` uses the stricter new-expressions environment instead.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Sequence
from typing import Any

from kubedra import vendors
from kubedra.cel import CELCompileError, CELRuntimeError, SelectorEnvironment
from kubedra.cel.published import unpublished_key_hint
from kubedra.cel.selector import NO_SUCH_KEY_HINT
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.model.objects import Device

# Runtime error texts where the CEL evaluator kubedra embeds words them differently from cel-go, which
# upstream's allocator runs (github.com/google/cel-go common/types/err.go: errDivideByZero).
CEL_GO_MESSAGES = {"divide by zero": "division by zero"}


class SelectorError(Exception):
    """A selector failed to compile or evaluate; the allocator turns it into an AllocationError."""

    def __init__(
        self, index: int, expression: str, message: str, runtime: bool, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.index = index
        self.expression = expression
        self.message = message
        self.runtime = runtime
        self.hint = (
            hint  # what a "no such key" means in the terms of the driver whose releases kubedra has read
        )

    def describe(self, owner: str, device: str, *, names_device: bool = True) -> str:
        """Upstream's error text; without ``names_device`` (releases before
        ``allocator.selectorErrorNamesDevice``) the runtime error names neither the device nor carries
        cel.EnhanceRuntimeError's "no such key" advice."""
        if self.runtime:
            tail = f" ({self.hint})" if self.hint else ""
            if not names_device:
                return f"{owner}: selector #{self.index}: CEL runtime error: {self.message.removesuffix(NO_SUCH_KEY_HINT)}{tail}"
            return (
                f"{owner}: selector #{self.index} on device {device}: CEL runtime error: {self.message}{tail}"
            )
        return f"{owner}: selector #{self.index}: CEL compile error: {self.message}"


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r"'([^'\\]*)'|\"([^\"\\]*)\"")
_WHOLE_MAP = re.compile(
    r"\b(all|exists|exists_one|existsOne|map|filter|size|transformList|transformMap|transformMapEntry|format|string|"
    r"dyn|type)\s*\(|\{"
)


def mentioned_names(expression: str) -> frozenset[str] | None:
    """Identifiers and string literals of an expression, or None when it may inspect whole attribute maps."""
    if _WHOLE_MAP.search(expression):
        return None
    names = set(_WORD.findall(expression))
    for a, b in _STRING.findall(expression):
        names.add(a or b)
    return frozenset(names)


_DRIVER_EQ = re.compile(r"""device\.driver\s*==\s*(?:"([^"]+)"|'([^']+)')""")


def required_drivers(selectors: Sequence[str]) -> set[str]:
    """Drivers a DeviceClass's CEL selectors pin with ``device.driver == "..."`` (each selector must hold, so
    one pinned driver in any of them decides; an ``||`` makes the pin unreliable and yields nothing)."""
    out: set[str] = set()
    for expr in selectors:
        if "||" in expr:
            continue
        out |= {a or b for a, b in _DRIVER_EQ.findall(expr)}
    return out


@functools.cache
def _replaced_names() -> dict[str, dict[str, str]]:
    """Driver -> the names its releases dropped -> what to use instead, for every driver some vendor's release
    tables name (:meth:`kubedra.vendors.base.Vendor.published_releases`)."""
    out: dict[str, dict[str, str]] = {}
    for v in vendors.all():
        tables, hints = v.published_releases(None)
        for kinds in tables.values():
            for kind in kinds.values():
                out[str(kind["driver"])] = hints
    return out


def _driver_hint(detail: str, device: Device, driver: str) -> str | None:
    """For a device of a driver whose releases kubedra has read: a ``no such key`` said in what the driver
    publishes (:func:`kubedra.cel.published.unpublished_key_hint`, with the names the driver's releases dropped)."""
    hints = _replaced_names().get(driver)
    if hints is None:
        return None
    return unpublished_key_hint(detail, driver, device.attributes, hints)


class SelectorMatcher:
    def __init__(
        self,
        *,
        target_version: str = DEFAULT_TARGET,
        consumable_capacity: bool = True,
        list_type_attributes: bool = False,
        sees_allow_multiple: bool = True,
    ) -> None:
        self.target_version = target_version
        # upstream's stable code evaluates selectors on a cel.Device without allowMultipleAllocations (it reads
        # false): data/versions.yaml allocator.variantCode
        self.sees_allow_multiple = sees_allow_multiple
        self.consumable_capacity = consumable_capacity
        self.list_type_attributes = list_type_attributes
        self._env: Any = None
        self._programs: dict[str, Any] = {}
        self._memo: dict[tuple[str, int], tuple[Device, bool | BaseException]] = {}
        self._shared: dict[tuple[Any, ...], bool | BaseException] = {}
        self._names: dict[str, frozenset[str] | None] = {}
        self._shapes: dict[tuple[Any, ...], tuple[tuple[str, ...], tuple[str, ...], frozenset[Any]]] = {}
        self.evaluations = 0  # CEL evaluations actually run (memo misses)

    def _environment(self) -> Any:
        if self._env is None:
            self._env = SelectorEnvironment(
                self.target_version,
                consumable_capacity=self.consumable_capacity,
                list_type_attributes=self.list_type_attributes,
                stored=True,
            )
        return self._env

    def compile(self, index: int, expression: str) -> Any:
        prog = self._programs.get(expression)
        if prog is None:
            try:
                prog = self._environment().compile(expression)
            except CELCompileError as e:
                prog = e
            self._programs[expression] = prog
        if isinstance(prog, Exception):
            raise SelectorError(
                index,
                expression,
                str(getattr(prog, "detail", None) or getattr(prog, "message", prog)),
                runtime=False,
            )
        return prog

    def matches(self, index: int, expression: str, device: Device, driver: str) -> bool:
        key = (expression, id(device))
        hit = self._memo.get(key)
        if hit is not None and hit[0] is device:
            value = hit[1]
        else:
            shared_key = self._content_key(expression, device, driver)
            cached = self._shared.get(shared_key) if shared_key is not None else None
            if cached is not None:
                value = cached
            else:
                prog = self.compile(index, expression)

                self.evaluations += 1
                seen = device
                if device.allow_multiple_allocations and not self.sees_allow_multiple:
                    seen = dataclasses.replace(device, allow_multiple_allocations=False)
                try:
                    value = bool(prog.matches(seen, driver))
                except CELRuntimeError as e:
                    value = e
                if shared_key is not None:
                    self._shared[shared_key] = value
            self._memo[key] = (device, value)
        if isinstance(value, BaseException):
            detail = str(getattr(value, "detail", None) or getattr(value, "message", value))
            raise SelectorError(
                index,
                expression,
                CEL_GO_MESSAGES.get(detail, detail),
                runtime=True,
                hint=_driver_hint(detail, device, driver),
            )
        return value

    def _shape(
        self, expression: str, names: frozenset[str], device: Device, driver: str
    ) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[Any]]:
        """For devices with these attribute and capacity names: the names the expression mentions and the
        domains present. Devices of one model publish the same names, so this is computed a few times."""
        key = (expression, driver, tuple(device.attributes), tuple(device.capacity))
        hit = self._shapes.get(key)
        if hit is not None:
            return hit
        attrs: list[str] = []
        caps: list[str] = []
        domains: set[Any] = set()
        for qname in device.attributes:
            domain, sep, ident = qname.rpartition("/")
            domains.add(domain if sep else driver)
            if ident in names:
                attrs.append(qname)
        for qname in device.capacity:
            domain, sep, ident = qname.rpartition("/")
            domains.add(("capacity", domain if sep else driver))
            if ident in names:
                caps.append(qname)
        shape = (tuple(attrs), tuple(caps), frozenset(domains))
        self._shapes[key] = shape
        return shape

    def _content_key(self, expression: str, device: Device, driver: str) -> tuple[Any, ...] | None:
        if expression in self._names:
            names = self._names[expression]
        else:
            names = self._names[expression] = mentioned_names(expression)
        if names is None:
            return None
        attr_names, cap_names, domains = self._shape(expression, names, device, driver)
        attrs = []
        for qname in attr_names:
            attr = device.attributes[qname]
            v = attr.value
            attrs.append((qname, attr.kind, tuple(v) if isinstance(v, list) else v))
        # the representation too: isInteger()/asInteger() answer from it (2000m is not an integer, 2 is), and
        # the text, which a release re-reads (Quantity.at: 1.38 rounds past 29 digits, add/sub use exponents)
        caps = [
            (
                qname,
                device.capacity[qname].value.nanos,
                device.capacity[qname].value.scale,
                device.capacity[qname].value.source,
            )
            for qname in cap_names
        ]
        return (
            expression,
            driver,
            bool(device.allow_multiple_allocations) and self.sees_allow_multiple,
            tuple(sorted(attrs)),
            tuple(sorted(caps)),
            domains,
        )

    def all_match(self, selectors: Sequence[str], device: Device, driver: str) -> bool:
        return all(self.matches(i, expr, device, driver) for i, expr in enumerate(selectors))

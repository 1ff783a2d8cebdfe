"""Selectors against what a driver publishes: a static walk of a compiled selector's AST.

The DRA selector environment types ``device.attributes[d][n]`` as ``dyn`` (any attribute of any type may
exist), so the compiler accepts a selector naming an attribute no device has, or comparing a version attribute
with a string; on a real device the first is a ``no such key`` runtime error, the second never true. Given the
device kinds a driver release publishes (attribute names with their types, capacity names), :func:`check`
finds, without a device:

- an access (``device.attributes['d'].n``, ``...['n']``, ``device.capacity[...]``) to a name no kind of the
  driver publishes: an error when unguarded (the claim can never be allocated), a warning under ``has()``,
  ``.?`` or ``in`` (always false);
- an attribute compared with a constant of another type, or given a method of another type
  (``.isGreaterThan`` on a string): an error naming the attribute's real type;
- a selector no single kind satisfies (its ``type`` pinned to a value no kind has, or attributes of different
  kinds): a warning.

Which driver a selector is about: the domain it reads (``gpu.nvidia.com``, the driver's own), and a
top-level ``device.driver == '...'`` conjunct for the shared domains (``resource.kubernetes.io``), which any
driver may publish under and which are therefore checked only when the selector pins the driver.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors

_COMPARE = {"_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"}
_STRING_METHODS = frozenset(
    [
        "startsWith",
        "endsWith",
        "contains",
        "matches",
        "lowerAscii",
        "upperAscii",
        "trim",
        "split",
        "replace",
        "indexOf",
        "lastIndexOf",
        "substring",
        "charAt",
        "reverse",
    ]
)
_VERSION_METHODS = frozenset(["isGreaterThan", "isLessThan", "compareTo", "major", "minor", "patch"])
_METHODS = {"string": _STRING_METHODS, "version": _VERSION_METHODS}
_CONST_TYPES = {
    "string_value": "string",
    "int64_value": "int",
    "uint64_value": "int",
    "double_value": "int",
    "bool_value": "bool",
}
_TYPE_WORDS = {
    "string": "a string",
    "int": "an int",
    "bool": "a bool",
    "version": "a version (semver)",
    "ints": "a list of ints",
    "strings": "a list of strings",
    "bools": "a list of bools",
    "versions": "a list of versions",
}


@dataclass(frozen=True)
class DeviceKind:
    """One kind of device a driver publishes (``type`` attribute value ``name``)."""

    name: str
    driver: str
    attributes: Mapping[str, frozenset[str]]  # name as published (unqualified: the driver's domain) -> types
    capacities: frozenset[str]

    def split(self, name: str) -> tuple[str, str]:
        sep = name.find("/")
        return (self.driver, name) if sep == -1 else (name[:sep], name[sep + 1 :])

    def names(self, which: str, domain: str) -> list[str]:
        pool = self.attributes if which == "attributes" else self.capacities
        return [ident for n in pool for d, ident in [self.split(n)] if d == domain]

    def types(self, domain: str, ident: str) -> frozenset[str]:
        out: set[str] = set()
        for n, t in self.attributes.items():
            d, i = self.split(n)
            if d == domain and _name_matches(i, ident):
                out |= t
        return frozenset(out)

    def has(self, which: str, domain: str, ident: str) -> bool:
        return any(_name_matches(n, ident) for n in self.names(which, domain))


@dataclass(frozen=True)
class Problem:
    """``key`` identifies the problem across driver releases (to group them); ``message`` names this release's
    facts."""

    key: tuple[str, ...]
    message: str
    warning: bool = False


@dataclass
class _Access:
    which: str  # attributes | capacity
    domain: str
    ident: str
    node: Any
    guarded: bool
    text: str = field(default="")


def _name_matches(pattern: str, ident: str) -> bool:
    if pattern.endswith("*"):
        return re.fullmatch(re.escape(pattern[:-1]) + r"\d+", ident) is not None
    return pattern == ident


def _kind(node: Any) -> str:
    return str(node.WhichOneof("expr_kind"))


def _const_string(node: Any) -> str | None:
    if _kind(node) == "const_expr" and node.const_expr.WhichOneof("constant_kind") == "string_value":
        return str(node.const_expr.string_value)
    return None


def _device_field(node: Any, var: str) -> str | None:
    """``device.attributes`` / ``device.capacity`` / ``device.driver`` → the field name."""
    if _kind(node) != "select_expr" or node.select_expr.test_only:
        return None
    op = node.select_expr.operand
    if _kind(op) == "ident_expr" and op.ident_expr.name == var:
        return str(node.select_expr.field)
    return None


def _domain_map(node: Any, var: str) -> tuple[str, str, bool] | None:
    """``device.attributes['d']`` → (which, domain, optional)."""
    if _kind(node) != "call_expr" or node.call_expr.function not in ("_[_]", "_[?_]"):
        return None
    args = node.call_expr.args
    if len(args) != 2:
        return None
    which = _device_field(args[0], var)
    domain = _const_string(args[1])
    if which not in ("attributes", "capacity") or domain is None:
        return None
    return which, domain, node.call_expr.function == "_[?_]"


def _children(node: Any) -> Iterator[Any]:
    kind = _kind(node)
    if kind == "select_expr":
        yield node.select_expr.operand
    elif kind == "call_expr":
        if node.call_expr.HasField("target"):
            yield node.call_expr.target
        yield from node.call_expr.args
    elif kind == "list_expr":
        yield from node.list_expr.elements
    elif kind == "struct_expr":
        for ent in node.struct_expr.entries:
            if ent.HasField("map_key"):
                yield ent.map_key
            yield ent.value
    elif kind == "comprehension_expr":
        c = node.comprehension_expr
        yield from (c.iter_range, c.accu_init, c.loop_condition, c.loop_step, c.result)


def _parents(root: Any) -> dict[int, Any]:
    out: dict[int, Any] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in _children(node):
            out[child.id] = node
            stack.append(child)
    return out


def _accesses(root: Any, parents: Mapping[int, Any], var: str) -> list[_Access]:
    found: list[_Access] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(_children(node))
        kind = _kind(node)
        if kind == "select_expr":
            dm = _domain_map(node.select_expr.operand, var)
            if dm is not None:
                which, domain, optional = dm
                guarded = optional or bool(node.select_expr.test_only)
                found.append(_Access(which, domain, node.select_expr.field, node, guarded))
        elif kind == "call_expr" and node.call_expr.function in ("_[_]", "_[?_]", "_?._", "@in"):
            args = node.call_expr.args
            if len(args) != 2:
                continue
            fn = node.call_expr.function
            base, key = (args[1], args[0]) if fn == "@in" else (args[0], args[1])
            dm = _domain_map(base, var)
            ident = _const_string(key)
            if dm is None or ident is None:
                continue
            which, domain, optional = dm
            guarded = optional or fn != "_[_]"
            found.append(_Access(which, domain, ident, node, guarded))
    for a in found:
        a.text = f"device.{a.which}['{a.domain}'].{a.ident}"
        if not a.guarded:  # x.?n.orValue(...), has() around an index: guarded too
            parent = parents.get(a.node.id)
            if parent is not None and _kind(parent) == "select_expr" and parent.select_expr.test_only:
                a.guarded = True
    return found


def _conjuncts(node: Any) -> Iterator[Any]:
    if _kind(node) == "call_expr" and node.call_expr.function == "_&&_":
        for arg in node.call_expr.args:
            yield from _conjuncts(arg)
    else:
        yield node


def _pins(root: Any, accesses: Sequence[_Access], var: str) -> tuple[set[str], dict[tuple[str, str], str]]:
    """Top-level ``device.driver == 'x'`` and ``<attribute> == 'literal'`` conjuncts."""
    drivers: set[str] = set()
    values: dict[tuple[str, str], str] = {}
    by_node = {a.node.id: a for a in accesses}
    for c in _conjuncts(root):
        if _kind(c) != "call_expr" or c.call_expr.function != "_==_" or len(c.call_expr.args) != 2:
            continue
        a, b = c.call_expr.args
        for lhs, rhs in ((a, b), (b, a)):
            lit = _const_string(rhs)
            if lit is None:
                continue
            if _device_field(lhs, var) == "driver":
                drivers.add(lit)
            acc = by_node.get(lhs.id)
            if acc is not None and acc.which == "attributes":
                values[(acc.domain, acc.ident)] = lit
    return drivers, values


def _use_types(acc: _Access, parents: Mapping[int, Any]) -> tuple[str, str] | None:
    """How the attribute is used: ("compare", const type) or ("method", name)."""
    parent = parents.get(acc.node.id)
    if parent is None or _kind(parent) != "call_expr":
        return None
    call = parent.call_expr
    if call.HasField("target") and call.target.id == acc.node.id:
        return ("method", str(call.function))
    if call.function in _COMPARE and len(call.args) == 2:
        other = call.args[1] if call.args[0].id == acc.node.id else call.args[0]
        if _kind(other) == "const_expr":
            t = _CONST_TYPES.get(str(other.const_expr.WhichOneof("constant_kind")))
            if t is not None:
                return ("compare", t)
    return None


def _compatible(use: tuple[str, str], types: frozenset[str]) -> bool:
    how, what = use
    if how == "compare":
        return what in types
    known = set().union(*_METHODS.values())
    if what not in known:
        return True
    return any(what in _METHODS.get(t, ()) for t in types)


def _types_text(types: frozenset[str]) -> str:
    return " or ".join(_TYPE_WORDS.get(t, t) for t in sorted(types))


def check(
    checked_expr: Any,
    kinds: Sequence[DeviceKind],
    *,
    label: str,
    hints: Mapping[str, str] | None = None,
    var: str = "device",
) -> list[Problem]:
    """Problems of one compiled selector (``program.source.expr``) against the kinds one driver release
    publishes; ``label`` names the release in messages, ``hints`` maps a gone name to what to use instead."""
    hints = hints or {}
    parents = _parents(checked_expr)
    accesses = _accesses(checked_expr, parents, var)
    if not accesses:
        return []
    pinned_drivers, pinned_values = _pins(checked_expr, accesses, var)
    own_domains = {k.driver for k in kinds}
    driver = _driver_words(kinds)
    problems: list[Problem] = []
    relevant: list[_Access] = []
    for acc in accesses:
        if pinned_drivers:
            scope = [k for k in kinds if k.driver in pinned_drivers]
        elif acc.domain in own_domains:
            scope = [k for k in kinds if k.driver == acc.domain]
        else:
            continue  # a shared domain without a pinned driver: any driver may publish it
        if not scope:
            continue
        relevant.append(acc)
        if any(k.has(acc.which, acc.domain, acc.ident) for k in scope):
            if acc.which == "attributes":
                types = frozenset().union(*(k.types(acc.domain, acc.ident) for k in scope))
                use = _use_types(acc, parents)
                if (
                    use is not None
                    and types
                    and not _compatible(use, types)
                    and not any(p.key == ("type", acc.text, *use) for p in problems)
                ):
                    if use[0] == "compare":
                        how = (
                            f"compared with {_TYPE_WORDS[use[1]]}: values of different types are never equal, "
                            "and ordering them is a runtime error"
                        )
                    else:
                        how = f".{use[1]}() is not a method of that type: a runtime error on every device"
                    problems.append(
                        Problem(
                            ("type", acc.text, use[0], use[1]),
                            f"{acc.text} is {_types_text(types)} on {driver} {label}; {how}",
                        )
                    )
            continue
        key = ("missing", acc.which, acc.domain, acc.ident)
        if any(p.key == key for p in problems):
            continue
        pool: Callable[[Any], Iterable[str]] = (
            (lambda k: k.attributes) if acc.which == "attributes" else (lambda k: k.capacities)
        )
        published = sorted({n for k in scope for n in pool(k)})
        what = "attribute" if acc.which == "attributes" else "capacity"
        hint = hints.get(acc.ident)
        listed = ", ".join(published) if published else "none"
        message = (
            f"{acc.text}: {driver} {label} does not publish {what} `{acc.ident}` under "
            f"{acc.domain} (it publishes: {listed})"
            + (f"; use {hint}" if hint else "")
            + (
                " — under has()/.?/in this test is always false"
                if acc.guarded
                else ": the selector fails on every device, so the claim can never be allocated"
            )
        )
        problems.append(Problem(key, message, warning=acc.guarded))
    if problems or not relevant:
        return problems
    # every access exists somewhere: does one kind have them all (and the pinned values)?
    for k in kinds:
        if pinned_drivers and k.driver not in pinned_drivers:
            continue
        ok = all(k.has(a.which, a.domain, a.ident) for a in relevant if not a.guarded)
        type_pin = pinned_values.get((k.driver, "type"))
        if ok and (type_pin is None or type_pin == k.name):
            return []
    kinds_text = ", ".join(f"{k.name} ({k.driver})" for k in kinds)
    return [
        Problem(
            ("no-kind",),
            f"no device kind of {driver} {label} satisfies this selector (kinds: {kinds_text})",
            warning=True,
        )
    ]


def _driver_words(kinds: Sequence[DeviceKind]) -> str:
    """The driver the kinds are published by, as messages name it: ``the NVIDIA DRA driver``."""
    owner = next((v for k in kinds if (v := vendors.for_published_driver(k.driver)) is not None), None)
    return f"the {owner.title} DRA driver" if owner is not None else "the DRA driver"


def kinds_from(table: Mapping[str, Mapping[str, Any]]) -> list[DeviceKind]:
    """DeviceKinds from plain data: ``{kind: {driver, attributes: {name: [types]}, capacities: [names]}}``."""
    return [
        DeviceKind(
            name,
            str(k["driver"]),
            {n: frozenset(t) for n, t in (k.get("attributes") or {}).items()},
            frozenset(k.get("capacities") or ()),
        )
        for name, k in table.items()
    ]


def check_releases(
    checked_expr: Any,
    releases: Mapping[str, Sequence[DeviceKind]],
    *,
    hints: Mapping[str, str] | None = None,
    var: str = "device",
) -> list[Problem]:
    """:func:`check` at each release (label → kinds, oldest first); one problem per key, its message from the
    newest release it occurs at, saying at which releases (and, when not all, which do not have it)."""
    found: dict[tuple[str, ...], list[tuple[str, Problem]]] = {}
    for label, kinds in releases.items():
        for p in check(checked_expr, kinds, label=label, hints=hints, var=var):
            found.setdefault(p.key, []).append((label, p))
    out: list[Problem] = []
    for key, hits in found.items():
        labels = [label for label, _ in hits]
        newest = hits[-1][1]
        message = newest.message
        if len(releases) > 1:
            others = [label for label in releases if label not in labels]
            message = message.replace(f"driver {hits[-1][0]}", f"driver {_span(labels)}", 1)
            if others:
                message += f" (fine at {_span(others)})"
        out.append(Problem(key, message, warning=all(p.warning for _, p in hits)))
    return out


_NO_SUCH_KEY = re.compile(r"^no such key: (\S+?)(?:\. |$)")


def unpublished_key_hint(
    detail: str, driver: str, attribute_names: Iterable[str], hints: Mapping[str, str]
) -> str | None:
    """What a ``no such key: X`` runtime error on a device of ``driver`` means in the driver's terms: "the driver
    does not publish `X`; use ..." (``hints``: a gone name → what to use), else the names this device publishes
    under the driver's domain. None for another error, or a key the device has (another domain's map)."""
    m = _NO_SUCH_KEY.match(detail)
    if m is None:
        return None
    key = m.group(1)
    own = sorted(
        n.removeprefix(driver + "/") for n in attribute_names if "/" not in n or n.startswith(driver + "/")
    )
    if key in own or key == driver:
        return None
    hint = hints.get(key)
    if hint:
        return f"the driver does not publish `{key}`; use {hint}"
    return f"the driver does not publish `{key}` (this device publishes: {', '.join(own) or 'none'})"


def _span(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels)

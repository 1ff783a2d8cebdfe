"""DRA device selectors: the ``device`` CEL environment of k8s.io/dynamic-resource-allocation ``cel/compile.go``.

See :mod:`kubedra.cel` for the API summary.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel

from kubedra.cel import _protos, cost, costmodel
from kubedra.cel.checks import CELCompileError, clean_status, decode, device_map, walk
from kubedra.cel.env import Environment, Program, check_target_version, library_groups
from kubedra.cel.values import quantity_to_msg, semver_msg_from_text, type_name
from kubedra.errors import InputError
from kubedra.k8s.versions import DEFAULT_TARGET, Version, holds
from kubedra.model.semver import SemverError

MAX_EXPRESSION_LENGTH = 10240  # resourceapi.CELSelectorExpressionMaxLength
MAX_COST = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost
NO_SUCH_KEY_HINT = ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields"


class CELRuntimeError(InputError):
    """Evaluating a selector on a device failed (upstream: the allocation attempt fails with this error).

    ``detail`` is the CEL error as upstream reports it (``no such key: x. consider using ...``); the message
    names the expression and the device.
    """

    def __init__(self, detail: str, expression: str, device: str) -> None:
        super().__init__(f"selector {expression!r} on device {device}: CEL runtime error: {detail}")
        self.detail = detail
        self.expression = expression
        self.device = device


class CELUndecidedError(InputError):
    """kubedra cannot tell what a selector yields on a device at the target release (it does not model what
    upstream does there); raised instead of an answer that might differ from upstream's."""


INVALID_ATTRIBUTE = "value is invalid or its type is not supported by this version"


def split_qualified_name(name: str, driver: str) -> tuple[str, str]:
    """``parseQualifiedName``: split at the first "/", unqualified names belong to the driver's domain."""
    sep = name.find("/")
    if sep == -1:
        return driver, name
    return name[:sep], name[sep + 1 :]


def device_data(device: Any, driver: str, since_138: bool = False, lazy: bool = False) -> dict[str, Any]:
    """The runtime value of ``device`` for a Device-shaped object (name, attributes, capacity, ...); capacities
    as the release's apimachinery parses them (``since_138``: v0.38's ParseQuantity). ``lazy``
    (``cel.attributeValuesLazy``): an attribute v0.38 cannot represent (an empty list, a bad version) is left
    out of ``attributes`` and listed under ``@invalid`` (domain, name, why) instead of failing the device."""
    attributes: dict[str, dict[str, Any]] = {}
    invalid: list[tuple[str, str, str]] = []
    for name, attr in (getattr(device, "attributes", None) or {}).items():
        kind, value = attr.kind, attr.value
        if lazy and kind.endswith("s") and not value:
            invalid.append((*split_qualified_name(name, driver), "an empty list"))
            continue
        try:
            if kind == "version":
                value = semver_msg_from_text(value)
            elif kind == "versions":
                value = [semver_msg_from_text(v) for v in value]
            elif kind in ("ints", "bools", "strings"):
                value = list(value)
        except SemverError as e:
            if lazy:
                invalid.append((*split_qualified_name(name, driver), f"a version semver rejects ({e})"))
                continue
            raise _AttributeError(f"attribute {name}: parse semantic version: {e}") from None
        domain, ident = split_qualified_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in (getattr(device, "capacity", None) or {}).items():
        domain, ident = split_qualified_name(name, driver)
        capacity.setdefault(domain, {})[ident] = quantity_to_msg(cap.value.at(since_138))
    data = {
        "driver": driver,
        "allowMultipleAllocations": bool(getattr(device, "allow_multiple_allocations", None) or False),
        "attributes": attributes,
        "capacity": capacity,
    }
    if invalid:
        data["@invalid"] = invalid
    return data


class _AttributeError(Exception):
    pass


def _device_sizes(data: Mapping[str, Any]) -> costmodel.SizeFn:
    """Actual sizes of one device, for the runtime cost guard."""

    def sizes(path: list[str]) -> costmodel.Est | None:
        if not path or path[0] != "device":
            return None
        node: Any = data
        for name in path[1:]:
            if isinstance(node, dict):
                if name == "@keys":
                    keys = list(node)
                    n = max((len(k) for k in keys), default=0)
                    return costmodel.Est(0, n)
                if name in ("@values", "@items"):
                    vals = list(node.values())
                    node = vals[0] if len(vals) == 1 else (vals or [None])[0]
                    if len(vals) > 1:
                        return costmodel.dra_device_sizes(path)
                else:
                    node = node.get(name)
            else:
                return None
        if isinstance(node, (dict, list, str)):
            return costmodel.Est(0, len(node))
        return costmodel.Est(1, 1)

    return sizes


def _result_type(value: Any) -> str:
    t = str(value.type())
    low = t.lower()
    for prefix, name in (("list", "list"), ("map", "map"), ("null", "null_type")):
        if low.startswith(prefix):
            return name
    return {"INT": "int", "UINT": "uint", "DOUBLE": "double", "STRING": "string", "BYTES": "bytes"}.get(t, t)


@dataclass
class _LRU:
    size: int
    data: OrderedDict[Any, Any] = field(default_factory=OrderedDict)

    def get(self, key: Any) -> Any:
        v = self.data.get(key)
        if v is not None:
            self.data.move_to_end(key)
        return v

    def put(self, key: Any, value: Any) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)


class SelectorEnvironment:
    """The DRA selector environment at one Kubernetes version.

    ``stored=False`` is the validation path (apiserver ``NewExpressions``: compatibility-version libraries,
    feature-gated declarations, length and estimated-cost limits). ``stored=True`` is the scheduler path
    (``StoredExpressions``: every library of the release, no estimate-based rejection).
    """

    def __init__(
        self,
        target_version: str = DEFAULT_TARGET,
        *,
        consumable_capacity: bool = True,
        list_type_attributes: bool = False,
        stored: bool = False,
        cache_size: int = 1024,
        device_cache_size: int = 65536,
    ) -> None:
        release = check_target_version(target_version)
        self.target_version = target_version
        self.stored = stored
        self.consumable_capacity = consumable_capacity
        has_list_types = holds("dra.listTypeAttributes", Version(*release))
        self.list_type_attributes = list_type_attributes and has_list_types
        # apimachinery v0.38's ParseQuantity for capacities and quantity() (data/versions.yaml)
        self.quantity_since_138 = holds("quantity.nineteenDigitInt64", Version(*release))
        # v0.38 reads unrepresentable attributes lazily (data/versions.yaml)
        self.lazy_attributes = holds("cel.attributeValuesLazy", Version(*release))
        groups = set(library_groups(target_version, stored, "dra"))
        if has_list_types and (stored or self.list_type_attributes):
            groups.add("dra_includes")
        self.groups = frozenset(groups)
        variant = "v134" if (stored or consumable_capacity) else "v131"
        self._env = Environment(
            {"device": cel.Type(_protos.DEVICE_TYPE)},
            groups,
            pool=_protos.new_pool(variant),
            flavor="dra",
            sizes=costmodel.dra_device_sizes,
            domain_default_var="device",
            quantity_since_138=self.quantity_since_138,
        )
        self._warm = self._env.runtime.compile("device.driver == ''")
        self._lock = threading.RLock()
        self._programs = _LRU(cache_size)
        self._activations = _LRU(device_cache_size)
        self._memo: dict[tuple[str, Hashable], bool | Exception] = {}

    # ------------------------------------------------------------------ compile
    def compile(self, expression: str) -> CompiledSelector:
        """Compile (cached). Raises :class:`CELCompileError` with upstream-like detail."""
        with self._lock:
            hit: CompiledSelector | None = self._programs.get(expression)
        if hit is not None:
            return hit
        if not self.stored and len(expression) > MAX_EXPRESSION_LENGTH:
            raise CELCompileError(f"Too long: may not be more than {MAX_EXPRESSION_LENGTH} bytes", expression)
        program = self._env.compile(expression)
        if program.output_type not in ("bool", "dyn"):
            raise CELCompileError(
                f"must evaluate to bool or the unknown type, not {program.output_type}", expression
            )
        if not self.stored and program.max_cost > MAX_COST:
            raise CELCompileError("too complex, exceeds cost limit", expression)
        compiled = CompiledSelector(self, program)
        with self._lock:
            self._programs.put(expression, compiled)
        return compiled

    def program(self, expression: str) -> Program:
        """Compile without the selector's output-type and limit checks and without caching (for callers with
        their own rules, e.g. derived attributes in :mod:`kubedra.cel.derived`)."""
        return self._env.compile(expression)

    # ------------------------------------------------------------------ devices
    def activation(self, device: Any, driver: str, key: Hashable | None = None) -> tuple[Any, dict[str, Any]]:
        """The (cached) activation for a device; ``key`` defaults to the object's identity."""
        k = key if key is not None else ("id", id(device), driver)
        with self._lock:
            hit = self._activations.get(k)
        if hit is not None and (key is not None or hit[0] is device):
            return hit[1], hit[2]
        data = device_data(device, driver, self.quantity_since_138, self.lazy_attributes)
        seen = {k: v for k, v in data.items() if k != "@invalid"}
        act = self._env.runtime.Activation({"device": seen})
        # cel-expr-python converts the Python value on the first evaluation against an activation (~40 µs);
        # pay it here, once per device, instead of in the first selector.
        self._warm.eval(act)
        with self._lock:
            self._activations.put(k, (device, act, data))
        return act, data


@dataclass(frozen=True, eq=False)
class CompiledSelector:
    """A compiled selector. ``matches`` is safe to call concurrently."""

    env: SelectorEnvironment
    program: Program

    @property
    def expression(self) -> str:
        return self.program.expression

    @property
    def max_cost(self) -> int:
        return self.program.max_cost

    def matches(self, device: Any, driver: str, *, key: Hashable | None = None) -> bool:
        """Evaluate on ``device`` of ``driver``. Raises :class:`CELRuntimeError` (every time) on errors."""
        name = str(getattr(device, "name", "?"))
        memo_key = (self.program.expression, key if key is not None else ("id", id(device), driver))
        memo = self.env._memo
        cached = memo.get(memo_key) if key is not None else None
        if cached is not None:
            if isinstance(cached, Exception):
                raise CELRuntimeError(getattr(cached, "detail", str(cached)), self.expression, name)
            return cached
        try:
            result = self._evaluate(device, driver, key, name)
        except CELRuntimeError as e:
            if key is not None:
                memo[memo_key] = e
            raise
        if key is not None:
            memo[memo_key] = result
        return result

    def value(self, device: Any, driver: str, *, key: Hashable | None = None, hint: bool = True) -> Any:
        """The raw CEL value on ``device`` (not memoised). Raises :class:`CELRuntimeError` on errors; ``hint``
        appends upstream's optional-chaining hint to ``no such key`` (selectors have it, derived attributes
        do not: only the selector path calls ``EnhanceRuntimeError``)."""
        name = str(getattr(device, "name", "?"))
        try:
            act, data = self.env.activation(device, driver, key)
        except _AttributeError as e:
            raise CELRuntimeError(str(e), self.expression, name) from None
        if self.program.max_cost > MAX_COST:
            source = self.program.source
            actual = cost.Coster(source, _device_sizes(data), actual=True).cost(source.expr).hi
            if actual > MAX_COST:
                raise CELRuntimeError(
                    "operation cancelled: actual cost limit exceeded", self.expression, name
                )
        value = self.program.eval(act)
        invalid = data.get("@invalid")
        if value.type() == cel.Type.ERROR:
            detail = self._runtime_detail(value, data, hint)
            if invalid:
                detail = self._invalid_detail(detail, invalid, name)
            raise CELRuntimeError(detail, self.expression, name)
        if invalid and _shape(self.program)[0]:
            raise self._undecided(invalid[0], name)
        return value

    def _undecided(self, attribute: tuple[str, str, str], name: str) -> CELUndecidedError:
        domain, attr, why = attribute
        return CELUndecidedError(
            f"kubedra cannot decide selector {self.expression!r} on device {name} at Kubernetes "
            f"{self.env.target_version}: its attribute {domain}/{attr} is {why}, which upstream keeps as an "
            "invalid value that has(), optional access, size() and comprehensions see (not modelled)"
        )

    def _invalid_detail(self, detail: str, invalid: list[tuple[str, str, str]], name: str) -> str:
        """v0.38's error for reading an attribute it keeps as invalid. kubedra left the key out, so the read
        fails with ``no such key: A``, which names no domain: it is upstream's error only where every read of
        ``A`` (or of a key not known statically) is in a domain where ``A`` is invalid; otherwise the error may
        be upstream's ``no such key`` of another domain, and kubedra cannot tell."""
        if not detail.startswith("no such key: "):
            return detail
        key = detail.removeprefix("no such key: ").removesuffix(NO_SUCH_KEY_HINT)
        domains = {d for d, a, _ in invalid if a == key}
        if not domains:
            return detail
        aliased, reads = _shape(self.program)[1:]
        candidates = [d for d, k in reads if k in (key, None)]
        if aliased or not candidates or any(d not in domains for d in candidates):
            raise self._undecided(next(i for i in invalid if i[1] == key), name)
        return f"attribute {key}: {INVALID_ATTRIBUTE}"

    def _evaluate(self, device: Any, driver: str, key: Hashable | None, name: str) -> bool:
        value = self.value(device, driver, key=key)
        if value.type() != cel.Type.BOOL:
            raise CELRuntimeError(
                f"CEL result of type {_result_type(value)} could not be converted to bool",
                self.expression,
                name,
            )
        return bool(value.value())

    def _runtime_detail(self, value: Any, data: Mapping[str, Any], hint: bool = True) -> str:
        message = clean_status(str(value.value()))
        if message.startswith("Key not found in map : "):
            key = message.removeprefix("Key not found in map : ").strip()
            if key.startswith('"') and key.endswith('"'):
                key = key[1:-1]
            return f"no such key: {key}{NO_SUCH_KEY_HINT if hint else ''}"
        if "No matching overloads found : <iter_range>" in message:
            found = _non_iterable_range(self.program, data)
            if found is not None:
                return f"got '{found}', expected iterable type"
        return message


_CHECKED_CACHE: dict[int, Any] = {}
_PRESENCE_CALLS = frozenset({"_?._", "_[?_]", "size"})
# expression -> (observes presence, has comprehensions, reads of device.attributes[D][K] as (D, K); None unknown)
_SHAPES: dict[str, tuple[bool, bool, frozenset[tuple[str | None, str | None]]]] = {}


def _observing(node: Any) -> bool:
    kind = str(node.WhichOneof("expr_kind"))
    if kind == "select_expr":
        return bool(node.select_expr.test_only)
    if kind == "call_expr":
        return str(node.call_expr.function) in _PRESENCE_CALLS
    return kind == "comprehension_expr"


def _shape(program: Program) -> tuple[bool, bool, frozenset[tuple[str | None, str | None]]]:
    """What an expression does with attribute maps: whether it may tell an attribute left out from one upstream
    keeps as invalid (has(), optional select/index, size() or a comprehension, which iterates map keys), whether
    it has comprehensions (cel.bind and the macros, through which a map may be read under another name), and its
    direct reads ``device.attributes[D].K`` / ``[K]`` as (D, K), None where not a constant."""
    hit = _SHAPES.get(program.expression)
    if hit is None:
        source = program.source if program.source is not None else _checked_of(program)
        nodes = list(walk(source.expr))
        reads = frozenset(r for n in nodes if (r := _attribute_read(n)) is not None)
        comprehensions = any(n.WhichOneof("expr_kind") == "comprehension_expr" for n in nodes)
        hit = (any(_observing(n) for n in nodes), comprehensions, reads)
        if len(_SHAPES) > 4096:
            _SHAPES.clear()
        _SHAPES[program.expression] = hit
    return hit


def _const_string(node: Any) -> str | None:
    if (
        node.WhichOneof("expr_kind") == "const_expr"
        and node.const_expr.WhichOneof("constant_kind") == "string_value"
    ):
        return str(node.const_expr.string_value)
    return None


def _domain(node: Any) -> tuple[bool, str | None]:
    """Whether ``node`` is ``device.attributes[D]`` (or ``.D``), and D where constant."""
    kind = node.WhichOneof("expr_kind")
    if kind == "select_expr" and not node.select_expr.test_only:
        sel = node.select_expr
        if device_map(sel.operand, "device") and sel.operand.select_expr.field == "attributes":
            return True, str(sel.field)
    if kind == "call_expr" and node.call_expr.function in ("_[_]", "_[?_]") and len(node.call_expr.args) == 2:
        m, k = node.call_expr.args
        if device_map(m, "device") and m.select_expr.field == "attributes":
            return True, _const_string(k)
    return False, None


def _attribute_read(node: Any) -> tuple[str | None, str | None] | None:
    """(D, K) for a read ``device.attributes[D].K`` / ``[K]``; None for any other node."""
    kind = node.WhichOneof("expr_kind")
    if kind == "select_expr" and not node.select_expr.test_only:
        ok, domain = _domain(node.select_expr.operand)
        return (domain, str(node.select_expr.field)) if ok else None
    if kind == "call_expr" and node.call_expr.function == "_[_]" and len(node.call_expr.args) == 2:
        m, k = node.call_expr.args
        ok, domain = _domain(m)
        return (domain, _const_string(k)) if ok else None
    return None


def _checked_of(program: Program) -> Any:
    """The decoded checked AST of a program (kept for the runtime cost guard)."""

    hit = _CHECKED_CACHE.get(id(program))
    if hit is None:
        hit = decode(program.expr.serialize())[1]
        _CHECKED_CACHE[id(program)] = hit
    return hit


def _resolve(node: Any, data: Mapping[str, Any]) -> tuple[bool, Any]:
    """Resolve ``device.a["b"].c`` style paths with constant keys against the device data."""
    kind = node.WhichOneof("expr_kind")
    if kind == "ident_expr":
        return (True, data) if node.ident_expr.name == "device" else (False, None)
    if kind == "select_expr":
        ok, base = _resolve(node.select_expr.operand, data)
        if ok and isinstance(base, dict):
            return True, base.get(node.select_expr.field, {})
        return False, None
    if kind == "call_expr" and node.call_expr.function in ("_[_]", "orValue"):
        call = node.call_expr
        if call.function == "orValue":
            inner = call.target
            if inner.WhichOneof("expr_kind") == "call_expr" and len(inner.call_expr.args) == 2:
                m, k = inner.call_expr.args
            else:
                return False, None
        else:
            m, k = call.args
        ok, base = _resolve(m, data)
        if ok and isinstance(base, dict) and k.WhichOneof("expr_kind") == "const_expr":
            return True, base.get(k.const_expr.string_value, {})
    return False, None


def _non_iterable_range(program: Program, data: Mapping[str, Any]) -> str | None:
    checked = _checked_of(program)
    for node in walk(checked.expr):
        if node.WhichOneof("expr_kind") == "comprehension_expr":
            ok, value = _resolve(node.comprehension_expr.iter_range, data)
            if ok and not isinstance(value, (list, dict)):
                return type_name(value)
    return None

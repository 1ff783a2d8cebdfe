"""Derived attributes (1.37 alpha DRADerivedAttributes): a CEL expression that computes a virtual attribute.

After k8s.io/dynamic-resource-allocation v0.37.2 ``cel/compile.go`` and ``cel/cache.go``:

- ``GetOrCompileDerivedAttribute`` compiles in the scheduler's environment (StoredExpressions, so list types are
  always allowed) with ``DerivedAttribute`` set: the result type must be bool, int, string, semver, dyn/any or
  a list of those (``validateOutputType``), otherwise ``must evaluate to a primitive scalar (string, integer,
  boolean, semver) or a list of these scalars, not <type>``.
- ``EvaluateDerivedAttribute`` evaluates on the same ``device`` value as selectors and converts the result
  (``valToDeviceAttribute``): scalars to the attribute of that type, a list by its first element's type (every
  element must have it), an empty list to an empty string list; anything else is an error. Runtime errors are
  not given the selector's optional-chaining hint.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from kubedra.cel.checks import CELCompileError
from kubedra.cel.selector import CELRuntimeError, CompiledSelector, SelectorEnvironment
from kubedra.cel.values import msg_to_semver
from kubedra.model.objects import AttributeKind, DeviceAttribute

_SCALARS = frozenset({"bool", "int", "string", "kubernetes.Semver", "dyn", "any"})


def _allowed(output_type: str) -> bool:
    if output_type in _SCALARS:
        return True
    if output_type.startswith("list(") and output_type.endswith(")"):
        return output_type[5:-1] in _SCALARS
    return False


class CompiledDerived:
    """A compiled derived-attribute expression; ``evaluate`` gives the device's virtual attribute."""

    def __init__(self, selector: CompiledSelector) -> None:
        self._selector = selector

    @property
    def expression(self) -> str:
        return self._selector.expression

    def evaluate(self, device: Any, driver: str, *, key: Hashable | None = None) -> DeviceAttribute:
        """Raises :class:`CELRuntimeError` (``detail`` as upstream words it) when evaluation or conversion fails."""
        value = self._selector.value(device, driver, key=key, hint=False)
        try:
            return _to_attribute(value)
        except ValueError as e:
            raise CELRuntimeError(str(e), self.expression, str(getattr(device, "name", "?"))) from None


def compile_derived(env: SelectorEnvironment, expression: str) -> CompiledDerived:
    """Compile ``expression`` as a derived attribute in ``env`` (raises :class:`CELCompileError`)."""
    program = env.program(expression)
    if not _allowed(program.output_type):
        raise CELCompileError(
            "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of these scalars, "
            f"not {program.output_type}",
            expression,
        )
    return CompiledDerived(CompiledSelector(env, program))


_KINDS: dict[str, AttributeKind] = {"BOOL": "bool", "INT": "int", "STRING": "string"}
# Go's %T of the CEL values valToDeviceAttribute rejects, for its error text
_GO_TYPES = {
    "BOOL": "bool",
    "INT": "int64",
    "STRING": "string",
    "kubernetes.Semver": "semver.Version",
    "UINT": "uint64",
    "DOUBLE": "float64",
    "NULL_TYPE": "structpb.NullValue",
    "BYTES": "[]uint8",
}


def _scalar(v: Any) -> tuple[AttributeKind, Any] | None:
    """(kind, value) of a scalar CEL value (an evaluation result or a list element), None for other types."""
    t = str(v.type())
    if t in _KINDS:
        return _KINDS[t], v.value()
    if t == "kubernetes.Semver":
        return "version", str(msg_to_semver(v.value()))
    return None


def _go_type(v: Any) -> str:
    t = str(v.type())
    return _GO_TYPES.get(t, t)


def _to_attribute(value: Any) -> DeviceAttribute:
    if not str(value.type()).upper().startswith("LIST"):
        scalar = _scalar(value)
        if scalar is None:
            raise ValueError(f"unsupported CEL return type: {_go_type(value)}")
        return DeviceAttribute(*scalar)
    items = list(value.value())
    if not items:
        return DeviceAttribute("strings", [])
    first = _scalar(items[0])
    if first is None:
        raise ValueError(f"unsupported list element type: {_go_type(items[0])}")
    out = []
    for i, item in enumerate(items):
        s = _scalar(item)
        if s is None or s[0] != first[0]:
            go = {"bool": "bool", "int": "int", "string": "string", "version": "semver"}[first[0]]
            raise ValueError(f"expected list element at index {i} to be {go}, got {_go_type(item)}")
        out.append(s[1])
    kinds: dict[AttributeKind, AttributeKind] = {
        "bool": "bools",
        "int": "ints",
        "string": "strings",
        "version": "versions",
    }
    return DeviceAttribute(kinds[first[0]], out)

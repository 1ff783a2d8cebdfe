"""Label selector requirements, parsed and matched as ``k8s.io/apimachinery`` does it: the one implementation.

Sources (kubernetes/kubernetes master, staging/src/k8s.io/apimachinery):

- ``pkg/labels/selector.go`` ``NewRequirement``: the key must be a qualified name; ``In``/``NotIn`` need at
  least one value, ``Exists``/``DoesNotExist`` none, ``Gt``/``Lt`` exactly one that parses as an int64
  (``strconv.ParseInt(v, 10, 64)``); every value must be a valid label value. ``Requirement.Matches``: ``In``
  the label is present with one of the values, ``NotIn`` absent or none of them, ``Exists`` present,
  ``DoesNotExist`` absent, ``Gt``/``Lt`` present and its value, parsed as an int64, greater/less (a label
  value that is not an integer does not match).
- ``pkg/apis/meta/v1/helpers.go`` ``LabelSelectorAsSelector`` (metav1.LabelSelector: Deployments, admission
  policies' object/namespace selectors, paramRef): ``matchLabels`` are equality requirements, and
  ``matchExpressions`` allow only In, NotIn, Exists and DoesNotExist (``"Gt" is not a valid label selector
  operator``). Gt and Lt exist only in core/v1 node selectors (``NODE_OPERATORS``,
  ``component-helpers/scheduling/corev1/nodeaffinity``).

An invalid requirement raises :class:`SelectorError`; how that surfaces is each caller's decision (the
apiserver refuses the object that carries it, so callers say so rather than match or skip silently).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = (*LABEL_OPERATORS, "Gt", "Lt")

_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_INT64 = re.compile(r"[+-]?[0-9]+\Z")  # strconv.ParseInt(s, 10, 64): no spaces, no underscores
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

Path = tuple[str | int, ...]


class SelectorError(ValueError):
    """An invalid selector; ``path`` is the field inside the selector (``("matchExpressions", 0, "operator")``)."""

    def __init__(self, message: str, path: Path = ()) -> None:
        super().__init__(message)
        self.path = path


def parse_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: the integer, or None when Go refuses it."""
    if not _INT64.match(s):
        return None
    n = int(s)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


def _key_error(key: str) -> str | None:
    prefix, sep, name = key.rpartition("/")
    if sep and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        return f"invalid label key {key!r}: the prefix must be a DNS subdomain"
    if not name or len(name) > 63 or not _NAME.match(name):
        return f"invalid label key {key!r}: the name must be 1-63 alphanumeric characters, '-', '_' or '.'"
    return None


def _value_error(value: str) -> str | None:
    if value and (len(value) > 63 or not _NAME.match(value)):
        return f"invalid label value {value!r}: at most 63 alphanumeric characters, '-', '_' or '.'"
    return None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One valid requirement; build it with :func:`requirement`."""

    key: str
    operator: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        op, has = self.operator, self.key in labels
        if op == "In":
            return has and labels[self.key] in self.values
        if op == "NotIn":
            return not has or labels[self.key] not in self.values
        if op == "Exists":
            return has
        if op == "DoesNotExist":
            return not has
        if not has:
            return False
        have, want = parse_int64(labels[self.key]), int(self.values[0])
        if have is None:
            return False
        return have > want if op == "Gt" else have < want


def requirement(
    key: str, operator: str, values: Sequence[str], *, operators: Sequence[str] = LABEL_OPERATORS
) -> Requirement:
    """A validated requirement (``NewRequirement``), or :class:`SelectorError` naming what is wrong."""
    if operator not in operators:
        kind = "node selector" if "Gt" in operators else "label selector"
        raise SelectorError(f"{key}: {operator!r} is not a valid {kind} operator", ("operator",))
    why = _key_error(key)
    if why:
        raise SelectorError(why, ("key",))
    if operator in ("In", "NotIn") and not values:
        raise SelectorError(f"{key}: values must be non-empty for operator {operator}", ("values",))
    if operator in ("Exists", "DoesNotExist") and values:
        raise SelectorError(f"{key}: values must be empty for operator {operator}", ("values",))
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorError(f"{key}: exactly one value required for operator {operator}", ("values",))
        if parse_int64(values[0]) is None:
            raise SelectorError(
                f"{key}: value {values[0]!r} for {operator} must be an integer", ("values", 0)
            )
    for i, v in enumerate(values):
        why = _value_error(v)
        if why:
            raise SelectorError(f"{key}: {why}", ("values", i))
    return Requirement(key, operator, tuple(values))


def _strings(value: Any, path: Path) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SelectorError("must be a list of strings", path)
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise SelectorError(f"{v!r} is not a string", (*path, i))
    return list(value)


def parse_label_selector(selector: Mapping[str, Any]) -> list[Requirement]:
    """A metav1.LabelSelector's requirements (all must hold; none: everything matches)."""
    out: list[Requirement] = []
    match_labels = selector.get("matchLabels")
    if match_labels is not None and not isinstance(match_labels, Mapping):
        raise SelectorError("must be a mapping of label keys to values", ("matchLabels",))
    for k, v in (match_labels or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise SelectorError(f"{k!r}: {v!r}: keys and values must be strings", ("matchLabels", str(k)))
        try:
            out.append(requirement(k, "In", [v]))
        except SelectorError as err:
            raise SelectorError(str(err), ("matchLabels", k)) from None
    exprs = selector.get("matchExpressions")
    if exprs is not None and not isinstance(exprs, list):
        raise SelectorError("must be a list", ("matchExpressions",))
    for i, expr in enumerate(exprs or []):
        path: Path = ("matchExpressions", i)
        if not isinstance(expr, Mapping):
            raise SelectorError("must be a mapping with key, operator and values", path)
        key, op = expr.get("key"), expr.get("operator")
        if not isinstance(key, str) or not isinstance(op, str):
            raise SelectorError("key and operator must be strings", path)
        try:
            out.append(requirement(key, op, _strings(expr.get("values"), ("values",))))
        except SelectorError as err:
            raise SelectorError(str(err), (*path, *err.path)) from None
    return out


def label_selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy the metav1.LabelSelector ``selector`` (an empty one matches everything);
    :class:`SelectorError` when the apiserver would refuse it."""
    return all(r.matches(labels) for r in parse_label_selector(selector))

"""What every Kubernetes CEL library module declares its functions with (see :mod:`kubedra.cel.library`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel

from kubedra.cel import _protos

T = cel.Type
QT = T(_protos.QUANTITY_TYPE)
ST = T(_protos.SEMVER_TYPE)
UT = T(_protos.URL_TYPE)
IPT = T(_protos.IP_TYPE)
CT = T(_protos.CIDR_TYPE)
FT = T(_protos.FORMAT_TYPE)

MAX_INT64 = (1 << 63) - 1
MIN_INT64 = -(1 << 63)
MAX_LIST_INCLUDES = 48  # resourceapi.ResourceSliceMaxAttributeValuesPerDevice


class CELFunctionError(Exception):
    """An error value produced by a library function (message is upstream's)."""


@dataclass(frozen=True)
class Fn:
    name: str
    overload_id: str
    ret: Any
    params: tuple[Any, ...]
    member: bool
    impl: Callable[..., Any] | None
    group: str
    kinds: tuple[str, ...]


REGISTRY: list[Fn] = []


def kind_of(t: Any) -> str:
    if t == T.DYN:
        return "any"
    name: str = t.name().lower()
    if name == "a":  # the type parameter ~A
        return "any"
    if name.startswith("list"):
        return "list"
    if name.startswith("map"):
        return "map"
    if t.is_message():
        return "message"
    return name


def define(
    group: str,
    name: str,
    oid: str,
    ret: Any,
    params: Sequence[Any],
    impl: Callable[..., Any],
    member: bool = False,
) -> None:
    REGISTRY.append(Fn(name, oid, ret, tuple(params), member, impl, group, tuple(kind_of(p) for p in params)))


def msg_name(v: Any) -> str:
    d = getattr(v, "DESCRIPTOR", None)
    return d.full_name if d is not None else ""

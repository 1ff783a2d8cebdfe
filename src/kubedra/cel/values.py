"""Kubernetes CEL object values (Quantity, Semver, URL, IP, CIDR, NamedFormat) as protobuf messages.

cel-expr-python carries custom object types as protobuf messages; these helpers convert between kubedra's
Python model (:class:`~kubedra.k8s.quantity.Quantity`, :class:`~kubedra.model.semver.Semver`) and the
messages of the runtime descriptor pool. Conversions are cached: the same capacity string or version string
is converted once per process.
"""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf import message_factory as _mf

from kubedra.cel import _protos
from kubedra.k8s.quantity import Quantity
from kubedra.k8s.quantityint import int_text, text_int
from kubedra.model.semver import PreRelease, Semver

RUNTIME_POOL = _protos.new_pool(None)


def _cls(name: str) -> Any:
    return _mf.GetMessageClass(RUNTIME_POOL.FindMessageTypeByName(name))


QuantityMsg: Any = _cls(_protos.QUANTITY_TYPE)
SemverMsg: Any = _cls(_protos.SEMVER_TYPE)
URLMsg: Any = _cls(_protos.URL_TYPE)
FormatMsg: Any = _cls(_protos.FORMAT_TYPE)
IPMsg: Any = _cls(_protos.IP_TYPE)
CIDRMsg: Any = _cls(_protos.CIDR_TYPE)


def quantity_to_msg(q: Quantity) -> Any:
    """The value and its representation: an int64Amount's scale, or ``dec`` and the inf.Dec's exponent (which
    v0.38's add/sub read)."""
    if q.scale is None:
        scale = "dec" if q.exp is None else f"dec{q.exp}"
    else:
        scale = str(q.scale)
    return QuantityMsg(nanos=int_text(q.nanos), scale=scale)


def msg_to_quantity(m: Any) -> Quantity:
    if m.scale.startswith("dec"):
        rest = m.scale[3:]
        return Quantity(text_int(m.nanos), "DecimalSI", None, exp=int(rest) if rest else None)
    return Quantity(text_int(m.nanos), "DecimalSI", int(m.scale or "-9"))


def semver_to_msg(v: Semver) -> Any:
    return SemverMsg(major=v.major, minor=v.minor, patch=v.patch, pre=v.prerelease)


def msg_to_semver(m: Any) -> Semver:
    pre: tuple[PreRelease, ...] = ()
    if m.pre:
        pre = tuple(
            PreRelease(p, int(p)) if p.isdigit() and p.isascii() else PreRelease(p) for p in m.pre.split(".")
        )
    return Semver(m.major, m.minor, m.patch, pre)


@functools.lru_cache(maxsize=16384)
def semver_msg_from_text(text: str) -> Any:
    """A Semver message for a strictly parsed version string (raises SemverError)."""
    return semver_to_msg(Semver.parse(text))


def type_name(value: Any) -> str:
    """The CEL type name of a runtime value as cel-go would print its Go type in errors (``types.Int``...)."""
    if isinstance(value, bool):
        return "types.Bool"
    if isinstance(value, int):
        return "types.Int"
    if isinstance(value, float):
        return "types.Double"
    if isinstance(value, str):
        return "types.String"
    if isinstance(value, bytes):
        return "types.Bytes"
    if value is None:
        return "types.Null"
    descriptor = getattr(value, "DESCRIPTOR", None)
    if descriptor is not None:
        names: dict[str, str] = {
            _protos.QUANTITY_TYPE: "cel.Quantity",
            _protos.SEMVER_TYPE: "cel.Semver",
            _protos.URL_TYPE: "cel.URL",
            _protos.IP_TYPE: "cel.IP",
            _protos.CIDR_TYPE: "cel.CIDR",
            _protos.FORMAT_TYPE: "cel.Format",
        }
        return names.get(descriptor.full_name, str(descriptor.full_name))
    return type(value).__name__

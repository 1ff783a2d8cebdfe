"""Kubernetes CEL function libraries (apiserver ``pkg/cel/library``) as cel-expr-python declarations.

Every function keeps its upstream name, overload id and signature so that the type checker accepts and
rejects the same expressions as the apiserver. Implementations are Python functions.

cel-expr-python's runtime dispatches on the *kind* of each argument, so two overloads whose arguments have the
same kinds (``isGreaterThan(Quantity, Quantity)`` and ``isGreaterThan(Semver, Semver)`` are both
"message, message") cannot both carry an implementation. :func:`build_extension` declares all overloads for the
checker, attaches one implementation to the first overload of each kind signature and lets it dispatch on the
message type of the arguments.

Library groups (what :mod:`kubedra.cel.env` switches on per Kubernetes version):

==================  ===========================================================================================
``urls``            url, isURL, getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery
``regex``           find, findAll (google-re2, Go regexp's syntax and messages; see :func:`_compile_regex`)
``lists_v0``        isSorted, sum, min, max, indexOf, lastIndexOf (list overloads)
``lists_v1``        lists_v0 + includes (list_includes_dyn_dyn)
``quantity``        quantity, isQuantity, sign, isGreaterThan, isLessThan, compareTo, asApproximateFloat,
                    asInteger, isInteger, add, sub
``ip`` / ``cidr``   ip, isIP, ip.isCanonical, family, is* predicates, string; cidr, isCIDR, containsIP,
                    containsCIDR, ip, prefixLength, masked, string
``format``          format.<name>(), format.named(), <format>.validate()
``semver``          semver, isSemver (1 and 2 args), isGreaterThan, isLessThan, compareTo, major, minor, patch
``dra_includes``    includes (dra_includes_dyn_dyn; errors for lists longer than 48)
``map_insert``      kubedra.@mapInsert (runtime helper for transformMap/transformMapEntry, see env.py)
``quantity_eq``     kubedra.quantityEquals (runtime helper: ==/!= between quantities compare values, see env.py)
==================  ===========================================================================================
"""

from __future__ import annotations

import base64
import datetime
import functools
import ipaddress
import math
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import re2
from cel_expr_python import cel

from kubedra.cel import _protos
from kubedra.cel.values import (
    CIDRMsg,
    FormatMsg,
    IPMsg,
    URLMsg,
    msg_to_quantity,
    msg_to_semver,
    quantity_to_msg,
    semver_to_msg,
)
from kubedra.model.quantity import NANO, Quantity, QuantityError
from kubedra.model.semver import Semver, SemverError

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


_REGISTRY: list[Fn] = []


def _kind(t: Any) -> str:
    if t == T.DYN:
        return "any"
    name = t.name().lower()
    if name == "a":  # the type parameter ~A
        return "any"
    if name.startswith("list"):
        return "list"
    if name.startswith("map"):
        return "map"
    if t.is_message():
        return "message"
    return name


def _def(
    group: str,
    name: str,
    oid: str,
    ret: Any,
    params: Sequence[Any],
    impl: Callable[..., Any],
    member: bool = False,
) -> None:
    _REGISTRY.append(Fn(name, oid, ret, tuple(params), member, impl, group, tuple(_kind(p) for p in params)))


def _msg_name(v: Any) -> str:
    d = getattr(v, "DESCRIPTOR", None)
    return d.full_name if d is not None else ""


# ============================================================================================ quantity
@functools.lru_cache(maxsize=16384)
def _quantity_msg(text: str) -> Any:
    try:
        return quantity_to_msg(Quantity.parse(text))
    except QuantityError as e:
        raise CELFunctionError(str(e)) from None


def _is_quantity(text: str) -> bool:
    try:
        _quantity_msg(text)
    except CELFunctionError:
        return False
    return True


def _q(m: Any) -> int:
    return int(m.nanos)


def _cmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def _as_integer(m: Any) -> int:
    value = msg_to_quantity(m).as_int64()
    if value is None:
        raise CELFunctionError("cannot convert value to integer")
    return value


def _approx_float(m: Any) -> float:
    nanos = _q(m)
    try:
        return nanos / NANO
    except OverflowError:
        return math.inf if nanos > 0 else -math.inf


def _q_operand(b: Any) -> Quantity:
    # quantity_add_int / quantity_sub_int: resource.NewQuantity(b, DecimalExponent), an int64Amount{b, 0}
    return Quantity(b * NANO, "DecimalExponent", 0) if isinstance(b, int) else msg_to_quantity(b)


def _q_add(a: Any, b: Any) -> Any:
    return quantity_to_msg(msg_to_quantity(a).add(_q_operand(b)))


def _q_sub(a: Any, b: Any) -> Any:
    return quantity_to_msg(msg_to_quantity(a).sub(_q_operand(b)))


_def("quantity", "quantity", "string_to_quantity", QT, [T.STRING], _quantity_msg)
_def("quantity", "isQuantity", "is_quantity_string", T.BOOL, [T.STRING], _is_quantity)
_def("quantity", "sign", "quantity_sign", T.INT, [QT], lambda m: _cmp(_q(m), 0))
_def("quantity", "asApproximateFloat", "quantity_get_float", T.DOUBLE, [QT], _approx_float, member=True)
_def("quantity", "asInteger", "quantity_get_int", T.INT, [QT], _as_integer, member=True)
_def(
    "quantity",
    "isInteger",
    "quantity_is_integer",
    T.BOOL,
    [QT],
    lambda m: msg_to_quantity(m).as_int64() is not None,
    member=True,
)
_def("quantity", "add", "quantity_add", QT, [QT, QT], _q_add, member=True)
_def("quantity", "add", "quantity_add_int", QT, [QT, T.INT], _q_add, member=True)
_def("quantity", "sub", "quantity_sub", QT, [QT, QT], _q_sub, member=True)
_def("quantity", "sub", "quantity_sub_int", QT, [QT, T.INT], _q_sub, member=True)


# Runtime only (env.py rewrites ==/!= between quantities to it): Quantity.Equal compares values, while the
# messages also carry the representation.
def _quantity_equals(a: Any, b: Any) -> bool:
    """cel-go ``types.Equal(a, b)`` with a Quantity on one side: ``a.Equal(b)``."""
    a_is, b_is = _msg_name(a) == _protos.QUANTITY_TYPE, _msg_name(b) == _protos.QUANTITY_TYPE
    if a_is and b_is:
        return _q(a) == _q(b)
    if a_is and b is not None:
        raise CELFunctionError("no such overload")  # apiserver cel.Quantity.Equal of a non-Quantity
    return False  # null == q, or another type's Equal given a Quantity


_def(
    "quantity_eq",
    "kubedra.quantityEquals",
    "kubedra_quantity_equals",
    T.BOOL,
    [T.DYN, T.DYN],
    _quantity_equals,
)


# ============================================================================================ semver
@functools.lru_cache(maxsize=16384)
def _semver_msg(text: str, normalize: bool = False) -> Any:
    try:
        return semver_to_msg(Semver.parse(text, normalize))
    except SemverError as e:
        raise CELFunctionError(str(e)) from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    return Semver.is_valid(text, normalize)


def _compare_objects(a: Any, b: Any) -> int:
    if _msg_name(a) == _protos.QUANTITY_TYPE:
        return _cmp(_q(a), _q(b))
    return msg_to_semver(a).compare(msg_to_semver(b))


def _int64_wrap(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v > MAX_INT64 else v


_def("semver", "semver", "string_to_semver", ST, [T.STRING], _semver_msg)
_def("semver", "semver", "string_bool_to_semver", ST, [T.STRING, T.BOOL], _semver_msg)
_def("semver", "isSemver", "is_semver_string", T.BOOL, [T.STRING], _is_semver)
_def("semver", "isSemver", "is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], _is_semver)
_def("semver", "major", "semver_major", T.INT, [ST], lambda m: _int64_wrap(m.major), member=True)
_def("semver", "minor", "semver_minor", T.INT, [ST], lambda m: _int64_wrap(m.minor), member=True)
_def("semver", "patch", "semver_patch", T.INT, [ST], lambda m: _int64_wrap(m.patch), member=True)

for _grp, _typ, _pfx in (("quantity", QT, "quantity"), ("semver", ST, "semver")):
    _def(
        _grp,
        "isGreaterThan",
        f"{_pfx}_is_greater_than",
        T.BOOL,
        [_typ, _typ],
        lambda a, b: _compare_objects(a, b) == 1,
        member=True,
    )
    _def(
        _grp,
        "isLessThan",
        f"{_pfx}_is_less_than",
        T.BOOL,
        [_typ, _typ],
        lambda a, b: _compare_objects(a, b) == -1,
        member=True,
    )
    _def(_grp, "compareTo", f"{_pfx}_compare_to", T.INT, [_typ, _typ], _compare_objects, member=True)


# ============================================================================================ lists
_COMPARABLE = (
    ("int", T.INT),
    ("uint", T.UINT),
    ("double", T.DOUBLE),
    ("bool", T.BOOL),
    ("duration", T.DURATION),
    ("timestamp", T.TIMESTAMP),
    ("string", T.STRING),
    ("bytes", T.BYTES),
)
_SUMMABLE = (
    ("int", T.INT, 0),
    ("uint", T.UINT, 0),
    ("double", T.DOUBLE, 0.0),
    ("duration", T.DURATION, datetime.timedelta(0)),
)


def _is_sorted(items: list[Any]) -> bool:
    return all(not (items[i] > items[i + 1]) for i in range(len(items) - 1))


def _sum_factory(zero: Any, checked: bool) -> Callable[[list[Any]], Any]:
    """One runtime implementation serves every element type (the dispatcher cannot tell list(int) from
    list(double)), so the sum starts from the first element; an empty list sums to ``zero``."""

    def _sum(items: list[Any]) -> Any:
        if not items:
            return zero
        total = items[0]
        for x in items[1:]:
            total = total + x
        if isinstance(total, int) and not (MIN_INT64 <= total <= MAX_INT64):
            raise CELFunctionError("integer overflow")
        return total

    return _sum


def _min(items: list[Any]) -> Any:
    if not items:
        raise CELFunctionError("min called on empty list")
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise CELFunctionError("max called on empty list")
    best = items[0]
    for x in items[1:]:
        if best < x:
            best = x
    return best


def _cel_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _index_of(items: list[Any], x: Any) -> int:
    for i, v in enumerate(items):
        if _cel_equal(v, x):
            return i
    return -1


def _last_index_of(items: list[Any], x: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if _cel_equal(items[i], x):
            return i
    return -1


def _includes(target: Any, x: Any) -> bool:
    if isinstance(target, list):
        return any(_cel_equal(v, x) for v in target)
    return _cel_equal(target, x)


def _dra_includes(target: Any, x: Any) -> bool:
    if isinstance(target, list):
        for i, v in enumerate(target):
            if i >= MAX_LIST_INCLUDES:
                raise CELFunctionError(
                    f"'includes' function cannot be applied to lists longer than {MAX_LIST_INCLUDES} values"
                )
            if _cel_equal(v, x):
                return True
        return False
    return _cel_equal(target, x)


for _name, _typ in _COMPARABLE:
    _def(
        "lists_v0",
        "isSorted",
        f"list_{_name}_is_sorted_bool",
        T.BOOL,
        [T.List(_typ)],
        _is_sorted,
        member=True,
    )
    _def("lists_v0", "min", f"list_{_name}_min_{_name}", _typ, [T.List(_typ)], _min, member=True)
    _def("lists_v0", "max", f"list_{_name}_max_{_name}", _typ, [T.List(_typ)], _max, member=True)
for _name, _typ, _zero in _SUMMABLE:
    _def(
        "lists_v0",
        "sum",
        f"list_{_name}_sum_{_name}",
        _typ,
        [T.List(_typ)],
        _sum_factory(_zero, _name == "int"),
        member=True,
    )
_def("lists_v0", "indexOf", "list_a_index_of_int", T.INT, [T.List(T("~A")), T("~A")], _index_of, member=True)
_def(
    "lists_v0",
    "lastIndexOf",
    "list_a_last_index_of_int",
    T.INT,
    [T.List(T("~A")), T("~A")],
    _last_index_of,
    member=True,
)
_def("lists_v1", "includes", "list_includes_dyn_dyn", T.BOOL, [T.DYN, T.DYN], _includes, member=True)
_def("dra_includes", "includes", "dra_includes_dyn_dyn", T.BOOL, [T.DYN, T.DYN], _dra_includes, member=True)


# ============================================================================================ regex
# RE2 (google-re2), like Go's regexp: linear time, no backreferences, lookaround or possessive repetition.
# RE2's C++ parser messages -> Go regexp/syntax's ErrorCode texts (what upstream's error carries).
_RE2_TO_GO = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "missing ]": "missing closing ]",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid UTF-8",
    "trailing \\": "trailing backslash at end of expression",
    "pattern too large - compile failed": "expression too large",
}
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # RE2 would log every rejected pattern to stderr
_GO_ONLY_REJECTS = re.compile(r"(?<!\\)(?:\\\\)*\\C")  # Go regexp has no \C (any byte)


def _regex_error(message: str) -> str:
    code, _, arg = message.partition(": ")
    go = _RE2_TO_GO.get(code)
    if go is None:
        return f"error parsing regexp: {message}"
    return f"error parsing regexp: {go}: `{arg}`"


@functools.lru_cache(maxsize=1024)
def _compile_regex(pattern: str) -> Any:
    """Compile with RE2 as Go's ``regexp.Compile`` would; CELFunctionError with upstream's text otherwise."""
    if _GO_ONLY_REJECTS.search(pattern):
        raise CELFunctionError("Illegal regex: error parsing regexp: invalid escape sequence: `\\C`")
    try:
        return re2.compile(pattern, options=_RE2_OPTIONS)
    except re2.error as e:
        text = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        if text in ("invalid perl operator: (?<!", "invalid perl operator: (?<="):
            # Go reads "(?<" as a named capture "(?<name>": the text up to the next ">" (or the end)
            rest = pattern[pattern.index(text.removeprefix("invalid perl operator: ")) :]
            end = rest.find(">")
            capture = rest if end < 0 else rest[: end + 1]
            raise CELFunctionError(
                f"Illegal regex: error parsing regexp: invalid named capture: `{capture}`"
            ) from None
        raise CELFunctionError(f"Illegal regex: {_regex_error(text)}") from None


def _find(s: str, pattern: str) -> str:
    m = _compile_regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    """Go's ``FindAllString(s, n)``: an empty match right after the previous match is skipped."""
    if n == 0:
        return []
    regex = _compile_regex(pattern)
    out: list[str] = []
    pos, prev_end = 0, -1
    while pos <= len(s) and (n < 0 or len(out) < n):
        m = regex.search(s, pos)
        if m is None:
            break
        start, end = m.span()
        accept = True
        if end == pos:  # an empty match
            accept = start != prev_end
            pos += 1
        else:
            pos = end
        prev_end = end
        if accept:
            out.append(m.group(0))
    return out


_def("regex", "find", "string_find_string", T.STRING, [T.STRING, T.STRING], _find, member=True)
_def(
    "regex",
    "findAll",
    "string_find_all_string",
    T.List(T.STRING),
    [T.STRING, T.STRING],
    _find_all,
    member=True,
)
_def(
    "regex",
    "findAll",
    "string_find_all_string_int",
    T.List(T.STRING),
    [T.STRING, T.STRING, T.INT],
    _find_all,
    member=True,
)


# ============================================================================================ urls
def _parse_url(s: str) -> Any:
    """Go's url.ParseRequestURI acceptance: absolute URI or absolute path, no fragment split."""
    if not s:
        raise CELFunctionError('URL parse error during conversion from string: parse "": empty url')
    if " " in s or any(ord(c) < 0x20 or ord(c) == 0x7F for c in s):
        raise CELFunctionError(
            f'URL parse error during conversion from string: parse "{s}": invalid character in URL'
        )
    parts = urlsplit(s)
    if not parts.scheme and not s.startswith("/"):
        raise CELFunctionError(
            f'URL parse error during conversion from string: parse "{s}": invalid URI for request'
        )
    return URLMsg(url=s)


def _is_url(s: str) -> bool:
    try:
        _parse_url(s)
    except (CELFunctionError, ValueError):
        return False
    return True


def _url_parts(m: Any) -> Any:
    return urlsplit(m.url)


def _url_host(m: Any) -> str:
    return _url_parts(m).netloc.rpartition("@")[2]


def _url_hostname(m: Any) -> str:
    host = _url_host(m)
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rpartition(":")[0] if ":" in host else host


def _url_port(m: Any) -> str:
    host = _url_host(m)
    tail = host[host.find("]") + 1 :] if host.startswith("[") else host
    return tail.rpartition(":")[2] if ":" in tail else ""


def _url_query(m: Any) -> dict[str, list[str]]:
    from urllib.parse import parse_qs

    return {k: v for k, v in parse_qs(_url_parts(m).query, keep_blank_values=True).items()}


_def("urls", "url", "string_to_url", UT, [T.STRING], _parse_url)
_def("urls", "isURL", "is_url_string", T.BOOL, [T.STRING], _is_url)
_def("urls", "getScheme", "url_get_scheme", T.STRING, [UT], lambda m: _url_parts(m).scheme, member=True)
_def("urls", "getHost", "url_get_host", T.STRING, [UT], _url_host, member=True)
_def("urls", "getHostname", "url_get_hostname", T.STRING, [UT], _url_hostname, member=True)
_def("urls", "getPort", "url_get_port", T.STRING, [UT], _url_port, member=True)
_def(
    "urls",
    "getEscapedPath",
    "url_get_escaped_path",
    T.STRING,
    [UT],
    lambda m: _url_parts(m).path,
    member=True,
)
_def("urls", "getQuery", "url_get_query", T.Map(T.STRING, T.List(T.STRING)), [UT], _url_query, member=True)


# ============================================================================================ ip / cidr
def _parse_ip(raw: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if "%" in raw:
        raise CELFunctionError(f'IP address "{raw}" with zone value is not allowed')
    try:
        addr = ipaddress.ip_address(raw)
    except ValueError as e:
        raise CELFunctionError(f'IP Address "{raw}" parse error during conversion from string: {e}') from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELFunctionError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    if isinstance(addr, ipaddress.IPv4Address) and any(len(p) > 1 and p[0] == "0" for p in raw.split(".")):
        raise CELFunctionError(f'IP Address "{raw}" parse error during conversion from string: leading zero')
    return addr


def _ip(raw: str) -> Any:
    return IPMsg(addr=str(_parse_ip(raw)))


def _is_ip(raw: str) -> bool:
    try:
        _parse_ip(raw)
    except CELFunctionError:
        return False
    return True


def _ip_addr(m: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(m.addr)


def _parse_cidr(raw: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    try:
        addr_text, _, bits = raw.partition("/")
        if not bits or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
            raise ValueError(f'netip.ParsePrefix("{raw}"): bad bits after slash: "{bits}"')
        addr = _parse_ip(addr_text)
        return ipaddress.ip_interface(f"{addr}/{bits}")
    except (ValueError, CELFunctionError) as e:
        raise CELFunctionError(f"network address parse error during conversion from string: {e}") from None


def _cidr(raw: str) -> Any:
    return CIDRMsg(prefix=str(_parse_cidr(raw)))


def _is_cidr(raw: str) -> bool:
    try:
        _parse_cidr(raw)
    except CELFunctionError:
        return False
    return True


def _cidr_iface(m: Any) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(m.prefix)


def _contains_ip(c: Any, ip: Any) -> bool:
    addr = _parse_ip(ip) if isinstance(ip, str) else _ip_addr(ip)
    net = _cidr_iface(c).network
    return addr.version == net.version and addr in net


def _contains_cidr(c: Any, other: Any) -> bool:
    inner = (_parse_cidr(other) if isinstance(other, str) else _cidr_iface(other)).network
    net = _cidr_iface(c).network
    return inner.version == net.version and inner.subnet_of(net)  # type: ignore[arg-type]


def _object_to_string(m: Any) -> str:
    if _msg_name(m) == _protos.CIDR_TYPE:
        return str(m.prefix)
    return str(m.addr)


def _family(m: Any) -> int:
    return _ip_addr(m).version


def _is_canonical(raw: str) -> bool:
    return str(_parse_ip(raw)) == raw


def _global_unicast(m: Any) -> bool:
    a = _ip_addr(m)
    if isinstance(a, ipaddress.IPv4Address) and a == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local)


_def("ip", "ip", "string_to_ip", IPT, [T.STRING], _ip)
_def("ip", "family", "ip_family", T.INT, [IPT], _family, member=True)
_def("ip", "ip.isCanonical", "ip_is_canonical", T.BOOL, [T.STRING], _is_canonical)
_def(
    "ip",
    "isUnspecified",
    "ip_is_unspecified",
    T.BOOL,
    [IPT],
    lambda m: _ip_addr(m).is_unspecified,
    member=True,
)
_def("ip", "isLoopback", "ip_is_loopback", T.BOOL, [IPT], lambda m: _ip_addr(m).is_loopback, member=True)
_def(
    "ip",
    "isLinkLocalMulticast",
    "ip_is_link_local_multicast",
    T.BOOL,
    [IPT],
    lambda m: (
        _ip_addr(m)
        in (
            ipaddress.ip_network("224.0.0.0/24")
            if _ip_addr(m).version == 4
            else ipaddress.ip_network("ff02::/16")
        )
    ),
    member=True,
)
_def(
    "ip",
    "isLinkLocalUnicast",
    "ip_is_link_local_unicast",
    T.BOOL,
    [IPT],
    lambda m: _ip_addr(m).is_link_local,
    member=True,
)
_def("ip", "isGlobalUnicast", "ip_is_global_unicast", T.BOOL, [IPT], _global_unicast, member=True)
_def("ip", "isIP", "is_ip", T.BOOL, [T.STRING], _is_ip)
_def("ip", "string", "ip_to_string", T.STRING, [IPT], _object_to_string)
_def("cidr", "cidr", "string_to_cidr", CT, [T.STRING], _cidr)
_def("cidr", "containsIP", "cidr_contains_ip_string", T.BOOL, [CT, T.STRING], _contains_ip, member=True)
_def("cidr", "containsIP", "cidr_contains_ip_ip", T.BOOL, [CT, IPT], _contains_ip, member=True)
_def("cidr", "containsCIDR", "cidr_contains_cidr_string", T.BOOL, [CT, T.STRING], _contains_cidr, member=True)
_def("cidr", "containsCIDR", "cidr_contains_cidr", T.BOOL, [CT, CT], _contains_cidr, member=True)
_def("cidr", "ip", "cidr_ip", IPT, [CT], lambda m: IPMsg(addr=str(_cidr_iface(m).ip)), member=True)
_def(
    "cidr",
    "prefixLength",
    "cidr_prefix_length",
    T.INT,
    [CT],
    lambda m: _cidr_iface(m).network.prefixlen,
    member=True,
)
_def(
    "cidr",
    "masked",
    "cidr_masked",
    CT,
    [CT],
    lambda m: CIDRMsg(prefix=str(_cidr_iface(m).network)),
    member=True,
)
_def("cidr", "isCIDR", "is_cidr", T.BOOL, [T.STRING], _is_cidr)
_def("cidr", "string", "cidr_to_string", T.STRING, [CT], _object_to_string)


# ============================================================================================ format
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


def _mask_prefix(s: str, prefix: bool) -> str:
    return s + "a" if prefix and s else s


def _v_dns_label(
    s: str, prefix: bool = False, rx: re.Pattern[str] = _DNS1123_LABEL, kind: str = "1123"
) -> list[str]:
    s = _mask_prefix(s, prefix)
    errs = []
    if len(s) > 63:
        errs.append("must be no more than 63 characters")
    if not rx.match(s):
        if kind == "1123":
            errs.append(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start"
                " and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is"
                " '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            )
        else:
            errs.append(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic"
                " character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for"
                " validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            )
    return errs


def _v_dns_subdomain(s: str, prefix: bool = False) -> list[str]:
    s = _mask_prefix(s, prefix)
    errs = []
    if len(s) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.match(s):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must"
            " start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is"
            " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    return errs


def _v_qualified_name(s: str) -> list[str]:
    errs: list[str] = []
    prefix, sep, name = s.rpartition("/")
    if sep and "/" in prefix:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
            " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
            " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g."
            " 'example.com/MyName')"
        ]
    if sep:
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + e for e in _v_dns_subdomain(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_NAME.match(name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
            " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
            " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    return errs


def _v_label_value(s: str) -> list[str]:
    errs = []
    if len(s) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE.match(s):
        errs.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must"
            " start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used"
            " for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    return errs


def _v_uri(s: str) -> list[str]:
    try:
        _parse_url(s)
    except CELFunctionError as e:
        return [str(e).removeprefix("URL parse error during conversion from string: ")]
    return []


def _v_uuid(s: str) -> list[str]:
    ok = bool(re.fullmatch(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", s))
    if ok:
        uuid.UUID(s)
    return [] if ok else ["does not match the UUID format"]


def _v_byte(s: str) -> list[str]:
    try:
        base64.b64decode(s, validate=True)
    except ValueError:
        return ["invalid base64"]
    return []


def _v_date(s: str) -> list[str]:
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
            raise ValueError
        datetime.date.fromisoformat(s)
    except ValueError:
        return ["invalid date"]
    return []


def _v_datetime(s: str) -> list[str]:
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", s):
            raise ValueError
        datetime.datetime.fromisoformat(s.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return ["invalid datetime"]
    return []


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": lambda s: _v_dns_label(s),
    "dns1123Subdomain": lambda s: _v_dns_subdomain(s),
    "dns1035Label": lambda s: _v_dns_label(s, rx=_DNS1035_LABEL, kind="1035"),
    "qualifiedName": _v_qualified_name,
    "dns1123LabelPrefix": lambda s: _v_dns_label(s, True),
    "dns1123SubdomainPrefix": lambda s: _v_dns_subdomain(s, True),
    "dns1035LabelPrefix": lambda s: _v_dns_label(s, True, _DNS1035_LABEL, "1035"),
    "labelValue": _v_label_value,
    "uri": _v_uri,
    "uuid": _v_uuid,
    "byte": _v_byte,
    "date": _v_date,
    "datetime": _v_datetime,
}


def _format_errors(fmt: Any, s: str) -> list[str]:
    return FORMATS[fmt.name](s) if fmt.name in FORMATS else []


def _named_format(name: str) -> Any:
    return FormatMsg(name=name) if name in FORMATS else FormatMsg()  # empty message == optional.none()


for _fname in FORMATS:
    _def(
        "format",
        f"format.{_fname}",
        f"format.{_fname}",
        FT,
        [],
        functools.partial(lambda n: FormatMsg(name=n), _fname),
    )
# format.named() and <Format>.validate() return optionals, which Python functions cannot produce: the checker
# declares them (env.py) and the runtime runs optional.ofNonZeroValue(<helper>) with these helpers.
_def("format", "kubedra.namedFormat", "kubedra_named_format", FT, [T.STRING], _named_format)
_def(
    "format",
    "kubedra.formatValidate",
    "kubedra_format_validate",
    T.List(T.STRING),
    [FT, T.STRING],
    _format_errors,
)


# ============================================================================================ runtime helpers
def _map_insert(m: dict[Any, Any], k: Any, v: Any = None) -> dict[Any, Any]:
    out = dict(m)
    if v is None and isinstance(k, dict):
        for key in k:
            if key in out:
                raise CELFunctionError(f"insert failed: key {key} already exists")
        out.update(k)
        return out
    if k in out:
        raise CELFunctionError(f"insert failed: key {k} already exists")
    out[k] = v
    return out


_MT = T.Map(T.DYN, T.DYN)
_def(
    "map_insert", "kubedra.@mapInsert", "kubedra_map_insert_key_value", _MT, [_MT, T.DYN, T.DYN], _map_insert
)
_def("map_insert", "kubedra.@mapInsert", "kubedra_map_insert_map", _MT, [_MT, _MT], _map_insert)


# ============================================================================================ assembly
def _dispatcher(fns: list[Fn]) -> Callable[..., Any]:
    """One runtime implementation for overloads whose arguments share kinds: pick by message type names."""
    if len(fns) == 1:
        impl = fns[0].impl
        assert impl is not None
        return _wrap(impl)
    table: dict[tuple[str, ...], Callable[..., Any]] = {}
    for f in fns:
        assert f.impl is not None
        table[tuple(p.name() if p.is_message() else "" for p in f.params)] = f.impl
    first = fns[0].impl
    assert first is not None

    def dispatch(*args: Any) -> Any:
        key = tuple(_msg_name(a) for a in args)
        return table.get(key, first)(*args)

    return _wrap(dispatch)


def _wrap(impl: Callable[..., Any]) -> Callable[..., Any]:
    return impl


def _runtime_type(t: Any) -> Any:
    """Runtime declarations only need argument kinds: lists/maps/type parameters become dyn-typed."""
    kind = _kind(t)
    if kind == "any":
        return T.DYN
    if kind == "list":
        return T.List(T.DYN)
    if kind == "map":
        return T.Map(T.DYN, T.DYN)
    return t


def build_extension(
    groups: Iterable[str], name: str = "kubernetes", runtime: bool = False
) -> cel.CelExtension:
    """A CelExtension with every function of ``groups`` (see module docstring).

    cel-expr-python registers a runtime function for every overload of a declaration that has any
    implementation, and rejects two with the same argument kinds. So the *checker* variant declares every
    overload with its exact upstream signature and no implementation (it is never evaluated), and the
    *runtime* variant (``runtime=True``) declares one overload per argument-kind signature whose
    implementation dispatches on message types.
    """
    wanted = set(groups)
    by_name: dict[str, list[Fn]] = {}
    for f in _REGISTRY:
        if f.group in wanted:
            by_name.setdefault(f.name, []).append(f)
    decls = []
    for fname, fns in by_name.items():
        overloads = []
        if not runtime:
            for f in fns:
                overloads.append(cel.Overload(f.overload_id, f.ret, list(f.params), is_member=f.member))
        else:
            by_kinds: dict[tuple[bool, tuple[str, ...]], list[Fn]] = {}
            for f in fns:
                by_kinds.setdefault((f.member, f.kinds), []).append(f)
            for group in by_kinds.values():
                f = group[0]
                same_ret = len({g.ret.name() for g in group}) == 1
                overloads.append(
                    cel.Overload(
                        f.overload_id,
                        _runtime_type(f.ret) if same_ret else T.DYN,
                        [_runtime_type(p) for p in f.params],
                        is_member=f.member,
                        impl=_dispatcher(group),
                    )
                )
        decls.append(cel.FunctionDecl(fname, overloads))
    return cel.CelExtension(name, decls)


def overload_ids(group: str) -> set[str]:
    return {f.overload_id for f in _REGISTRY if f.group == group}


# Overload ids that take a kubernetes.Quantity (env.check_capacity_values: capacity values are Quantities).
QUANTITY_OVERLOADS = frozenset(
    f.overload_id
    for f in _REGISTRY
    if any(p.is_message() and p.name() == _protos.QUANTITY_TYPE for p in f.params)
)

"""The IP and CIDR libraries (apiserver pkg/cel/library/ip.go, cidr.go)."""

from __future__ import annotations

import ipaddress
from typing import Any

from kubedra.cel import _protos
from kubedra.cel.library.registry import (
    CT,
    IPT,
    CELFunctionError,
    T,
    define,
    msg_name,
)
from kubedra.cel.values import (
    CIDRMsg,
    IPMsg,
)


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
    if msg_name(m) == _protos.CIDR_TYPE:
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


define("ip", "ip", "string_to_ip", IPT, [T.STRING], _ip)
define("ip", "family", "ip_family", T.INT, [IPT], _family, member=True)
define("ip", "ip.isCanonical", "ip_is_canonical", T.BOOL, [T.STRING], _is_canonical)
define(
    "ip",
    "isUnspecified",
    "ip_is_unspecified",
    T.BOOL,
    [IPT],
    lambda m: _ip_addr(m).is_unspecified,
    member=True,
)
define("ip", "isLoopback", "ip_is_loopback", T.BOOL, [IPT], lambda m: _ip_addr(m).is_loopback, member=True)
define(
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
define(
    "ip",
    "isLinkLocalUnicast",
    "ip_is_link_local_unicast",
    T.BOOL,
    [IPT],
    lambda m: _ip_addr(m).is_link_local,
    member=True,
)
define("ip", "isGlobalUnicast", "ip_is_global_unicast", T.BOOL, [IPT], _global_unicast, member=True)
define("ip", "isIP", "is_ip", T.BOOL, [T.STRING], _is_ip)
define("ip", "string", "ip_to_string", T.STRING, [IPT], _object_to_string)
define("cidr", "cidr", "string_to_cidr", CT, [T.STRING], _cidr)
define("cidr", "containsIP", "cidr_contains_ip_string", T.BOOL, [CT, T.STRING], _contains_ip, member=True)
define("cidr", "containsIP", "cidr_contains_ip_ip", T.BOOL, [CT, IPT], _contains_ip, member=True)
define(
    "cidr", "containsCIDR", "cidr_contains_cidr_string", T.BOOL, [CT, T.STRING], _contains_cidr, member=True
)
define("cidr", "containsCIDR", "cidr_contains_cidr", T.BOOL, [CT, CT], _contains_cidr, member=True)
define("cidr", "ip", "cidr_ip", IPT, [CT], lambda m: IPMsg(addr=str(_cidr_iface(m).ip)), member=True)
define(
    "cidr",
    "prefixLength",
    "cidr_prefix_length",
    T.INT,
    [CT],
    lambda m: _cidr_iface(m).network.prefixlen,
    member=True,
)
define(
    "cidr",
    "masked",
    "cidr_masked",
    CT,
    [CT],
    lambda m: CIDRMsg(prefix=str(_cidr_iface(m).network)),
    member=True,
)
define("cidr", "isCIDR", "is_cidr", T.BOOL, [T.STRING], _is_cidr)
define("cidr", "string", "cidr_to_string", T.STRING, [CT], _object_to_string)

"""The URL library (apiserver pkg/cel/library/urls.go)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from kubedra.cel.library.registry import (
    UT,
    CELFunctionError,
    T,
    define,
)
from kubedra.cel.values import (
    URLMsg,
)


def parse_url(s: str) -> Any:
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
        parse_url(s)
    except (CELFunctionError, ValueError):
        return False
    return True


def _url_parts(m: Any) -> Any:
    return urlsplit(m.url)


def _url_host(m: Any) -> str:
    host: str = _url_parts(m).netloc.rpartition("@")[2]
    return host


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

    return {k: v for k, v in parse_qs(_url_parts(m).query, keep_blank_values=True).items()}


define("urls", "url", "string_to_url", UT, [T.STRING], parse_url)
define("urls", "isURL", "is_url_string", T.BOOL, [T.STRING], _is_url)
define("urls", "getScheme", "url_get_scheme", T.STRING, [UT], lambda m: _url_parts(m).scheme, member=True)
define("urls", "getHost", "url_get_host", T.STRING, [UT], _url_host, member=True)
define("urls", "getHostname", "url_get_hostname", T.STRING, [UT], _url_hostname, member=True)
define("urls", "getPort", "url_get_port", T.STRING, [UT], _url_port, member=True)
define(
    "urls",
    "getEscapedPath",
    "url_get_escaped_path",
    T.STRING,
    [UT],
    lambda m: _url_parts(m).path,
    member=True,
)
define("urls", "getQuery", "url_get_query", T.Map(T.STRING, T.List(T.STRING)), [UT], _url_query, member=True)

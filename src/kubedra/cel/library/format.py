"""The format library (apiserver pkg/cel/library/format.go)."""

from __future__ import annotations

import base64
import datetime
import functools
import re
import uuid
from collections.abc import Callable
from typing import Any

from kubedra.cel.library.registry import (
    FT,
    CELFunctionError,
    T,
    define,
)
from kubedra.cel.library.urls import parse_url
from kubedra.cel.values import (
    FormatMsg,
)

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
        parse_url(s)
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
    define(
        "format",
        f"format.{_fname}",
        f"format.{_fname}",
        FT,
        [],
        functools.partial(lambda n: FormatMsg(name=n), _fname),
    )
# format.named() and <Format>.validate() return optionals, which Python functions cannot produce: the checker
# declares them (env.py) and the runtime runs optional.ofNonZeroValue(<helper>) with these helpers.
define("format", "kubedra.namedFormat", "kubedra_named_format", FT, [T.STRING], _named_format)
define(
    "format",
    "kubedra.formatValidate",
    "kubedra_format_validate",
    T.List(T.STRING),
    [FT, T.STRING],
    _format_errors,
)

"""JSON text exactly as ``json.dumps(data, indent=2, ensure_ascii=False)`` writes it, faster.

With ``indent`` set, the standard library encodes through its pure-Python generator encoder (the C encoder only
writes compact JSON): 0.12 s of a 0.6 s audit report of 5,500 findings. This encoder builds the same text with
joins and the C string escaper, for the plain data verbs produce (dicts with str keys, lists, tuples, str, int,
float, bool, None); anything else (other keys or types, a cycle, nesting deeper than recursion allows) goes to
``json.dumps``, so its result or error is the standard library's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring  # the C escaper when built
from typing import Any

_escape: Callable[[str], str] = encode_basestring

_INF = float("inf")


class _Unusual(Exception):
    """Data the fast path does not write: json.dumps does."""


def dumps_indented(data: Any) -> str:
    """``json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False)``, byte for byte."""
    try:
        return _encode(data, "\n")
    except (_Unusual, RecursionError):
        return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False)


def pieces_indented(data: Any, each: Mapping[str, Callable[[Any], Any]] | None = None) -> list[str]:
    """:func:`dumps_indented`'s text in pieces, one for each item of each list at the top level (a report's
    findings): written one after another they are the same text, without joining a report of thousands of
    findings into one string (and copying it at each level; 5,500 findings: 3.6 MB of text, about 15 MB of
    copies). Everything is encoded before the first piece is returned, so an error leaves nothing written.

    ``each``: for a top-level key whose value is a list, what each item is written as (``each[key](item)``),
    made as the item is encoded and dropped after, so that the items' data (5,500 finding dicts, 4 MiB) is
    never all alive at once: the text is that of ``data`` with every such list converted first."""
    if not isinstance(data, dict) or not data:
        return [dumps_indented(_converted(data, each))]
    try:
        out = ["{"]
        sep = "\n  "
        for k, v in data.items():
            if type(k) is not str:
                raise _Unusual
            if isinstance(v, list | tuple) and v:
                out.append(sep + _escape(k) + ": [")
                inner = "\n    "
                convert = each.get(k) if each else None
                for item in v:
                    out.append(inner + _value(item if convert is None else convert(item), "\n    "))
                    inner = ",\n    "
                out.append("\n  ]")
            else:
                out.append(sep + _escape(k) + ": " + _value(v, "\n  "))
            sep = ",\n  "
        out.append("\n}")
        return out
    except (_Unusual, RecursionError):
        return [json.dumps(_converted(data, each), indent=2, sort_keys=False, ensure_ascii=False)]


def _converted(data: Any, each: Mapping[str, Callable[[Any], Any]] | None) -> Any:
    """``data`` with each top-level list named in ``each`` converted item by item (what the text shows)."""
    if not each or not isinstance(data, dict):
        return data
    return {
        k: [each[k](x) for x in v] if k in each and isinstance(v, list | tuple) else v
        for k, v in data.items()
    }


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def _encode(o: Any, nl: str) -> str:
    # the order of json's own checks (str, None, True, False, int, float, list/tuple, dict)
    if isinstance(o, str):
        return _escape(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    inner = nl + "  "
    if isinstance(o, list | tuple):
        if not o:
            return "[]"
        return "[" + inner + ("," + inner).join([_value(v, inner) for v in o]) + nl + "]"
    if isinstance(o, dict):
        if not o:
            return "{}"
        parts = []
        for k, v in o.items():
            if type(k) is not str:
                raise _Unusual
            parts.append(_escape(k) + ": " + _value(v, inner))
        return "{" + inner + ("," + inner).join(parts) + nl + "}"
    raise _Unusual


def _value(v: Any, nl: str) -> str:
    """The common leaves without a call further down (most of a report's values are strings)."""
    t = type(v)
    if t is str:
        return _escape(v)
    if v is None:
        return "null"
    return _encode(v, nl)

"""Plain YAML scalars and mapping keys read the way kubectl reads them.

kubectl (and every client built on sigs.k8s.io/yaml) decodes YAML with go-yaml v2 into generic data and
converts it to JSON. go-yaml v2 resolves plain (unquoted) scalars by YAML 1.1 rules of its own
(go.yaml.in/yaml/v2 v2.4.4 resolve.go, the version Kubernetes 1.37's sigs.k8s.io/yaml v1.6.0 resolves to), which differ from PyYAML's:

* booleans: ``y Y yes Yes YES true True TRUE on On ON`` and ``n N no No NO false False FALSE off Off OFF``
  (PyYAML lacks ``y``/``n``). A request named ``y`` is the boolean ``true`` to the cluster, which refuses it.
* null: ``~ null Null NULL`` and the empty scalar.
* ints: Go's ``strconv.ParseInt(s, 0, 64)`` after removing ``_`` (``0x``, ``0o``, ``0b`` and leading-``0``
  octal), then ``ParseUint``; no base-60 (``1:20`` is a string). A number too large for 64 bits becomes a
  float, or stays a string when it overflows a float too.
* floats: ``.5``, ``.inf``, ``.nan`` and ``[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?`` (``1e18``, ``1.``:
  the exponent sign is optional).

Then sigs.k8s.io/yaml turns the data into JSON, and the API machinery reads the JSON back: a float that is
a whole number within int64 arrives as an integer, ``.inf``/``.nan`` cannot be written as JSON (kubectl
refuses the document), and mapping keys become strings (``on:`` is the key ``"true"``, ``1:`` is ``"1"``; a
null key is refused). Timestamps stay strings here (kubedra never needs them as dates).
"""

from __future__ import annotations

import math
import re
import struct
from decimal import Decimal
from typing import Any

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
MERGE = "tag:yaml.org,2002:merge"

_WORDS: dict[str, tuple[str, Any]] = {}
for _words, _tag, _value in (
    ("y Y yes Yes YES true True TRUE on On ON", BOOL, True),
    ("n N no No NO false False FALSE off Off OFF", BOOL, False),
    ("~ null Null NULL", NULL, None),
    (".nan .NaN .NAN", FLOAT, math.nan),
    (".inf .Inf .INF +.inf +.Inf +.INF", FLOAT, math.inf),
    ("-.inf -.Inf -.INF", FLOAT, -math.inf),
    ("<<", MERGE, "<<"),
):
    for _w in _words.split():
        _WORDS[_w] = (_tag, _value)
_WORDS[""] = (NULL, None)

_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64 = (1 << 64) - 1
_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01", 10: "0123456789"}


def _go_parse_int(s: str) -> int | None:
    """Go's ``strconv.ParseUint``/``ParseInt`` with base 0 (sign handled by the caller); None if invalid."""
    if not s:
        return None
    base = 10
    body = s
    if len(s) >= 2 and s[0] == "0":
        p = s[1]
        if p in "xX":
            base, body = 16, s[2:]
        elif p in "oO":
            base, body = 8, s[2:]
        elif p in "bB":
            base, body = 2, s[2:]
        else:
            base, body = 8, s[1:]
    if not body or any(c not in _DIGITS[base] for c in body):
        return None
    if len(body) > 70:  # beyond any 64-bit value in any base: out of range
        return None
    return int(body, base)


def _go_int(plain: str) -> int | None:
    """``strconv.ParseInt(plain, 0, 64)`` then ``ParseUint(plain, 0, 64)``: the value, or None."""
    sign = 1
    s = plain
    if s[:1] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    v = _go_parse_int(s)
    if v is None:
        return None
    v *= sign
    if _INT64[0] <= v <= _INT64[1]:
        return v
    if plain[:1] != "-" and plain[:1] != "+" and 0 <= v <= _UINT64:
        return v  # ParseUint accepts no sign
    return None


def resolve_plain(value: str) -> str:
    """The tag go-yaml v2 gives an unquoted scalar."""
    hit = _WORDS.get(value)
    if hit is not None:
        return hit[0]
    first = value[:1]
    if first == ".":
        return FLOAT if _go_float(value) is not None else STR
    if first and ((first.isdigit() and first.isascii()) or first in "+-"):
        plain = value.replace("_", "")
        if _go_int(plain) is not None:
            return INT
        if _GO_FLOAT.fullmatch(plain) and _go_float(plain) is not None:
            return FLOAT
    return STR


def _go_float(s: str) -> float | None:
    """``strconv.ParseFloat(s, 64)`` for the forms go-yaml hands it: None on syntax or range error."""
    if "_" in s or not s.isascii():
        return None  # Python's float() accepts these, Go's ParseFloat does not
    try:
        f = float(s)
    except ValueError:
        return None
    if math.isinf(f) and "inf" not in s.lower():
        return None  # ParseFloat: value out of range
    return f


def _as_json_number(f: float) -> int | float:
    """A float as the API machinery reads it back from JSON: whole numbers within int64 become ints."""
    if f.is_integer() and _INT64[0] <= f <= _INT64[1]:
        return int(f)
    return f


class ScalarError(ValueError):
    """A scalar kubectl cannot turn into JSON."""


def construct(tag: str, value: str) -> Any:
    """The value of a scalar node whose tag was resolved (implicitly or explicitly)."""
    if tag == STR:
        return value
    hit = _WORDS.get(value)
    if tag == BOOL:
        if hit is not None and hit[0] == BOOL:
            return hit[1]
        raise ScalarError(f"cannot decode !!str `{value}` as a !!bool")
    if tag == NULL:
        return None
    if tag == INT:
        v = _go_int(value.replace("_", ""))
        if v is not None:
            return v
        f = _go_float(value.replace("_", ""))
        if f is None or math.isinf(f) or math.isnan(f):
            return value  # too large even for a float: go-yaml keeps the text
        return _as_json_number(f)
    if tag == FLOAT:
        f = hit[1] if hit is not None and hit[0] == FLOAT else _go_float(value.replace("_", ""))
        if f is None:
            raise ScalarError(f"cannot decode !!str `{value}` as a !!float")
        if math.isinf(f) or math.isnan(f):
            raise ScalarError(f"{value} cannot be represented in JSON (kubectl refuses it)")
        return _as_json_number(f)
    return value


def go_json_float(f: float, refuse: Exception | None = None) -> str:
    """The text Go's ``encoding/json`` writes for a float64 (``floatEncoder``, go1.24-go1.27 encode.go): the
    shortest digits that read back as ``f`` (as Python's ``repr``), in ``%f`` form unless the magnitude is below
    1e-6 or at least 1e21, where ``%e`` is used with ``e-07`` cleaned to ``e-7``. So ``1e20`` is
    ``100000000000000000000`` and ``1e-05`` is ``0.00001``: the text ``Quantity.UnmarshalJSON`` parses. A value
    no JSON number holds raises ``refuse`` (a :class:`ScalarError` by default)."""
    if math.isinf(f) or math.isnan(f):  # json: unsupported value (no JSON number holds it)
        raise refuse or ScalarError(f"{f} cannot be represented in JSON")
    magnitude = abs(f)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, exp = repr(f).split("e")
        return f"{mantissa}e{exp[0]}{exp[1:].lstrip('0') if exp[0] == '-' else exp[1:]}"
    return format(Decimal(repr(f)).normalize(), "f")


def _go_float32_g(f: float) -> str:
    """``strconv.FormatFloat(f, 'g', -1, 32)`` (sigs.k8s.io/yaml's way to turn a float key into a string)."""
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    f32 = struct.unpack("f", struct.pack("f", f))[0]
    if math.isinf(f32):  # beyond float32: Go's float32(f) is ±Inf, which sigs.k8s.io/yaml writes as .inf
        return ".inf" if f32 > 0 else "-.inf"
    digits = ""
    for p in range(1, 10):
        digits = f"{f32:.{p - 1}e}"
        if struct.unpack("f", struct.pack("f", float(digits)))[0] == f32:
            break
    mantissa, exp_s = digits.split("e")
    exp = int(exp_s)
    sign = "-" if mantissa.startswith("-") else ""
    digs = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    if exp < -4 or exp >= 6:  # Go: shortest 'g' switches to %e at exponent 6
        m = digs[0] + ("." + digs[1:] if len(digs) > 1 else "")
        return f"{sign}{m}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return f"{sign}{abs(float(digits)):.{max(len(digs) - 1 - exp, 0)}f}"


def json_key(key: Any) -> str:
    """A mapping key as sigs.k8s.io/yaml turns it into a JSON object key (ScalarError if it cannot)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32_g(key)
    raise ScalarError(f"unsupported map key of type {type(key).__name__} ({key!r})")

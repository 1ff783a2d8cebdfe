"""The semver library (apiserver pkg/cel/library/semver.go); also the isGreaterThan/isLessThan/compareTo
overloads of quantity and semver, which share one comparison (declared here, in upstream's order)."""

from __future__ import annotations

import functools
from typing import Any

from kubedra.cel import _protos
from kubedra.cel.library.quantity import cmp, quantity_int
from kubedra.cel.library.registry import (
    MAX_INT64,
    QT,
    ST,
    CELFunctionError,
    T,
    define,
    msg_name,
)
from kubedra.cel.values import (
    msg_to_semver,
    semver_to_msg,
)
from kubedra.model.semver import Semver, SemverError


@functools.lru_cache(maxsize=16384)
def _semver_msg(text: str, normalize: bool = False) -> Any:
    try:
        return semver_to_msg(Semver.parse(text, normalize))
    except SemverError as e:
        raise CELFunctionError(str(e)) from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    return Semver.is_valid(text, normalize)


def _compare_objects(a: Any, b: Any) -> int:
    if msg_name(a) == _protos.QUANTITY_TYPE:
        return cmp(quantity_int(a), quantity_int(b))
    return msg_to_semver(a).compare(msg_to_semver(b))


def _int64_wrap(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v > MAX_INT64 else v


define("semver", "semver", "string_to_semver", ST, [T.STRING], _semver_msg)
define("semver", "semver", "string_bool_to_semver", ST, [T.STRING, T.BOOL], _semver_msg)
define("semver", "isSemver", "is_semver_string", T.BOOL, [T.STRING], _is_semver)
define("semver", "isSemver", "is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], _is_semver)
define("semver", "major", "semver_major", T.INT, [ST], lambda m: _int64_wrap(m.major), member=True)
define("semver", "minor", "semver_minor", T.INT, [ST], lambda m: _int64_wrap(m.minor), member=True)
define("semver", "patch", "semver_patch", T.INT, [ST], lambda m: _int64_wrap(m.patch), member=True)

for _grp, _typ, _pfx in (("quantity", QT, "quantity"), ("semver", ST, "semver")):
    define(
        _grp,
        "isGreaterThan",
        f"{_pfx}_is_greater_than",
        T.BOOL,
        [_typ, _typ],
        lambda a, b: _compare_objects(a, b) == 1,
        member=True,
    )
    define(
        _grp,
        "isLessThan",
        f"{_pfx}_is_less_than",
        T.BOOL,
        [_typ, _typ],
        lambda a, b: _compare_objects(a, b) == -1,
        member=True,
    )
    define(_grp, "compareTo", f"{_pfx}_compare_to", T.INT, [_typ, _typ], _compare_objects, member=True)

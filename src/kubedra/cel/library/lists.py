"""The lists library (apiserver pkg/cel/library/lists.go) and DRA's ``includes``."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from kubedra.cel.library.registry import (
    MAX_INT64,
    MAX_LIST_INCLUDES,
    MIN_INT64,
    CELFunctionError,
    T,
    define,
)

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
    define(
        "lists_v0",
        "isSorted",
        f"list_{_name}_is_sorted_bool",
        T.BOOL,
        [T.List(_typ)],
        _is_sorted,
        member=True,
    )
    define("lists_v0", "min", f"list_{_name}_min_{_name}", _typ, [T.List(_typ)], _min, member=True)
    define("lists_v0", "max", f"list_{_name}_max_{_name}", _typ, [T.List(_typ)], _max, member=True)
for _name, _typ, _zero in _SUMMABLE:
    define(
        "lists_v0",
        "sum",
        f"list_{_name}_sum_{_name}",
        _typ,
        [T.List(_typ)],
        _sum_factory(_zero, _name == "int"),
        member=True,
    )
define(
    "lists_v0", "indexOf", "list_a_index_of_int", T.INT, [T.List(T("~A")), T("~A")], _index_of, member=True
)
define(
    "lists_v0",
    "lastIndexOf",
    "list_a_last_index_of_int",
    T.INT,
    [T.List(T("~A")), T("~A")],
    _last_index_of,
    member=True,
)
define("lists_v1", "includes", "list_includes_dyn_dyn", T.BOOL, [T.DYN, T.DYN], _includes, member=True)
define("dra_includes", "includes", "dra_includes_dyn_dyn", T.BOOL, [T.DYN, T.DYN], _dra_includes, member=True)

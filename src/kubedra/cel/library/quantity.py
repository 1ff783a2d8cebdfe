"""The quantity library (apiserver pkg/cel/library/quantity.go) and the runtime ``quantity_eq`` helper."""

from __future__ import annotations

import functools
from typing import Any

from kubedra.cel import _protos
from kubedra.cel.library.registry import (
    QT,
    CELFunctionError,
    T,
    define,
    msg_name,
)
from kubedra.cel.values import (
    msg_to_quantity,
    quantity_to_msg,
)
from kubedra.k8s.quantity import NANO, Quantity, QuantityError, QuantityNotModelled, current_rules
from kubedra.k8s.quantityint import text_int
from kubedra.k8s.quantityread import approximate_float


def _quantity_msg(text: str) -> Any:
    """``quantity(text)``: ParseQuantity of the release the caller selected (``quantity_rules``)."""
    return _quantity_msg_at(text, current_rules())


@functools.lru_cache(maxsize=16384)
def _quantity_msg_at(text: str, since_138: bool) -> Any:
    try:
        return quantity_to_msg(Quantity.parse(text, since_138))
    except QuantityError as e:
        raise CELFunctionError(str(e)) from None


def _is_quantity(text: str) -> bool:
    """``isQuantity(text)``; a value kubedra does not model (past 10^10000) is an evaluation error that says it
    cannot check it, not ``false``: ParseQuantity may accept it."""
    try:
        Quantity.parse(text, current_rules())
    except QuantityNotModelled as e:
        raise CELFunctionError(str(e)) from None
    except QuantityError:
        return False
    return True


def quantity_int(m: Any) -> int:
    return text_int(m.nanos)


def cmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def _as_integer(m: Any) -> int:
    value = msg_to_quantity(m).as_int64()
    if value is None:
        raise CELFunctionError("cannot convert value to integer")
    return value


def _approx_float(m: Any) -> float:
    # AsApproximateFloat64 of the release quantity_rules selects (tests/conformance/quantity/approximate-float.yaml)
    return approximate_float(msg_to_quantity(m))


def _q_operand(b: Any) -> Quantity:
    # quantity_add_int / quantity_sub_int: resource.NewQuantity(b, DecimalExponent), an int64Amount{b, 0}
    return Quantity(b * NANO, "DecimalExponent", 0) if isinstance(b, int) else msg_to_quantity(b)


def _q_add(a: Any, b: Any) -> Any:
    return quantity_to_msg(msg_to_quantity(a).add(_q_operand(b)))


def _q_sub(a: Any, b: Any) -> Any:
    return quantity_to_msg(msg_to_quantity(a).sub(_q_operand(b)))


define("quantity", "quantity", "string_to_quantity", QT, [T.STRING], _quantity_msg)
define("quantity", "isQuantity", "is_quantity_string", T.BOOL, [T.STRING], _is_quantity)
define("quantity", "sign", "quantity_sign", T.INT, [QT], lambda m: cmp(quantity_int(m), 0))
define("quantity", "asApproximateFloat", "quantity_get_float", T.DOUBLE, [QT], _approx_float, member=True)
define("quantity", "asInteger", "quantity_get_int", T.INT, [QT], _as_integer, member=True)
define(
    "quantity",
    "isInteger",
    "quantity_is_integer",
    T.BOOL,
    [QT],
    lambda m: msg_to_quantity(m).as_int64() is not None,
    member=True,
)
define("quantity", "add", "quantity_add", QT, [QT, QT], _q_add, member=True)
define("quantity", "add", "quantity_add_int", QT, [QT, T.INT], _q_add, member=True)
define("quantity", "sub", "quantity_sub", QT, [QT, QT], _q_sub, member=True)
define("quantity", "sub", "quantity_sub_int", QT, [QT, T.INT], _q_sub, member=True)


# Runtime only (env.py rewrites ==/!= between quantities to it): Quantity.Equal compares values, while the
# messages also carry the representation.
def _quantity_equals(a: Any, b: Any) -> bool:
    """cel-go ``types.Equal(a, b)`` with a Quantity on one side: ``a.Equal(b)``."""
    a_is, b_is = msg_name(a) == _protos.QUANTITY_TYPE, msg_name(b) == _protos.QUANTITY_TYPE
    if a_is and b_is:
        return quantity_int(a) == quantity_int(b)
    if a_is and b is not None:
        raise CELFunctionError("no such overload")  # apiserver cel.Quantity.Equal of a non-Quantity
    return False  # null == q, or another type's Equal given a Quantity


define(
    "quantity_eq",
    "kubedra.quantityEquals",
    "kubedra_quantity_equals",
    T.BOOL,
    [T.DYN, T.DYN],
    _quantity_equals,
)

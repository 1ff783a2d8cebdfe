"""Readings of a :class:`~kubedra.k8s.quantity.Quantity` that depend on its representation, as apimachinery makes
them: ``RoundUp`` (API defaulting rounds every pod and node ResourceList to milli-units with it) and
``AsApproximateFloat64`` (CEL ``asApproximateFloat()``)."""

from __future__ import annotations

import math

from kubedra.k8s.quantity import (
    _DEC_BY_EXP,
    _MAX_SIGNIFICANT_DIGITS,
    DEC,
    MAX_MODELLED_DIGITS,
    Quantity,
    _interpret,
    _keeps_text,
    _split,
    current_rules,
)


def _round_away(nanos: int, unit: int) -> int:
    magnitude = -(-abs(nanos) // unit) * unit
    return magnitude if nanos >= 0 else -magnitude


def round_up(q: Quantity, scale: int) -> Quantity:
    """``Quantity.RoundUp(scale)``: away from zero to a multiple of ``10**scale`` where the representation is finer
    (an int64Amount of a smaller scale, an inf.Dec of a smaller exponent), unchanged otherwise. API defaulting
    rounds every ResourceList of a pod and a node to milli-units so (pkg/apis/core/v1 defaults.go
    ``SetDefaults_ResourceList``, 1.36-1.38), before validation and before any scheduler reads it. Read a parsed
    value with :meth:`Quantity.at` first: the result has no ``source``."""
    unit = 10 ** (9 + scale)
    amount = q.amount()
    if amount is not None:
        return q if amount[1] >= scale else Quantity(_round_away(q.nanos, unit), q.format, scale)
    if q.exponent() >= scale:
        return q
    return Quantity(_round_away(q.nanos, unit), q.format, DEC, exp=scale)


_POW10 = [float(f"1e{i}") for i in range(32)]  # Go math pow10tab (float64 literals: nearest)
_POW10_POS32 = [float(f"1e{32 * i}") for i in range(10)]  # pow10postab32
_POW10_NEG32 = [float(f"1e-{32 * i}") for i in range(11)]  # pow10negtab32 (1e-320 is subnormal)


def _go_pow10(n: int) -> float:
    """Go's ``math.Pow10``: table products, not the float nearest 10**n."""
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10[n % 32]
    if -323 <= n < 0:
        return _POW10_NEG32[-n // 32] / _POW10[-n % 32]
    return math.inf if n > 0 else 0.0


def approximate_float(q: Quantity, since_138: bool | None = None) -> float:
    """``Quantity.AsApproximateFloat64()``: the representation's mantissa as a float64 times Go's ``math.Pow10`` of
    its exponent, two roundings (``0.3`` is ``3 * 0.1``, 0.30000000000000004). A zero mantissa with an exponent
    past 308 gives ``0 * Inf``, NaN, through v0.37; v0.38 (``since_138``; None: ``quantity_rules``) returns the
    zero (tests/conformance/quantity/approximate-float.yaml)."""
    amount = q.amount()
    if amount is not None:
        mantissa, exp = amount
    else:
        exp = q.exponent()
        mantissa = q.nanos // 10 ** (9 + exp)  # exact: an inf.Dec's exponent is at least -9 (1n)
    try:
        base = float(mantissa)  # big.Float.Float64 and float64(int64): nearest, ties to even
    except OverflowError:
        base = math.inf if mantissa > 0 else -math.inf
    rules = current_rules() if since_138 is None else since_138
    if exp == 0 or (rules and base == 0):
        return base
    return base * _go_pow10(exp)


def unmodelled_string(text: str, since_138: bool) -> str | None:
    """The ``String()`` ParseQuantity leaves for a text kubedra does not model (:class:`QuantityNotModelled`: past
    10^10000 or 4,000 digits), read from the digits and the exponent as text, nothing built from the exponent;
    None where that takes more than the text (v0.37's int32 scale wrap, or digits finer than 1n to round)."""
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    sign = "" if positive else "-"
    digits = (num + denom).lstrip("0")
    if not digits:
        return "0"
    if base == 2:  # more than 4,000 digits before a binary suffix: capped at 2^63-1, not a multiple of 1024
        return f"{sign}{(1 << 63) - 1}" if len(digits) > MAX_MODELLED_DIGITS else None
    scale = exponent - len(denom)
    fast = len(num) + len(denom) <= 18 + since_138 and scale >= -9 and int(num + denom) <= (1 << 63) - 1
    if fast and _keeps_text(num, denom, exponent, fmt, scale, since_138):
        return text
    if not fast and since_138 and len(digits) > _MAX_SIGNIFICANT_DIGITS:
        dropped = digits[_MAX_SIGNIFICANT_DIGITS:]
        kept = int(digits[:_MAX_SIGNIFICANT_DIGITS]) + (1 if dropped.strip("0") else 0)
        scale, digits = scale + len(dropped), str(kept)
    if scale < -9 and digits[scale + 9 :].strip("0"):
        return None  # v0.37 rounds the digits finer than 1n up: a carry through thousands of digits
    stripped = digits.rstrip("0")
    scale += len(digits) - len(stripped)
    shift = scale % 3
    amount, scale = stripped + "0" * shift, scale - shift
    if fmt == "DecimalSI" and scale in _DEC_BY_EXP:
        return f"{sign}{amount}{_DEC_BY_EXP[scale]}"
    if fmt == "DecimalExponent" or since_138:
        return f"{sign}{amount}e{scale}" if scale else f"{sign}{amount}"
    return f"{sign}{amount}"  # v0.37: no SI suffix past E, the exponent is dropped

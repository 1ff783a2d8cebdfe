"""Readings of a :class:`~kubedra.k8s.quantity.Quantity` that depend on its representation, as apimachinery makes
them: ``RoundUp`` (API defaulting rounds every pod and node ResourceList to milli-units with it) and
``AsApproximateFloat64`` (CEL ``asApproximateFloat()``)."""

from __future__ import annotations

import math

from kubedra.k8s.quantity import DEC, Quantity, current_rules


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

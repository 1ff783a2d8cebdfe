"""Go's int64 arithmetic as apimachinery's quantity code does it (wrapping products, ``big.Int.Int64``, v0.37's
``ScaledValue``), and exact integers to and from text past Python's 4,300-digit conversion limit (a quantity up to
10^10000 in nano-units: :data:`kubedra.k8s.quantity.MAX_MODELLED_ORDER`)."""

from __future__ import annotations

_MIN_INT64 = -(1 << 63)
_MAX_INT64 = (1 << 63) - 1
_CHUNK = 4000  # digits per str()/int() call, under sys.get_int_max_str_digits()'s default 4,300


def int_text(n: int) -> str:
    """``str(n)`` for any size, in 4,000-digit chunks (a 10,000-digit value takes three divisions)."""
    if -(10**_CHUNK) < n < 10**_CHUNK:
        return str(n)
    rest, parts, unit = abs(n), [], 10**_CHUNK
    while rest >= unit:
        rest, low = divmod(rest, unit)
        parts.append(str(low).zfill(_CHUNK))
    parts.append(str(rest))
    return ("-" if n < 0 else "") + "".join(reversed(parts))


def text_int(text: str) -> int:
    """``int(text)`` for any length of decimal digits (an optional ``-``), the inverse of :func:`int_text`."""
    sign, digits = (-1, text[1:]) if text.startswith("-") else (1, text)
    if len(digits) <= _CHUNK:
        return sign * int(digits)
    head = len(digits) % _CHUNK or _CHUNK
    value = int(digits[:head])
    for i in range(head, len(digits), _CHUNK):
        value = value * 10**_CHUNK + int(digits[i : i + _CHUNK])
    return sign * value


def _fits(v: int) -> bool:
    return _MIN_INT64 <= v <= _MAX_INT64


def wrap_int64(v: int) -> int:
    """``v`` as Go's int64 arithmetic leaves it (two's complement, 64 bits)."""
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


def _pow10(n: int) -> int:
    """``10**n`` for ``n`` >= 0, typed as an int."""
    return int(10**n)


_FACTOR_WRAPS = frozenset((1, 2, 3, 6, 9))  # v0.37 positiveScaleInt64's cases that return the wrapped product


def v037_int64_scaled(value: int, up: int) -> int:
    """v0.37 ``int64Amount.AsScaledInt64``'s value: ``value * 10**up`` (``up`` < 0: divided, away from zero)."""
    if up <= 0:
        q, fraction = divmod(abs(value), _pow10(-up))
        q += 1 if fraction else 0  # negativeScaleInt64
        return q if value >= 0 else -q
    if value == _MIN_INT64:
        return 0
    product = value * _pow10(up)
    if _fits(product):
        return product
    return wrap_int64(product) if up in _FACTOR_WRAPS else 0


def _big_int64(v: int) -> int:
    """Go's ``big.Int.Int64``: the low 64 bits of the magnitude, as an int64, with the sign applied."""
    low = wrap_int64(abs(v) % (1 << 64))
    return wrap_int64(-low) if v < 0 else low


def v037_dec_scaled(unscaled: int, dif: int) -> int:
    """v0.37 scale_int.go ``scaledValue``: ``unscaled`` (exponent ``-dif`` relative to the target scale)."""
    if dif == 0:
        return _big_int64(unscaled)
    if dif < 0:  # unscaled.Int64() * int64(math.Pow10(-dif)): 10**19 and up convert to MinInt64 (amd64)
        return wrap_int64(_big_int64(unscaled) * (_pow10(-dif) if -dif < 19 else _MIN_INT64))
    if unscaled < _MAX_INT64 and dif < 19:
        u = _big_int64(unscaled)
        divide = _pow10(dif)
        q = abs(u) // divide
        q = q if u >= 0 else -q  # Go's / truncates toward zero; the remainder takes the dividend's sign
        return q + 1 if u - q * divide else q
    q, r = divmod(unscaled, _pow10(dif))  # big.Int.DivMod: Euclidean, 0 <= r
    return wrap_int64(_big_int64(q) + (1 if r else 0))

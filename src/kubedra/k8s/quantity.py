"""Kubernetes ``resource.Quantity``, parsed and printed exactly like k8s.io/apimachinery.

The value is kept as an exact integer number of nano-units (``ParseQuantity`` rounds every value up, away
from zero, to a multiple of 1n, so nano-units are always exact), plus the format the quantity was written
in (``DecimalSI``, ``BinarySI`` or ``DecimalExponent``), which decides how it prints.

Upstream behaviours reproduced on purpose:
- ``"0"``, ``"."``, ``"-"`` and ``"+"`` all parse as zero; ``"1."`` is accepted. A number without digits is
  zero only on the fast path (``"Ki"``); on the ``inf.Dec`` path it is ErrNumeric (``"Pi"``, ``"e-10"``).
- Fractions finer than 1n round *up* in magnitude (``0.1n`` → ``1n``, ``-0.1n`` → ``-1n``).
- ``BinarySI`` values are capped at 2^63-1; a ``BinarySI`` value strictly between 0 and 1 prints as ``DecimalSI``.
- The internal representation is tracked as upstream keeps it, because ``AsInt64`` (CEL ``isInteger()`` /
  ``asInteger()``) answers from it, not from the value: ``ParseQuantity`` makes an ``int64Amount{value, scale}``
  only on its fast path (at most 18 digits, scale >= -9, no fraction on a binary suffix, small binary
  exponents) and an ``inf.Dec`` otherwise; ``AsInt64`` fails for every ``inf.Dec`` and every negative scale
  (``2000m``, ``1.0``, ``1.5Gi``, 19 digits are not integers). ``add``/``sub`` follow ``int64Amount.Add``
  (the smaller scale wins, overflow falls back to ``inf.Dec``, which stays ``inf.Dec``).
- Per release (``quantity.nineteenDigitInt64`` in data/versions.yaml, apimachinery v0.38.0-beta.0): from 1.38 the
  fast path takes 19 digits (maxInt64Factors 18 -> 19; -2^63 included), so ``"9223372036854775807"`` is an
  integer there, and the ``inf.Dec`` path keeps at most 29 significant digits (70 before a binary suffix),
  rounding the rest away from zero. :func:`quantity_rules` selects them for CEL's ``quantity()``;
  :meth:`Quantity.at` re-reads a parsed value (``source``) under them.
- ``add``/``sub`` per release (``quantity.boundedScaleGap``, apimachinery v0.38.0-beta.0 amount.go
  addDecBoundedScale): on the ``inf.Dec`` path, an operand more than 29 orders of magnitude finer than the other
  (base-10 exponents of their representations, ``maxScaleGap``) is first rounded away from zero to
  ``10**(coarser - 29)``, and the operands are re-read as the release parses them (:meth:`Quantity.at`); v0.37
  adds exactly. So the inf.Dec's exponent is tracked too (``exp``): v0.37 ParseQuantity rounds every inf.Dec to
  scale 9 (exponent -9), v0.38 keeps the digits' own exponent unless finer than 1n (``AsScale(Nano)``).
- ``String()`` is the canonical form: trailing zeros moved into a suffix whose exponent is a multiple of 3
  (``1500m`` → ``1500m``, ``1000m`` → ``1``, ``1024Mi`` → ``1Gi``, ``1.5Gi`` → ``1536Mi``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from kubedra.k8s.quantityint import v037_dec_scaled, v037_int64_scaled
from kubedra.sources import yamlscalars

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

NANO = 10**9
_MAX_INT64 = (1 << 63) - 1
_MAX_INT64_FACTORS = 18  # maxInt64Factors through v0.37; 19 from v0.38 (``since_138``)
_MAX_SIGNIFICANT_DIGITS = 29  # v0.38 maxSignificantDigits (DecimalSI, DecimalExponent)
_MAX_BINARY_SIGNIFICANT_DIGITS = 70  # v0.38 maxBinarySISignificantDigits
_SINCE_138: contextvars.ContextVar[bool] = contextvars.ContextVar("kubedra_quantity_since_138", default=False)


@contextlib.contextmanager
def quantity_rules(since_138: bool) -> Iterator[None]:
    """Within the block, :func:`current_rules` answers ``since_138`` (the apimachinery v0.38 ParseQuantity)."""
    token = _SINCE_138.set(since_138)
    try:
        yield
    finally:
        _SINCE_138.reset(token)


def current_rules() -> bool:
    """Whether the v0.38 ParseQuantity rules are selected (:func:`quantity_rules`); v0.37's otherwise."""
    return _SINCE_138.get()


ERR_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_NUMERIC = "unable to parse numeric part of quantity"

_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_BY_EXP = {v: k for k, v in _BIN_SUFFIXES.items()}
_DEC_BY_EXP = {v: k for k, v in _DEC_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


class QuantityError(ValueError):
    """The text is not a valid Kubernetes quantity; the message is upstream's."""


# Exact nano-unit integers grow with a value's order of magnitude, and Python converts them to and from text in
# quadratic time with a 4,300-digit cap, so "1e999999999" (which Go keeps as int64Amount{1, 999999999}) would never
# finish. Within these bounds every value is modelled exactly (about a millisecond for the largest); beyond them
# kubedra says it cannot check the value instead of hanging or calling it invalid. Values finer than 1n need no
# bound, they round up to 1n exactly as ParseQuantity does.
MAX_MODELLED_DIGITS = 4000
MAX_MODELLED_ORDER = 10000
_INT32 = 1 << 31


class QuantityNotModelled(QuantityError):
    """A quantity upstream may accept but kubedra does not model (its magnitude or digits are too large): not a
    verdict on the value, readers report that they cannot check it."""


def _split(s: str) -> tuple[bool, str, str, str]:
    """Port of apimachinery's parseQuantityString: (positive, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(s)
    if pos < end and s[0] in "+-":
        positive = s[0] != "-"
        pos += 1
    while pos < end and s[pos] == "0":  # strip leading zeros
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    num = s[start:pos] or "0"
    if pos >= end:
        return positive, num, "", ""
    denom = ""
    if s[pos] == ".":
        pos += 1
        start = pos
        while pos < end and s[pos] in _DIGITS:
            pos += 1
        denom = s[start:pos]
        if pos >= end:
            return positive, num, denom, ""
    suffix_start = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, s[suffix_start:end]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        rest = suffix[1:]
        body = rest[1:] if rest[:1] in ("+", "-") else rest
        if body and body.isdigit():
            exp = int(rest)
            if -(2**31) <= exp < 2**31:
                return 10, exp, "DecimalExponent"
    raise QuantityError(ERR_SUFFIX)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


_MIN_INT64 = -(1 << 63)
DEC: None = None  # Quantity.scale of an inf.Dec representation


def _fits(v: int) -> bool:
    return _MIN_INT64 <= v <= _MAX_INT64


_MAX_SCALE_GAP = 29  # v0.38 amount.go maxScaleGap


def _dec_exponent(num: str, denom: str, base: int, exponent: int, max_digits: int | None) -> int:
    """The base-10 exponent of the inf.Dec ParseQuantity builds from these digits (v0.38 decFromDigits, the
    suffix's exponent for a decimal suffix, then ``AsScale(Nano)``, which only rounds a finer one to -9)."""
    digits = (num + denom).lstrip("0") or "0"
    point = -len(denom)
    if max_digits is not None and len(digits) > max_digits:
        point += len(digits) - max_digits
    if base == 10:
        point += exponent
    return max(point, -9)


def _fast_path_scale(
    num: str, denom: str, exponent: int, fmt: Format, positive: bool, since_138: bool
) -> int | None:
    """The ``int64Amount`` scale ParseQuantity's fast path would use, or None when it makes an ``inf.Dec``.
    v0.38 parses the digits unsigned and also accepts 2^63 when negative (math.MinInt64)."""
    if fmt == "BinarySI":
        if exponent < 0 or denom:
            return None
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        scale = 0
        mantissa = 1 << exponent
    else:
        precision = _MAX_INT64_FACTORS + since_138 - (len(num) + len(denom))
        scale = exponent
        mantissa = 1
    if precision < 0:
        return None
    scale -= len(denom)
    if scale < -9:
        return None
    value = int(num + denom)
    if since_138 and not positive and value == _MAX_INT64 + 1:
        return scale  # the decimal mantissa is 1 here: -2^63 is math.MinInt64
    if not _fits(value * mantissa):
        return None
    return scale


def _bounded_digits(num: str, denom: str, max_digits: int) -> Fraction:
    """v0.38 decFromDigits: the magnitude of ``num.denom`` keeping ``max_digits`` significant digits, the rest
    rounded away from zero."""
    digits = (num + denom).lstrip("0") or "0"
    kept, dropped = digits[:max_digits], digits[max_digits:]
    mantissa = int(kept) + (1 if dropped.strip("0") else 0)
    return Fraction(mantissa * 10 ** len(dropped), 10 ** len(denom))


def _bounded_magnitude(
    text: str, num: str, denom: str, base: int, exponent: int, since_138: bool
) -> int | None:
    """1 (nano-unit) for a non-zero value far below 1n, which ParseQuantity rounds up to 1n whatever its digits
    (inf.RoundUp to scale 9; the inf.Dec path, exponent -9, at every release); None to parse it in full. Raises
    :class:`QuantityNotModelled` past :data:`MAX_MODELLED_DIGITS` digits or :data:`MAX_MODELLED_ORDER` orders of
    magnitude, and where v0.37's inf.Dec scale wraps (read arithmetically, nothing is built from the exponent)."""
    digits = (num + denom).lstrip("0")
    head = text if len(text) <= 40 else f"{text[:40]}..."
    if len(digits) > MAX_MODELLED_DIGITS:
        raise QuantityNotModelled(
            f"cannot check quantity {head!r}: {len(digits)} digits, kubedra models at most {MAX_MODELLED_DIGITS}"
        )
    if not digits or base != 10:  # a binary suffix's exponent is at most 60 (Ei)
        return None
    if not since_138 and len(denom) - exponent >= _INT32:
        # v0.37 amount.SetScale(amount.Scale() + Scale(exponent).infScale()) in int32: the scale wraps negative,
        # a value near 10^(2^31) that the apiserver then rounds to 1n by building it
        raise QuantityNotModelled(
            f"cannot check quantity {head!r}: through 1.37 its inf.Dec scale ({len(denom)} - ({exponent})) wraps "
            "int32, a value of about 2^31 digits"
        )
    order = len(digits) - len(denom) + exponent  # the value is below 10**order
    if order > MAX_MODELLED_ORDER:
        raise QuantityNotModelled(
            f"cannot check quantity {head!r}: about 10^{order}, kubedra models values up to 10^{MAX_MODELLED_ORDER}"
        )
    return 1 if order < -64 else None


@functools.lru_cache(maxsize=65536)
def _parse(text: str, since_138: bool = False) -> tuple[int, Format, int | None, int | None, bool]:
    """(nanos, format, int64Amount scale or DEC, inf.Dec exponent or None, whether String() keeps the text)."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return 0, "DecimalSI", 0, None, True
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    if since_138 and fmt == "DecimalExponent" and exponent == -(2**31):
        raise QuantityError(ERR_SUFFIX)  # v0.38: math.MinInt32 has no inf.Scale (canInfScale)
    tiny = _bounded_magnitude(text, num, denom, base, exponent, since_138)
    if tiny is not None:
        return (tiny if positive else -tiny), fmt, DEC, -9, False
    fast_scale = _fast_path_scale(num, denom, exponent, fmt, positive, since_138)
    # Fast path (int64Amount) exists upstream for speed; results are identical to the exact path except
    # for the BinarySI cap, which only applies to values that overflow int64 - handled below.
    if fast_scale is None and not any(c in _DIGITS for c in text[: len(text) - len(suffix)]):
        # The inf.Dec path needs a digit: v0.37's inf.Dec.SetString("-") fails ("no digits read"), v0.38 checks
        # defaultedNum first; both are ErrNumeric ("Pi", "-Ei", ".e-10"). The fast path reads "0" ("Ki", "-").
        raise QuantityError(ERR_NUMERIC)
    dec_exp = -9  # v0.37: amount.Round(amount, Nano.infScale(), inf.RoundUp)
    if fast_scale is None and since_138:
        bound = _MAX_BINARY_SIGNIFICANT_DIGITS if base == 2 else _MAX_SIGNIFICANT_DIGITS
        magnitude = _bounded_digits(num, denom, bound)
        dec_exp = _dec_exponent(num, denom, base, exponent, bound)
    else:
        magnitude = Fraction(int(num + denom or "0"), 10 ** len(denom))
    if not magnitude:
        pass  # zero stays zero at any exponent (no 10**2147483647 for "0e2147483647")
    elif base == 10:
        magnitude *= Fraction(10) ** exponent
    else:
        magnitude *= 2**exponent
    nanos = _ceil_div(magnitude.numerator * NANO, magnitude.denominator)  # round up to 1n
    if fmt == "BinarySI" and nanos > _MAX_INT64 * NANO:
        nanos = _MAX_INT64 * NANO
        dec_exp = 0  # amount.Set(maxAllowed.Dec): inf.NewDec(2^63-1, 0)
    if fast_scale is not None:
        kept = _keeps_text(num, denom, exponent, fmt, fast_scale, since_138)
        return (nanos if positive else -nanos), fmt, fast_scale, None, kept
    if fmt == "BinarySI" and 0 < nanos < NANO:
        fmt = "DecimalSI"
    return (nanos if positive else -nanos), fmt, DEC, dec_exp, False


def _keeps_text(num: str, denom: str, exponent: int, fmt: Format, scale: int, since_138: bool) -> bool:
    """Whether ParseQuantity's fast path caches the input text as the quantity's ``String()`` ("if the number is
    in canonical form, reuse the string"): a decimal whose scale is a multiple of 3 and whose digits neither start
    with 0 nor end in 000, a binary one whose digits are no multiple of 8. The text is kept as written, sign,
    decimal point and leading zeros included (``123.456e9000``, ``+1.5k``, ``05Gi``). v0.38 recanonicalizes the
    19-digit values its fast path newly takes (``forceRecanonicalize``)."""
    if fmt == "BinarySI":
        return exponent % 10 == 0 and int(num) & 7 != 0
    if since_138 and len(num) + len(denom) > _MAX_INT64_FACTORS:
        return False
    shifted = num + denom
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def _strip_factors(value: int, base: int) -> tuple[int, int]:
    """``value`` without its factors of ``base``, and how many came off: powers ``base**(2**k)`` first, so a
    10^10000 takes about 30 divisions instead of 10,000."""
    if value == 0:
        return 0, 0
    times = 0
    powers = [(base, 1)]
    while value % powers[-1][0] == 0:
        value //= powers[-1][0]
        times += powers[-1][1]
        powers.append((powers[-1][0] ** 2, powers[-1][1] * 2))
    for power, count in reversed(powers[:-1]):
        if value % power == 0:
            value //= power
            times += count
    return value, times


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact Kubernetes quantity. Compare, add and subtract like ``resource.Quantity``."""

    nanos: int
    format: Format = "DecimalSI"
    # Upstream's representation: int64Amount{nanos / 10**(9+scale), scale}, or inf.Dec when None (DEC).
    # Not part of the value (equality, hashing, ordering ignore it).
    scale: int | None = -9
    # The text this value was parsed from (None when computed), so :meth:`at` can re-read it at 1.38.
    source: str | None = field(default=None, compare=False)
    # The base-10 exponent of the inf.Dec representation (scale DEC); None: -9, as v0.37 ParseQuantity leaves it.
    exp: int | None = field(default=None, compare=False)
    # Whether ParseQuantity cached ``source`` as String() (:func:`_keeps_text`): canonical() returns it verbatim.
    kept: bool = field(default=False, compare=False)

    # ----------------------------------------------------------------- construction
    @staticmethod
    def parse(text: str, since_138: bool | None = None) -> Quantity:
        """Parse like ``resource.ParseQuantity`` (v0.37's, or v0.38's when ``since_138``; None: the rules of
        :func:`quantity_rules`); raises :class:`QuantityError` with upstream's message."""
        if not isinstance(text, str):
            raise QuantityError(ERR_FORMAT_WRONG)
        rules = current_rules() if since_138 is None else since_138
        nanos, fmt, scale, exp, kept = _parse(text, rules)
        return Quantity(nanos, fmt, scale, text, exp, kept)

    def at(self, since_138: bool) -> Quantity:
        """This quantity as the apimachinery of a release would hold it: a parsed one re-read under v0.38's
        rules when ``since_138`` (value and representation may differ), unchanged otherwise."""
        if self.source is None:
            return self
        return Quantity.parse(self.source, since_138)

    @staticmethod
    def from_int(value: int, fmt: Format = "DecimalSI") -> Quantity:
        return Quantity(value * NANO, fmt, 0 if _fits(value) else DEC)

    # ----------------------------------------------------------------- values
    @property
    def exact(self) -> Fraction:
        return Fraction(self.nanos, NANO)

    def value(self) -> int:
        """``Quantity.Value()``: ceil of the value in units (rounds up, like upstream's ScaledValue(0))."""
        return _ceil_div(self.nanos, NANO)

    def milli_value(self) -> int:
        return _ceil_div(self.nanos, NANO // 1000)

    def scaled_value(self, scale: int, since_138: bool | None = None) -> int:
        """``Quantity.ScaledValue(scale)`` as the int64 a release's apimachinery returns (``Value()`` is scale 0,
        ``MilliValue()`` -3), for this representation (read it first with :meth:`at` for 1.38's parse).

        v0.38 (``since_138``; None: :func:`quantity_rules`) rounds away from zero and saturates at the int64
        bounds (scale_int.go ``bigToInt64Saturated``, amount.go ``AsScaledInt64``). v0.37 and v0.36 (the same
        code) return what their int64 arithmetic leaves: a scale-up past int64 wraps (``int64MultiplyScale*``
        for a factor of 10, 100, 1000, 10^6 or 10^9) or reads 0 (any other factor), and an ``inf.Dec`` keeps the
        low 64 bits of its quotient (``big.Int.Int64``), rounding up, not away from zero, on the int64 path.
        """
        rules = current_rules() if since_138 is None else since_138
        if rules:
            exact = Fraction(self.nanos) / Fraction(10) ** (9 + scale)
            magnitude = _ceil_div(abs(exact.numerator), exact.denominator)
            return max(_MIN_INT64, min(_MAX_INT64, magnitude if exact >= 0 else -magnitude))
        amount = self.amount()
        if amount is not None:
            return v037_int64_scaled(amount[0], amount[1] - scale)
        exp = self.exponent()
        unscaled = self.nanos // 10 ** (9 + exp)  # exact: an inf.Dec's exponent is at least -9 (1n)
        return v037_dec_scaled(unscaled, scale - exp)

    def is_integer(self) -> bool:
        """Mathematically an integer (not upstream's ``AsInt64``, see :meth:`as_int64`)."""
        return self.nanos % NANO == 0

    def amount(self) -> tuple[int, int] | None:
        """``(value, scale)`` of the ``int64Amount`` representation, or None for an ``inf.Dec``."""
        if self.scale is None or self.scale < -9:
            return None
        unit = 10 ** (9 + self.scale)
        if self.nanos % unit:
            return None
        value = self.nanos // unit
        return (value, self.scale) if _fits(value) else None

    def as_int64(self) -> int | None:
        """``Quantity.AsInt64``: None for an ``inf.Dec``, a negative scale or an int64 overflow."""
        amount = self.amount()
        if amount is None or amount[1] < 0:
            return None
        value = amount[0] * 10 ** amount[1]
        return value if _fits(value) else None

    def exponent(self) -> int:
        """The base-10 exponent of this value as an ``inf.Dec`` (``Quantity.ToDec``/``AsDec``): the
        int64Amount's scale, or the inf.Dec's own exponent."""
        amount = self.amount()
        if amount is not None:
            return amount[1]
        if self.scale is not None and self.scale >= -9 and self.nanos % 10 ** (9 + self.scale) == 0:
            return self.scale  # an int64Amount scale whose value overflowed int64: ToDec keeps the scale
        return -9 if self.exp is None else self.exp

    def sign(self) -> int:
        return (self.nanos > 0) - (self.nanos < 0)

    def is_zero(self) -> bool:
        return self.nanos == 0

    # ----------------------------------------------------------------- arithmetic
    def add(self, other: Quantity) -> Quantity:
        """``Quantity.Add`` of the release :func:`quantity_rules` selects (operands re-read as it parses them)."""
        return self._combine(other, 1)

    def sub(self, other: Quantity) -> Quantity:
        """``Quantity.Sub`` of the release :func:`quantity_rules` selects."""
        return self._combine(other, -1)

    def _combine(self, other: Quantity, sign: int) -> Quantity:
        since_138 = current_rules()
        a, b = (self.at(True), other.at(True)) if since_138 else (self, other)
        fmt = b.format if a.nanos == 0 else a.format
        x, y = a.amount(), b.amount()
        if x is not None and y is not None and not (since_138 and sign < 0 and y[0] == _MIN_INT64):
            # int64Amount.Add (Sub adds the negation; v0.38 sends -math.MinInt64 to the inf.Dec path)
            scale = _sum_scale(x, (sign * y[0], y[1]))
            if scale is not DEC:
                return Quantity(a.nanos + sign * b.nanos, fmt, scale)
        if b.nanos == 0:
            return Quantity(a.nanos, fmt, DEC, exp=a.exponent())
        if a.nanos == 0:
            return Quantity(sign * b.nanos, fmt, DEC, exp=b.exponent())
        ea, eb = a.exponent(), b.exponent()
        an, bn = a.nanos, b.nanos
        if since_138:  # boundScaleGap: the finer operand rounded away from zero to 10**(coarser - 29)
            if ea - eb > _MAX_SCALE_GAP:
                eb = ea - _MAX_SCALE_GAP
                bn = _round_away(bn, 10 ** (eb + 9))
            elif eb - ea > _MAX_SCALE_GAP:
                ea = eb - _MAX_SCALE_GAP
                an = _round_away(an, 10 ** (ea + 9))
        return Quantity(an + sign * bn, fmt, DEC, exp=min(ea, eb))

    def cmp(self, other: Quantity) -> int:
        return (self.nanos > other.nanos) - (self.nanos < other.nanos)

    def __lt__(self, other: Quantity) -> bool:
        return self.nanos < other.nanos

    def __le__(self, other: Quantity) -> bool:
        return self.nanos <= other.nanos

    def __gt__(self, other: Quantity) -> bool:
        return self.nanos > other.nanos

    def __ge__(self, other: Quantity) -> bool:
        return self.nanos >= other.nanos

    def __eq__(self, other: object) -> bool:  # equality is by value, like Quantity.Equal / Cmp == 0
        return isinstance(other, Quantity) and self.nanos == other.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    # ----------------------------------------------------------------- printing
    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({self.canonical()!r})"

    def canonical(self) -> str:
        """``Quantity.String()`` (v0.38's under :func:`quantity_rules`: a DecimalSI exponent above 18 is
        written ``e``, where v0.37 wrote the mantissa alone, ``1e21`` -> ``"1"``). A text ParseQuantity cached
        (:func:`_keeps_text`) is returned as written, as upstream's String() and the apiserver's JSON do."""
        if self.kept and self.source is not None:
            return self.source
        if self.nanos == 0:
            return "0"
        fmt = self.format
        if fmt == "BinarySI" and (-1024 * NANO < self.nanos < 1024 * NANO or self.nanos % NANO):
            fmt = "DecimalSI"  # avoids rounding, like upstream
        if fmt == "BinarySI":
            if self.nanos == -(2**63) * NANO and self.scale is not None:
                # int64Amount MinInt64: removeInt64Factors (math.go) cannot negate it, so no factor comes off
                return str(-(2**63))
            amount, times = _strip_factors(self.nanos // NANO, 1024)
            return f"{amount}{_BIN_BY_EXP.get(times * 10, '')}"
        amount, times = _strip_factors(self.nanos, 10)
        exponent = times - 9
        while exponent % 3:
            amount *= 10
            exponent -= 1
        if fmt == "DecimalExponent":
            return f"{amount}" if exponent == 0 else f"{amount}e{exponent}"
        if exponent not in _DEC_BY_EXP and current_rules():
            return f"{amount}e{exponent}"  # v0.38: no SI suffix above E, so "e" (v0.37 dropped the exponent)
        return f"{amount}{_DEC_BY_EXP.get(exponent, '')}"


def _round_away(nanos: int, unit: int) -> int:
    """``nanos`` rounded away from zero to a multiple of ``unit`` (inf.RoundUp)."""
    magnitude = _ceil_div(abs(nanos), unit) * unit
    return magnitude if nanos >= 0 else -magnitude


def _sum_scale(a: tuple[int, int] | None, b: tuple[int, int] | None) -> int | None:
    """The scale ``int64Amount.Add`` leaves (None: it overflowed or an operand is an inf.Dec)."""
    if a is None or b is None:
        return DEC
    (av, ascale), (bv, bscale) = a, b
    if bv == 0:
        return ascale
    if av == 0:
        return bscale
    if ascale == bscale:
        return ascale if _fits(av + bv) else DEC
    if ascale > bscale:
        scaled = av * 10 ** (ascale - bscale)
        return bscale if _fits(scaled) and _fits(scaled + bv) else DEC
    scaled = bv * 10 ** (bscale - ascale)
    return ascale if _fits(scaled) and _fits(av + scaled) else DEC


INT_PAST_INT64 = (
    "an unquoted integer past int64 ({}): kubectl sends it as a float64 ({}, sigs.k8s.io/json on the way to "
    "its unstructured object), a client posting the YAML as it is keeps every digit; quote it to say which"
)


def parse_quantity(text: object) -> Quantity:
    """A manifest value (string or number, as YAML gives it) by v0.37's rules whatever :func:`quantity_rules`
    says (:meth:`Quantity.at` gives a release's view). A number is the JSON text kubectl sends (UnmarshalJSON):
    an int's digits, a float as encoding/json writes it (``go_json_float``: unquoted ``1e20`` is the inf.Dec
    ``100000000000000000000``, not ``"1e20"``'s int64Amount{1, 20}); an int past int64 depends on the client."""
    if isinstance(text, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(text, int):
        if not -_MAX_INT64 - 1 <= text <= _MAX_INT64:
            raise QuantityNotModelled(INT_PAST_INT64.format(text, yamlscalars.go_json_float(float(text))))
        return Quantity.parse(str(text), False)  # a JSON number: UnmarshalJSON parses its text
    if isinstance(text, float):
        text = yamlscalars.go_json_float(text, QuantityError(ERR_FORMAT_WRONG))
    if not isinstance(text, str):
        raise QuantityError(ERR_FORMAT_WRONG)
    return Quantity.parse(text, False)

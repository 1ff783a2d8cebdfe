"""Consumable capacity (DRAConsumableCapacity): how much of a device's capacity a request consumes.

Follows upstream ``consumable_capacity.go`` (k8s.io/dynamic-resource-allocation v0.37):

- a request naming a capacity the device does not have makes the device unsuitable (no error);
- for every capacity of the device, the consumed amount is the request rounded up per ``requestPolicy``
  (validRange: below min → min, then ``min + ceil((req − min)/step)·step`` in integer units, or milli units
  with DRAFractionalCapacityRange when min/max/step are all milli-representable; the result keeps the
  step's format; validValues: the smallest valid value ≥ the request), or without a request the policy's
  default, else the whole capacity;
- a negative consumed amount, or a rounding that leaves int64, is an error (aborts the allocation); before
  1.37 (``allocator.capacityArithmeticChecked`` in data/versions.yaml: v0.34-v0.36) neither is checked: the int64
  arithmetic wraps, the rounded value is ``BinarySI`` whatever the step's format, and a negative amount is summed
  like any other (``checked=False`` below);
- the device fits when already-consumed + being-allocated + consumed ≤ capacity for every name and no
  consumed amount violates the policy.

Quantities follow the target release's apimachinery (``quantity.nineteenDigitInt64`` in data/versions.yaml,
selected by :func:`kubedra.k8s.quantity.quantity_rules` around the search): each value is read as that release
parses it (1.38 keeps 29 significant digits) and the totals are summed in upstream's order (already consumed,
plus this request's amount, plus what this attempt is allocating), where 1.38's ``Add`` rounds an operand more
than 29 orders of magnitude finer than the other. The integer path reads step, min and the request with the
release's ``Quantity.Value()`` (:meth:`~kubedra.k8s.quantity.Quantity.scaled_value`): 1.38 saturates past
int64, 1.36/1.37 wrap (a step of 2^64 + 1 reads 1), and Go's int64 arithmetic wraps after it; a step that reads
0 makes upstream divide by zero, which kubedra reports as an error it cannot model.

Upstream compares a consumed amount with the policy default by Go struct equality (value *and*
representation); kubedra compares value and format, which only differs for defaults written in a
non-canonical form.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubedra.k8s.quantity import NANO, Quantity, current_rules
from kubedra.k8s.quantityint import wrap_int64
from kubedra.model.objects import CapacityRequestPolicy, CapacityRequestPolicyRange, DeviceCapacity

Consumed = dict[str, Quantity]
MAX_INT64 = (1 << 63) - 1
NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"


class CapacityError(Exception):
    """Upstream returns an error here: the whole allocation attempt fails."""


def _r(q: Quantity) -> Quantity:
    """``q`` as the selected release's ParseQuantity reads it (:meth:`Quantity.at`)."""
    return q.at(True) if current_rules() else q


def _go_div(a: int, b: int) -> int:
    """Go int64 division: truncates toward zero (MinInt64 / -1 wraps to MinInt64)."""
    q = abs(a) // abs(b)
    return wrap_int64(q if (a >= 0) == (b >= 0) else -q)


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_div(a, b)


def _milli(q: Quantity) -> int | None:
    """upstream ``safeMilliValue``: the value in milli units if exactly representable (``MilliValue`` is an
    int64: a value past it does not read back, whether the release wraps or saturates it)."""
    q = _r(q)
    if q.nanos % (NANO // 1000):
        return None
    milli = q.nanos // (NANO // 1000)
    return milli if -MAX_INT64 - 1 <= milli <= MAX_INT64 else None


def _use_milli(rng: CapacityRequestPolicyRange, fractional: bool) -> bool:
    if not fractional:
        return False
    for i, q in enumerate((rng.min, rng.max, rng.step)):
        if q is None:
            continue
        m = _milli(q)
        if m is None:
            return False
        if i == 2 and m < 1:
            return False
    return True


def _round_up_range(
    req: Quantity, rng: CapacityRequestPolicyRange, fractional: bool, checked: bool = True
) -> Quantity:
    if req < _r(rng.min):
        return _r(rng.min)
    if rng.step is None:
        return req
    if (
        not checked
    ):  # v0.36.6 consumable_capacity.go roundUpRange: no bound checks, NewQuantity(val, BinarySI)
        requested, step, lo = _int_reads(req, rng)
        added = wrap_int64(requested - lo)
        n = wrap_int64(_go_div(added, step) + (1 if _go_mod(added, step) else 0))
        return Quantity.from_int(wrap_int64(lo + wrap_int64(step * n)), "BinarySI")
    fmt = rng.step.format
    if _use_milli(rng, fractional):
        rm = _milli(req)
        if rm is None:
            raise CapacityError(f"{NOT_REPRESENTABLE}: request {req} is not a representable milli value")
        step = _r(rng.step).milli_value()
        lo = _r(rng.min).milli_value()
        added = rm - lo
        n = _go_div(added, step) + (1 if _go_mod(added, step) else 0)
        if n > _go_div(MAX_INT64 - lo, step):
            raise CapacityError(
                f"{NOT_REPRESENTABLE}: rounding request {req} up to the next step passes the milli-value range"
            )
        value = lo + step * n
        if value % 1000 == 0:
            return Quantity.from_int(value // 1000, fmt)  # resource.NewQuantity: int64Amount{v, 0}
        return Quantity(value * (NANO // 1000), fmt, -3)  # resource.NewMilliQuantity: int64Amount{v, -3}
    if req.nanos > MAX_INT64 * NANO:
        raise CapacityError(f"{NOT_REPRESENTABLE}: request {req} exceeds MaxInt64")
    requested, step, lo = _int_reads(req, rng)
    added = wrap_int64(requested - lo)
    n = wrap_int64(_go_div(added, step) + (1 if _go_mod(added, step) else 0))
    if lo >= 0 and n > _go_div(wrap_int64(MAX_INT64 - lo), step):
        raise CapacityError(
            f"{NOT_REPRESENTABLE}: rounding request {req} up to the next step passes MaxInt64"
        )
    return Quantity.from_int(wrap_int64(lo + step * n), fmt)


def _int_reads(value: Quantity, rng: CapacityRequestPolicyRange) -> tuple[int, int, int]:
    """``value.Value()``, ``step.Value()``, ``min.Value()`` as the release's apimachinery reads them (1.38
    saturates past int64, 1.36/1.37 wrap: :meth:`Quantity.scaled_value`). A step that reads 0 (1.36/1.37: a
    multiple of 2^64, or a value of 10^19 and up written with a scale that is not 1, 2, 3, 6 or 9 below it) makes
    upstream divide by zero, a panic in kube-scheduler rather than an answer: kubedra says so instead."""
    assert rng.step is not None
    step = _r(rng.step).scaled_value(0)
    if step == 0:
        raise CapacityError(
            f"step {rng.step} reads as 0 with Quantity.Value() at this release (it wraps past int64): "
            "kube-scheduler divides by zero here (a panic, not an allocation result); kubedra cannot model it"
        )
    return value.scaled_value(0), step, _r(rng.min).scaled_value(0)


def _round_up_values(req: Quantity, values: list[Quantity]) -> Quantity:
    for v in values:
        if req <= _r(v):
            return _r(v)
    return req


def consumed_amount(
    requested: Quantity | None, cap: DeviceCapacity, fractional: bool = False, checked: bool = True
) -> Quantity:
    """upstream ``calculateConsumedCapacity``; raises :class:`CapacityError` (``checked=False``: only where
    upstream divides by zero)."""
    if requested is None:
        if cap.request_policy is not None and cap.request_policy.default is not None:
            return _r(cap.request_policy.default)
        return _r(cap.value)
    requested = _r(requested)
    pol = cap.request_policy
    if pol is None:
        return requested
    if pol.valid_range is not None:
        return _round_up_range(requested, pol.valid_range, fractional, checked)
    if pol.valid_values is not None:
        return _round_up_values(requested, pol.valid_values)
    return requested


def violates_policy(value: Quantity, pol: CapacityRequestPolicy | None, fractional: bool = False) -> bool:
    if pol is None:
        return False
    if pol.default is not None and value == _r(pol.default) and value.format == pol.default.format:
        return False
    if pol.valid_range is not None:
        rng = pol.valid_range
        if rng.max is not None and value > _r(rng.max):
            return True
        if rng.step is not None:
            if _use_milli(rng, fractional):
                requested = _milli(value)
                if requested is None:
                    return True
                step = _r(rng.step).milli_value()
                lo = _r(rng.min).milli_value()
            else:
                requested, step, lo = _int_reads(value, rng)
            if _go_mod(wrap_int64(requested - lo), step) != 0:
                return True
        return False
    if pol.valid_values:
        return not any(value == _r(v) for v in pol.valid_values)
    return False


def fits(
    current: Mapping[str, Quantity] | None,
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, DeviceCapacity],
    allocating: Mapping[str, Quantity] | None,
    fractional: bool = False,
    checked: bool = True,
) -> bool:
    """upstream ``CmpRequestOverCapacity``; raises :class:`CapacityError` like upstream's error return.
    ``checked=False`` is v0.34-v0.36's (allocator.capacityArithmeticChecked): each capacity in turn is rounded,
    checked against its policy and summed, with no error of its own."""
    if requests:
        for name in requests:
            if name not in capacity:
                return False
    if not checked:
        return _fits_unchecked(current, requests, capacity, allocating)
    consumed: dict[str, Quantity] = {}
    for name, cap in capacity.items():
        try:
            amount = consumed_amount(requests.get(name) if requests else None, cap, fractional)
        except CapacityError as e:
            raise CapacityError(f'capacity "{name}": {e}') from None
        if amount.nanos < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
        consumed[name] = amount
    for name, cap in capacity.items():
        amount = consumed[name]
        if violates_policy(amount, cap.request_policy, fractional):
            return False
        if _over(current, allocating, name, amount, cap):
            return False
    return True


def _over(
    current: Mapping[str, Quantity] | None,
    allocating: Mapping[str, Quantity] | None,
    name: str,
    amount: Quantity,
    cap: DeviceCapacity,
) -> bool:
    """Whether what is consumed of capacity ``name``, plus ``amount`` and what the attempt is allocating, exceeds
    it (clone := current.Clone(); clone[name].Add(consumed), or consumed alone; .Add(allocating); Cmp)."""
    total = current[name].add(amount) if current and name in current else amount
    if allocating and name in allocating:
        total = total.add(allocating[name])
    return total > _r(cap.value)


def _fits_unchecked(
    current: Mapping[str, Quantity] | None,
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, DeviceCapacity],
    allocating: Mapping[str, Quantity] | None,
) -> bool:
    """:func:`fits` of v0.34-v0.36 (consumable_capacity.go CmpRequestOverCapacity at v0.36.6): each capacity in
    turn is rounded, checked against its policy and summed; the only error is upstream's division by zero."""
    for name, cap in capacity.items():
        try:
            amount = consumed_amount(requests.get(name) if requests else None, cap, checked=False)
        except CapacityError as e:
            raise CapacityError(f'capacity "{name}": {e}') from None
        if violates_policy(amount, cap.request_policy):
            return False
        if _over(current, allocating, name, amount, cap):
            return False
    return True


def consumed_from_request(
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, DeviceCapacity],
    fractional: bool = False,
    checked: bool = True,
) -> Consumed:
    """upstream ``GetConsumedCapacityFromRequest``: consumed amount for every capacity of the device."""
    out: Consumed = {}
    for name, cap in capacity.items():
        try:
            out[name] = consumed_amount(requests.get(name) if requests else None, cap, fractional, checked)
        except CapacityError as e:
            raise CapacityError(f'capacity "{name}": {e}') from None
    return out

"""Consumable capacity (DRAConsumableCapacity): how much of a device's capacity a request consumes.

Follows upstream ``consumable_capacity.go``: a request naming a capacity the device lacks skips the device;
for every device capacity the consumed amount is the request rounded up per ``requestPolicy`` (validRange:
below min → min, then ``min + ceil((req-min)/step)*step`` in integer units, result in BinarySI; validValues:
the smallest valid value ≥ the request), or without a request the policy default, else the whole capacity.
The device fits when already-consumed + being-allocated + consumed ≤ capacity for every capacity name.

Upstream compares the policy default with Go struct equality (value *and* representation); kubedra compares
value and format, which only differs for defaults written in a non-canonical form.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubedra.model.objects import CapacityRequestPolicy, CapacityRequestPolicyRange, DeviceCapacity
from kubedra.model.quantity import Quantity

Consumed = dict[str, Quantity]


class UndefinedCapacity(Exception):
    """The request names a capacity the device does not have (the device is skipped)."""


def _round_up_range(req: Quantity, rng: CapacityRequestPolicyRange) -> Quantity:
    if req < rng.min:
        return rng.min
    if rng.step is None:
        return req
    requested = req.value()
    step = rng.step.value()
    lo = rng.min.value()
    added = requested - lo
    n = _go_div(added, step)
    if _go_mod(added, step) != 0:
        n += 1
    return Quantity.from_int(lo + step * n, "BinarySI")


def _go_div(a: int, b: int) -> int:
    """Go integer division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_div(a, b)


def _round_up_values(req: Quantity, values: list[Quantity]) -> Quantity:
    for v in values:
        if req <= v:
            return v
    return req


def consumed_amount(requested: Quantity | None, cap: DeviceCapacity) -> Quantity:
    """upstream ``calculateConsumedCapacity``."""
    if requested is None:
        if cap.request_policy is not None and cap.request_policy.default is not None:
            return cap.request_policy.default
        return cap.value
    pol = cap.request_policy
    if pol is None:
        return requested
    if pol.valid_range is not None:
        return _round_up_range(requested, pol.valid_range)
    if pol.valid_values is not None:
        return _round_up_values(requested, pol.valid_values)
    return requested


def violates_policy(value: Quantity, pol: CapacityRequestPolicy | None) -> bool:
    if pol is None:
        return False
    if pol.default is not None and value == pol.default and value.format == pol.default.format:
        return False
    if pol.valid_range is not None:
        rng = pol.valid_range
        if rng.max is not None and value > rng.max:
            return True
        if rng.step is not None:
            step = rng.step.value()
            if step != 0 and _go_mod(value.value() - rng.min.value(), step) != 0:
                return True
        return False
    if pol.valid_values:
        return not any(value == v for v in pol.valid_values)
    return False


def fits(
    current: Mapping[str, Quantity] | None,
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, DeviceCapacity],
    allocating: Mapping[str, Quantity] | None,
) -> bool:
    """upstream ``CmpRequestOverCapacity``; raises :class:`UndefinedCapacity` for unknown names."""
    if requests:
        for name in requests:
            if name not in capacity:
                raise UndefinedCapacity(name)
    for name, cap in capacity.items():
        req = requests.get(name) if requests else None
        amount = consumed_amount(req, cap)
        if violates_policy(amount, cap.request_policy):
            return False
        total = amount.nanos
        if current and name in current:
            total += current[name].nanos
        if allocating and name in allocating:
            total += allocating[name].nanos
        if total > cap.value.nanos:
            return False
    return True


def consumed_from_request(
    requests: Mapping[str, Quantity] | None, capacity: Mapping[str, DeviceCapacity]
) -> Consumed:
    """upstream ``GetConsumedCapacityFromRequest``: consumed amount for every capacity of the device."""
    return {
        name: consumed_amount(requests.get(name) if requests else None, cap) for name, cap in capacity.items()
    }

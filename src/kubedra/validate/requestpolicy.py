"""The apiserver's rules for a consumable capacity's ``requestPolicy`` in a ResourceSlice, per release.

Source: kubernetes ``pkg/apis/resource/validation/validation.go`` ``validateRequestPolicy`` and what it calls, read
at v1.34.4, v1.35.4, v1.36.3 (one code), v1.37.2 and v1.38.0-beta.0 (one code), and
``CapacityRequestPolicyDiscreteMaxOptions`` (10) in ``pkg/apis/resource/types.go``. The two codes differ where
``data/versions.yaml`` ``dra.requestPolicyRangeGuards`` says; v1.37's fractional path is on with the
``DRAFractionalCapacityRange`` gate (``data/feature-gates.yaml``: off by default at 1.37, on at 1.38). At 1.34
and 1.35 ``DRAConsumableCapacity`` is off by default and the apiserver drops the whole ``requestPolicy`` before it
validates (``data/dropped-fields.yaml``), so these rules only run where the gate is on.

Quantities are read as the release's apimachinery reads them (``Value()``/``MilliValue()`` wrap past int64
through v0.37, saturate from v0.38: :meth:`kubedra.k8s.quantity.Quantity.scaled_value`). The one input the
apiserver itself fails on, a step whose ``Value()`` is 0 through 1.36 (an integer division by zero, which the
apiserver answers with an internal error, not a field error), is reported as that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubedra.k8s.featuregates import gate_info
from kubedra.k8s.quantity import NANO, Quantity, parse_quantity, quantity_rules
from kubedra.k8s.quantityint import int_text, wrap_int64
from kubedra.k8s.versions import Version, holds

MAX_OPTIONS = 10  # pkg/apis/resource/types.go CapacityRequestPolicyDiscreteMaxOptions
_MAX_INT64 = (1 << 63) - 1
GUARDS = "dra.requestPolicyRangeGuards"
FRACTIONAL_GATE = "DRAFractionalCapacityRange"

Path = tuple[str | int, ...]
Found = list[tuple[Path, str]]


def _gate_on(gate: str, release: Version) -> bool:
    return bool((gate_info(gate, release) or {}).get("default"))


def request_policy_issues(
    path: Path,
    capacity_value: Any,
    policy: Mapping[str, Any],
    release: Version,
    quantity: Callable[[Any], str | None],
) -> Found:
    """(path, message) for each error the release's apiserver finds in ``policy`` (at ``path``), the capacity's
    ``value`` being ``capacity_value``. A malformed quantity is reported as such and nothing else is checked."""
    values = policy.get("validValues")
    values = list(values) if isinstance(values, Sequence) and not isinstance(values, str) else []
    rng = policy.get("validRange")
    rng = rng if isinstance(rng, Mapping) else None
    fields: list[tuple[Path, Any]] = [((*path, "default"), policy.get("default"))]
    fields += [((*path, "validValues", i), v) for i, v in enumerate(values)]
    if rng is not None:
        fields += [((*path, "validRange", k), rng.get(k)) for k in ("min", "max", "step")]
    bad = [(p, e) for p, v in fields if v is not None and (e := quantity(v))]
    if bad or quantity(capacity_value):
        return bad  # the apiserver refuses the object when it decodes it (the capacity's value is checked beside)
    since_138 = holds("quantity.nineteenDigitInt64", release)  # v0.38's ParseQuantity and ScaledValue
    with quantity_rules(since_138):
        return _Policy(path, release, since_138, _q(capacity_value, since_138)).check(policy, values, rng)


def _q(v: Any, since_138: bool) -> Quantity:
    return parse_quantity(v).at(since_138)


class _Policy:
    def __init__(self, path: Path, release: Version, since_138: bool, capacity: Quantity) -> None:
        self.path = path
        self.release = release
        self.since_138 = since_138
        self.capacity = capacity
        self.guards = holds(GUARDS, release)
        self.fractional = self.guards and _gate_on(FRACTIONAL_GATE, release)
        self.found: Found = []

    def err(self, path: Path, message: str) -> None:
        self.found.append((path, message))

    def value(self, q: Quantity, milli: bool = False) -> int:
        return q.scaled_value(-3 if milli else 0, self.since_138)

    def check(self, policy: Mapping[str, Any], values: list[Any], rng: Mapping[str, Any] | None) -> Found:
        default = policy.get("default")
        if values and rng is not None:
            self.err(
                self.path, 'exactly one policy can be specified, not both "validValues" and "validRange"'
            )
        elif values or rng is not None:
            which = "validValues" if values else "validRange"
            if default is None:
                self.err((*self.path, "default"), f"required when {which} is defined")
            elif values:
                self.valid_values(_q(default, self.since_138), [_q(v, self.since_138) for v in values])
            elif rng is not None:
                self.valid_range(_q(default, self.since_138), rng)
        return self.found

    def valid_values(self, default: Quantity, values: list[Quantity]) -> None:
        p: Path = (*self.path, "validValues")
        for i in range(len(values) - 1):
            if values[i] > values[i + 1]:
                self.err((*p, i + 1), f"{values[i + 1]}: values must be sorted in ascending order")
        found = False
        if len(values) > MAX_OPTIONS:  # validateSet: the size check short-circuits the items
            self.err(p, f"must have at most {MAX_OPTIONS} items, has {len(values)}")
        else:
            seen: set[str] = set()
            for i, v in enumerate(values):
                if v > self.capacity:
                    self.err((*p, i), f"{v}: option is larger than capacity value: {self.capacity}")
                found = found or v == default
                key = _dec_string(v) if self.fractional else str(self.value(v))
                if key in seen:
                    self.err((*p, i), f"duplicate value {v}")
                seen.add(key)
        if not found:
            self.err(p, f"{default}: default value is not valid according to the requestPolicy")

    def valid_range(self, default: Quantity, rng: Mapping[str, Any]) -> None:  # noqa: C901 - validateRequestPolicyRange, one branch per rule
        p: Path = (*self.path, "validRange")
        if rng.get("min") is None:
            self.err((*p, "min"), "required when validRange is defined")
            return
        lo = _q(rng["min"], self.since_138)
        hi = _q(rng["max"], self.since_138) if rng.get("max") is not None else None
        step = _q(rng["step"], self.since_138) if rng.get("step") is not None else None
        # v1.36.3 reports the default against min and max at validRange.min/.max, v1.37.2 at validRange.default
        at_default = (*p, "default") if self.guards else None
        if lo > self.capacity:
            self.err((*p, "min"), f"min {lo} is larger than capacity value: {self.capacity}")
        if default < lo:
            self.err(at_default or (*p, "min"), f"default {default} is less than min: {lo}")
        if hi is not None:
            if lo > hi:
                self.err((*p, "max"), f"min {lo} is larger than max: {hi}")
            if hi > self.capacity:
                self.err((*p, "max"), f"max {hi} is larger than capacity value: {self.capacity}")
            if default > hi:
                self.err(at_default or (*p, "max"), f"default {default} is more than max: {hi}")
        named = [("default", default), ("min", lo), ("max", hi), ("step", step)]
        milli = self.fractional and any(q is not None and not q.is_integer() for _, q in named)
        if milli:
            unsafe = False
            for name, q in named:
                if q is not None and Quantity(self.value(q, True) * (NANO // 1000)) != q:
                    self.err((*p, name), f"{q}: value cannot be represented as a milli value")
                    unsafe = True
            if unsafe:
                return
        if step is None:
            return
        if self.guards and step.sign() <= 0:
            self.err((*p, "step"), f"{step}: must be greater than zero")
            return
        if lo.add(step) > self.capacity:
            self.err((*p, "step"), f"one step {lo.add(step)} is larger than capacity value: {self.capacity}")
        if self.guards and not milli:
            unsafe = False
            for name, q in named:
                if q is not None and (q.sign() < 0 or q.exact > _MAX_INT64):
                    why = (
                        "must be greater than or equal to 0"
                        if q.sign() < 0
                        else "must not be larger than 2^63-1"
                    )
                    self.err((*p, name), f"{q}: {why}")
                    unsafe = True
            if unsafe:
                return
        self.step((*p, "step"), default, lo, step, milli)
        if hi is not None:
            self.step((*p, "step"), hi, lo, step, milli)

    def step(self, p: Path, value: Quantity, lo: Quantity, step: Quantity, milli: bool) -> None:
        s = self.value(step, milli)
        if s == 0:  # only through 1.36: the guards above leave no zero step from 1.37
            self.err(
                p, f"the 1.{self.release.minor} apiserver fails on step {step} (integer division by zero)"
            )
            return
        if wrap_int64(self.value(value, milli) - self.value(lo, milli)) % s:
            self.err(p, f"{value}: value is not a multiple of a given step ({step}) from ({lo})")


def _dec_string(q: Quantity) -> str:
    """``q.AsDec().String()``: the value's digits at its representation's base-10 exponent."""
    exp = q.exponent()
    if exp >= 0:
        return int_text(q.nanos // NANO)
    unscaled = q.nanos // 10 ** (9 + exp)
    sign, digits = ("-" if unscaled < 0 else ""), int_text(abs(unscaled)).rjust(-exp + 1, "0")
    return f"{sign}{digits[:exp]}.{digits[exp:]}"

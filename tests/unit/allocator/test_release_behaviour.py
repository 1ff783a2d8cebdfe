"""Allocator behaviour that differs between releases of k8s.io/dynamic-resource-allocation, each modelled
as a fact of data/versions.yaml (``since``) and checked at the releases on either side of it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kubedra.allocator import AllocatedState, AllocationError, Allocator
from kubedra.allocator.explain import explain
from kubedra.model.objects import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    DeviceCapacity,
    DeviceConstraint,
    DeviceRequestAllocationResult,
)

from .helpers import (
    ALL,
    DRIVER,
    all_req,
    capacity,
    claim,
    cls,
    consumes,
    counter_set,
    dev,
    node,
    picked,
    q,
    req,
    slice_,
)


def _pool(driver: str) -> list:
    return [
        slice_(f"{driver}-counters", [], driver=driver, count=2, counters=[counter_set("set-0", slots="1")]),
        slice_(
            f"{driver}-devices",
            [dev("d0", consumes_counters=consumes("set-0", slots="1"))],
            driver=driver,
            count=2,
        ),
    ]


@pytest.mark.parametrize(
    ("target", "allocates"),
    [("1.35", False), ("v1.36.3", False), ("v1.36.4", True), ("1.36", True), ("1.37", True), ("1.38", True)],
)
def test_two_drivers_pools_of_one_name_share_counters_until_1364(target, allocates):
    # allocator.countersKeyedByDriverAndPool: v0.35 and v0.36.0-v0.36.3 key their counter caches by pool name,
    # so driver-b's device draws on the slot driver-a's device took; from v0.36.4 they are keyed by driver and
    # pool (a bare minor is its newest patch)
    a = Allocator(ALL, [cls()], [*_pool("driver-a"), *_pool("driver-b")], target_version=target)
    res = a.allocate(node(), [claim("c", req(count=2))])
    if allocates:
        assert res is not None
        assert sorted((r.driver, r.device) for r in res[0].results) == [
            ("driver-a", "d0"),
            ("driver-b", "d0"),
        ]
    else:
        assert res is None


@pytest.mark.parametrize(
    ("target", "allocates"), [("1.35", True), ("1.36", True), ("1.37", False), ("1.38", False)]
)
def test_distinct_attribute_compares_with_every_device_from_137(target, allocates):
    # allocator.distinctAttributeKeepsEveryValue: v0.36 keeps one value per request, so the third device of
    # a request is compared only with the second and a bool attribute admits three devices
    devices = [dev("d0", {"fast": True}), dev("d1", {"fast": False}), dev("d2", {"fast": True})]
    distinct = [DeviceConstraint(distinct_attribute="driver-a/fast")]
    a = Allocator(ALL, [cls()], [slice_("s", devices)], target_version=target)
    res = a.allocate(node(), [claim("c", req(count=3), constraints=distinct)])
    if allocates:
        assert picked(res) == [[("req-0", "d0"), ("req-0", "d1"), ("req-0", "d2")]]
    else:
        assert res is None


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("1.36", "class class-a: selector #0: CEL runtime error: no such key: model"),
        (
            "1.37",
            "class class-a: selector #0 on device driver-a/pool-1/d0: CEL runtime error: no such key: model. "
            "consider using CEL optional chaining",
        ),
    ],
)
def test_selector_runtime_error_text_per_release(target, message):
    # allocator.selectorErrorNamesDevice: v0.36 names neither the device nor adds cel.EnhanceRuntimeError's advice
    klass = [cls("class-a", "device.attributes['driver-a'].model == 'a100'")]
    a = Allocator(ALL, klass, [slice_("s", [dev("d0")])], target_version=target)
    with pytest.raises(AllocationError) as e:
        a.allocate(node(), [claim("c", req())])
    assert str(e.value).startswith(message)
    if target == "1.36":
        assert str(e.value) == message


SUMMED = "claim default/c: number of requested devices 33 exceeds the claim limit of 32"
PER_REQUEST = (
    "claim default/c, request req-1: adding 17 devices exceeds the claim limit of 32, with 16 already"
)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("v1.35.4", SUMMED),
        ("1.35", PER_REQUEST),
        ("v1.36.4", SUMMED),
        ("v1.36.5", PER_REQUEST),
        ("1.36", PER_REQUEST),
        ("v1.37.0", SUMMED),
        ("1.37", PER_REQUEST),
    ],
)
def test_claim_limit_text_per_patch(target, message):
    # allocator.claimLimitPerRequest: a fix backported to a patch of every minor (v0.35.10, v0.36.5, v0.37.1);
    # before it every request is summed first
    a = Allocator(ALL, [cls()], [slice_("s", [dev("d0")])], target_version=target)
    with pytest.raises(AllocationError, match=re.escape(message)):
        a.allocate(node(), [claim("c", req("req-0", count=16), req("req-1", count=17))])


@pytest.mark.parametrize(("target", "picked_d1"), [("1.36", True), ("1.37", False)])
def test_all_devices_leave_out_a_full_shared_device_until_137(target, picked_d1):
    # allocator.allDevicesFitAnEmptyDevice: v0.36 leaves d0 (its capacity already in use) out of "all"; v0.37
    # takes it in, cannot allocate it and finds the claim unsatisfiable
    d0 = dev("d0", allow_multiple_allocations=True, capacity=capacity(memory="16Gi"))
    d1 = dev("d1", capacity=capacity(memory="16Gi"))
    used = AllocatedState(capacity={("driver-a", "pool-1", "d0"): {"memory": q("4Gi")}})
    a = Allocator(ALL, [cls()], [slice_("s", [d0, d1])], used, target_version=target)
    res = a.allocate(node(), [claim("c", all_req())])
    if picked_d1:
        assert picked(res) == [[("req-0", "d1")]]
    else:
        assert res is None


def _shared(units: str) -> Any:
    return dev("d0", allow_multiple_allocations=True, capacity=capacity(units=units))


def _units(amount: str) -> dict[str, Any]:
    return {"capacity": {"units": q(amount)}}


@pytest.mark.parametrize(("target", "allocates"), [("1.37", False), ("1.38", True)])
def test_capacities_past_29_digits_are_read_rounded_at_138(target, allocates):
    # quantity.nineteenDigitInt64: v0.38 ParseQuantity keeps 29 significant digits, rounding away from zero, so
    # both 30-digit values read as 100000000000000000000000000020 and the request fits; v0.37 reads them exactly
    d0 = _shared("100000000000000000000000000011")
    a = Allocator(ALL, [cls()], [slice_("s", [d0])], target_version=target)
    res = a.allocate(node(), [claim("c", req(**_units("100000000000000000000000000019")))])
    assert (res is not None) == allocates


@pytest.mark.parametrize(("target", "allocates"), [("1.37", True), ("1.38", False)])
def test_capacity_sums_round_an_operand_29_orders_finer_at_138(target, allocates):
    # cmpRequestOverCapacity: consumed so far (1e39) + this request (1e11 - 1) + what the claim's first request
    # already takes (1n) against 1e39 + 1e11. v0.38's Add rounds 1e11 - 1 to 1e11 (39 orders finer than 1e39),
    # and the 1n then passes the capacity; v0.37 adds exactly.
    d0 = _shared("10000000000000000000000000001e11")
    used = AllocatedState(capacity={("driver-a", "pool-1", "d0"): {"units": q("1e39")}})
    a = Allocator(ALL, [cls()], [slice_("s", [d0])], used, target_version=target)
    res = a.allocate(node(), [claim("c", req("r0", **_units("1n")), req("r1", **_units("99999999999")))])
    assert (res is not None) == allocates


def _stepped(step: str) -> Any:
    policy = CapacityRequestPolicy(
        default=q("0"), valid_range=CapacityRequestPolicyRange(min=q("0"), step=q(step))
    )
    units = DeviceCapacity(q("1e30"), request_policy=policy)
    return dev("d0", allow_multiple_allocations=True, capacity={"units": units})


@pytest.mark.parametrize(
    ("target", "step", "consumed"),
    [
        # quantity.nineteenDigitInt64: v0.37 Value() keeps the low 64 bits (2^64 + 1 reads 1, 2^63 MinInt64),
        # v0.38 saturates at MaxInt64 (tests/conformance/quantity/scaled-value.yaml)
        ("1.37", "18446744073709551617", "1"),
        ("1.38", "18446744073709551617", "9223372036854775807"),
        ("1.37", "9223372036854775808", None),  # step MinInt64: rounding 1 up "passes MaxInt64"
        ("1.38", "9223372036854775808", "9223372036854775807"),
        ("1.37", "18446744073709551616", "divides by zero"),  # 2^64 reads 0: upstream panics
        ("1.38", "18446744073709551616", "9223372036854775807"),
    ],
)
def test_a_step_past_int64_reads_as_each_release_reads_it(target, step, consumed):
    a = Allocator(ALL, [cls()], [slice_("s", [_stepped(step)])], target_version=target)
    claims = [claim("c", req(**_units("1")))]
    if consumed is None or not consumed.isdigit():
        with pytest.raises(AllocationError, match=consumed or "passes MaxInt64"):
            a.allocate(node(), claims)
        return
    res = a.allocate(node(), claims)
    assert res is not None
    assert res[0].results[0].consumed_capacity == {"units": q(consumed)}


def _partitions(total: str, *amounts: str) -> list[Any]:
    """A pool with counter set ``cs`` (``c`` = ``total``, in a slice of its own) and devices d0, d1, ... each
    consuming one of ``amounts`` of it."""
    devices = [dev(f"d{i}", consumes_counters=consumes("cs", c=a)) for i, a in enumerate(amounts)]
    return [
        slice_("devices", devices, count=2),
        slice_("counters", [], count=2, counters=[counter_set("cs", c=total)]),
    ]


@pytest.mark.parametrize(("target", "allocates"), [("1.37", True), ("1.38", False)])
def test_available_counters_round_an_operand_29_orders_finer_at_138(target, allocates):
    # allocator_incubating.go: available = counter.Sub(what allocated devices consume). v0.38 rounds d0's 1 to
    # 1e11 (40 orders below 1e40), leaving 1e40 - 1e11, less than d1 + d2; exactly, 1e40 - 1 holds them
    pool = _partitions("1e40", "1", "99999999999999999999999999999e11", "1")
    used = AllocatedState(devices={(DRIVER, "pool-1", "d0")})
    a = Allocator(ALL, [cls()], pool, used, target_version=target)
    res = a.allocate(node(), [claim("c", req(count=2))])
    assert (res is not None) == allocates


@pytest.mark.parametrize(("target", "allocates"), [("1.37", True), ("1.38", False)])
def test_consumed_counters_round_an_operand_29_orders_finer_at_138(target, allocates):
    # consumed = d0's 1e39, + d1's 1e11 - 1 (rounded to 1e11 at 1.38), + d2's 1n: past 1e39 + 1e11 at 1.38 only
    pool = _partitions("10000000000000000000000000001e11", "1e39", "99999999999", "1n")
    a = Allocator(ALL, [cls()], pool, target_version=target)
    res = a.allocate(node(), [claim("c", req(count=3))])
    assert (res is not None) == allocates


def test_a_bind_rebuilds_the_138_counter_sums_in_upstream_order():
    # the simulator keeps one allocator: once d1 is bound, 1.38's available 1e40 - 1 reads 1e40 - 1e11 and no
    # longer holds d0 + d2; a cache updated in exact nano-units would still allocate them
    pool = _partitions("1e40", "99999999999999999999999999999e11", "1", "1")
    a = Allocator(ALL, [cls()], pool, target_version="1.38")
    assert a.allocate(node(), [claim("warm", req(count=1))]) is not None
    a.allocated.devices.add((DRIVER, "pool-1", "d1"))
    a.counters_changed([DeviceRequestAllocationResult("req-0", DRIVER, "pool-1", "d1")], -1)
    assert a.allocate(node(), [claim("c", req(count=2))]) is None
    exact = Allocator(
        ALL, [cls()], pool, AllocatedState(devices={(DRIVER, "pool-1", "d1")}), target_version="1.37"
    )
    assert exact.allocate(node(), [claim("c", req(count=2))]) is not None


def test_narrow_counters_keep_exact_sums_at_138():
    # no counter past exponent 20: the exact nano-unit sums are upstream's, and no Quantity sum is built
    pool = _partitions("3", "1", "1", "1")
    a = Allocator(ALL, [cls()], pool, target_version="1.38")
    assert a.allocate(node(), [claim("c", req(count=3))]) is not None
    assert a._wide_counters == {f"{DRIVER}/pool-1": False}
    assert not a._available_wide


@pytest.mark.parametrize(("target", "fits"), [("1.37", True), ("1.38", False)])
def test_explain_counts_counters_as_the_search_does(target, fits):
    # d1 consumes 1e40 - 1e11 + 1 of a 1e40 counter d0 already takes 1 of: it fits exactly (1.37); at 1.38 the
    # 40-digit value keeps 29 digits, rounded away from zero to 1e40, and the available 1e40 - 1 reads 1e40 - 1e11
    pool = _partitions("1e40", "1", "9999999999999999999999999999900000000001")
    used = AllocatedState(devices={(DRIVER, "pool-1", "d0")})
    a = Allocator(ALL, [cls()], pool, used, target_version=target)
    claims = [claim("c", req(count=1))]
    assert (a.allocate(node(), claims) is not None) == fits
    steps = {s.name: s.remaining for r in explain(a, node(), claims).requests for s in r.steps}
    # a step is listed where it drops a device: d1 is the one device left to count
    assert steps.get("counters available") == (None if fits else 0)

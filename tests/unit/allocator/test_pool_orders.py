"""Where upstream's answer depends on its random pool and slice order (kubedra.allocator.orders): at 1.34 the
capacity recheck panics in some orders and not in others, and kubedra says so instead of answering for its own."""

from __future__ import annotations

import pytest

from kubedra.allocator import AllocationError, Allocator, PoolOrderPanicError, UpstreamPanicError, orders
from kubedra.allocator.state import Features
from kubedra.model.objects import DeviceConstraint

from .helpers import ALL, claim, cls, dev, node, picked, req, slice_

PICK = "device.attributes['driver-a'].pick == true"


def alloc(slices, target, features=ALL):
    return Allocator(
        features, [cls("class-a", PICK)], slices, share_id_factory=lambda: "share-1", target_version=target
    )


def _count_searches(monkeypatch):
    """A list that gets an item for every search kubedra.allocator.orders runs."""
    calls = []
    original = orders._Traced.allocate

    def counted(self):
        calls.append(self)
        return original(self)

    monkeypatch.setattr(orders._Traced, "allocate", counted)
    return calls


def _two_pools():
    # kubedra's order (pool-a, then pool-b) takes a0, then b0 as the request's device 1: v0.34 rechecks
    # pool-b's slice's Devices[1], past its end. Upstream's other order takes b0, then a0, whose slice has a
    # Devices[1] (a1, which the request does not select): no panic, both allocated.
    return [
        slice_("sa", [dev("a0", {"pick": True}), dev("a1", {"pick": False})], pool="pool-a"),
        slice_("sb", [dev("b0", {"pick": True})], pool="pool-b"),
    ]


def test_134_says_a_panic_depends_on_the_pool_order():
    with pytest.raises(PoolOrderPanicError) as e:
        alloc(_two_pools(), "1.34").allocate(node(), [claim("c", req(count=2))])
    assert isinstance(
        e.value, UpstreamPanicError
    )  # the verbs refuse it (non-zero exit) as any upstream panic
    assert e.value.panic == "runtime error: index out of range [1] with length 1"
    assert "depending on the order it walks the node's resource pools" in str(e.value)
    answers = e.value.answers
    assert answers is not None
    assert len(answers) == 2
    assert isinstance(answers[0], UpstreamPanicError)  # kubedra's order's first
    assert picked(answers[1]) == [[("req-0", "b0"), ("req-0", "a0")]]


def test_135_rechecks_the_candidate_itself_in_any_order():
    res = alloc(_two_pools(), "1.35").allocate(node(), [claim("c", req(count=2))])
    assert picked(res) == [[("req-0", "a0"), ("req-0", "b0")]]


def test_without_consumable_capacity_the_134_order_is_not_tried():
    # no capacity recheck (the stable variant), so no panic and kubedra's order's answer
    features = Features(admin_access=True, prioritized_list=True)
    res = alloc(_two_pools(), "1.34", features).allocate(node(), [claim("c", req(count=2))])
    assert picked(res) == [[("req-0", "a0"), ("req-0", "b0")]]


def test_a_panic_in_every_order_is_named_as_before():
    slices = [
        slice_("sa", [dev("a0", {"pick": True})], pool="pool-a"),
        slice_("sb", [dev("b0", {"pick": True})], pool="pool-b"),
    ]
    with pytest.raises(UpstreamPanicError) as e:
        alloc(slices, "1.34").allocate(node(), [claim("c", req(count=2))])
    assert type(e.value) is UpstreamPanicError
    assert e.value.panic == "runtime error: index out of range [1] with length 1"


def test_slices_of_one_pool_are_ordered_too():
    # one pool, kube-scheduler lists its slices in any order: s1 (b0) before s0 (a0, a1) takes b0 at index 0
    # and a0 at index 1 (s0 has a Devices[1]); s0 first takes a0, then b0 at index 1 past s1's end
    slices = [
        slice_("s0", [dev("a0", {"pick": True}), dev("a1", {"pick": False})], count=2),
        slice_("s1", [dev("b0", {"pick": True})], count=2),
    ]
    with pytest.raises(PoolOrderPanicError) as e:
        alloc(slices, "1.34").allocate(node(), [claim("c", req(count=2))])
    assert e.value.answers is not None
    assert len(e.value.answers) == 2


def test_orders_alike_as_far_as_the_search_reads_are_searched_once(monkeypatch):
    # eight pools of one selectable device each: 8! = 40,320 orders, but every search reads two devices (the
    # second one's recheck panics past its one-device slice), so the 8 * 7 beginnings decide them all
    slices = [slice_(f"s{i}", [dev(f"d{i}", {"pick": True})], pool=f"pool-{i}") for i in range(8)]
    calls = _count_searches(monkeypatch)
    with pytest.raises(UpstreamPanicError) as e:
        alloc(slices, "1.34").allocate(node(), [claim("c", req(count=2))])
    assert type(e.value) is UpstreamPanicError  # every order panics: named as any panic
    assert len(calls) == 8 * 7


def test_too_many_orders_are_not_guessed(monkeypatch):
    # six pools of one selectable device each whose attribute differs from all others': no two match, so
    # every search reads every device (720 orders, each its own beginning), more than kubedra tries here
    monkeypatch.setattr(orders, "MAX_ORDERS", 100)
    slices = [slice_(f"s{i}", [dev(f"d{i}", {"pick": True, "numa": i})], pool=f"pool-{i}") for i in range(6)]
    same = [DeviceConstraint(match_attribute="driver-a/numa")]
    with pytest.raises(PoolOrderPanicError) as e:
        alloc(slices, "1.34").allocate(node(), [claim("c", req(count=2), constraints=same)])
    assert e.value.answers is None
    assert "720 orders matter here" in str(e.value)
    assert "more than the 100 searches kubedra tries" in str(e.value)


def test_an_error_on_the_first_device_read_decides_every_order(monkeypatch):
    # the differential's scenario #8581 (seed 8, before the generator's build-metadata versions), made small:
    # four pools with 3, 3, 3 and 1 slices give 4! * 3!^3 = 5,184 orders, more than MAX_ORDERS, but the
    # request's selector fails on every device (v0.34.13 allocateOne returns isSelectable's error at once), so
    # what an order does is decided by its first pool and that pool's first slice: 3 + 3 + 3 + 1 searches.
    # kubedra said it could not tell; upstream ends in the CEL runtime error, as kubedra says now.
    monkeypatch.setattr(orders, "MAX_ORDERS", 100)
    sizes = {"pool-0": 3, "pool-1": 3, "pool-2": 3, "pool-3": 1}
    slices = [
        slice_(f"{p}-s{k}", [dev(f"{p}-d{k}", {"pick": True})], pool=p, count=n)
        for p, n in sizes.items()
        for k in range(n)
    ]
    calls = _count_searches(monkeypatch)
    broken = req(count=2, selectors=["device.attributes['driver-a'].model == 'x'"])
    with pytest.raises(AllocationError) as e:
        alloc(slices, "1.34").allocate(node(), [claim("c", broken)])
    assert not isinstance(e.value, UpstreamPanicError)
    assert "CEL runtime error: no such key: model" in str(e.value)
    assert len(calls) == 3 + 3 + 3 + 1

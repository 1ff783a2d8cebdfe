"""Where upstream's answer depends on its random pool and slice order (kubedra.allocator.orders): at 1.34 the
capacity recheck panics in some orders and not in others, and kubedra says so instead of answering for its own."""

from __future__ import annotations

import pytest

from kubedra.allocator import Allocator, PoolOrderPanicError, UpstreamPanicError
from kubedra.allocator.orders import MAX_ORDERS
from kubedra.allocator.state import Features

from .helpers import ALL, claim, cls, dev, node, picked, req, slice_

PICK = "device.attributes['driver-a'].pick == true"


def alloc(slices, target, features=ALL):
    return Allocator(
        features, [cls("class-a", PICK)], slices, share_id_factory=lambda: "share-1", target_version=target
    )


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


def test_too_many_orders_are_not_guessed():
    # eight pools of one selectable device each: 8! orders, more than kubedra tries
    slices = [slice_(f"s{i}", [dev(f"d{i}", {"pick": True})], pool=f"pool-{i}") for i in range(8)]
    with pytest.raises(PoolOrderPanicError) as e:
        alloc(slices, "1.34").allocate(node(), [claim("c", req(count=2))])
    assert e.value.answers is None
    assert f"more than the {MAX_ORDERS} kubedra tries" in str(e.value)

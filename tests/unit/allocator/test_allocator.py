"""Allocator behaviour a user relies on, and upstream's quirks (k8s.io/dynamic-resource-allocation v0.37.2
``structured/internal/incubating``)."""

from __future__ import annotations

import re

import pytest

from kubedra.allocator import AllocatedState, AllocationError, Allocator, Features, InvalidPoolsError
from kubedra.model.objects import DeviceConstraint, DeviceRequest

from .helpers import (
    ALL,
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
    sub,
    taint,
    toleration,
)


def alloc(slices, *, features=ALL, classes=None, allocated=None, **kw):
    return Allocator(
        features, classes or [cls()], slices, allocated, share_id_factory=lambda: "share-1", **kw
    )


def test_picks_first_devices_in_pool_order_and_sets_node_selector():
    a = alloc([slice_("s1", [dev("d0"), dev("d1"), dev("d2")])])
    res = a.allocate(node(), [claim("c", req(count=2))])
    assert picked(res) == [[("req-0", "d0"), ("req-0", "d1")]]
    term = res[0].node_selector.terms[0]
    assert term.match_fields[0].key == "metadata.name"
    assert term.match_fields[0].values == ["node-1"]


def test_unsatisfiable_returns_none_not_error():
    a = alloc([slice_("s1", [dev("d0")])])
    assert a.allocate(node(), [claim("c", req(count=2))]) is None


def test_devices_in_use_are_skipped_and_claims_in_one_call_do_not_share():
    a = alloc(
        [slice_("s1", [dev("d0"), dev("d1"), dev("d2")])],
        allocated=AllocatedState(devices={("driver-a", "pool-1", "d0")}),
    )
    res = a.allocate(node(), [claim("c1", req()), claim("c2", req())])
    assert picked(res) == [[("req-0", "d1")], [("req-0", "d2")]]


def test_pools_sorted_lexicographically_by_driver_then_pool():
    a = alloc(
        [
            slice_("z", [dev("d0")], pool="pool-b"),
            slice_("y", [dev("d0")], pool="pool-a"),
        ]
    )
    res = a.allocate(node(), [claim("c", req())])
    assert res[0].results[0].pool == "pool-a"


def test_slices_for_other_nodes_are_ignored_and_node_selector_slices_match_labels():
    from kubedra.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm

    sel = NodeSelector(
        [NodeSelectorTerm(match_expressions=[NodeSelectorRequirement("region", "In", ["region-1"])])]
    )
    a = alloc(
        [
            slice_("other", [dev("d0")], pool="p-other", node_name="node-2"),
            slice_("net", [dev("n0")], pool="p-net", node_name=None, node_selector=sel),
        ]
    )
    res = a.allocate(node(), [claim("c", req())])
    assert picked(res) == [[("req-0", "n0")]]
    assert res[0].node_selector.terms[0].match_expressions[0].key == "region"
    assert a.allocate(node("node-x", region="region-2"), [claim("c", req())]) is None


def test_incomplete_pool_is_not_used_and_all_mode_errors():
    a = alloc([slice_("s1", [dev("d0")], count=2)])
    assert a.allocate(node(), [claim("c", req())]) is None
    with pytest.raises(
        AllocationError,
        match="asks for all devices, but resource pool driver-a/pool-1 is currently being updated",
    ):
        a.allocate(node(), [claim("c", all_req())])


def test_newer_generation_elsewhere_makes_pool_obsolete():
    a = alloc(
        [
            slice_("s1", [dev("d0")], count=2, generation=1),
            slice_("s2", [dev("d1")], count=2, generation=2, node_name="node-2"),
        ]
    )
    assert a.allocate(node(), [claim("c", req())]) is None


def test_invalid_pool_reports_invalid_pools_error():
    a = alloc([slice_("s1", [dev("d0")], count=2), slice_("s2", [dev("d0")], count=2)])
    with pytest.raises(InvalidPoolsError, match="invalid resource pools were encountered"):
        a.allocate(node(), [claim("c", req())])


def test_unknown_class_is_a_fatal_error_with_upstream_message():
    a = alloc([slice_("s1", [dev("d0")])])
    with pytest.raises(
        AllocationError,
        match=re.escape('could not retrieve device class nope: deviceclass.resource.k8s.io "nope" not found'),
    ):
        a.allocate(node(), [claim("c", req(klass="nope"))])


def test_all_mode_takes_every_device_and_fails_if_one_is_in_use():
    s = [slice_("s1", [dev("d0"), dev("d1")])]
    assert picked(alloc(s).allocate(node(), [claim("c", all_req())])) == [[("req-0", "d0"), ("req-0", "d1")]]
    busy = AllocatedState(devices={("driver-a", "pool-1", "d1")})
    assert alloc(s, allocated=busy).allocate(node(), [claim("c", all_req())]) is None


def test_first_available_falls_back_and_keeps_whole_remainder_in_mind():
    a = alloc([slice_("s1", [dev("d0"), dev("d1")])])
    r = DeviceRequest(name="gpu", first_available=[sub("big", 3), sub("small", 1)])
    res = a.allocate(node(), [claim("c", r)])
    assert picked(res) == [[("gpu/small", "d0")]]
    # the first alternative fits alone, but not together with the second request: it must fall back
    r2 = DeviceRequest(name="gpu", first_available=[sub("two", 2), sub("one", 1)])
    res = a.allocate(node(), [claim("c", r2, req("other"))])
    assert picked(res) == [[("gpu/one", "d0"), ("other", "d1")]]


def test_prioritized_list_requires_the_feature():
    a = alloc([slice_("s1", [dev("d0")])], features=Features())
    r = DeviceRequest(name="gpu", first_available=[sub("a")])
    with pytest.raises(
        AllocationError, match="has subrequests, but the DRAPrioritizedList feature is disabled"
    ):
        a.allocate(node(), [claim("c", r)])


def test_match_attribute_backtracks_to_a_consistent_set():
    devices = [dev("d0", {"numa": 0}), dev("d1", {"numa": 1}), dev("d2", {"numa": 1})]
    a = alloc([slice_("s1", devices)])
    c = claim("c", req(count=2), constraints=[DeviceConstraint(match_attribute="driver-a/numa")])
    assert picked(a.allocate(node(), [c])) == [[("req-0", "d1"), ("req-0", "d2")]]


def test_distinct_attribute():
    devices = [dev("d0", {"numa": 0}), dev("d1", {"numa": 0}), dev("d2", {"numa": 1})]
    a = alloc([slice_("s1", devices)])
    c = claim("c", req(count=2), constraints=[DeviceConstraint(distinct_attribute="driver-a/numa")])
    assert picked(a.allocate(node(), [c])) == [[("req-0", "d0"), ("req-0", "d2")]]


def test_distinct_attribute_compares_every_device_of_the_request():
    # up to v0.36 upstream remembered one value per request name, so numa 0, 1, 0 passed within one
    # request; since 1.37 every picked device is compared
    devices = [dev("d0", {"numa": 0}), dev("d1", {"numa": 1}), dev("d2", {"numa": 0})]
    a = alloc([slice_("s1", devices)])
    c = claim("c", req(count=3), constraints=[DeviceConstraint(distinct_attribute="driver-a/numa")])
    assert a.allocate(node(), [c]) is None


def test_all_mode_constraint_violation_is_an_error():
    devices = [dev("d0", {"numa": 0}), dev("d1", {"numa": 1})]
    a = alloc([slice_("s1", devices)])
    c = claim("c", all_req(), constraints=[DeviceConstraint(match_attribute="driver-a/numa")])
    with pytest.raises(AllocationError, match="because a claim constraint would not be satisfied"):
        a.allocate(node(), [c])


def test_taints_block_unless_tolerated_and_none_effect_is_ignored():
    devices = [dev("d0", taints=[taint("maint")]), dev("d1", taints=[taint("info", "None")])]
    a = alloc([slice_("s1", devices)])
    assert picked(a.allocate(node(), [claim("c", req())])) == [[("req-0", "d1")]]
    res = a.allocate(node(), [claim("c", req(count=2, tolerations=[toleration("maint")]))])
    assert picked(res) == [[("req-0", "d0"), ("req-0", "d1")]]
    assert res[0].results[0].tolerations[0].key == "maint"  # tolerations are copied into the result
    # with the gate off, taints are ignored
    b = alloc([slice_("s1", devices)], features=Features())
    assert picked(b.allocate(node(), [claim("c", req())])) == [[("req-0", "d0")]]


def test_admin_access_may_use_allocated_devices_but_not_taints():
    devices = [dev("d0"), dev("d1", taints=[taint("t")])]
    busy = AllocatedState(devices={("driver-a", "pool-1", "d0")})
    a = alloc([slice_("s1", devices)], allocated=busy)
    res = a.allocate(node(), [claim("c", req(admin_access=True))])
    assert picked(res) == [[("req-0", "d0")]]
    assert res[0].results[0].admin_access is True
    with pytest.raises(AllocationError, match="admin access is requested, but the feature is disabled"):
        alloc([slice_("s1", devices)], features=Features()).allocate(
            node(), [claim("c", req(admin_access=False))]
        )


def _partitioned(features=ALL, pool_counters=True):
    parts = [
        dev("gpu", consumes_counters=consumes("set", mem="8", s0="1", s1="1")),
        dev("half-0", consumes_counters=consumes("set", mem="4", s0="1")),
        dev("half-1", consumes_counters=consumes("set", mem="4", s1="1")),
    ]
    cs = counter_set("set", mem="8", s0="1", s1="1")
    if pool_counters:
        slices = [slice_("a-counters", [], counters=[cs], count=2), slice_("b-devices", parts, count=2)]
    else:
        slices = [slice_("combined", parts, counters=[cs])]
    return alloc(slices, features=features, pool_counters=pool_counters)


@pytest.mark.parametrize("pool_counters", [True, False], ids=["1.35-pool-counters", "1.34-slice-counters"])
def test_partitions_share_counters(pool_counters):
    a = _partitioned(pool_counters=pool_counters)
    assert picked(a.allocate(node(), [claim("c", req())])) == [[("req-0", "gpu")]]
    assert picked(a.allocate(node(), [claim("c", req(count=2))])) == [
        [("req-0", "half-0"), ("req-0", "half-1")]
    ]
    assert a.allocate(node(), [claim("c", req(count=3))]) is None


def test_counters_need_the_partitionable_feature():
    a = _partitioned(features=Features(), pool_counters=True)
    # the counters-only slice is ignored and devices consuming counters are unusable
    assert a.allocate(node(), [claim("c", req())]) is None


def test_allocated_partition_consumes_pool_counters():
    parts = [
        dev("gpu", consumes_counters=consumes("set", mem="8")),
        dev("half-0", consumes_counters=consumes("set", mem="4")),
        dev("half-1", consumes_counters=consumes("set", mem="4")),
    ]
    slices = [slice_("a", [], counters=[counter_set("set", mem="8")], count=2), slice_("b", parts, count=2)]
    a = alloc(slices, allocated=AllocatedState(devices={("driver-a", "pool-1", "half-0")}))
    assert picked(a.allocate(node(), [claim("c", req())])) == [[("req-0", "half-1")]]


def test_counters_are_released_when_a_taint_rejects_the_device():
    # the counter check runs before the taint check; since 1.37 a rejected device gives its counters back
    # (up to v0.36 they stayed taken and blocked the partition below)
    parts = [
        dev("gpu", consumes_counters=consumes("set", mem="8"), taints=[taint("bad")]),
        dev("half-0", consumes_counters=consumes("set", mem="4")),
    ]
    slices = [slice_("a", [], counters=[counter_set("set", mem="8")], count=2), slice_("b", parts, count=2)]
    assert picked(alloc(slices).allocate(node(), [claim("c", req())])) == [[("req-0", "half-0")]]


def test_consumable_capacity_shares_a_device_with_share_ids():
    d = dev("d0", capacity=capacity(memory="10Gi"), allow_multiple_allocations=True)
    a = alloc([slice_("s1", [d])])
    r1 = req("a", capacity={"memory": q("4Gi")})
    r2 = req("b", capacity={"memory": q("4Gi")})
    res = a.allocate(node(), [claim("c1", r1), claim("c2", r2)])
    assert picked(res) == [[("a", "d0")], [("b", "d0")]]
    assert res[0].results[0].share_id == "share-1"
    assert res[0].results[0].consumed_capacity == {"memory": q("4Gi")}
    r3 = req("c", capacity={"memory": q("3Gi")})
    assert a.allocate(node(), [claim("c1", r1), claim("c2", r2), claim("c3", r3)]) is None


def test_capacity_request_for_unknown_capacity_skips_device():
    d = dev("d0", capacity=capacity(memory="10Gi"))
    a = alloc([slice_("s1", [d])])
    assert a.allocate(node(), [claim("c", req(capacity={"cores": q("1")}))]) is None


def test_capacity_requests_need_the_feature():
    # the incubating allocator (here: chosen for DeviceBindingAndStatus) checks the gate ...
    a = alloc([slice_("s1", [dev("d0")])], features=Features(device_binding_and_status=True))
    with pytest.raises(
        AllocationError, match="has capacity requests, but the DRAConsumableCapacity feature is disabled"
    ):
        a.allocate(node(), [claim("c", req(capacity={"memory": q("1")}))])
    # ... the stable one (no feature beyond its SupportedFeatures) ignores capacity requests
    res = alloc([slice_("s1", [dev("d0")])], features=Features()).allocate(
        node(), [claim("c", req(capacity={"memory": q("1")}))]
    )
    assert picked(res) == [[("req-0", "d0")]]


def test_implementation_follows_new_allocator_selection():
    assert Features().implementation() == "stable"
    assert Features(admin_access=True, device_taints=True).implementation() == "stable"
    assert Features(device_binding_and_status=True).implementation() == "incubating"
    assert Features(fractional_capacity_range=True).implementation() == "incubating"
    assert Features(consumable_capacity=True, list_type_attributes=True).implementation() == "experimental"


def test_too_many_devices_per_claim():
    a = alloc([slice_("s1", [dev(f"d{i}") for i in range(40)])])
    with pytest.raises(
        AllocationError,
        match="request req-0: adding 33 devices exceeds the claim limit of 32, with 0 already accounted for",
    ):
        a.allocate(node(), [claim("c", req(count=33))])


def test_binding_conditions_need_the_feature_and_go_last():
    bc = dev("b0", binding_conditions=["ready"])
    slices = [slice_("s1", [bc], pool="pool-a"), slice_("s2", [dev("d0")], pool="pool-b")]
    res = alloc(slices).allocate(node(), [claim("c", req())])
    assert picked(res) == [[("req-0", "d0")]]  # pools with binding conditions are tried last
    res = alloc(slices).allocate(node(), [claim("c", req(count=2))])
    assert res[0].results[1].binding_conditions == ["ready"]
    assert alloc(slices, features=Features()).allocate(node(), [claim("c", req(count=2))]) is None


def test_inputs_are_not_modified():
    import copy

    slices = [slice_("s1", [dev("d0"), dev("d1")])]
    c = claim("c", req(count=2))
    before = (copy.deepcopy(slices), copy.deepcopy(c))
    alloc(slices).allocate(node(), [c])
    assert (slices, c) == before


def _pool_of_another_node() -> list:
    """pool-b is all node-2's: a counters-only slice and a device consuming a counter set it lacks."""
    return [
        slice_("a", [dev("d0")], pool="pool-a"),
        slice_(
            "b-counters",
            [],
            pool="pool-b",
            node_name="node-2",
            count=2,
            counters=[counter_set("set", mem="8")],
        ),
        slice_(
            "b-devices",
            [dev("x", consumes_counters=consumes("nope", mem="1"))],
            pool="pool-b",
            node_name="node-2",
            count=2,
        ),
    ]


@pytest.mark.parametrize(
    ("features", "stable"),
    [
        (Features(partitionable_devices=True), True),
        (Features(partitionable_devices=True, device_binding_and_status=True), False),
    ],
    ids=["stable", "incubating"],
)
def test_stable_allocator_takes_counters_only_slices_of_other_nodes(features, stable):
    # pools_stable.go GatherPools: "Always include slices with SharedCounters ... regardless of their node
    # selector", so node-2's pool-b is a pool of node-1 there (here an invalid one); the incubating allocator
    # does not see it
    a = alloc(_pool_of_another_node(), features=features)
    if stable:
        with pytest.raises(AllocationError, match="resource pool driver-a/pool-b is currently invalid"):
            a.allocate(node(), [claim("c", all_req())])
        with pytest.raises(InvalidPoolsError, match="invalid resource pools were encountered"):
            a.allocate(node(), [claim("c", req(count=2))])
    else:
        assert picked(a.allocate(node(), [claim("c", all_req())])) == [[("req-0", "d0")]]
        assert a.allocate(node(), [claim("c", req(count=2))]) is None


@pytest.mark.parametrize(
    ("target", "features", "sees_it"),
    [
        ("1.36", Features(partitionable_devices=True, device_binding_and_status=True), True),
        ("1.35", Features(partitionable_devices=True, device_binding_and_status=True), True),
        ("1.37", Features(partitionable_devices=True, device_binding_and_status=True), False),
        ("1.38", Features(partitionable_devices=True), False),
    ],
)
def test_which_variants_take_counters_only_slices_of_other_nodes(target, features, sees_it):
    # allocator.countersOnlySlicesOfEveryNode (data/versions.yaml): v0.36's incubating GatherPools has the
    # stable one's "Always include slices with SharedCounters"; v0.37 dropped it there, v0.38 everywhere
    a = alloc(_pool_of_another_node(), features=features, target_version=target)
    if sees_it:
        with pytest.raises(AllocationError, match="pool driver-a/pool-b is currently invalid"):
            a.allocate(node(), [claim("c", all_req())])
    else:
        assert picked(a.allocate(node(), [claim("c", all_req())])) == [[("req-0", "d0")]]


def test_stable_allocator_sees_an_incomplete_pool_of_another_node():
    slices = [
        slice_("a", [dev("d0")], pool="pool-a"),
        slice_(
            "b-counters",
            [],
            pool="pool-b",
            node_name="node-2",
            count=3,
            counters=[counter_set("set", mem="8")],
        ),
    ]
    a = alloc(slices, features=Features(partitionable_devices=True))
    with pytest.raises(AllocationError, match="resource pool driver-a/pool-b is currently being updated"):
        a.allocate(node(), [claim("c", all_req())])
    assert picked(a.allocate(node(), [claim("c", req())])) == [[("req-0", "d0")]]

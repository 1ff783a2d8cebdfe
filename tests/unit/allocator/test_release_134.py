"""What the 1.34 allocator (k8s.io/dynamic-resource-allocation v0.34.13) does differently from 1.35's, each a
since-1.35 fact of data/versions.yaml, checked on either side of it."""

from __future__ import annotations

import pytest

from kubedra.allocator import (
    AllocatedState,
    AllocationError,
    Allocator,
    FailedOnNodeError,
    InvalidPoolsError,
    UpstreamPanicError,
)
from kubedra.allocator.pools import gather_pools_134
from kubedra.allocator.state import Features
from kubedra.model.objects import DeviceConstraint

from .helpers import ALL, capacity, claim, cls, consumes, counter_set, dev, node, picked, q, req, slice_

BOTH = pytest.mark.parametrize("target", ["1.34", "1.35"])


def alloc(slices, target, allocated=None):
    return Allocator(
        ALL, [cls()], slices, allocated, share_id_factory=lambda: "share-1", target_version=target
    )


@BOTH
def test_an_incomplete_pool_is_allocated_from_at_134_only(target):
    a = alloc([slice_("s1", [dev("d0")], count=2)], target)
    res = a.allocate(node(), [claim("c", req())])
    assert (picked(res) if res else None) == ([[("req-0", "d0")]] if target == "1.34" else None)


@BOTH
def test_a_newer_generation_for_another_node_hides_the_pool_from_135_only(target):
    a = alloc(
        [
            slice_("s1", [dev("d0")], count=2, generation=1),
            slice_("s3", [dev("d2")], count=1, generation=2, node_name="node-2"),
        ],
        target,
    )
    res = a.allocate(node(), [claim("c", req())])
    assert (res is not None) == (target == "1.34")


@BOTH
def test_an_invalid_pool_aborts_the_attempt_at_134_and_fails_the_node_from_135(target):
    a = alloc([slice_("s1", [dev("d0"), dev("d0")])], target)
    with pytest.raises(AllocationError) as e:
        a.allocate(node(), [claim("c", req())])
    if target == "1.34":
        assert not isinstance(e.value, FailedOnNodeError)
        assert str(e.value) == "pool pool-1 is invalid: duplicate device name d0"
    else:
        assert isinstance(e.value, InvalidPoolsError)


def test_the_134_search_reaches_an_invalid_pool_only_after_the_pools_before_it():
    slices = [slice_("s1", [dev("d0")], pool="pool-a"), slice_("s2", [dev("d0"), dev("d0")], pool="pool-b")]
    res = alloc(slices, "1.34").allocate(node(), [claim("c", req())])
    assert picked(res) == [[("req-0", "d0")]]
    with pytest.raises(AllocationError, match=r"^pool pool-b is invalid"):
        alloc(slices, "1.34").allocate(node(), [claim("c", req(count=2))])


@BOTH
def test_distinct_attribute_clashes_only_on_the_same_device_at_134(target):
    slices = [slice_("s1", [dev("d0", {"model": "a100"}), dev("d1", {"model": "a100"})])]
    distinct = DeviceConstraint(requests=[], distinct_attribute="driver-a/model")
    res = alloc(slices, target).allocate(node(), [claim("c", req(count=2), constraints=[distinct])])
    assert (res is not None) == (target == "1.34")


def _shared(name: str):
    return dev(name, capacity=capacity(memory="4Gi"), allow_multiple_allocations=True)


@BOTH
def test_134_rechecks_the_capacity_of_the_slices_device_at_the_requests_index(target):
    # d0 is full, so the scan skips it and tries d1; v0.34's allocateDevice then rechecks
    # slice.Spec.Devices[r.deviceIndex] = Devices[0] = d0 instead of d1, and turns d1 down
    used = AllocatedState(capacity={("driver-a", "pool-1", "d0"): {"memory": q("4Gi")}})
    a = alloc([slice_("s1", [_shared("d0"), _shared("d1")])], target, used)
    res = a.allocate(node(), [claim("c", req())])
    assert (picked(res) if res else None) == (None if target == "1.34" else [[("req-0", "d1")]])


@BOTH
def test_134_names_the_upstream_panic_past_the_slices_end(target):
    # the request's second device is e0, alone in its slice: v0.34 rechecks that slice's Devices[1] and panics
    slices = [slice_("s1", [dev("d0")], count=2), slice_("s2", [dev("e0")], count=2)]
    a = alloc(slices, target)
    if target == "1.34":
        with pytest.raises(UpstreamPanicError) as e:
            a.allocate(node(), [claim("c", req(count=2))])
        assert e.value.panic == "runtime error: index out of range [1] with length 1"
        assert str(e.value).startswith("kubedra cannot model this at Kubernetes 1.34")
    else:
        assert picked(a.allocate(node(), [claim("c", req(count=2))])) == [[("req-0", "d0"), ("req-0", "e0")]]


@BOTH
def test_a_shared_device_consumes_its_counters_on_every_allocation_at_134(target):
    d0 = dev("d0", capacity=capacity(memory="8Gi"), allow_multiple_allocations=True)
    d0.consumes_counters.extend(consumes("set-0", memory="4Gi"))
    sets = [counter_set("set-0", memory="4Gi")]
    if target == "1.34":  # 1.34's layout: the counters in the device's slice
        slices = [slice_("s1", [d0], counters=sets)]
    else:  # from 1.35 in a counters-only slice of the pool
        slices = [slice_("s0", [], counters=sets, count=2), slice_("s1", [d0], count=2)]
    one_gi = claim("c", req(capacity={"memory": q("1Gi")}))
    res = alloc(slices, target).allocate(node(), [one_gi, one_gi])
    assert (res is None) == (target == "1.34")


@pytest.mark.parametrize("features", [ALL, Features()], ids=["experimental", "stable"])
def test_134s_experimental_gathering_puts_binding_slices_and_pools_last(features):
    # v0.34.13 pools_experimental.go GatherPools adds a slice with a binding-conditions device after the pool's
    # other slices and such a pool after the others; v0.34's stable and incubating GatherPools do neither
    bound = dev("d0", binding_conditions=["example.com/ready"])
    slices = [
        slice_("s0", [bound], pool="pool-a", count=2),
        slice_("s1", [dev("d1")], pool="pool-a", count=2),
        slice_("s2", [dev("d2")], pool="pool-b"),
    ]
    pools = gather_pools_134(slices, node(), features, "1.34")
    order = [(p.name, [s.name for s in p.slices]) for p in pools]
    if features.variant("1.34") == "experimental":
        assert order == [("pool-b", ["s2"]), ("pool-a", ["s1", "s0"])]
    else:
        assert order == [("pool-a", ["s0", "s1"]), ("pool-b", ["s2"])]


def test_134s_experimental_gathering_puts_an_invalid_binding_pool_last_too():
    # poolHasBindingConditions reads the slices of an invalid pool as well: pool-a goes after pool-b, so the search
    # allocates from pool-b before it reaches pool-a (and aborts there)
    bound = dev("d0", binding_conditions=["example.com/ready"])
    slices = [slice_("s0", [bound, dev("d0")], pool="pool-a"), slice_("s1", [dev("d1")], pool="pool-b")]
    pools = gather_pools_134(slices, node(), ALL, "1.34")
    assert [(p.name, p.invalid) for p in pools] == [("pool-b", False), ("pool-a", True)]
    res = alloc(slices, "1.34").allocate(node(), [claim("c", req())])
    assert picked(res) == [[("req-0", "d1")]]

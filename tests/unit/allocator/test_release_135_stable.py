"""1.35's stable variant (every DRA feature gate off): pool gathering as v0.35.10's stable GatherPools
(data/versions.yaml allocator.stablePoolsSkipCounterSlices) and selectors evaluated without a device's
allowMultipleAllocations by upstream's stable code (allocator.variantCode), each checked on either side."""

from __future__ import annotations

import pytest

from kubedra.allocator import AllocationError, Allocator
from kubedra.allocator.state import Features

from .helpers import ALL, all_req, claim, cls, counter_set, dev, node, picked, req, slice_

OFF = Features()  # the stable variant at every release up to 1.37


@pytest.mark.parametrize(("target", "error"), [("1.35", True), ("1.36", False), ("1.37", False)])
def test_an_incomplete_pool_with_a_duplicate_device_name_is_invalid_until_136(target, error):
    # v0.35.10's stable poolIsInvalid checks every pool, incomplete ones too, and Allocate ends with "invalid
    # resource pools were encountered" when nothing fits; from v0.36 an incomplete pool is not built further
    slices = [slice_("s0", [dev("d0"), dev("d0")], count=2)]
    a = Allocator(OFF, [cls()], slices, target_version=target)
    if error:
        with pytest.raises(AllocationError, match="invalid resource pools were encountered"):
            a.allocate(node(), [claim("c", req())])
    else:
        assert a.allocate(node(), [claim("c", req())]) is None


@pytest.mark.parametrize(("target", "fails"), [("1.35", True), ("1.36", False), ("1.37", False)])
def test_a_counters_only_slice_for_the_node_makes_a_pool_of_its_own_until_136(target, fails):
    # with PartitionableDevices off v0.35.10's stable GatherPools drops only perDeviceNodeSelection slices: a
    # counters-only slice for the node makes its pool a pool of the node, incomplete here (its other slice is
    # missing), which fails an All request; v0.36's stable drops it, so only pool-1 counts
    slices = [
        slice_("s0", [dev("d0")]),
        slice_("c0", [], pool="pool-2", count=2, counters=[counter_set("set-0", slots="1")]),
    ]
    a = Allocator(OFF, [cls()], slices, target_version=target)
    if fails:
        with pytest.raises(AllocationError, match="pool driver-a/pool-2 is currently being updated"):
            a.allocate(node(), [claim("c", all_req())])
    else:
        res = a.allocate(node(), [claim("c", all_req())])
        assert res is not None
        assert picked(res) == [[("req-0", "d0")]]


@pytest.mark.parametrize(
    ("target", "features", "matches"),
    [
        ("1.35", OFF, False),
        ("1.37", OFF, False),
        ("1.38", OFF, True),
        ("1.37", ALL, True),
        ("1.35", ALL, True),
    ],
)
def test_the_stable_code_evaluates_selectors_without_allow_multiple_allocations(target, features, matches):
    # structured/internal/stable/allocator_stable.go isSelectable (v0.35.10 to v0.37.2) builds cel.Device
    # without AllowMultipleAllocations, so it reads false; v0.38's stable (v0.37's incubating code) and the
    # experimental variants pass it
    slices = [slice_("s0", [dev("d0", allow_multiple_allocations=True)])]
    a = Allocator(
        features, [cls("class-a", "device.allowMultipleAllocations == true")], slices, target_version=target
    )
    assert (a.allocate(node(), [claim("c", req())]) is not None) == matches

"""Allocator behaviour that changed in a release (data/versions.yaml ``since`` and ``byRelease``), each checked
on both sides of the release that changed it (k8s.io/dynamic-resource-allocation v0.37.2 against
v0.38.0-beta.0)."""

from __future__ import annotations

import pytest

from kubedra.allocator import AllocatedState, AllocationError, Allocator, FailedOnNodeError, Features

from .helpers import WITH_FRACTIONS, all_req, claim, cls, dev, node, picked, req, slice_


def alloc(slices, release, *, features=WITH_FRACTIONS, allocated=None):
    return Allocator(
        features, [cls()], slices, allocated, share_id_factory=lambda: "share-1", target_version=release
    )


@pytest.mark.parametrize(("release", "node_only"), [("1.37", False), ("1.38", True)])
def test_all_devices_on_an_incomplete_pool_fails_the_node_only_from_138(
    release: str, node_only: bool
) -> None:
    """kubernetes#141898: the "asks for all devices" errors wrap ErrFailedAllocationOnNode from v0.38."""
    a = alloc([slice_("s1", [dev("d0")], count=2)], release)
    with pytest.raises(AllocationError, match="is currently being updated") as raised:
        a.allocate(node(), [claim("c", all_req())])
    assert isinstance(raised.value, FailedOnNodeError) is node_only


@pytest.mark.parametrize(("release", "node_only"), [("1.37", False), ("1.38", True)])
def test_all_devices_on_an_invalid_pool_fails_the_node_only_from_138(release: str, node_only: bool) -> None:
    a = alloc([slice_("s1", [dev("d0")], count=2), slice_("s2", [dev("d0")], count=2)], release)
    with pytest.raises(AllocationError, match="is currently invalid") as raised:
        a.allocate(node(), [claim("c", all_req())])
    assert isinstance(raised.value, FailedOnNodeError) is node_only


SHARED = ("driver-a", "pool-1", "d0")


@pytest.mark.parametrize(
    "allocated",
    [
        AllocatedState(shared_ids={(*SHARED, "share-0")}),
        AllocatedState(capacity={SHARED: {}}),
    ],
    ids=["shared-id", "aggregated-capacity"],
)
@pytest.mark.parametrize(("release", "exclusive"), [("1.37", ["d0"]), ("1.38", ["d1"])])
def test_a_device_with_a_live_share_is_not_allocated_exclusively_from_138(
    allocated: AllocatedState, release: str, exclusive: list[str]
) -> None:
    """kubernetes#140798: d0 (not allowMultipleAllocations) still has a share; v0.38 skips it."""
    a = alloc([slice_("s1", [dev("d0"), dev("d1")])], release, allocated=allocated)
    res = a.allocate(node(), [claim("c", req())])
    assert picked(res) == [[("req-0", d) for d in exclusive]]


def test_a_share_does_not_block_admin_access_at_138() -> None:
    a = alloc(
        [slice_("s1", [dev("d0")])], "1.38", allocated=AllocatedState(shared_ids={(*SHARED, "share-0")})
    )
    assert picked(a.allocate(node(), [claim("c", req(admin_access=True))])) == [[("req-0", "d0")]]


@pytest.mark.parametrize(
    ("release", "variant", "code"),
    [
        ("1.37", "stable", "stable"),
        ("1.38", "stable", "incubating"),
        ("1.36", "stable", "stable"),
        ("1.35", "incubating", "stable"),
        ("1.34", "incubating", "stable"),
    ],
)
def test_which_variant_runs_and_whose_code(release: str, variant: str, code: str) -> None:
    """v0.38 moved each variant's code a step (allocator.variantCode): the stable one runs v0.37's incubating."""
    basic = Features(admin_access=True, prioritized_list=True)
    assert (basic.variant(release), basic.implementation(release)) == (variant, code)
    assert WITH_FRACTIONS.variant("1.38") == "stable"
    assert WITH_FRACTIONS.variant("1.37") == "incubating"
    assert WITH_FRACTIONS.implementation("1.38") == WITH_FRACTIONS.implementation("1.37") == "incubating"
    lists = Features(list_type_attributes=True)
    assert lists.variant("1.38") == "incubating"
    assert lists.implementation("1.38") == "experimental"


def test_135_and_134_variants_run_one_step_behind() -> None:
    """v0.34/v0.35: stable supports no feature, incubating (v0.36's stable code) the four stable ones,
    experimental (v0.36's incubating code) the rest (data/versions.yaml allocator.variantFeatures)."""
    for release in ("1.35", "1.34"):
        assert Features().variant(release) == "stable"
        binding = Features(admin_access=True, device_binding_and_status=True)
        assert (binding.variant(release), binding.implementation(release)) == ("experimental", "incubating")
    assert Features(admin_access=True, device_binding_and_status=True).variant("1.36") == "incubating"


def test_distinct_attribute_is_honoured_by_the_138_stable_variant() -> None:
    """v0.37's stable allocator rejects distinctAttribute; v0.38's stable (v0.37's incubating code) has it."""
    from kubedra.model.objects import DeviceConstraint

    basic = Features(prioritized_list=True)
    slices = [slice_("s1", [dev("d0", {"x": "a"}), dev("d1", {"x": "a"}), dev("d2", {"x": "b"})])]
    c = claim("c", req(count=2), constraints=[DeviceConstraint(distinct_attribute="driver-a/x")])
    with pytest.raises(AllocationError, match="empty constraint"):
        alloc(slices, "1.37", features=basic).allocate(node(), [c])
    assert picked(alloc(slices, "1.38", features=basic).allocate(node(), [c])) == [
        [("req-0", "d0"), ("req-0", "d2")]
    ]

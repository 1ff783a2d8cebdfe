"""Allocator behaviour that changed in a release (data/versions.yaml ``since`` and ``byRelease``), each checked
on both sides of the release that changed it (k8s.io/dynamic-resource-allocation v0.37.2 against
v0.38.0-beta.0)."""

from __future__ import annotations

import pytest

from kubedra.allocator import AllocatedState, AllocationError, Allocator, FailedOnNodeError, Features
from kubedra.model.objects import DeviceAttribute, DeviceConstraint, DeviceDerivedAttribute

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
    basic = Features(prioritized_list=True)
    slices = [slice_("s1", [dev("d0", {"x": "a"}), dev("d1", {"x": "a"}), dev("d2", {"x": "b"})])]
    c = claim("c", req(count=2), constraints=[DeviceConstraint(distinct_attribute="driver-a/x")])
    with pytest.raises(AllocationError, match="empty constraint"):
        alloc(slices, "1.37", features=basic).allocate(node(), [c])
    assert picked(alloc(slices, "1.38", features=basic).allocate(node(), [c])) == [
        [("req-0", "d0"), ("req-0", "d2")]
    ]


def _attr(kind: str, value: object) -> dict[str, DeviceAttribute]:
    return {"m": DeviceAttribute(kind, value)}  # type: ignore[arg-type]


LIST_TYPES = Features(list_type_attributes=True, derived_attributes=True)


@pytest.mark.parametrize(
    ("release", "features", "outcome"),
    [
        # v0.37: the first device passes, the second has no common value
        ("1.37", Features(prioritized_list=True), "cannot add device driver-a/pool-1/d1 because"),
        # v0.38's stable variant (v0.37's incubating code) names the claim and request
        (
            "1.38",
            Features(prioritized_list=True),
            "claim default/c, request req-0: device driver-a/pool-1/d0: unsupported attribute value for driver-a/m",
        ),
        # v0.38's incubating variant returns the error as it is
        (
            "1.38",
            Features(derived_attributes=True),
            "^device driver-a/pool-1/d0: unsupported attribute value",
        ),
    ],
)
def test_a_list_attribute_without_list_types_fails_the_allocation_from_138(
    release: str, features: Features, outcome: str
) -> None:
    """allocator.attributeValuesTyped: without DRAListTypeAttributes v0.38 stops at a list value."""
    slices = [slice_("s1", [dev("d0"), dev("d1")])]
    slices[0].devices[0].attributes = _attr("strings", ["a"])
    slices[0].devices[1].attributes = _attr("strings", ["b"])
    c = claim("c", all_req(), constraints=[DeviceConstraint(match_attribute="driver-a/m")])
    with pytest.raises(AllocationError, match=outcome):
        alloc(slices, release, features=features).allocate(node(), [c])


@pytest.mark.parametrize("release", ["1.37", "1.38"])
@pytest.mark.parametrize(
    "value", [DeviceAttribute("strings", []), DeviceAttribute("version", "99999999999999999999.0.0")]
)
def test_an_attribute_v038_cannot_represent_fails_the_allocation(
    release: str, value: DeviceAttribute
) -> None:
    """api/conversion.go attrValue: an empty list or a version semver.New rejects is nil from v0.38."""
    slices = [slice_("s1", [dev("d0")])]
    slices[0].devices[0].attributes = {"m": value}
    c = claim("c", req(), constraints=[DeviceConstraint(match_attribute="driver-a/m")])
    a = alloc(slices, release, features=LIST_TYPES)
    if release == "1.38":
        with pytest.raises(AllocationError, match=r"^device driver-a/pool-1/d0: unsupported attribute value"):
            a.allocate(node(), [c])
    elif value.kind == "strings":  # v0.37: an empty list is no set, so the constraint is not met
        assert a.allocate(node(), [c]) is None
    else:  # v0.37 compares the version's text
        assert picked(a.allocate(node(), [c])) == [[("req-0", "d0")]]


@pytest.mark.parametrize(("release", "allocated"), [("1.37", False), ("1.38", True)])
@pytest.mark.parametrize("constraint", ["match", "distinct"])
def test_versions_compare_without_build_metadata_from_138(
    release: str, allocated: bool, constraint: str
) -> None:
    """v0.38 compares versions with semver's Equals (versionWithoutBuild for sets): 1.0.0+a equals 1.0.0+b."""
    slices = [slice_("s1", [dev("d0"), dev("d1")])]
    slices[0].devices[0].attributes = _attr("version", "1.0.0+a")
    slices[0].devices[1].attributes = _attr("version", "1.0.0+b")
    spec = (
        DeviceConstraint(match_attribute="driver-a/m")
        if constraint == "match"
        else DeviceConstraint(distinct_attribute="driver-a/m")
    )
    # v0.37's stable variant has no distinctAttribute: its incubating one compares scalars there
    scalar = (
        Features(device_binding_and_status=True) if (release, constraint) == ("1.37", "distinct") else None
    )
    for features in (scalar or Features(prioritized_list=True), LIST_TYPES):
        res = alloc(slices, release, features=features).allocate(
            node(), [claim("c", req(count=2), constraints=[spec])]
        )
        assert (res is not None) is (allocated if constraint == "match" else not allocated)


@pytest.mark.parametrize(("release", "allocated"), [("1.37", False), ("1.38", True)])
def test_a_derived_empty_list_is_an_empty_set_from_138(release: str, allocated: bool) -> None:
    """cel/compile.go valToDeviceAttribute gives []string{} for an empty list; v0.37's attributeAsSet made it
    no set (the constraint fails), v0.38's an empty one (a first device; disjoint from every other). Found by
    the differential test at 1.38 (seed 8, #2358)."""
    slices = [slice_("s1", [dev("d0"), dev("d1")])]
    derived = [DeviceDerivedAttribute(name="driver-a/m", expression="[]")]
    one = claim(
        "c", req(derived_attributes=derived), constraints=[DeviceConstraint(match_attribute="driver-a/m")]
    )
    two = claim(
        "c",
        req(count=2, derived_attributes=derived),
        constraints=[DeviceConstraint(distinct_attribute="driver-a/m")],
    )
    for c in (one, two):
        res = alloc(slices, release, features=LIST_TYPES).allocate(node(), [c])
        assert (res is not None) is allocated

"""Allocator behaviour that differs between releases of k8s.io/dynamic-resource-allocation, each modelled
as a fact of data/versions.yaml (``since``) and checked at the releases on either side of it."""

from __future__ import annotations

import pytest

from kubedra.allocator import Allocator, Features
from kubedra.model.objects import DeviceConstraint

from .helpers import claim, cls, consumes, counter_set, dev, node, picked, req, slice_

INCUBATING = Features(
    admin_access=True,
    prioritized_list=True,
    partitionable_devices=True,
    device_taints=True,
    device_binding_and_status=True,
    consumable_capacity=True,
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
    ("target", "allocates"), [("1.35", False), ("1.36", False), ("1.37", True), ("1.38", True)]
)
def test_two_drivers_pools_of_one_name_share_counters_until_137(target, allocates):
    # allocator.countersKeyedByDriverAndPool: v0.36 keys its counter caches by pool name, so driver-b's
    # device draws on the slot driver-a's device took; v0.37 keys them by driver and pool
    a = Allocator(INCUBATING, [cls()], [*_pool("driver-a"), *_pool("driver-b")], target_version=target)
    res = a.allocate(node(), [claim("c", req(count=2))])
    if allocates:
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
    a = Allocator(INCUBATING, [cls()], [slice_("s", devices)], target_version=target)
    res = a.allocate(node(), [claim("c", req(count=3), constraints=distinct)])
    if allocates:
        assert picked(res) == [[("req-0", "d0"), ("req-0", "d1"), ("req-0", "d2")]]
    else:
        assert res is None

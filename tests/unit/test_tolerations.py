"""Toleration matching: one implementation (kubedra.model.tolerations) for core/v1 Toleration vs Taint and for
resource.k8s.io DeviceToleration vs DeviceTaint, as core/v1 toleration.go and resourceclaim.ToleratesTaint."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocator.taints import eviction_delay, taint_blocks
from kubedra.model.objects import (
    Device,
    DeviceTaint,
    DeviceToleration,
    Node,
    ObjectMeta,
    Pod,
    Taint,
    Toleration,
)
from kubedra.model.tolerations import tolerates, untolerated
from kubedra.scheduler import filters

TAINT = {"key": "gpu", "value": "a100", "effect": "NoSchedule"}

CASES = [
    # (toleration fields, tolerated)
    ({"key": "gpu", "operator": "Equal", "value": "a100", "effect": "NoSchedule"}, True),
    ({"key": "gpu", "operator": "", "value": "a100"}, True),  # empty operator is Equal; empty effect: all
    ({"key": "gpu", "operator": "Equal", "value": "h100"}, False),
    ({"key": "gpu", "operator": "Exists"}, True),
    ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False),  # effect must be equal when set
    ({"key": "", "operator": "Exists"}, True),  # empty key + Exists tolerates everything
    ({"key": "", "operator": "Equal", "value": "a100"}, True),  # empty key matches all keys
    ({"key": "other", "operator": "Exists"}, False),
    ({"key": "gpu", "operator": "Gt", "value": "1"}, False),  # comparison operators: gate off, no match
    ({"key": "gpu", "operator": "Bogus"}, False),
]


@pytest.mark.parametrize(("tol", "want"), CASES)
def test_both_apis_tolerate_alike(tol: dict[str, Any], want: bool) -> None:
    assert tolerates(Toleration(**tol), Taint(**TAINT)) is want
    assert tolerates(DeviceToleration(**tol), DeviceTaint(**TAINT)) is want


@pytest.mark.parametrize(("tol", "want"), CASES)
def test_scheduler_and_allocator_callers_agree(tol: dict[str, Any], want: bool) -> None:
    """The TaintToleration filter and the allocator's device-taint check use the same matching."""
    pod = Pod(meta=ObjectMeta(name="p"), tolerations=[Toleration(**tol)])
    node = Node(meta=ObjectMeta(name="n"), taints=[Taint(**TAINT)])
    assert (filters.taints(pod, node) is None) is want
    device = Device(name="d", taints=[DeviceTaint(**TAINT)])
    assert (taint_blocks(device, [DeviceToleration(**tol)]) is None) is want


def test_only_no_schedule_and_no_execute_block() -> None:
    none = DeviceTaint(key="k", effect="None")
    prefer = Taint(key="k", effect="PreferNoSchedule")
    assert taint_blocks(Device(name="d", taints=[none]), []) is None
    assert untolerated([prefer], []) is None
    hard = Taint(key="k", effect="NoExecute")
    assert untolerated([prefer, hard], []) is hard


def test_eviction_counts_only_no_execute_tolerations() -> None:
    taint = DeviceTaint(key="k", effect="NoExecute")
    assert (
        eviction_delay(taint, [DeviceToleration(key="k", operator="Exists")]) == 0
    )  # no effect: not counted
    tol = DeviceToleration(key="k", operator="Exists", effect="NoExecute", toleration_seconds=30)
    assert eviction_delay(taint, [tol]) == 30
    assert eviction_delay(taint, [DeviceToleration(operator="Exists", effect="NoExecute")]) is None

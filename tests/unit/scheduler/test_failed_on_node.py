"""Allocation errors that fail one node only (upstream ``ErrFailedAllocationOnNode``): kube-scheduler's
DynamicResources filter marks that node unschedulable with the message and tries the others, where any other
allocation error aborts the pod's scheduling attempt (pkg/scheduler/framework/plugins/dynamicresources
dynamicresources.go, v1.36.3 to v1.38.0-beta.0)."""

from __future__ import annotations

import pytest
from allocator.helpers import all_req, cls, dev, req, slice_

from kubedra.allocator.session import engine_config
from kubedra.model.objects import DeviceClaim, ObjectMeta, ResourceClaimTemplate
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.simulator import Scheduler
from scheduler.test_simulator import gpu_node, pod


def _place(release: str, request, broken: list) -> tuple[str | None, str | None]:
    """One pod whose claim has ``request``, on n0 (``broken``: its slices) and n1 (one good GPU)."""
    nodes = [gpu_node("n0"), gpu_node("n1")]
    slices = [*broken, slice_("n1-gpus", [dev("gpu-0")], pool="n1", node_name="n1")]
    tmpl = ResourceClaimTemplate(
        meta=ObjectMeta(name="t", namespace="default"), spec=DeviceClaim(requests=[request])
    )
    pods = build_sim_pods([pod("p0", claim_template="t")], [tmpl], [])
    Scheduler(engine_config(release), nodes, [cls()], slices).run(pods)
    return pods[0].node, pods[0].reason


INCOMPLETE = [slice_("n0-a", [dev("gpu-0")], pool="n0", node_name="n0", count=2)]
INVALID = [
    slice_("n0-a", [dev("gpu-0")], pool="n0", node_name="n0", count=2),
    slice_("n0-b", [dev("gpu-0")], pool="n0", node_name="n0", count=2),
]


def test_all_devices_on_an_incomplete_pool_aborts_the_attempt_at_137() -> None:
    node, reason = _place("1.37", all_req("gpu"), INCOMPLETE)
    assert node is None
    assert reason is not None
    assert reason.startswith("error: ")
    assert "is currently being updated" in reason


@pytest.mark.parametrize("broken", [INCOMPLETE, INVALID], ids=["incomplete", "invalid"])
def test_all_devices_on_an_unready_pool_fails_only_that_node_from_138(broken: list) -> None:
    """kubernetes#141898 (k8s.io/dynamic-resource-allocation v0.38.0-beta.0): the pod goes to the other node."""
    assert _place("1.38", all_req("gpu"), broken)[0] == "n1"


@pytest.mark.parametrize("release", ["1.36", "1.37", "1.38"])
def test_invalid_pools_fail_only_that_node_at_every_release(release: str) -> None:
    """ "invalid resource pools were encountered" wraps ErrFailedAllocationOnNode in every supported allocator."""
    assert _place(release, req("gpu"), INVALID)[0] == "n1"

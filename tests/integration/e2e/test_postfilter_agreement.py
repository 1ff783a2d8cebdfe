"""DynamicResources' PostFilter against the real kube-scheduler and kube-controller-manager of each testbed
release: a ResourceClaim allocated on a node its pod cannot run on, reserved by no pod (a driver or an earlier
scheduler wrote the allocation without reservedFor, which the resourceclaim controller leaves alone), keeps the
pod pending until the scheduler's PostFilter deallocates it; the next attempt allocates it on the pod's node.
kubedra's simulation of the same objects must place the pod on the same node, with the claim allocated there.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from kubedra.allocator.session import engine_config
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.simulator import Scheduler
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import GROUP_LABEL, listed
from kubedra.testing.kubeapi import resource_path

from .harness import CLASS_LABEL, RESOURCE, NodeGroup, Scenario, Testbed, _typed
from .test_scheduler_agreement import _claim, _exactly

pytestmark = pytest.mark.integration

ONE_GPU = _claim({"name": "gpu", "exactly": _exactly("gpu.nvidia.com", 1)})


def _bed(cp: ControlPlane) -> Iterator[Testbed]:
    tb = Testbed(
        cp, Scenario("postfilter", [NodeGroup("a", "H100-80GB", 1), NodeGroup("b", "H100-80GB", 1)], {}, [])
    )
    tb.create()
    try:
        yield tb
    finally:
        tb.delete()


@pytest.fixture
def bed(controlplane: ControlPlane) -> Iterator[Testbed]:
    yield from _bed(controlplane)


@pytest.fixture
def release_bed(release_controlplane: ControlPlane) -> Iterator[Testbed]:
    yield from _bed(release_controlplane)


def test_postfilter_frees_an_unreserved_claim_like_kube_scheduler(bed: Testbed) -> None:
    _agree(bed)


# The same at the testbed's other releases (1.36, 1.35, the 1.38 pre-release), against each one's control plane.
def test_postfilter_frees_an_unreserved_claim_like_each_release_kube_scheduler(release_bed: Testbed) -> None:
    _agree(release_bed)


def _allocate_on(tb: Testbed, claim: dict[str, Any], node: str) -> dict[str, Any]:
    """Write ``claim``'s status as a driver may: allocated to the first GPU of ``node``, reserved by no pod."""
    gpu = next(
        (s["spec"]["pool"]["name"], s["spec"]["driver"], d["name"])
        for s in tb.slices
        if s["spec"].get("nodeName") == node
        for d in s["spec"].get("devices") or []
    )
    pool, driver, device = gpu
    allocation = {
        "devices": {"results": [{"request": "gpu", "driver": driver, "pool": pool, "device": device}]},
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
        },
    }
    return tb.api.apply_status(claim, {"allocation": allocation})


def _agree(tb: Testbed) -> None:
    api = tb.api
    a, b = tb.node_names("a")[0], tb.node_names("b")[0]
    claim = api.create(
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": tb.namespace},
            "spec": ONE_GPU,
        }
    )
    claim = _allocate_on(tb, claim, a)
    assert claim["status"]["allocation"]["nodeSelector"], claim
    assert not claim["status"].get("reservedFor")
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": tb.namespace},
        "spec": {
            "nodeSelector": {GROUP_LABEL: tb.prefix, CLASS_LABEL: "b"},  # node b only: the claim is on a
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "10m", "memory": "10Mi"}, "claims": [{"name": "gpu"}]},
                }
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}],
        },
    }
    # kubedra first, on the objects as the API server stored them before the pod exists
    nodes = [_typed(api.get(resource_path("v1", "Node", n))) for n in tb.node_class]
    slices = [
        _typed(s) for s in listed(api, RESOURCE, "ResourceSlice") if s["spec"].get("nodeName") in (a, b)
    ]
    classes = [_typed(c) for c in listed(api, RESOURCE, "DeviceClass")]
    sim_claim = _typed(copy.deepcopy(claim))
    sim = Scheduler(engine_config(tb.cp.version), nodes, classes, slices, claims=[sim_claim])
    [sp] = build_sim_pods([_typed(copy.deepcopy(pod))], [], [sim_claim])
    sim.run([sp])

    tb.pods.append(pod)
    api.create(pod)

    def bound() -> bool:
        return bool(tb._pods()["p"]["spec"].get("nodeName"))

    try:
        api.wait_for("the pod to be bound after the PostFilter freed its claim", bound, timeout=60)
    except TimeoutError:
        raise AssertionError(
            f"pod not bound: {tb._pods()['p'].get('status')}\n{tb.cp.log_tail('kube-scheduler', 40)}"
        ) from None
    real = api.get(resource_path(RESOURCE, "ResourceClaim", "shared", tb.namespace))
    real_devices = [(r["pool"], r["device"]) for r in real["status"]["allocation"]["devices"]["results"]]
    real_node = tb._pods()["p"]["spec"]["nodeName"]
    assert real_node == b
    assert {pool for pool, _ in real_devices} == {b}, real["status"]  # reallocated on b's devices

    assert sp.node == real_node, sp.reason
    assert sim_claim.allocation is not None
    assert [(r.pool, r.device) for r in sim_claim.allocation.results] == real_devices
    assert len(sim.notes) == 1
    assert f"deallocated ResourceClaim {tb.namespace}/shared" in sim.notes[0]

"""DynamicResources' PostFilter against the real kube-scheduler and kube-controller-manager of each testbed
release: a ResourceClaim allocated on a node its pod cannot run on, reserved by no pod (a driver or an earlier
scheduler wrote the allocation without reservedFor, which the resourceclaim controller leaves alone), keeps the
pod pending until the scheduler's PostFilter deallocates it; the next attempt allocates it on the pod's node.
kubedra's simulation of the same objects must place the pod on the same node, with the claim allocated there.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubedra.allocator.session import engine_config
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.simulator import Scheduler
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import GROUP_LABEL, listed
from kubedra.testing.kubeapi import resource_path

from .harness import CLASS_LABEL, RESOURCE, NodeGroup, Scenario, Testbed, _typed, claim, exactly

pytestmark = pytest.mark.integration

ONE_GPU = claim({"name": "gpu", "exactly": exactly("gpu.nvidia.com", 1)})


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


def test_postfilter_leaves_a_claim_another_pod_reserved_like_kube_scheduler(bed: Testbed) -> None:
    _reserved(bed)


def test_postfilter_leaves_a_claim_another_pod_reserved_like_each_release_kube_scheduler(
    release_bed: Testbed,
) -> None:
    _reserved(release_bed)


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


def _claim_pod(tb: Testbed, name: str, node_class: str) -> dict[str, Any]:
    """A pod of the scenario's claim ``shared``, allowed on the nodes of ``node_class`` only."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": tb.namespace},
        "spec": {
            "nodeSelector": {GROUP_LABEL: tb.prefix, CLASS_LABEL: node_class},
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


def _create_claim(tb: Testbed) -> dict[str, Any]:
    return tb.api.create(
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": tb.namespace},
            "spec": ONE_GPU,
        }
    )


def _simulator(tb: Testbed, claim: dict[str, Any]) -> tuple[Scheduler, Any]:
    """kubedra on the objects as the API server stored them, with ``claim`` as it is now."""
    api = tb.api
    names = set(tb.node_class)
    nodes = [_typed(api.get(resource_path("v1", "Node", n))) for n in tb.node_class]
    slices = [_typed(s) for s in listed(api, RESOURCE, "ResourceSlice") if s["spec"].get("nodeName") in names]
    classes = [_typed(c) for c in listed(api, RESOURCE, "DeviceClass")]
    sim_claim = _typed(copy.deepcopy(claim))
    return Scheduler(engine_config(tb.cp.version), nodes, classes, slices, claims=[sim_claim]), sim_claim


def _reserved(tb: Testbed) -> None:
    """The holder, on node a, has the claim allocated and reserved by the scheduler; a second pod of the claim
    allowed only on b stays pending and the claim stays on a: the PostFilter leaves a reserved claim alone."""
    api = tb.api
    a = tb.node_names("a")[0]
    claim = _create_claim(tb)
    holder, waiting = _claim_pod(tb, "holder", "a"), _claim_pod(tb, "p", "b")
    sim, sim_claim = _simulator(tb, claim)
    sim_holder, sim_waiting = build_sim_pods(
        [_typed(copy.deepcopy(p)) for p in (holder, waiting)], [], [sim_claim]
    )
    sim.run([sim_holder])
    sim.run([sim_waiting])

    tb.pods += [holder, waiting]
    api.create(holder)
    tb._settle(["holder"])
    api.create(waiting)
    tb._settle(["p"])
    time.sleep(3)  # a PostFilter that deallocated would have written the claim by now
    pods = tb._pods()
    real = api.get(resource_path(RESOURCE, "ResourceClaim", "shared", tb.namespace))
    assert pods["holder"]["spec"].get("nodeName") == a
    assert not pods["p"]["spec"].get("nodeName")
    assert [r["pool"] for r in real["status"]["allocation"]["devices"]["results"]] == [a]
    assert [r["name"] for r in real["status"]["reservedFor"]] == ["holder"]

    assert sim_holder.node == a
    assert sim_waiting.node is None
    assert sim_claim.allocation is not None
    assert [r.pool for r in sim_claim.allocation.results] == [a]
    assert sim.notes == []
    # the waiting pod alone, on the claim as stored (reservedFor: the holder, not in the input): the same
    sim, sim_claim = _simulator(tb, real)
    [sp] = build_sim_pods([_typed(copy.deepcopy(waiting))], [], [sim_claim])
    sim.run([sp])
    assert sp.node is None
    assert sim_claim.allocation is not None
    assert [r.pool for r in sim_claim.allocation.results] == [a]
    assert sim.notes == []


def _agree(tb: Testbed) -> None:
    api = tb.api
    a, b = tb.node_names("a")[0], tb.node_names("b")[0]
    claim = _allocate_on(tb, _create_claim(tb), a)
    assert claim["status"]["allocation"]["nodeSelector"], claim
    assert not claim["status"].get("reservedFor")
    pod = _claim_pod(tb, "p", "b")  # node b only: the claim is on a
    sim, sim_claim = _simulator(tb, claim)
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

"""Preemption for GPUs against the real kube-scheduler: a high-priority pod that finds a node's GPUs held by a
low-priority pod preempts it where the GPUs are the device plugin's extended resource (NodeResourcesFit says
Unschedulable), and leaves it running where they are DRA devices (DynamicResources says
UnschedulableAndUnresolvable, a node DefaultPreemption never tries): no victim deleted, no nominatedNodeName.
kubedra's simulation of the same pods on the objects the API server stored must say the same.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubedra.allocator.session import engine_config
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.preemption import DRA_NOT_PREEMPTED
from kubedra.scheduler.simulator import Scheduler
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import GROUP_LABEL, listed, ready_node
from kubedra.testing.kubeapi import resource_path
from kubedra.vendors.nvidia.nodes import dra_node

from .harness import (
    CLASS_LABEL,
    RESOURCE,
    NodeGroup,
    PodSpec,
    Scenario,
    Testbed,
    _typed,
    beds,
    claim,
    exactly,
)

pytestmark = pytest.mark.integration

LOW, HIGH = 0, 1000
ONE_GPU = claim({"name": "gpu", "exactly": exactly("gpu.nvidia.com", 1)})


class PreemptionBed(Testbed):
    """One node with one GPU, as a DRA device or as the device plugin's nvidia.com/gpu, and two PriorityClasses."""

    __test__ = False

    def __init__(self, cp: ControlPlane, dra: bool) -> None:
        group = NodeGroup("h100", "H100-80GB", 1)
        super().__init__(
            cp, Scenario("dra-preempt" if dra else "gpu-preempt", [group] if dra else [], {}, [])
        )
        if dra:
            self.scenario.templates = {"one": ONE_GPU}
        self.dra = dra
        self.classes = [f"{self.prefix}-low", f"{self.prefix}-high"]

    def create(self) -> None:
        for name, value in zip(self.classes, (LOW, HIGH), strict=True):
            pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
            self.api.create({**pc, "value": value})
        super().create()
        if not self.dra:  # a device-plugin node: nvidia.com/gpu in its status, no ResourceSlices
            name = f"{self.prefix}-h100-0"
            node = dra_node(
                name, "H100-80GB", 1, "full", labels={GROUP_LABEL: self.prefix, CLASS_LABEL: "h100"}
            )
            status = node.pop("status")
            for key in ("capacity", "allocatable"):
                status[key]["nvidia.com/gpu"] = "1"
            node["metadata"].pop("uid", None)
            ready_node(self.api, self.api.create(node), status)
            self.node_class[name] = "h100"

    def pod(self, p: PodSpec) -> dict[str, Any]:
        return super().pod(p) if self.dra else _device_plugin_pod(super().pod(p))

    def delete(self) -> None:
        super().delete()
        for name in self.classes:
            self.api.request("DELETE", resource_path("scheduling.k8s.io/v1", "PriorityClass", name))


def _device_plugin_pod(pod: dict[str, Any]) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    del pod["spec"]["resourceClaims"]
    res = pod["spec"]["containers"][0]["resources"]
    del res["claims"]
    res["limits"] = {"nvidia.com/gpu": "1"}
    return pod


@pytest.fixture
def bed(controlplane: ControlPlane) -> Iterator[Any]:
    yield from beds(functools.partial(PreemptionBed, controlplane))


@pytest.fixture
def release_bed(release_controlplane: ControlPlane) -> Iterator[Any]:
    yield from beds(functools.partial(PreemptionBed, release_controlplane))


@pytest.mark.parametrize("dra", [True, False], ids=["dra-devices", "device-plugin-gpus"])
def test_preemption_for_gpus_matches_kube_scheduler(dra: bool, bed: Any) -> None:
    _agree(bed(dra), dra)


# The same at the testbed's other releases (1.36, the 1.38 pre-release), against each one's kube-scheduler.
@pytest.mark.parametrize("dra", [True, False], ids=["dra-devices", "device-plugin-gpus"])
def test_preemption_for_gpus_matches_each_release_kube_scheduler(dra: bool, release_bed: Any) -> None:
    _agree(release_bed(dra), dra)


def _agree(tb: PreemptionBed, dra: bool) -> None:
    low_pod, high_pod = tb.pod(PodSpec("low", "one")), tb.pod(PodSpec("high", "one"))
    high_pod["spec"]["priorityClassName"] = tb.classes[1]
    low_pod["spec"]["priorityClassName"] = tb.classes[0]
    tb.pods += [low_pod, high_pod]
    tb.api.create(low_pod)
    tb._settle(["low"])
    tb.api.create(high_pod)
    node = next(iter(tb.node_class))

    def decided() -> bool:
        pods = tb._pods()
        h = pods["high"]
        if dra:
            return any(
                c.get("reason") == "Unschedulable" for c in h.get("status", {}).get("conditions") or []
            )
        return h.get("status", {}).get("nominatedNodeName") == node or bool(h["spec"].get("nodeName"))

    tb.api.wait_for("the high-priority pod to be unschedulable or nominated", decided, timeout=60)
    time.sleep(3)  # preemption (asynchronous from 1.34) has had its chance to delete a victim
    pods = tb._pods()
    victim_gone = "low" not in pods or bool(pods["low"]["metadata"].get("deletionTimestamp"))
    nominated = pods["high"].get("status", {}).get("nominatedNodeName")
    if dra:  # the real kube-scheduler evicts nothing and nominates nothing
        assert not victim_gone, pods.get("low")
        assert pods["low"]["spec"].get("nodeName") == node
        assert not nominated
        assert not pods["high"]["spec"].get("nodeName")
    else:  # the twin: the victim is deleted and the preemptor nominated (or bound, once the victim is gone)
        assert victim_gone
        assert nominated == node or pods["high"]["spec"].get("nodeName") == node

    # kubedra on what the API server stored, the same two pods in the same order
    api = tb.api
    nodes = [_typed(api.get(resource_path("v1", "Node", n))) for n in tb.node_class]
    slices = [_typed(s) for s in listed(api, RESOURCE, "ResourceSlice") if s["spec"].get("nodeName") == node]
    classes = [_typed(c) for c in listed(api, RESOURCE, "DeviceClass")]
    templates = [_typed(t) for t in listed(api, RESOURCE, "ResourceClaimTemplate", tb.namespace)]
    priority = {tb.classes[0]: LOW, tb.classes[1]: HIGH}
    sent = []
    for p in (low_pod, high_pod):
        p = copy.deepcopy(p)
        p["spec"]["priority"] = priority[p["spec"]["priorityClassName"]]  # as the Priority admission sets it
        sent.append(_typed(p))
    sim = Scheduler(engine_config(tb.cp.version), nodes, classes, slices)
    low_sp, high_sp = build_sim_pods(sent, templates, [])
    sim.run([low_sp])
    assert low_sp.node == node
    sim.run([high_sp])
    if dra:
        assert sim.evicted == []
        assert high_sp.node is None
        assert low_sp.node == node
        assert (high_sp.reason or "").endswith(DRA_NOT_PREEMPTED.format(n=1))
    else:
        assert sim.evicted == [low_sp]
        assert high_sp.node == node

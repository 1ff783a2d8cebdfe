"""kube-scheduler reads a pod's and a node's quantities as integers per release (kubedra.scheduler.pods): each
case puts one pod on one node of its own on each testbed release's real control plane and asserts kubedra's
simulation binds it or not as kube-scheduler does. The cases differ between releases, or from a reading of each
container alone: a GPU request of 1e20 reads 0 before 1.38 (fits a node without GPUs) and MaxInt64 at 1.38, a node
allocatable of 1e20 likewise; 0.5 + 0.5 bytes of memory is 1 byte; 0.5m + 0.5m CPU is 2m (each defaulted to 1m)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubedra.allocator.session import engine_config
from kubedra.k8s import versions
from kubedra.model.objects import Node, Pod
from kubedra.model.parse import parse_object
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.simulator import Scheduler
from kubedra.testing import gpunodes
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import create_ignore_exists, pod_state, ready_node, wait_for_service_account

pytestmark = pytest.mark.integration

NAMESPACE = "kubedra-qsched"
CASE_LABEL = "kubedra.dev/quantity-case"
BASE = {"cpu": "8", "memory": "32Gi", "pods": "10"}

# name: (the node's allocatable beyond BASE, each container's limits, kube-scheduler binds it before 1.38, at 1.38)
CASES: dict[str, tuple[dict[str, str], list[dict[str, str]], bool, bool]] = {
    "gpu-1e20-on-no-gpus": ({}, [{"example.com/gpu": "1e20"}], True, False),
    "gpu-8-on-1e20": ({"example.com/gpu": "1e20"}, [{"example.com/gpu": "8"}], False, True),
    "half-bytes-twice": ({"memory": "1"}, [{"memory": "0.5"}, {"memory": "0.5"}], True, True),
    "half-millicores-twice": ({"cpu": "1m"}, [{"cpu": "0.5m"}, {"cpu": "0.5m"}], False, False),
}


def _node(case: str, extra: dict[str, str], cp: ControlPlane) -> tuple[dict[str, Any], dict[str, Any]]:
    name = f"qv-{case}"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {CASE_LABEL: case}}}
    status = gpunodes.node_status(name, "h100-80gb", dra=False)
    resources = {**BASE, **extra}
    status["capacity"] = dict(resources)
    status["allocatable"] = dict(resources)
    return node, status


def _pod(case: str, limits: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": case, "namespace": NAMESPACE},
        "spec": {
            "nodeSelector": {CASE_LABEL: case},
            "containers": [
                {"name": f"c{i}", "image": "x:1", "resources": {"limits": dict(lim)}}
                for i, lim in enumerate(limits)
            ],
        },
    }


def _simulated(release: str, node: dict[str, Any], status: dict[str, Any], pod: dict[str, Any]) -> bool:
    parsed_node = parse_object({**copy.deepcopy(node), "status": status})
    parsed_pod = parse_object(copy.deepcopy(pod))
    assert parsed_node is not None
    assert parsed_pod is not None
    n, p = parsed_node.obj, parsed_pod.obj
    assert isinstance(n, Node)
    assert isinstance(p, Pod)
    s = Scheduler(engine_config(release), [n], dra=False)
    pods = build_sim_pods([p], [], [], release=release)
    s.run(pods)
    return pods[0].node is not None


def _agree(cp: ControlPlane) -> None:
    api = cp.api
    create_ignore_exists(api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    wait_for_service_account(api, NAMESPACE)
    real: dict[str, bool] = {}
    simulated: dict[str, bool] = {}
    made = []
    try:
        for case, (extra, limits, _, _) in CASES.items():
            node, status = _node(case, extra, cp)
            made.append(ready_node(api, api.create(node), status))
            pod = _pod(case, limits)
            made.append(api.create(pod))
            simulated[case] = _simulated(cp.version, node, status, pod)
        for case in CASES:
            path = f"/api/v1/namespaces/{NAMESPACE}/pods/{case}"

            def decided(p: str = path) -> str | None:
                return _decided(api.get(p))

            real[case] = api.wait_for(f"pod {case} scheduled or unschedulable", decided) == "bound"
    finally:
        for obj in reversed(made):
            api.delete(obj)
    newest = versions.holds(
        "quantity.nineteenDigitInt64", cp.version
    )  # v0.38's readings saturate; before, wrap
    expected = {case: (at_138 if newest else at_137) for case, (_, _, at_137, at_138) in CASES.items()}
    assert real == expected, f"kube-scheduler {cp.version} binds {real}, the cases say {expected}"
    assert simulated == real


def _decided(pod: dict[str, Any]) -> str | None:
    state = pod_state(pod)
    return None if state == "waiting" else state


def test_quantities_are_read_as_kube_scheduler_reads_them(controlplane: ControlPlane) -> None:
    _agree(controlplane)


def test_quantities_are_read_as_each_release_kube_scheduler_reads_them(
    release_controlplane: ControlPlane,
) -> None:
    _agree(release_controlplane)

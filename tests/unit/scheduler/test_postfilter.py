"""DynamicResources' PostFilter (``scheduler.draPostFilter``): a pod whose claim is allocated where it cannot run
gets the claim deallocated, when no other pod has reserved it, and is placed on the next attempt."""

from __future__ import annotations

import pytest
from allocator.helpers import DRIVER, claim, cls, req

from kubedra.allocator.session import engine_config
from kubedra.k8s import versions
from kubedra.k8s.quantity import Quantity
from kubedra.model.nodeaffinity import required_node_selector
from kubedra.model.objects import (
    AllocationResult,
    Container,
    DeviceRequestAllocationResult,
    ObjectMeta,
    Pod,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from kubedra.scheduler import postfilter
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.simulator import Scheduler

from .test_simulator import dra_cluster, gpu_node

RELEASES = ["1.34", "1.35", "1.36", "1.37", "1.38"]


def _allocated_on(name: str, node: str, device: str = "gpu-0") -> ResourceClaim:
    c = claim(name, req("gpu", 1))
    c.meta.uid = f"uid-{name}"
    c.allocation = AllocationResult(
        results=[DeviceRequestAllocationResult("gpu", DRIVER, node, device)],
        node_selector=required_node_selector(
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                        ]
                    }
                }
            }
        ),
    )
    return c


def _pod(name: str, claim_names: list[str], node_selector: dict[str, str] | None = None, cpu: int = 1) -> Pod:
    refs = [PodResourceClaim(name=f"c{i}", resource_claim_name=n) for i, n in enumerate(claim_names)]
    return Pod(
        meta=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}"),
        containers=[
            Container(name="c", requests={"cpu": Quantity.from_int(cpu)}, claims=[r.name for r in refs])
        ],
        resource_claims=refs,
        node_selector=node_selector or {},
    )


def _run(
    release: str, claims: list[ResourceClaim], pods: list[Pod], cpu: str = "16"
) -> tuple[Scheduler, list]:
    nodes, slices = dra_cluster(2, 1)
    nodes = [gpu_node(n.name, cpu=cpu) for n in nodes]
    for n in nodes:
        n.meta.labels = {"name": n.name}
    sched = Scheduler(engine_config(release), nodes, [cls()], slices, claims=claims)
    sps = build_sim_pods(pods, [], claims)
    sched.run(sps)
    return sched, sps


@pytest.mark.parametrize("release", RELEASES)
def test_an_unreserved_claim_allocated_where_the_pod_cannot_run_is_deallocated_and_allocated_again(release):
    c = _allocated_on("shared", "n0")
    sched, [sp] = _run(release, [c], [_pod("p", ["shared"], {"name": "n1"})])
    assert sp.node == "n1"
    assert c.allocation is not None
    assert [(r.pool, r.device) for r in c.allocation.results] == [("n1", "gpu-0")]
    assert len(sched.notes) == 1
    assert "DynamicResources PostFilter deallocated ResourceClaim default/shared" in sched.notes[0]
    assert sp.extra["postfilter"] == sched.notes


@pytest.mark.parametrize("reserved", ["other-pod", "the-pod"])
def test_a_claim_reserved_by_another_pod_stays_allocated_and_by_the_pod_itself_is_deallocated(reserved):
    c = _allocated_on("shared", "n0")
    uid = "uid-p" if reserved == "the-pod" else "uid-other"
    c.reserved_for = [ResourceClaimConsumerReference("pods", reserved, uid)]
    sched, [sp] = _run("1.37", [c], [_pod("p", ["shared"], {"name": "n1"})])
    if reserved == "the-pod":
        assert sp.node == "n1"
        assert c.reserved_for == []
    else:
        assert sp.node is None
        assert sched.notes == []
        assert c.allocation is not None
        assert c.allocation.results[0].pool == "n0"
        assert "PostFilter" not in (sp.reason or "")


def test_where_no_node_runs_the_dra_filter_nothing_is_deallocated():
    # the pod asks for more CPU than n1 has free: NodeResourcesFit fails before DynamicResources on n1, and
    # n0 fails the node selector; the Filter never saw the claim unavailable
    c = _allocated_on("shared", "n0")
    sched, [sp] = _run("1.37", [c], [_pod("p", ["shared"], {"name": "n1"}, cpu=32)])
    assert sp.node is None
    assert sched.notes == []
    assert c.allocation is not None


def test_a_claim_a_bound_pod_holds_stays_allocated():
    c = _allocated_on("shared", "n0")
    holder = _pod("holder", ["shared"], {"name": "n0"})
    waiting = _pod("p", ["shared"], {"name": "n1"})
    sched, [h, sp] = _run("1.37", [c], [holder, waiting])
    assert h.node == "n0"
    assert sp.node is None
    assert sched.notes == []


def test_one_claim_per_attempt_and_the_choice_is_said():
    a, b = _allocated_on("a", "n0"), _allocated_on("b", "n0")
    sched, [sp] = _run("1.37", [a, b], [_pod("p", ["a", "b"], {"name": "n1"})])
    # n1 has one GPU: after both are deallocated the pod needs two there, so it stays pending, having freed both
    assert sp.node is None
    assert a.allocation is None
    assert b.allocation is None
    assert len(sched.notes) == 2
    assert "picks one of the 2 such claims at random" in sched.notes[0]
    assert "picks one" not in sched.notes[1]
    assert "DynamicResources PostFilter deallocated ResourceClaim default/b" in (sp.reason or "")


def test_requeue_goes_behind_the_waiting_pods_of_its_priority():
    pods = [_pod(n, []) for n in "abcd"]
    sps = build_sim_pods(pods, [], [])
    sps[2].priority = -1
    queue = [sps[0], sps[1], sps[3], sps[2]]  # sorted: priority 0 first
    postfilter.requeue(queue, 0, sps[0])
    assert [p.name for p in queue] == ["a", "b", "d", "a", "c"]


def test_the_fact_is_read_per_release():
    for release in RELEASES:
        fact = versions.behaviour("scheduler.draPostFilter", release)
        assert fact == {"deallocatesUnreserved": True, "beforePreemption": True}


def _explain(tmp_path, reserved_for: str) -> tuple[int, list[str]]:
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from kubedra.cli import cli

    two_nodes = Path(__file__).parents[2] / "data" / "allocate" / "two-nodes.yaml"
    extra = tmp_path / "pod.yaml"
    extra.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: left, namespace: team-c}\n"
        "spec:\n  devices:\n    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]\n"
        "status:\n  allocation:\n    devices:\n      results:\n"
        "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-1}\n"
        "    nodeSelector:\n      nodeSelectorTerms:\n"
        "      - matchFields: [{key: metadata.name, operator: In, values: [node-a]}]\n"
        f"{reserved_for}"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-c, uid: uid-p}\n"
        "spec:\n  containers: [{name: c, image: x}]\n"
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n"
        "        - matchFields: [{key: metadata.name, operator: In, values: [node-b]}]\n"
        "  resourceClaims: [{name: gpu, resourceClaimName: left}]\n"
    )
    r = CliRunner().invoke(
        cli, ["explain", "pod/p", "-n", "team-c", str(two_nodes), str(extra), "-o", "json"]
    )
    return r.exit_code, json.loads(r.stdout).get("hints", [])


def test_explain_says_what_the_postfilter_does_for_an_unreserved_claim(tmp_path):
    code, hints = _explain(tmp_path, "")
    assert code == 1  # as the claim is now, no node: node-a fails the pod's affinity, node-b the allocation
    [hint] = hints
    assert "DynamicResources PostFilter deallocates ResourceClaim left" in hint
    assert "1 node" in hint
    # reserved by another pod: kube-scheduler leaves it, and explain says nothing of a PostFilter
    code, hints = _explain(tmp_path, "  reservedFor: [{resource: pods, name: other, uid: uid-other}]\n")
    assert code == 1
    assert not [h for h in hints if "PostFilter" in h]
    # reserved by this very pod: deallocated all the same
    code, hints = _explain(tmp_path, "  reservedFor: [{resource: pods, name: p, uid: uid-p}]\n")
    assert [h for h in hints if "PostFilter" in h]

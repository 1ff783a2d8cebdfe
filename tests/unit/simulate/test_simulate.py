"""Whole simulations: device-plugin vs DRA accounting, gangs, preemption, sharing, cluster views."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedra.errors import UsageError
from kubedra.report.output import to_yaml
from kubedra.scheduler.preemption import DRA_NOT_PREEMPTED
from kubedra.simulate.cluster import ClusterOptions
from kubedra.simulate.inputs import load_inputs
from kubedra.simulate.run import SimulateOptions, simulate
from kubedra.vendors.nvidia.cluster import cluster as nvidia_cluster

from .helpers import GI, MIB, deployment, inputs, run

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def by_name(result):
    return {p.name: p for p in result.pods}


def test_whole_gpus_account_the_same_in_both_modes():
    sim = run(deployment("inf", 3, memory="10Gi"), gpu_mode="full")
    dp, dra = sim.results["device-plugin"], sim.results["dra"]
    for r in (dp, dra):
        assert (r.placed, r.pending, r.physical, r.used) == (2, 1, 2, 2)
        assert r.requested_bytes == 2 * 10 * GI
        assert r.allocated_bytes == 2 * 81920 * MIB
    assert by_name(dp)["inf-2"].reason == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    assert by_name(dra)["inf-2"].reason.startswith(
        "0/1 nodes are available: 1 node(s) have all matching devices in use (request gpu)"
    )
    assert by_name(dra)["inf-0"].devices == ["gpu.nvidia.com/a100-80gb-0/gpu-0"]
    assert by_name(dp)["inf-0"].devices == []
    assert sim.density == 1.0


def test_dynamic_mig_sizing_places_seven_small_pods_on_one_gpu():
    sim = run(
        deployment("small", 7, memory="9Gi"), nodes="1x1xA100-80GB", gpu_mode="mig-dynamic", sizing="mig"
    )
    dp, dra = sim.results["device-plugin"], sim.results["dra"]
    assert (dp.placed, dra.placed) == (1, 7)
    assert (dp.used, dra.used, dra.physical) == (1, 1, 1)
    assert dra.allocated_bytes == 7 * 9728 * MIB
    assert dra.requested_bytes == 7 * 9 * GI
    assert all("-mig-1g10gb-19-" in p.devices[0] for p in dra.pods)
    assert sim.density == 7.0
    assert any("mig-dynamic has no device-plugin equivalent" in n for n in sim.notes)


def test_static_mig_resources_in_both_modes():
    sim = run(
        deployment("m", 8, resources="nvidia.com/mig-1g.10gb: 1"),
        nodes="1x1xA100-80GB",
        gpu_mode="mig-static:all-1g.10gb",
    )
    dp, dra = sim.results["device-plugin"], sim.results["dra"]
    assert (dp.placed, dra.placed) == (7, 7)
    assert dp.allocated_bytes == dra.allocated_bytes == 7 * 9728 * MIB
    assert (dp.used, dra.used) == (1, 1)
    assert "Insufficient nvidia.com/mig-1g.10gb" in by_name(dp)["m-7"].reason


def test_gang_all_or_nothing_and_devices_given_back():
    text = (
        """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train}
spec: {schedulingPolicy: {gang: {minCount: 3}}}
---
"""
        + deployment("train", 3, extra_spec="\n      schedulingGroup: {podGroupName: train}")
        + deployment("solo", 2)
    )
    sim = run(text, gpu_mode="full")
    for r in sim.results.values():
        pods = by_name(r)
        assert all(pods[f"train-{i}"].node is None for i in range(3))
        assert "gang default/train: only 2 of minCount 3" in pods["train-0"].reason
        assert pods["solo-0"].node
        assert pods["solo-1"].node


def test_missing_podgroup_keeps_pods_out_of_the_queue():
    sim = run(deployment("w", 1, extra_spec="\n      schedulingGroup: {podGroupName: nope}"), gpu_mode="full")
    for r in sim.results.values():
        (p,) = r.pods
        assert p.node is None
        assert "waiting for PodGroup default/nope" in (p.reason or "")


def test_preemption_evicts_a_lower_priority_cluster_pod_for_device_plugin_gpus_only():
    text = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: low-0}
spec:
  nodeName: a100-80gb-0
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: low-1}
spec:
  nodeName: a100-80gb-0
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: vip}
spec:
  priorityClassName: high
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    sim = run(text, gpu_mode="full")
    r = sim.results["device-plugin"]  # nvidia.com/gpu: NodeResourcesFit says Unschedulable, preemption helps
    assert [p.name for p in r.pods] == ["vip"]  # bound cluster pods are state, not simulated
    assert r.pods[0].node == "a100-80gb-0"
    assert len(r.evicted) == 1
    assert r.evicted[0].reason == "preempted by default/vip (priority 1000)"
    assert r.used == 2
    # as DRA claims the same pods preempt nothing: DynamicResources says UnschedulableAndUnresolvable
    r = sim.results["dra"]
    assert r.pods[0].node is None
    assert not r.evicted
    assert (r.pods[0].reason or "").endswith(DRA_NOT_PREEMPTED.format(n=1))


def test_time_slicing_sharing_matches_device_plugin_replicas():
    sim = run(deployment("ts", 9), gpu_mode="time-slicing:4", sharing="time-slicing:4")
    dp, dra = sim.results["device-plugin"], sim.results["dra"]
    assert (dp.placed, dra.placed) == (8, 8)
    assert dp.allocated_bytes == dra.allocated_bytes == 8 * (81920 * MIB // 4)
    assert (dp.used, dra.used) == (2, 2)
    shared = {p.devices[0] for p in dra.pods if p.node}
    assert len(shared) == 2


def test_dra_written_pods_that_the_device_plugin_cannot_express():
    inp = load_inputs([str(CORPUS / "dra" / "nvidia-quickstart-v1-gpu-test4-mig.yaml")])
    opts = SimulateOptions(cluster=ClusterOptions(nodes="1x8xA100-40GB", gpu_mode="mig-static:all-balanced"))
    sim = simulate(inp, opts)
    dp = sim.results["device-plugin"]
    assert dp.placed == 0
    assert all(
        "not expressible with the device plugin" in (p.reason or "") and "constrains" in (p.reason or "")
        for p in dp.pods
    )
    dra = sim.results["dra"]
    # each claim wants 2 x 1g.5gb + 2g.10gb + 3g.20gb on one GPU: exactly one all-balanced GPU each
    assert (dra.placed, dra.pending, dra.used) == (4, 0, 4)


def test_device_plugin_view_derived_from_dra_slices():
    objs = nvidia_cluster("1x2xH100-80GB", "full", "1.37", device_plugin=False)
    text = "".join("---\n" + to_yaml(o) for o in objs) + deployment("x", 3)
    sim = run(text, nodes=None)
    dp = sim.results["device-plugin"]
    assert (dp.placed, dp.physical) == (2, 2)
    assert dp.allocated_bytes == 2 * 81559 * MIB
    assert any("derived from the NVIDIA DRA driver" in n for n in sim.notes)


def test_dra_view_derived_from_device_plugin_node_labels():
    objs = nvidia_cluster("1x4xH100-80GB", "full", "1.37", device_plugin=True)
    text = "".join("---\n" + to_yaml(o) for o in objs) + deployment("x", 5, memory="9Gi")
    sim = run(text, nodes=None, gpu_mode="mig-dynamic", sizing="mig")
    dra = sim.results["dra"]
    assert dra.physical == 4
    assert dra.placed == 5
    assert dra.used == 1
    assert sim.results["device-plugin"].placed == 4


def test_nodes_and_cluster_objects_together_is_usage_error():
    objs = nvidia_cluster("1x1xH100-80GB", "full", "1.37", device_plugin=True)
    with pytest.raises(UsageError, match="--nodes generates the cluster"):
        run("".join("---\n" + to_yaml(o) for o in objs), nodes="1x1xH100-80GB")


def test_json_shape_is_exact():
    sim = run(deployment("a", 3), gpu_mode="full")
    d = sim.to_dict()
    assert list(d) == ["modes"]
    assert list(d["modes"]) == ["device-plugin", "dra"]
    for m in d["modes"].values():
        assert list(m) == ["placed", "pending", "gpus", "memory", "pods", "evicted"]
        assert list(m["gpus"]) == ["physical", "used"]
        assert list(m["memory"]) == [
            "requestedBytes",
            "allocatedBytes",
        ]
        for p in m["pods"]:
            assert list(p) == ["namespace", "name", "node", "devices", "reason"]
            assert (p["node"] is None) == (p["reason"] is not None)


def test_inputs_are_not_mutated_by_a_simulation():
    inp = inputs(deployment("a", 2) + deployment("b", 1, memory="5Gi"))
    before = to_yaml([d.obj for d in inp.documents])
    simulate(
        inp,
        SimulateOptions(sizing="mig", cluster=ClusterOptions(nodes="1x2xA100-80GB", gpu_mode="mig-dynamic")),
    )
    assert to_yaml([d.obj for d in inp.documents]) == before


def test_time_slicing_without_sharing_says_how_to_compare():
    sim = run(deployment("ts", 3), gpu_mode="time-slicing:4")
    assert (sim.results["device-plugin"].placed, sim.results["dra"].placed) == (3, 2)
    assert any("--sharing time-slicing:4" in n for n in sim.notes)


def test_the_dra_postfilter_frees_a_claim_allocated_where_its_pod_cannot_run_and_the_notes_say_so():
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: left, namespace: default}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.nvidia.com, pool: a100-80gb-0, device: gpu-0}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [a100-80gb-0]}]
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [a100-80gb-1]}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: left}]
"""
    sim = run(text, nodes="2x1xA100-80GB", gpu_mode="full")
    [pod] = sim.results["dra"].pods
    assert pod.node == "a100-80gb-1"
    assert [n for n in sim.notes if "PostFilter" in n] == [
        "dra: DynamicResources PostFilter deallocated ResourceClaim default/left (allocated where the pod cannot "
        "run, reserved by no other pod) and requeued the pod"
    ]

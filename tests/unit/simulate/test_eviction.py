"""The device-taint eviction controller in ``kubedra simulate``: a bound pod on a device with an untolerated
NoExecute taint is evicted, its claim deallocated, and its controller's replacement scheduled elsewhere."""

from __future__ import annotations

import json

import pytest

from kubedra.report.pages import simulation_page
from kubedra.report.simulate_text import text

from .helpers import run

NODE = "a100-80gb-0"
OWNER = "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: train, uid: rs, controller: true}]"


def cluster_state(
    tolerations: str = "",
    owner: str = OWNER,
    effect: str = "NoExecute",
    rule: bool = True,
    selector: bool = True,
) -> str:
    tol = f"\n        tolerations: {tolerations}" if tolerations else ""
    text = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: one-gpu, namespace: ml}}
spec:
  spec:
    devices:
      requests: [{{name: gpu, exactly: {{deviceClassName: gpu.nvidia.com}}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: train-x1-gpu-abc, namespace: ml}}
spec:
  devices:
    requests: [{{name: gpu, exactly: {{deviceClassName: gpu.nvidia.com}}}}]
status:
  allocation:
    devices:
      results:
      - request: gpu
        driver: gpu.nvidia.com
        pool: {NODE}
        device: gpu-0{tol}
  reservedFor: [{{resource: pods, name: train-x1, uid: u1}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: train-x1
  namespace: ml
  uid: u1
  generateName: train-
  {owner}
spec:
  nodeName: {NODE}
  containers: [{{name: c, image: x}}]
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
status:
  phase: Running
  resourceClaimStatuses: [{{name: gpu, resourceClaimName: train-x1-gpu-abc}}]
"""
    if rule:
        text += f"""---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {{name: drain}}
spec:
  deviceSelector: {{driver: gpu.nvidia.com, pool: {NODE}, device: gpu-0}}
  taint: {{key: example.com/rma, effect: {effect}}}
"""
        if not selector:
            text = text.replace(
                f"  deviceSelector: {{driver: gpu.nvidia.com, pool: {NODE}, device: gpu-0}}\n", ""
            )
    return text


def test_untolerated_noexecute_evicts_deallocates_and_reschedules() -> None:
    sim = run(cluster_state(), gpu_mode="full")
    dra = sim.results["dra"]
    (evicted,) = dra.evicted
    assert evicted.name == "train-x1"
    assert evicted.reason == (
        f"evicted by the device-taint eviction controller: device gpu.nvidia.com/{NODE}/gpu-0 of claim "
        "train-x1-gpu-abc has the NoExecute taint example.com/rma (DeviceTaintRule drain), not tolerated; "
        "recreated by its controller as ml/train-r1"
    )
    (new,) = dra.pods
    # the freed gpu-0 is still tainted: the replacement gets the other GPU
    assert (new.name, new.node, new.devices) == ("train-r1", NODE, [f"gpu.nvidia.com/{NODE}/gpu-1"])
    assert dra.used == 1
    data = dra.to_dict()
    assert [e["name"] for e in data["evicted"]] == ["train-x1"]
    json.dumps(data)


def test_evictions_in_table_and_html() -> None:
    sim = run(cluster_state(), gpu_mode="full")
    out = text(sim, "1.37", "LeastAllocated")
    assert "Evicted pods, DRA (1):" in out
    assert "NoExecute taint example.com/rma" in out
    page = simulation_page(sim)
    assert 'id="evicted"' in page
    assert "recreated by its controller as ml/train-r1" in page


def test_without_the_rule_nothing_moves() -> None:
    sim = run(cluster_state(rule=False), gpu_mode="full")
    dra = sim.results["dra"]
    assert dra.evicted == []
    assert dra.pods == []
    assert dra.used == 1  # the bound pod keeps its allocated GPU (no second allocation for it)


@pytest.mark.parametrize("effect", ["NoSchedule", "None"])
def test_other_effects_do_not_evict(effect: str) -> None:
    assert run(cluster_state(effect=effect), gpu_mode="full").results["dra"].evicted == []


def test_noexecute_toleration_keeps_the_pod() -> None:
    sim = run(cluster_state("[{key: example.com/rma, operator: Exists, effect: NoExecute}]"), gpu_mode="full")
    assert sim.results["dra"].evicted == []


def test_toleration_seconds_delay_the_eviction() -> None:
    tol = "[{key: example.com/rma, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]"
    (ev,) = run(cluster_state(tol), gpu_mode="full").results["dra"].evicted
    assert "deleted 300 s after the taint was added (tolerationSeconds)" in (ev.reason or "")


def test_a_pod_without_controller_stays_deleted() -> None:
    dra = run(cluster_state(owner=""), gpu_mode="full").results["dra"]
    (ev,) = dra.evicted
    assert (ev.reason or "").endswith("; no controller recreates it")
    assert dra.pods == []
    assert dra.used == 0


def test_no_eviction_where_the_controller_is_off() -> None:
    # DRADeviceTaints is alpha (off) in 1.35: no eviction controller
    sim = run(cluster_state(), gpu_mode="full", target_version="1.35")
    assert sim.results["dra"].evicted == []


@pytest.mark.parametrize(("target", "evicted"), [("1.36", 1), ("1.37", 0)])
def test_a_rule_without_device_selector_follows_the_release(target: str, evicted: int) -> None:
    """k8s.io/dynamic-resource-allocation resourceslice/tracker: a DeviceTaintRule without deviceSelector
    matches every device up to v0.37.0 (all 1.36 patches) and none from v0.37.1."""
    sim = run(
        cluster_state(selector=False),
        gpu_mode="full",
        target_version=target,
        feature_gates="DRADeviceTaintRules=true",  # beta, off by default in 1.36
    )
    assert len(sim.results["dra"].evicted) == evicted


def test_a_noexecute_slice_taint_evicts_too() -> None:
    """The taint the driver (or anyone writing the slice) puts on the device, not only DeviceTaintRules."""
    from kubedra.report.output import to_yaml
    from kubedra.vendors.nvidia.cluster import cluster

    objs = cluster("1x2xH100-80GB", "full", "1.37", device_plugin=False)
    node = "h100-80gb-0"
    for o in objs:
        if o["kind"] == "ResourceSlice":
            dev = next(d for d in o["spec"]["devices"] if d["name"] == "gpu-0")
            dev["taints"] = [{"key": "example.com/fell-off", "effect": "NoExecute"}]
    state = cluster_state(rule=False).replace(NODE, node)
    text = "".join("---\n" + to_yaml(o) for o in objs) + "---\n" + state
    dra = run(text, nodes=None).results["dra"]
    (ev,) = dra.evicted
    assert "NoExecute taint example.com/fell-off (ResourceSlice 00000-gpu.nvidia.com-h100-80gb-0-" in (
        ev.reason or ""
    )
    (new,) = dra.pods
    assert new.node == node
    assert new.devices == [f"gpu.nvidia.com/{node}/gpu-1"]

"""The scheduling loop: filters, DRA allocation per pod, gangs, preemption, device-plugin accounting."""

from __future__ import annotations

from allocator.helpers import claim, cls, dev, node, req, slice_

from kubedra.allocator.session import engine_config
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import (
    Container,
    DeviceClaim,
    ObjectMeta,
    Pod,
    PodResourceClaim,
    ResourceClaimTemplate,
    Taint,
    Toleration,
)
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.preemption import DRA_NOT_PREEMPTED
from kubedra.scheduler.sampling import num_feasible_nodes_to_find
from kubedra.scheduler.simulator import Scheduler


def gpu_node(name: str, gpus: int = 0, cpu: str = "16", **extra: str):
    n = node(name)
    n.allocatable = {
        "cpu": Quantity.parse(cpu),
        "memory": Quantity.parse("64Gi"),
        "pods": Quantity.parse("110"),
    }
    if gpus:
        n.allocatable["nvidia.com/gpu"] = Quantity.from_int(gpus)
    for k, v in extra.items():
        n.allocatable[k] = Quantity.parse(v)
    return n


def pod(
    name: str,
    *,
    gpus: int = 0,
    claim_template: str | None = None,
    cpu: str = "1",
    priority: int | None = None,
    group=None,
):
    reqs = {"cpu": Quantity.parse(cpu)}
    if gpus:
        reqs["nvidia.com/gpu"] = Quantity.from_int(gpus)
    claims = (
        [PodResourceClaim(name="gpu", resource_claim_template_name=claim_template)] if claim_template else []
    )
    return Pod(
        meta=ObjectMeta(name=name, namespace="default"),
        containers=[Container(name="c", requests=reqs, claims=["gpu"] if claim_template else [])],
        resource_claims=claims,
        priority=priority,
        scheduling_group=group,
    )


def template(name: str, count: int = 1) -> ResourceClaimTemplate:
    return ResourceClaimTemplate(
        meta=ObjectMeta(name=name, namespace="default"), spec=DeviceClaim(requests=[req("gpu", count)])
    )


def dra_cluster(nodes: int, gpus: int):
    ns = [gpu_node(f"n{i}") for i in range(nodes)]
    slices = [
        slice_(f"n{i}-gpus", [dev(f"gpu-{g}") for g in range(gpus)], pool=f"n{i}", node_name=f"n{i}")
        for i in range(nodes)
    ]
    return ns, slices


def test_num_feasible_nodes_to_find_matches_kube_scheduler():
    assert num_feasible_nodes_to_find(50) == 50
    assert num_feasible_nodes_to_find(500) == 230  # 46% of 500
    assert num_feasible_nodes_to_find(5000) == 500  # 10%
    assert num_feasible_nodes_to_find(100000) == 5000  # 5% floor


def test_dra_pods_fill_devices_and_spread_by_least_allocated():
    nodes, slices = dra_cluster(2, 2)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices)
    pods = build_sim_pods([pod(f"p{i}", claim_template="one") for i in range(5)], [template("one")], [])
    s.run(pods)
    placed = [p for p in pods if p.node]
    assert len(placed) == 4
    assert sorted(str(p.node) for p in placed) == ["n0", "n0", "n1", "n1"]
    # all four devices used exactly once
    devices = [d for p in placed for d in p.devices]
    assert len(devices) == len(set(devices)) == 4
    pending = pods[4]
    assert pending.node is None
    assert (pending.reason or "").startswith(
        "0/2 nodes are available: 2 node(s) have all matching devices in use (request gpu)"
    )


def test_device_plugin_accounting_uses_extended_resources():
    nodes = [gpu_node("a", gpus=2), gpu_node("b", gpus=1)]
    s = Scheduler(engine_config("1.37"), nodes, dra=False)
    pods = build_sim_pods([pod("p0", gpus=2), pod("p1", gpus=1), pod("p2", gpus=1)], [], [])
    s.run(pods)
    assert [p.node for p in pods] == ["a", "b", None]
    assert pods[2].reason == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."


def test_gang_all_or_nothing():
    nodes, slices = dra_cluster(1, 3)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices)
    pods = build_sim_pods(
        [pod(f"w{i}", claim_template="one", group="train") for i in range(4)], [template("one")], []
    )
    s.run(pods, gangs={"default/train": 4})
    assert all(p.node is None for p in pods)
    assert "gang default/train: only 3 of minCount 4" in (pods[0].reason or "")
    # devices were given back: another pod can use them
    s2 = Scheduler(engine_config("1.37"), nodes, [cls()], slices)
    pods2 = build_sim_pods(
        [pod(f"w{i}", claim_template="one", group="train") for i in range(3)], [template("one")], []
    )
    s2.run(pods2, gangs={"default/train": 3})
    assert all(p.node == "n0" for p in pods2)


def test_gang_rollback_frees_devices_for_later_pods():
    nodes, slices = dra_cluster(1, 2)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices)
    gang = [pod(f"w{i}", claim_template="one", group="g") for i in range(3)]
    solo = pod("solo", claim_template="two")
    pods = build_sim_pods([*gang, solo], [template("one"), template("two", 2)], [])
    s.run(pods, gangs={"default/g": 3})
    assert pods[-1].node == "n0"
    assert len(pods[-1].devices) == 2


def test_a_pod_short_of_dra_devices_does_not_preempt():
    """kube-scheduler's DynamicResources filter fails UnschedulableAndUnresolvable, a node DefaultPreemption
    never tries: the high-priority pod stays pending, says why, and the low-priority pod keeps its device."""
    nodes, slices = dra_cluster(1, 1)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices)
    low = pod("low", claim_template="one", priority=0)
    high = pod("high", claim_template="one", priority=1000)
    low_sp, high_sp = build_sim_pods([low, high], [template("one")], [])
    s.run([low_sp])
    assert low_sp.node == "n0"
    s.run([high_sp])
    assert high_sp.node is None
    assert low_sp.node == "n0"
    assert low_sp.preempted_by is None
    assert s.evicted == []
    assert (high_sp.reason or "").endswith(DRA_NOT_PREEMPTED.format(n=1))


def test_a_dra_pod_short_of_cpu_preempts_where_its_devices_are_free():
    """NodeResourcesFit says Unschedulable: preemption frees CPU, and the DRA filter passes as the node is."""
    nodes, slices = dra_cluster(1, 2)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices)
    low = pod("low", cpu="10", priority=0)
    high = pod("high", claim_template="one", cpu="10", priority=1000)
    low_sp, high_sp = build_sim_pods([low, high], [template("one")], [])
    s.run([low_sp])
    assert low_sp.node == "n0"
    s.run([high_sp])
    assert high_sp.node == "n0"
    assert low_sp.preempted_by == "default/high"
    assert s.evicted == [low_sp]


def test_a_dra_pod_short_of_cpu_and_devices_does_not_preempt():
    """Preemption may free the CPU, but kube-scheduler's dry run does not free the victim's devices
    (DynamicResources has no PreFilterExtensions): no candidate."""
    nodes, slices = dra_cluster(1, 1)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices)
    low = pod("low", claim_template="one", cpu="10", priority=0)
    high = pod("high", claim_template="one", cpu="10", priority=1000)
    low_sp, high_sp = build_sim_pods([low, high], [template("one")], [])
    s.run([low_sp])
    s.run([high_sp])
    assert high_sp.node is None
    assert low_sp.node == "n0"
    assert s.evicted == []


def test_queue_orders_by_priority_then_creation():
    nodes, slices = dra_cluster(1, 1)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices, preemption=False)
    pods = build_sim_pods(
        [pod("first", claim_template="one"), pod("vip", claim_template="one", priority=10)],
        [template("one")],
        [],
    )
    s.run(pods)
    assert pods[1].node == "n0"
    assert pods[0].node is None


def test_taints_and_tolerations_on_nodes():
    n = gpu_node("tainted", gpus=1)
    n.taints = [Taint(key="nvidia.com/gpu", effect="NoSchedule")]
    s = Scheduler(engine_config("1.37"), [n], dra=False)
    plain = pod("plain", gpus=1)
    tolerant = pod("tolerant", gpus=1)
    tolerant.tolerations = [Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]
    pods = build_sim_pods([plain, tolerant], [], [])
    s.run(pods)
    assert pods[0].node is None
    assert "untolerated taint {nvidia.com/gpu}" in (pods[0].reason or "")
    assert pods[1].node == "tainted"


def test_missing_template_keeps_pod_pending():
    pods = build_sim_pods([pod("p", claim_template="nope")], [], [])
    assert pods[0].reason == 'resourceclaimtemplate "nope" not found'


def test_dra_extended_resource_uses_class_when_node_has_no_device_plugin():
    nodes, slices = dra_cluster(1, 2)
    c = cls("gpu.example.com")
    c.extended_resource_name = "example.com/gpu"
    cfg = engine_config("1.37")
    s = Scheduler(cfg, nodes, [c], slices)
    p = pod("legacy")
    p.containers[0].requests["example.com/gpu"] = Quantity.from_int(2)
    (sp,) = build_sim_pods([p], [], [], ext_classes=s.ext_classes)
    s.run([sp])
    assert sp.node == "n0"
    assert len(sp.devices) == 2


def test_dynamic_mig_counters_bound_partitions_across_pods():
    """Regression: counters must be recomputed after each bind (one Allocator serves many pods)."""
    from kubedra.model.parse import parse_object
    from kubedra.vendors.nvidia.cluster import cluster

    parsed = [parse_object(o) for o in cluster("1x8xH100-80GB", "mig-dynamic", "1.37")]
    objs = [p.obj for p in parsed if p is not None]
    assert len(objs) == len(parsed)  # every catalogue object is a kind the model reads
    classes = [o for o in objs if type(o).__name__ == "DeviceClass"]
    slices = [o for o in objs if type(o).__name__ == "ResourceSlice"]
    nodes = [o for o in objs if type(o).__name__ == "Node"]
    t = ResourceClaimTemplate(
        meta=ObjectMeta(name="one-g", namespace="default"),
        spec=DeviceClaim(
            requests=[
                req(
                    "gpu",
                    1,
                    klass="mig.nvidia.com",
                    selectors=['device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'],
                )
            ]
        ),
    )
    s = Scheduler(engine_config("1.37"), nodes, classes, slices)
    pods = build_sim_pods([pod(f"p{i}", claim_template="one-g", cpu="100m") for i in range(60)], [t], [])
    s.run(pods)
    placed = [p for p in pods if p.node]
    # 1g.10gb has 7 placements per H100 (memory slices 0..6): 56 on 8 GPUs, then the counters run out
    assert len(placed) == 56
    assert "have all matching devices in use" in (pods[-1].reason or "")
    # two 3g.40gb per GPU use all 8 memory slices: a 1g.10gb device is free but its counters are not
    t3 = ResourceClaimTemplate(
        meta=ObjectMeta(name="three-g", namespace="default"),
        spec=DeviceClaim(
            requests=[
                req(
                    "gpu",
                    1,
                    klass="mig.nvidia.com",
                    selectors=['device.attributes["gpu.nvidia.com"].profile == "3g.40gb"'],
                )
            ]
        ),
    )
    s = Scheduler(engine_config("1.37"), nodes, classes, slices)
    pods = build_sim_pods(
        [
            *(pod(f"big{i}", claim_template="three-g", cpu="100m") for i in range(17)),
            pod("small", claim_template="one-g"),
        ],
        [t, t3],
        [],
    )
    s.run(pods)
    assert sum(1 for p in pods if p.node) == 16
    assert "have all matching devices in use" in (pods[16].reason or "")
    assert "are out of shared counters" in (pods[17].reason or "")


def test_filter_timeout_is_an_error_status_like_kube_scheduler():
    # DRASchedulerFilterTimeout (on by default): a node whose allocation runs past filterTimeout is an Error
    # status "node X: timed out trying to allocate devices"; a 0 s timeout makes every search time out.
    import dataclasses

    nodes, slices = dra_cluster(1, 1)
    cfg = dataclasses.replace(engine_config("1.37"), filter_timeout_seconds=0.0)
    assert engine_config("1.37").filter_timeout == 10.0
    assert engine_config("1.37", "DRASchedulerFilterTimeout=false").filter_timeout is None
    s = Scheduler(cfg, nodes, [cls()], slices)
    pods = build_sim_pods([pod("p0", claim_template="one")], [template("one")], [])
    s.run(pods)
    assert pods[0].node is None
    assert pods[0].reason == "error: node n0: timed out trying to allocate devices"


def _two_users_of_a_shared_claim():
    nodes, slices = dra_cluster(1, 1)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices)
    users = [
        Pod(
            meta=ObjectMeta(name=name, namespace="default"),
            containers=[Container(name="c", requests={"cpu": Quantity.parse("1")}, claims=["gpu"])],
            resource_claims=[PodResourceClaim(name="gpu", resource_claim_name="shared")],
        )
        for name in ("a", "b")
    ]
    a, b = build_sim_pods(users, [], [claim("shared", req("gpu"))])
    s.run([a, b])
    assert (a.node, b.node) == ("n0", "n0")
    assert a.claims[0] is b.claims[0]
    assert a.claims[0].allocation is not None
    assert list(s.bound) == [a, b]
    return s, a, b


def test_a_shared_claim_stays_allocated_while_another_bound_pod_holds_it():
    """Unbinding asks which other bound pods hold the claim (an index by claim key, not a walk over every
    bound pod): the pod that allocated it goes, the allocation stays for the other holder."""
    s, a, b = _two_users_of_a_shared_claim()
    s.unbind(a)
    assert list(s.bound) == [b]
    assert b.claims[0].allocation is not None


def test_a_shared_claim_is_released_with_its_last_holder():
    s, a, b = _two_users_of_a_shared_claim()
    s.unbind(b)
    assert b.claims[0].allocation is not None  # a, which allocated it, still holds it
    s.unbind(a)
    assert a.claims[0].allocation is None
    assert not s.bound

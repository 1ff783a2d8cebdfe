"""The scheduler's fast path (per-class cached filter results and scores) decides exactly like the
per-node loop it replaces: same nodes, devices, reasons and evictions, on random clusters and pods."""

from __future__ import annotations

from allocator.helpers import cls, dev, req, slice_
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.allocator.session import engine_config
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import (
    Container,
    DeviceClaim,
    Node,
    ObjectMeta,
    Pod,
    PodResourceClaim,
    ResourceClaimTemplate,
    Taint,
    Toleration,
)
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.simulator import Scheduler

CFG = engine_config("1.37")


def cluster(spec):
    nodes, slices = [], []
    for i, (devices, cpu, tainted, zone) in enumerate(spec):
        n = Node(meta=ObjectMeta(name=f"n{i}", labels={"zone": zone}))
        n.allocatable = {
            "cpu": Quantity.from_int(cpu),
            "memory": Quantity.parse("64Gi"),
            "pods": Quantity.from_int(110),
            "example.com/gpu": Quantity.from_int(devices),
        }
        if tainted:
            n.taints = [Taint(key="gpu", effect="NoSchedule")]
        nodes.append(n)
        if devices:
            slices.append(
                slice_(f"s{i}", [dev(f"d{g}") for g in range(devices)], pool=f"n{i}", node_name=f"n{i}")
            )
    return nodes, slices


def pods(spec):
    out = []
    for i, (count, cpu, prio, tolerate, zone) in enumerate(spec):
        p = Pod(
            meta=ObjectMeta(name=f"p{i}", namespace="default"),
            containers=[
                Container(
                    name="c",
                    requests={"cpu": Quantity.from_int(cpu), "example.com/gpu": Quantity.from_int(count)},
                )
            ],
            resource_claims=[PodResourceClaim(name="gpu", resource_claim_template_name=f"t{count}")],
            priority=prio,
        )
        if tolerate:
            p.tolerations = [Toleration(key="gpu", operator="Exists", effect="NoSchedule")]
        if zone:
            p.node_selector = {"zone": zone}
        out.append(p)
    return out


TEMPLATES = [
    ResourceClaimTemplate(
        meta=ObjectMeta(name=f"t{k}", namespace="default"), spec=DeviceClaim(requests=[req("gpu", k)])
    )
    for k in (1, 2, 3)
]

NODE = st.tuples(st.integers(0, 4), st.integers(1, 8), st.booleans(), st.sampled_from(["a", "b"]))
POD = st.tuples(
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from([None, 0, 10, 100]),
    st.booleans(),
    st.sampled_from([None, "a", "b"]),
)


def outcome(fast: bool, node_spec, pod_spec, dra: bool, scoring: str, gangs: bool, waves: bool = False):
    nodes, slices = cluster(node_spec)
    s = Scheduler(
        CFG, nodes, [cls()] if dra else [], slices if dra else [], scoring=scoring, dra=dra, fast=fast
    )
    the_pods = pods(pod_spec)
    if gangs:
        for p in the_pods[::2]:
            p.scheduling_group = "g"
    sims = build_sim_pods(the_pods, TEMPLATES if dra else [], [])
    if waves:  # a second wave of higher-priority pods preempts pods of the first
        s.run([p for p in sims if p.priority < 10], gangs={"default/g": 2} if gangs else None)
        s.run([p for p in sims if p.priority >= 10], gangs={"default/g": 2} if gangs else None)
    else:
        s.run(sims, gangs={"default/g": 2} if gangs else None)
    return (
        [(p.name, p.node, tuple(p.devices), p.reason) for p in sims],
        [p.name for p in s.evicted],
        s.next_start,
    )


@settings(max_examples=120, deadline=None)
@given(
    node_spec=st.lists(NODE, min_size=1, max_size=7),
    pod_spec=st.lists(POD, min_size=1, max_size=14),
    dra=st.booleans(),
    scoring=st.sampled_from(["LeastAllocated", "MostAllocated"]),
    gangs=st.booleans(),
    waves=st.booleans(),
)
def test_fast_path_decides_like_the_node_loop(node_spec, pod_spec, dra, scoring, gangs, waves):
    assert outcome(True, node_spec, pod_spec, dra, scoring, gangs, waves) == outcome(
        False, node_spec, pod_spec, dra, scoring, gangs, waves
    )


def test_fast_path_on_more_than_a_hundred_nodes_uses_the_same_window():
    spec = [(2, 4, False, "a")] * 130
    pod_spec = [(1, 1, None, False, None)] * 200
    assert outcome(True, spec, pod_spec, True, "LeastAllocated", False) == outcome(
        False, spec, pod_spec, True, "LeastAllocated", False
    )


# --------------------------------------------------------------------------- counters kept in step

PROFILES = ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"]


def _mig_setup():
    from kubedra import vendors
    from kubedra.simulate.catalogue import typed_cluster

    nodes, slices, classes = typed_cluster(
        vendors.get("nvidia"), "1x2xH100-80GB", "mig-dynamic", "1.37", device_plugin=False
    )
    templates = [
        ResourceClaimTemplate(
            meta=ObjectMeta(name=p.replace(".", "-"), namespace="default"),
            spec=DeviceClaim(
                requests=[
                    req(
                        "gpu",
                        1,
                        klass="mig.nvidia.com",
                        selectors=[f"device.attributes['gpu.nvidia.com'].profile == '{p}'"],
                    )
                ]
            ),
        )
        for p in PROFILES
    ]
    return nodes, slices, classes, templates


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PROFILES), st.sampled_from([0, 5, 50])), min_size=1, max_size=20))
def test_counter_availability_stays_exact_through_binds_and_evictions(spec):
    """After binds, gang-free preemptions and releases, the scheduler's allocator (counters updated in
    place) allocates exactly like a fresh allocator built from the final claims."""
    from kubedra.allocator import AllocatedState, Allocator
    from kubedra.model.objects import ResourceClaim

    nodes, slices, classes, templates = _mig_setup()
    s = Scheduler(CFG, nodes, classes, slices)
    pods_ = [
        Pod(
            meta=ObjectMeta(name=f"p{i}", namespace="default"),
            containers=[Container(name="c")],
            resource_claims=[PodResourceClaim(name="gpu", resource_claim_template_name=p.replace(".", "-"))],
            priority=prio,
        )
        for i, (p, prio) in enumerate(spec)
    ]
    sims = build_sim_pods(pods_, templates, [])
    # two waves: the second one preempts pods of the first (the queue itself is sorted by priority)
    s.run([p for p in sims if p.priority < 50])
    s.run([p for p in sims if p.priority >= 50])
    claims = [c for sp in s.bound for c in sp.claims if c.allocation is not None]
    fresh = Allocator(CFG.features, classes, slices, AllocatedState.from_claims(claims), pool_counters=True)
    for t in templates:
        probe = ResourceClaim(meta=ObjectMeta(name="probe", namespace="default"), spec=t.spec)
        got = s.allocator.allocate(nodes[0], [probe])
        want = fresh.allocate(nodes[0], [probe])
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert [r.device for r in got[0].results] == [r.device for r in want[0].results]


# --------------------------------------------------------------------------- results reused between nodes


def _fleet_outcome(spec, reuse: bool, version: str = "1.37"):
    from kubedra import vendors
    from kubedra.simulate.catalogue import typed_cluster

    nodes, slices, classes = typed_cluster(
        vendors.get("nvidia"), "3x2xH100-80GB", "mig-dynamic", version, device_plugin=False
    )
    # a selector naming one node's GPU (its parent UUID): nodes that differ only there must not share
    parent = next(
        d.attributes["parentUUID"].value
        for s in slices
        if s.node_name == nodes[1].name
        for d in s.devices
        if "parentUUID" in d.attributes
    )
    selectors = {p: [f"device.attributes['gpu.nvidia.com'].profile == '{p}'"] for p in PROFILES}
    selectors["pinned"] = [f"device.attributes['gpu.nvidia.com'].parentUUID == '{parent}'"]
    templates = [
        ResourceClaimTemplate(
            meta=ObjectMeta(name=p.replace(".", "-"), namespace="default"),
            spec=DeviceClaim(requests=[req("gpu", 1, klass="mig.nvidia.com", selectors=sel)]),
        )
        for p, sel in selectors.items()
    ]
    # 1.34: counters in the device slices; partitionable devices are alpha there
    gates = "DRAPartitionableDevices=true" if version == "1.34" else None
    s = Scheduler(engine_config(version, gates), nodes, classes, slices)
    if not reuse:
        s.allocator.reuse = None
    pods_ = [
        Pod(
            meta=ObjectMeta(name=f"p{i}", namespace="default"),
            containers=[Container(name="c")],
            resource_claims=[PodResourceClaim(name="gpu", resource_claim_template_name=p.replace(".", "-"))],
            priority=prio,
        )
        for i, (p, prio) in enumerate(spec)
    ]
    sims = build_sim_pods(pods_, templates, [])
    s.run([p for p in sims if p.priority < 50])
    s.run([p for p in sims if p.priority >= 50])
    hits = s.allocator.reuse.hits if s.allocator.reuse is not None else 0
    return [(p.name, p.node, tuple(p.devices), p.reason) for p in sims], hits


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([*PROFILES, "pinned"]), st.sampled_from([0, 5, 50])),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(["1.34", "1.37"]),  # counters in the device slices (1.34) or pool-wide (1.35+)
)
def test_results_reused_between_alike_nodes_are_what_a_search_finds(spec, version):
    """Generated nodes are copies of one another (only names and GPU UUIDs differ): the allocator reuses
    a search's picks on a node in the same state; placements, devices and reasons stay those of a search
    on every node, also for a selector that names one node's GPU."""
    assert _fleet_outcome(spec, True, version)[0] == _fleet_outcome(spec, False, version)[0]


def test_alike_nodes_reuse_results():
    spec = [("1g.10gb", 0)] * 12
    placed, hits = _fleet_outcome(spec, True)
    assert all(node for _, node, _, _ in placed)
    assert hits > 0


# --------------------------------------------------------------------------- pods pinned to nodes

PIN = st.sampled_from([None, (0,), (1,), (0, 2), (9,), ()])


def _pinned_outcome(fast: bool, node_spec, cordoned, pod_spec, pins, tolerate_cordon):
    nodes, slices = cluster(node_spec)
    for n, c in zip(nodes, cordoned, strict=False):
        n.unschedulable = c
    s = Scheduler(CFG, nodes, [cls()], slices, fast=fast)
    the_pods = pods(pod_spec)
    for p, pin, tol in zip(the_pods, pins, tolerate_cordon, strict=False):
        if pin is None:
            continue
        # the DaemonSet controller's pin: one term per name here (it writes one term with one name)
        terms = [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"n{i}"]}]} for i in pin
        ]
        if not terms:
            terms = [{}]  # an empty term matches no node
        p.affinity = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
        if tol:
            p.tolerations = [
                *p.tolerations,
                Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"),
            ]
    sims = build_sim_pods(the_pods, TEMPLATES, [])
    s.run(sims)
    return [(p.name, p.node, tuple(p.devices), p.reason) for p in sims], s.next_start


@settings(max_examples=120, deadline=None)
@given(
    node_spec=st.lists(NODE, min_size=1, max_size=7),
    cordoned=st.lists(st.booleans(), max_size=7),
    pod_spec=st.lists(POD, min_size=1, max_size=14),
    pins=st.lists(PIN, max_size=14),
    tolerate_cordon=st.lists(st.booleans(), max_size=14),
)
def test_pinned_pods_decide_like_the_node_loop(node_spec, cordoned, pod_spec, pins, tolerate_cordon):
    """A pod pinned by metadata.name (a DaemonSet's) is checked on its nodes only, with the same outcome and
    the same pending reasons (every other node counted as failing its affinity, or as unschedulable)."""
    args = (node_spec, cordoned, pod_spec, pins, tolerate_cordon)
    assert _pinned_outcome(True, *args) == _pinned_outcome(False, *args)

"""Node sampling pinned to kube-scheduler's numFeasibleNodesToFind and nextStartNodeIndex
(pkg/scheduler/schedule_one.go: minFeasibleNodesToFind 100, minFeasibleNodesPercentageToFind 5,
adaptive percentage 50 - nodes/125)."""

from __future__ import annotations

import pytest
from allocator.helpers import cls

from kubedra.allocator.session import engine_config
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.sampling import check_percentage, next_start_index, num_feasible_nodes_to_find
from kubedra.scheduler.simulator import Scheduler
from scheduler.test_simulator import dra_cluster, gpu_node, pod, template


def upstream(num_all_nodes: int, percentage: int = 0) -> int:
    """schedule_one.go's numFeasibleNodesToFind, transcribed with Go's int32 division."""
    if num_all_nodes < 100:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < 5:
            percentage = 5
    num_nodes = num_all_nodes * percentage // 100
    if num_nodes < 100:
        return 100
    return num_nodes


# (nodes, percentageOfNodesToScore, feasible nodes to find): worked out by hand from the formula
PINNED = [
    (0, 0, 0),
    (1, 0, 1),
    (99, 0, 99),  # fewer than 100 nodes: all of them
    (100, 0, 100),  # 50 - 0 = 50% is 50, raised to the minimum of 100
    (250, 0, 120),  # 48%
    (500, 0, 230),  # 46%
    (1_000, 0, 420),  # 42%
    (5_000, 0, 500),  # 10%
    (5_624, 0, 562),  # 5624/125 = 44 -> 6%: 337 ... see below
    (5_625, 0, 281),  # 45 -> 5%
    (6_000, 0, 300),  # 5% floor reached at 5,625 nodes
    (10_000, 0, 500),
    (20_000, 0, 1_000),
    (65_000, 0, 3_250),  # GKE's largest cluster: 5%
    (100_000, 0, 5_000),
    (150, 10, 100),  # 15 raised to 100
    (5_000, 50, 2_500),
    (65_000, 100, 65_000),
    (65_000, 1, 650),
]


@pytest.mark.parametrize(("nodes", "percentage", "_"), PINNED)
def test_count_is_upstreams_formula(nodes, percentage, _):
    assert num_feasible_nodes_to_find(nodes, percentage) == upstream(nodes, percentage)


def test_count_pinned_for_cluster_sizes():
    got = {(n, p): num_feasible_nodes_to_find(n, p) for n, p, _ in PINNED}
    # 5,624 nodes: 50 - 44 = 6% -> 337 (the table's comment row is checked here, not by hand)
    expected = {(n, p): want for n, p, want in PINNED}
    expected[(5_624, 0)] = 337
    assert got == expected


def test_every_size_up_to_70k_matches_upstream():
    for n in range(0, 70_001, 7):
        assert num_feasible_nodes_to_find(n) == upstream(n)


def test_percentage_out_of_range_is_refused():
    check_percentage(0)
    check_percentage(100)
    with pytest.raises(ValueError, match="between 0 and 100"):
        check_percentage(101)
    with pytest.raises(ValueError, match="between 0 and 100, got -1"):
        Scheduler(engine_config("1.37"), [], percentage_of_nodes_to_score=-1)


def test_next_start_index_wraps():
    assert next_start_index(0, 230, 500) == 230
    assert next_start_index(400, 230, 500) == 130
    assert next_start_index(7, 500, 500) == 7  # a cycle that examined every node starts where it did
    assert next_start_index(0, 0, 0) == 0


@pytest.mark.parametrize("fast", [True, False])
def test_rotation_like_kube_scheduler(fast):
    """200 empty nodes: 50 - 1 = 49% -> 98, raised to 100 feasible nodes per pod. Every node fits, so each
    cycle examines exactly 100 nodes: pod 0 is scored on n0..n99, pod 1 on n100..n199, pod 2 on n0..n99
    again. LeastAllocated puts each pod on the emptiest node of its window, its first (ties go to the
    first node found)."""
    nodes = [gpu_node(f"n{i}") for i in range(200)]
    s = Scheduler(engine_config("1.37"), nodes, dra=False, fast=fast)
    pods = build_sim_pods([pod(f"p{i}") for i in range(4)], [], [])
    starts = []
    for p in pods:
        starts.append(s.next_start)
        s.run([p])
    assert starts == [0, 100, 0, 100]
    assert [p.node for p in pods] == ["n0", "n100", "n1", "n101"]


@pytest.mark.parametrize("fast", [True, False])
def test_rotation_counts_rejected_nodes(fast):
    """Nodes that fail a filter count as examined (NodeToStatus), so the next pod starts after them."""
    nodes, slices = dra_cluster(200, 1)
    s = Scheduler(engine_config("1.37"), nodes, [cls()], slices, fast=fast)
    pods = build_sim_pods([pod(f"p{i}", claim_template="one") for i in range(3)], [template("one")], [])
    s.run(pods[:1])  # n0..n99 examined, p0 on n0 (its only device now in use)
    assert (pods[0].node, s.next_start) == ("n0", 100)
    s.run(pods[1:2])  # n100..n199: p1 on n100
    assert (pods[1].node, s.next_start) == ("n100", 0)
    s.run(pods[2:])  # n0 is full and rejected, n1..n100 feasible except n100: 101 examined -> 102
    assert pods[2].node == "n1"
    assert s.next_start == 102


def test_percentage_setting_changes_the_window():
    """percentageOfNodesToScore 100: every pod is scored against all nodes, so LeastAllocated spreads pods
    over the whole cluster in order instead of within each 100-node window."""
    nodes = [gpu_node(f"n{i}") for i in range(200)]
    s = Scheduler(engine_config("1.37"), nodes, dra=False, percentage_of_nodes_to_score=100)
    pods = build_sim_pods([pod(f"p{i}") for i in range(3)], [], [])
    s.run(pods)
    assert [p.node for p in pods] == ["n0", "n1", "n2"]
    assert s.next_start == 0

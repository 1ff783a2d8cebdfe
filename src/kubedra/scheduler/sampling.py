"""kube-scheduler's node sampling: how many feasible nodes one scheduling cycle looks for, and where it starts.

Upstream (pkg/scheduler/schedule_one.go) filters nodes starting at ``nextStartNodeIndex`` and stops once
``numFeasibleNodesToFind`` nodes passed every filter; only those are scored. The count comes from
``percentageOfNodesToScore`` (KubeSchedulerConfiguration, global or per profile, 0-100):

- fewer than ``minFeasibleNodesToFind`` (100) nodes: every node;
- ``0`` (the default): the adaptive percentage ``50 - nodes/125`` (integer division), at least
  ``minFeasibleNodesPercentageToFind`` (5%);
- then ``nodes * percentage / 100``, at least 100.

After each cycle ``nextStartNodeIndex`` moves past every node that was examined, feasible or not, so all
nodes get the same chance across pods. At 65,000 nodes the adaptive percentage is 5%: a pod is scored against
the first 3,250 feasible nodes from where the previous pod stopped, not the best of all 65,000. The node a pod
lands on can therefore differ from a full search; that is what the real scheduler does.
"""

from __future__ import annotations

MIN_FEASIBLE_NODES = 100  # minFeasibleNodesToFind
MIN_FEASIBLE_PERCENT = 5  # minFeasibleNodesPercentageToFind
BASE_PERCENT = 50  # the adaptive percentage's base
ADAPTIVE_DIVISOR = 125  # one percent less per 125 nodes
ADAPTIVE = 0  # percentageOfNodesToScore 0 (or unset): the adaptive percentage


def check_percentage(percentage: int | None) -> None:
    """KubeSchedulerConfiguration validation: percentageOfNodesToScore must be in [0, 100]."""
    if percentage is not None and not 0 <= percentage <= 100:
        raise ValueError(f"percentageOfNodesToScore must be between 0 and 100, got {percentage}")


def adaptive_percentage(n: int) -> int:
    """``50 - n/125``, at least 5 (the default when percentageOfNodesToScore is 0)."""
    return max(BASE_PERCENT - n // ADAPTIVE_DIVISOR, MIN_FEASIBLE_PERCENT)


def num_feasible_nodes_to_find(n: int, percentage: int | None = None) -> int:
    """kube-scheduler's ``numFeasibleNodesToFind(percentageOfNodesToScore, numAllNodes)``."""
    if n < MIN_FEASIBLE_NODES:
        return n
    pct = percentage if percentage else adaptive_percentage(n)
    found = n * pct // 100
    return max(found, MIN_FEASIBLE_NODES)


def next_start_index(start: int, processed: int, n: int) -> int:
    """``nextStartNodeIndex`` after a cycle that examined ``processed`` nodes (feasible + rejected) from
    ``start``: ``(start + processed) % n``, updated whether or not the pod was placed."""
    return (start + processed) % n if n else 0

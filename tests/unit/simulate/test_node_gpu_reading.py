"""simulate counts a node's allocatable GPUs as the target release's kube-scheduler does
(kubedra.simulate.cluster.gpu_allocatable, through kubedra.scheduler.pods.amount), not exactly: past int64 the
release decides (tests/integration/test_quantity_scheduling.py holds amount to each testbed kube-scheduler)."""

from __future__ import annotations

from kubedra.model.inventory import build_inventory
from kubedra.model.objects import Node
from kubedra.simulate.cluster import gpu_allocatable
from kubedra.sources.files import Document


def _node(gpus: str) -> Node:
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": gpus}},
    }
    (node,) = build_inventory([Document(obj=obj, file="n.yaml", line=1, index=0)]).nodes
    return node


def test_a_nodes_gpus_are_counted_as_the_release_counts_them() -> None:
    node = _node("1e20")
    assert gpu_allocatable(node, "1.37") == {"nvidia.com/gpu": 0}
    assert gpu_allocatable(node, "1.38") == {"nvidia.com/gpu": 2**63 - 1}
    assert gpu_allocatable(_node("8"), "1.37") == {"nvidia.com/gpu": 8}
    assert gpu_allocatable(_node("9223372036854775808"), "1.37") == {"nvidia.com/gpu": 0}

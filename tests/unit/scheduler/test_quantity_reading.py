"""How kube-scheduler reads a pod's and a node's quantities as integers, per release: requests summed as
quantities and read once (PodRequests, Resource.SetMaxResource), past int64 as each release's Value() and
MilliValue() do (tests/conformance/quantity/scaled-value.yaml), and what kubedra refuses to simulate."""

from __future__ import annotations

import pytest
from allocator.helpers import node

from kubedra.allocator.session import engine_config
from kubedra.k8s.quantity import Quantity, parse_quantity
from kubedra.model.objects import Container, DeviceClass, ObjectMeta, Pod
from kubedra.scheduler.build import build_sim_pods, extended_claim_spec
from kubedra.scheduler.pods import amount, node_unmodelled, nonzero_requests, pod_requests, unmodelled
from kubedra.scheduler.simulator import Scheduler


def _pod(*containers: dict[str, str], init: tuple[dict[str, str], ...] = (), overhead=None) -> Pod:
    def c(i: int, r: dict[str, str], prefix: str = "c") -> Container:
        return Container(name=f"{prefix}{i}", limits={k: parse_quantity(v) for k, v in r.items()})

    return Pod(
        meta=ObjectMeta(name="p", namespace="default"),
        containers=[c(i, r) for i, r in enumerate(containers)],
        init_containers=[c(i, r, "i") for i, r in enumerate(init)],
        overhead={k: parse_quantity(v) for k, v in (overhead or {}).items()},
    )


def test_requests_are_summed_as_defaulted_quantities_then_read_once() -> None:
    # API defaulting rounds each value up to milli-units (0.5m CPU is 1m), kube-scheduler sums the quantities
    # and reads Value() once: 0.5 + 0.5 bytes of memory is 1 byte (read per container, 1 + 1 would be 2)
    p = _pod({"cpu": "0.5m", "memory": "0.5"}, {"cpu": "0.5m", "memory": "0.5"})
    assert pod_requests(p) == {"cpu": 2, "memory": 1}
    assert nonzero_requests(p) == (2, 1)
    # 0.9995 is defaulted to 1 and 0.0004 to 0.001: 1.001 bytes, read as 2 (the exact sum, 0.9999, would be 1)
    assert pod_requests(_pod({"memory": "0.9995"}, {"memory": "0.0004"})) == {"memory": 2}
    # an init container's peak with the sidecars before it, and the overhead, are quantities too
    p = _pod({"memory": "0.4"}, init=({"memory": "0.3"},), overhead={"memory": "0.3"})
    assert pod_requests(p) == {"memory": 1}


# value: (1.36 and 1.37 Value(), 1.38 Value()) of an extended resource, as the conformance table records them
GPU_VALUES = {
    "1e20": (0, 2**63 - 1),
    "9223372036854775808": (-(2**63), 2**63 - 1),
    "123456789012345678901234567890": (-4362896299872285998, 2**63 - 1),
    "1Ei": (1152921504606846976, 1152921504606846976),
}


@pytest.mark.parametrize("value", sorted(GPU_VALUES))
def test_an_extended_resource_is_read_as_each_release_reads_it(value: str) -> None:
    old, new = GPU_VALUES[value]
    q = parse_quantity(value)
    assert [amount("nvidia.com/gpu", q, r) for r in ("1.36", "1.37", "1.38")] == [old, old, new]
    assert pod_requests(_pod({"nvidia.com/gpu": value}), "1.37") == {"nvidia.com/gpu": old}


def test_cpu_is_read_as_milli_value_per_release() -> None:
    q = parse_quantity("9223372036854775807")  # 1.37: MilliValue wraps to -1000; 1.38 saturates
    assert [amount("cpu", q, r) for r in ("1.37", "1.38")] == [-1000, 2**63 - 1]


def test_a_pod_whose_request_wraps_negative_is_not_simulated() -> None:
    assert unmodelled(_pod({"nvidia.com/gpu": "1e20"}), "1.37") is None  # reads 0: no GPU, as kube-scheduler
    assert unmodelled(_pod({"nvidia.com/gpu": "1e20"}), "1.38") is None  # MaxInt64: fits no node
    why = unmodelled(_pod({"nvidia.com/gpu": "9223372036854775808"}), "1.37")
    assert why is not None
    assert "reads as -9223372036854775808 units at 1.37" in why
    assert unmodelled(_pod({"nvidia.com/gpu": "9223372036854775808"}), "1.38") is None
    assert unmodelled(_pod({"memory": "1Ei"}), "1.37") is None  # fits no usual node: Insufficient memory


def test_a_node_whose_allocatable_wraps_or_overflows_the_scores_is_not_simulated() -> None:
    n = _gpu_node("a", "8")
    assert node_unmodelled(n, "1.37") is None
    n.allocatable["memory"] = parse_quantity("1Ei")  # (1Ei - requested) * 100 wraps in int64
    why = node_unmodelled(n, "1.37")
    assert why is not None
    assert "past MaxInt64/100" in why
    n.allocatable["memory"] = parse_quantity("92233720368547758")
    assert node_unmodelled(n, "1.37") is None
    n.allocatable["cpu"] = parse_quantity("92233720368548")  # milli-units past MaxInt64/100
    assert node_unmodelled(n, "1.38") is not None
    wrapped = _gpu_node("b", "9223372036854775808")
    assert node_unmodelled(wrapped, "1.37") is not None  # MinInt64 GPUs: free = alloc - used wraps
    assert node_unmodelled(wrapped, "1.38") is None  # saturates at MaxInt64


def _gpu_node(name: str, gpus: str):
    n = node(name)
    n.allocatable = {
        "cpu": Quantity.parse("16"),
        "memory": Quantity.parse("64Gi"),
        "pods": Quantity.parse("110"),
        "nvidia.com/gpu": parse_quantity(gpus),
    }
    return n


@pytest.mark.parametrize(("release", "bound"), [("1.37", "a"), ("1.38", None)])
def test_a_huge_gpu_request_fits_where_the_release_reads_it_as_zero(release: str, bound: str | None) -> None:
    s = Scheduler(engine_config(release), [_gpu_node("a", "0")], dra=False)
    pods = build_sim_pods([_pod({"nvidia.com/gpu": "1e20", "cpu": "1"})], [], [], release=release)
    s.run(pods)
    assert pods[0].node == bound
    if bound is None:
        assert pods[0].reason == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


@pytest.mark.parametrize(("release", "bound"), [("1.37", None), ("1.38", "a")])
def test_a_huge_node_allocatable_is_read_as_the_release_reads_it(release: str, bound: str | None) -> None:
    s = Scheduler(engine_config(release), [_gpu_node("a", "1e20")], dra=False)  # 1.37: 0 GPUs; 1.38: MaxInt64
    pods = build_sim_pods([_pod({"nvidia.com/gpu": "8", "cpu": "1"})], [], [], release=release)
    s.run(pods)
    assert pods[0].node == bound


def test_a_dra_extended_resource_counts_only_what_as_int64_reads() -> None:
    classes = {"example.com/gpu": DeviceClass(meta=ObjectMeta(name="gpu"))}
    one = extended_claim_spec(_pod({"example.com/gpu": "1"}), classes)
    assert one is not None
    assert one[0].requests[0].exactly is not None
    assert one[0].requests[0].exactly.count == 1
    # createResourceRequestAndMappings: AsInt64 fails for 2000m (a negative scale) and 1e20 (past int64)
    assert extended_claim_spec(_pod({"example.com/gpu": "2000m"}), classes) is None
    assert extended_claim_spec(_pod({"example.com/gpu": "1e20"}), classes) is None
    # 19 digits: an int64Amount from 1.38 only
    big = _pod({"example.com/gpu": "9223372036854775807"})
    assert extended_claim_spec(big, classes, "1.37") is None
    spec = extended_claim_spec(big, classes, "1.38")
    assert spec is not None
    assert spec[0].requests[0].exactly is not None
    assert spec[0].requests[0].exactly.count == 2**63 - 1

"""A device-plugin Node's GPU Feature Discovery labels, as real clusters carry them, to the DRA view.

GFD labels ``nvidia.com/gpu.product`` with nvmlDeviceGetName sanitised (spaces to '-'), plus ``-SHARED`` under
time-slicing/MPS, or ``-MIG-<profile>`` (``-MIG-INVALID``) under the single MIG strategy, where
``nvidia.com/gpu.count`` then counts MIG devices, not GPUs (NVIDIA/k8s-device-plugin internal/lm/resource.go
getProductName, internal/lm/mig-strategy.go newMigStrategySingleLabeler). With the single or mixed strategy it
sets ``nvidia.com/mig.strategy`` on every node, MIG-capable or not (the GPU Operator's default is single).

Label values below were seen in public files:
- NVIDIA-L4: ``oc get nodes -l nvidia.com/gpu.product=NVIDIA-L4`` for AWS g6 MachineSets and a Kueue
  ResourceFlavor ``nodeLabels: {nvidia.com/gpu.product: NVIDIA-L4}`` (public OpenShift AI demo repositories).
- NVIDIA-A10G, NVIDIA-A10G-SHARED (``gpu.count 1, gpu.replicas 8, sharing-strategy time-slicing``):
  opendatahub-io-contrib/ai-on-openshift docs/odh-rhoai/accelerator-profiles.md (taint value
  NVIDIA-A10G-SHARED) and OpenShift AI time-slicing guides; ``NVIDIA-A10G, nvidia.com/gpu.memory: 23028`` on a
  g5.xlarge node.
- NVIDIA-A10: ``kubectl get nodes -l nvidia.com/gpu.product=NVIDIA-A10`` for OCI (OKE) A10 nodes.
- NVIDIA-L40: ``16 NVIDIA L40 (label nvidia.com/gpu.product=NVIDIA-L40)`` in a cluster's notes.
- Tesla-T4: NVIDIA/k8s-device-plugin docs/gpu-feature-discovery/README.md (label table example) and
  lcpu-club/hpcgame-ops-2nd 5_accelerators/0_gpu/apply-time-slicing-config.sh.
- NVIDIA-L40S with ``mig.capable=false, mig.strategy=single, gpu.memory=46068, replicas=1``: a managed
  cluster's ``kubectl describe node`` in a provider's GPU guide.
- NVIDIA-H100-80GB-HBM3 with ``gpu.count=8, gpu.memory=81559, mig.capable=true, replicas=1``:
  NVIDIA/k8s-device-plugin#1501.
- NVIDIA-A30 with ``gpu.memory=24576, mig.capable=true``: NVIDIA/gpu-operator#442.
- NVIDIA-A100-80GB-PCIe: NVIDIA/gpu-operator#687. A100-PCIE-40GB (older drivers' name, no NVIDIA prefix):
  Mellanox/network-operator#211.
- NVIDIA-A100-SXM4-80GB-MIG-INVALID: NVIDIA/gpu-operator#479.
- A100-SXM4-40GB-MIG-1g.5gb(-SHARED): NVIDIA/k8s-device-plugin README.md and GFD README (single strategy).
- NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition: NVIDIA/gpu-operator#2249.
- NVIDIA A10-24Q (an A10 vGPU profile; label NVIDIA-A10-24Q): Azure NV72ads_A10_v5 in MLPerf custom systems.
"""

from __future__ import annotations

import pytest

from .helpers import run


def node(name: str, product: str, count: int, alloc: str = "nvidia.com/gpu: 1", **labels: str) -> str:
    extra = "".join(f", nvidia.com/{k.replace('_', '.')}: {v!r}" for k, v in labels.items())
    return f"""---
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{nvidia.com/gpu.product: {product}, nvidia.com/gpu.count: "{count}"{extra}}}
status:
  allocatable: {{cpu: "48", memory: 192Gi, pods: "110", {alloc}}}
"""


# what GFD puts on every node of a GPU Operator cluster (default mig.strategy single), MIG-capable or not
OPERATOR = {
    "mig_strategy": "single",
    "mig_capable": "false",
    "gpu_replicas": "1",
    "gpu_sharing-strategy": "none",
}


def dra_gpus(sim) -> list[tuple[str, str, str, str, str]]:
    """(node, productName, architecture, cudaComputeCapability, memory) of every full GPU in the DRA view."""
    out = []
    for s in sim.cluster.views["dra"].slices:
        for d in s.devices:
            a = d.attributes
            if a["type"].value == "gpu":
                out.append(
                    (
                        s.node_name,
                        a["productName"].value,
                        a["architecture"].value,
                        str(a["cudaComputeCapability"].value),
                        f"{d.capacity['memory'].value.value() // 2**20}Mi",
                    )
                )
    return out


@pytest.mark.parametrize(
    ("product", "count", "want"),
    [
        ("NVIDIA-L4", 1, ("NVIDIA L4", "Ada Lovelace", "8.9.0", "23034Mi")),
        ("NVIDIA-A10G", 4, ("NVIDIA A10G", "Ampere", "8.6.0", "23028Mi")),
        ("NVIDIA-A10", 4, ("NVIDIA A10", "Ampere", "8.6.0", "23028Mi")),
        ("NVIDIA-L40", 8, ("NVIDIA L40", "Ada Lovelace", "8.9.0", "46068Mi")),
        ("NVIDIA-L40S", 8, ("NVIDIA L40S", "Ada Lovelace", "8.9.0", "46068Mi")),
        ("Tesla-T4", 4, ("Tesla T4", "Turing", "7.5.0", "15360Mi")),
    ],
)
def test_operator_labelled_node_gets_its_dra_view(product: str, count: int, want: tuple[str, ...]) -> None:
    # mig.strategy=single on a board without MIG says nothing about MIG being on: before, such a node had
    # no DRA view ("its MIG layout is not known from the labels")
    sim = run(node("gpu-0", product, count, f"nvidia.com/gpu: {count}", **OPERATOR), nodes=None)
    assert sim.cluster.unmodelled == {}
    assert dra_gpus(sim) == [("gpu-0", *want)] * count
    assert sim.results["dra"].physical == count == sim.results["device-plugin"].physical


def test_h100_node_with_mig_disabled() -> None:
    labels = {**OPERATOR, "mig_capable": "true", "mig_config": "all-disabled"}
    sim = run(node("h100", "NVIDIA-H100-80GB-HBM3", 8, "nvidia.com/gpu: 8", **labels), nodes=None)
    assert sim.cluster.unmodelled == {}
    assert {g[1:] for g in dra_gpus(sim)} == {("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "81559Mi")}
    assert sim.results["dra"].physical == 8


def test_shared_suffix_is_time_slicing_of_the_same_board() -> None:
    labels = {**OPERATOR, "gpu_replicas": "8", "gpu_sharing-strategy": "time-slicing"}
    sim = run(node("g5", "NVIDIA-A10G-SHARED", 1, "nvidia.com/gpu: 8", **labels), nodes=None)
    assert sim.cluster.unmodelled == {}
    assert [g[1] for g in dra_gpus(sim)] == ["NVIDIA A10G"]
    assert (sim.results["dra"].physical, sim.results["device-plugin"].physical) == (1, 1)


@pytest.mark.parametrize(
    "product",
    [
        "NVIDIA-A30",  # MIG on 4 slices: not modelled
        "NVIDIA-A100-80GB-PCIe",
        "A100-PCIE-40GB",
        "NVIDIA-A10-24Q",  # A10 vGPU profile: a fraction of the board, not an A10
        "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition",
        "A100-SXM4-40GB-MIG-1g.5gb-SHARED",  # older drivers' name of the A100 (no NVIDIA prefix)
    ],
)
def test_boards_outside_the_catalogue_are_named_not_guessed(product: str) -> None:
    fleet = node("l4", "NVIDIA-L4", 1, **OPERATOR) + node(
        "odd", product, 1, **OPERATOR, mig_config="all-disabled"
    )
    sim = run(fleet, nodes=None)
    assert sim.cluster.unmodelled == {
        "odd": f"no DRA view: GPU model {product!r} is not in kubedra's catalogue; add its ResourceSlices, "
        "or use --nodes"
    }
    assert {g[0] for g in dra_gpus(sim)} == {"l4"}


def test_single_strategy_count_is_mig_devices_not_gpus() -> None:
    # 2 A100s cut into 7 x 1g.5gb each: GFD says gpu.count 14 (MIG devices) under the single strategy
    labels = {"mig_strategy": "single", "mig_capable": "true", "mig_config": "all-1g.5gb"}
    sim = run(
        node("a100", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 14, "nvidia.com/gpu: 14", **labels), nodes=None
    )
    assert sim.cluster.unmodelled == {}
    assert sim.results["dra"].physical == 2 == sim.results["device-plugin"].physical
    migs = [
        d for s in sim.cluster.views["dra"].slices for d in s.devices if d.attributes["type"].value == "mig"
    ]
    assert len(migs) == 14
    assert {d.attributes["profile"].value for d in migs} == {"1g.5gb"}


@pytest.mark.parametrize(
    ("product", "count", "config", "reason"),
    [
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 10, "all-1g.5gb", "nvidia.com/gpu.count 10 (MIG devices"),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 14, "custom", "its MIG layout is not known from the labels"),
        ("NVIDIA-A100-SXM4-80GB-MIG-INVALID", 0, "all-balanced", "marks its MIG set-up invalid"),
    ],
)
def test_single_strategy_gpus_that_cannot_be_told(product: str, count: int, config: str, reason: str) -> None:
    labels = {"mig_strategy": "single", "mig_capable": "true", "mig_config": config}
    fleet = node("l4", "NVIDIA-L4", 1, **OPERATOR) + node(
        "a100", product, count, "nvidia.com/gpu: 7", **labels
    )
    sim = run(fleet, nodes=None)
    assert reason in sim.cluster.unmodelled["a100"]
    assert {g[0] for g in dra_gpus(sim)} == {"l4"}
    # the device-plugin column does not take GFD's count of MIG devices for GPUs either
    assert sim.results["device-plugin"].nodes["a100"].physical == 0

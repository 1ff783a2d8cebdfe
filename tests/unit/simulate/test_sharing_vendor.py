"""``simulate --sharing`` shares a claim with its own vendor's config: an NVIDIA time-slicing ``GpuConfig`` on a claim
for AMD GPUs would be a config AMD's driver never reads (its API has none: data/amd-gpu.yaml), so AMD claims stay one
per pod and the run says so."""

from __future__ import annotations

from tests.unit.simulate.helpers import deployment, inputs, run

from kubedra import vendors
from kubedra.model.inventory import build_inventory
from kubedra.scheduler.workloads import expand
from kubedra.simulate.run import SimulateOptions, prepare_dra

NODES = "1x2xA100-80GB,1x8xMI300X"
MIXED = deployment("nv", 4) + deployment("rocm", 4, resources="amd.com/gpu: 1")


def test_sharing_gives_each_claim_its_own_vendors_config() -> None:
    docs = inputs(MIXED).documents
    inv = build_inventory(docs)
    sets = expand(docs).sets
    prep = prepare_dra(sets, inv, SimulateOptions(sharing="time-slicing:2"), ())
    nvidia, amd = vendors.get("nvidia"), vendors.get("amd")
    shared = {c.meta.name: c.spec for c in prep.claims}
    assert sorted(shared) == ["nv-gpu-shared-0", "nv-gpu-shared-1"]
    for spec in shared.values():
        (cfg,) = spec.config
        assert cfg.opaque is not None
        assert cfg.opaque.driver == nvidia.driver
    # the AMD pods keep a ResourceClaimTemplate each (no shared claim), with no opaque config of any vendor
    (rct,) = [t for t in prep.templates if t.meta.name == "rocm-gpu"]
    assert rct.spec.config == []
    assert rct.spec.requests[0].exactly is not None
    assert rct.spec.requests[0].exactly.device_class_name == amd.gpu_class
    assert (
        "--sharing time-slicing:2: not applied to the claims of 4 pods on AMD GPUs (one claim per pod): "
        + str(amd.unsupported("sharing"))
    ) in prep.notes


def test_amd_pods_never_share_a_gpu_under_sharing() -> None:
    sim = run(MIXED, nodes=NODES, sharing="time-slicing:2")
    dra = sim.results["dra"]
    rocm = [p for p in dra.pods if p.name.startswith("rocm")]
    nv = [p for p in dra.pods if p.name.startswith("nv")]
    assert len(rocm) == len(nv) == 4
    assert all(p.node for p in rocm + nv)
    assert len({(p.node, p.devices[0]) for p in rocm}) == 4  # one AMD GPU per pod
    assert len({(p.node, p.devices[0]) for p in nv}) == 2  # two NVIDIA pods per claim, per GPU
    assert any("not applied to the claims of 4 pods on AMD GPUs" in n for n in sim.notes)

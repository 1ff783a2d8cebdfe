"""The boards of managed Kubernetes GPU pools (L4, A10G, A10, L40): generated nodes, and the attributes the
NVIDIA DRA driver publishes for them, against the real outputs the catalogue cites.

Expected values, each from a real output (models.yaml cites the same):
- L4: nvidia-smi "NVIDIA L4 ... 23034MiB" (speaches-ai/speaches#438); nvidia-smi -q "Product Architecture :
  Ada Lovelace", "Device Id : 0x27B810DE"; deviceQuery "CUDA Capability 8.9", "(58) Multiprocessors"
  (kamelth/COE506_Project README.md).
- A10G: nvidia-smi -q on AWS (NVIDIA/DCGM#232): "NVIDIA A10G", "Ampere", "0x223710DE", "Total : 23028 MiB".
- A10: nvidia-smi -q and deviceQuery in thamada/gls (gls/A10_smi.py, gls/A10_deviceQuery.py): "NVIDIA A10",
  "Ampere", "0x223610DE", "23028 MiB", capability 8.6, 72 SMs.
- L40: NVIDIA's MLPerf harness (mlcommons/inference_results_v4.0 closed/NVIDIA/code/common/systems/
  known_hardware.py): PCI "26B5", compute_sm 89; 8 x "NVIDIA L40" in vllm-project/vllm#8494.
Architecture strings: go-nvlib pkg/nvlib/device/device.go GetArchitectureAsString.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedra.errors import InputError
from kubedra.vendors.nvidia import dra, models, specs
from kubedra.vendors.nvidia import nodes as nvidia_nodes
from kubedra.vendors.nvidia.cluster import cluster

# key, product name, architecture, cudaComputeCapability, memory MiB, PCI device ID, GFD family
BOARDS = [
    ("L4-24GB", "NVIDIA L4", "Ada Lovelace", "8.9.0", 23034, "0x27B810DE", "ada-lovelace"),
    ("A10G-24GB", "NVIDIA A10G", "Ampere", "8.6.0", 23028, "0x223710DE", "ampere"),
    ("A10-24GB", "NVIDIA A10", "Ampere", "8.6.0", 23028, "0x223610DE", "ampere"),
    ("L40-48GB", "NVIDIA L40", "Ada Lovelace", "8.9.0", 46068, "0x26B510DE", "ada-lovelace"),
]


@pytest.mark.parametrize(("alias", "key"), [("L4", "L4-24GB"), ("a10g", "A10G-24GB"), ("A10", "A10-24GB"),
                                       ("l40", "L40-48GB"), ("L40S", "L40S-48GB")])  # fmt: skip
def test_short_names(alias: str, key: str) -> None:
    assert models.get_model(alias).key == key


@pytest.mark.parametrize("spec", ["4x1xL4", "2x4xA10G", "1x4xA10", "1x8xL40", "2x8xL4-24GB"])
def test_node_specs_generate_the_nodes_and_gpus(spec: str) -> None:
    # the objects of these boards validate against the API schemas in test_nvidia_catalog_schema
    (group,) = specs.parse_node_spec(spec)
    objs = cluster(spec, "full", "1.37")
    nodes = [o for o in objs if o["kind"] == "Node"]
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    assert len(nodes) == group.nodes
    assert sum(len(s["spec"]["devices"]) for s in slices) == group.nodes * group.gpus_per_node
    assert {n["metadata"]["labels"]["kubedra.io/node-pool"] for n in nodes} == {
        f"{group.model.slug}-x{group.gpus_per_node}"
    }


@pytest.mark.parametrize(("key", "product", "arch", "cc", "mib", "pci", "family"), BOARDS)
def test_published_attributes_match_the_sources(key, product, arch, cc, mib, pci, family) -> None:
    model = models.get_model(key)
    assert (model.pci_device_id, model.mig_capable) == (pci, False)
    (s,) = dra.dra_objects("n", key, 2, "full", "1.37")
    for d in s["spec"]["devices"]:
        a = d["attributes"]
        assert a["productName"] == {"string": product}
        assert a["architecture"] == {"string": arch}
        assert a["cudaComputeCapability"] == {"version": cc}
        assert a["brand"] == {"string": "Nvidia"}
        assert d["capacity"]["memory"] == {"value": f"{mib}Mi"}
    gfd = nvidia_nodes.device_plugin_node("n", key, 2, "full")["metadata"]["labels"]
    assert gfd["nvidia.com/gpu.product"] == product.replace(" ", "-")
    assert (gfd["nvidia.com/gpu.memory"], gfd["nvidia.com/gpu.family"]) == (str(mib), family)


@pytest.mark.parametrize("key", [k for k, *_ in BOARDS])
def test_no_mig_on_these_boards(key: str) -> None:
    with pytest.raises(InputError, match="does not support MIG"):
        dra.dra_objects("n", key, 1, "mig-static:all-balanced", "1.37")
    # DynamicMIG on a board without MIG publishes the plain GPUs, as the driver does
    slices = dra.dra_objects("n", key, 1, "mig-dynamic", "1.37")
    devices = [d for s in slices for d in s["spec"].get("devices", [])]
    assert [(d["name"], d["attributes"]["type"]) for d in devices] == [("gpu-0", {"string": "gpu"})]
    assert "consumesCounters" not in devices[0]


def test_time_slicing_on_a_new_board() -> None:
    node = nvidia_nodes.device_plugin_node("n", "A10G", 1, "time-slicing:4")
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "4"
    assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-A10G-SHARED"


def test_docs_list_every_catalogue_board() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "simulate.md").read_text()
    para = text[text.index("**The catalogue**") :]
    para = " ".join(para[: para.index("\n\n")].split())
    assert [k for k in models.gpu_models() if k not in para] == []
    for outside in ("A30", "H20", "GB200", "RTX PRO 6000"):
        assert outside in para
        with pytest.raises(InputError, match="unknown GPU model"):
            models.get_model(outside.replace(" ", "-"))

"""The plan over GPU nodes of every registered vendor: its steps install NVIDIA's DRA driver (data/plan/common.yaml
``vendor``), so AMD GPU nodes are left out of the waves and named with the reason (exit 1), never planned with
NVIDIA's steps nor ignored; a cluster of AMD GPUs only gets no NVIDIA driver step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from kubedra import vendors
from kubedra.plan import templates

from .helpers import run

DATA = Path(__file__).parent / "data"
AMD_WHY = "no wave moves AMD GPU nodes: move them by hand"


def _amd_node(name: str) -> dict[str, Any]:
    node = vendors.get("amd").simulated_node(name, "MI300X", 8, "spx_nps1", "1.37", device_plugin=True)[0]
    node["metadata"]["labels"]["kubedra.io/node-pool"] = "mi300x"
    return node


def _amd_pod(node: str) -> dict[str, Any]:
    gpus = {"amd.com/gpu": "2"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"rocm-{node}", "namespace": "ml"},
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "c", "image": "rocm/pytorch", "resources": {"limits": gpus, "requests": gpus}}
            ],
        },
        "status": {"phase": "Running"},
    }


def _plan(tmp_path: Path, items: list[dict[str, Any]], *args: str) -> Any:
    dev = yaml.safe_load((DATA / "dev.yaml").read_text())
    dev["items"] = items
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(dev))
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(
        "clusters:\n- {name: dev, snapshot: dev.yaml, distribution: kubeadm, criticality: low}\n"
    )
    return run("plan", "--fleet", str(fleet_file), *args)


def _dev_items() -> list[dict[str, Any]]:
    return list(yaml.safe_load((DATA / "dev.yaml").read_text())["items"])


def test_the_steps_vendor_can_be_planned() -> None:
    assert templates.vendor().unsupported("plan") is None


def test_amd_nodes_beside_nvidia_ones_are_named_and_moved_by_no_wave(tmp_path: Path) -> None:
    alone = _plan(tmp_path, _dev_items(), "-o", "json")
    assert alone.exit_code == 0, alone.output
    res = _plan(tmp_path, [*_dev_items(), _amd_node("mi300x-0"), _amd_pod("mi300x-0")], "-o", "json")
    assert res.exit_code == 1, res.output  # was 0: the AMD node was no GPU node to the plan
    out, before = json.loads(res.stdout), json.loads(alone.stdout)
    assert out["waves"] == before["waves"]  # the NVIDIA nodes' waves, as without the AMD node
    assert out["summary"]["gpuNodesNotPlanned"] == ["dev/mi300x-0"]
    assert out["clusters"][0]["gpuNodesNotPlanned"] == ["mi300x-0"]
    notes = out["clusters"][0]["notes"]
    assert any(n.startswith("1 GPU node with AMD GPUs left out of the waves (mi300x-0): ") for n in notes), (
        notes
    )
    assert not any("not tied to a pool" in n for n in notes), notes  # its pod's GPUs are no pool's demand
    assert out["clusters"][0]["pools"] == before["clusters"][0]["pools"]
    assert res.stderr.startswith("kubedra: plan: cluster dev: 1 GPU node (mi300x-0): kubedra's rollout steps")
    assert AMD_WHY in res.stderr
    md = _plan(tmp_path, [*_dev_items(), _amd_node("mi300x-0")])
    assert md.exit_code == 1
    assert "**Not planned:** GPU node dev/mi300x-0: kubedra's rollout steps" in md.stdout
    page = _plan(tmp_path, [*_dev_items(), _amd_node("mi300x-0")], "-o", "html")
    assert page.exit_code == 1
    assert "Not planned: GPU nodes dev/mi300x-0: " in page.stdout
    assert "No blockers; every wave keeps enough GPUs" not in page.stdout


def test_a_cluster_of_amd_gpus_gets_no_nvidia_step(tmp_path: Path) -> None:
    names = [f"mi300x-{i}" for i in range(7)]
    res = _plan(tmp_path, [*(_amd_node(n) for n in names), _amd_pod("mi300x-0")], "-o", "json")
    assert res.exit_code == 1, (
        res.output
    )  # was 0, with the NVIDIA DRA driver's install and device-plugin patch
    out = json.loads(res.stdout)
    [wave] = out["waves"]
    # no NVIDIA command, step, gate or rollback (the by-hand step's note says why none is AMD's)
    said = [[s["title"], s["commands"]] for s in wave["steps"]], wave["gate"], wave["rollback"]["commands"]
    assert "nvidia" not in json.dumps(said).lower()
    assert wave["title"] == "dev: etcd backup, control plane 1.37, DRA driver by hand"
    by_hand = [
        s for s in wave["steps"] if s["title"] == "Install the DRA driver of the cluster's GPUs: by hand"
    ]
    assert len(by_hand) == 1
    assert by_hand[0]["note"].startswith("the cluster's GPU nodes have AMD GPUs: ")
    assert wave["files"] == {}
    assert out["summary"]["gpuNodesNotPlanned"] == [f"dev/{n}" for n in names]
    notes = out["clusters"][0]["notes"]
    assert "no GPU nodes found: only the control-plane wave is planned" not in notes
    assert any(
        n.startswith(
            "7 GPU nodes with AMD GPUs left out of the waves (mi300x-0, mi300x-1, mi300x-2, mi300x-3, mi300x-4 and 2 more)"
        )
        for n in notes
    ), notes
    assert res.stderr.count("\n") == 1  # one line for the cluster's AMD nodes, not one per node


def test_an_operator_resource_of_any_shape_is_read_without_a_crash(tmp_path: Path) -> None:
    odd = [
        {"apiVersion": ["nvidia.com/v1"], "kind": "ClusterPolicy", "metadata": {"name": "a"}},
        {"apiVersion": "nvidia.com/v1", "kind": {"ClusterPolicy": 1}, "metadata": {"name": "b"}},
    ]
    res = _plan(tmp_path, [*_dev_items(), *odd], "-o", "json")
    assert res.exit_code in (0, 1, 2), res.output  # 2: the snapshot reader refuses it (one line)
    if res.exit_code != 2:  # neither is a ClusterPolicy: the driver goes in with its Helm chart
        steps = json.loads(res.stdout)["waves"][0]["steps"]
        install = [s for s in steps if s["title"].startswith("Install the NVIDIA DRA driver")]
        assert len(install) == 1
        assert "ClusterPolicy" not in install[0]["note"]

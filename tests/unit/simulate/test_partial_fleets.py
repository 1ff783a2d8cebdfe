"""Fleets in the middle of their migration, and GPU nodes one view cannot show.

A snapshot taken while a cluster migrates has nodes still on the device plugin and nodes whose GPUs the DRA
driver publishes. Each view must be the whole fleet: before, each view held only the nodes already in its form
(half the GPUs in each column, pods pending, exit 0). A GPU node that cannot be shown in the DRA view (a GPU
model kubedra does not know, a MIG layout the labels do not give) makes the comparison incomplete: exit 2.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from kubedra.cli import cli, main
from kubedra.report.output import to_yaml
from kubedra.vendors.nvidia.cluster import cluster as nvidia_cluster

from .helpers import deployment, run


def _rename(objs: list[dict[str, Any]], old: str, new: str) -> list[dict[str, Any]]:
    return json.loads(json.dumps(objs).replace(old, new))


def mid_migration(dra_gpus: int = 2, dp_gpus: int = 2) -> str:
    """One node on DRA (its Node without GPU resources, its ResourceSlice) and one still on the device plugin."""
    dra = nvidia_cluster(f"1x{dra_gpus}xH100-80GB", "full", "1.37", device_plugin=False)
    dp = _rename(
        nvidia_cluster(f"1x{dp_gpus}xH100-80GB", "full", "1.37", device_plugin=True), "h100-80gb-0", "dp-0"
    )
    return "".join("---\n" + to_yaml(o) for o in dra + dp)


def unknown_gpu_node(product: str = "NVIDIA-Imaginary-GPU") -> str:
    return f"""---
apiVersion: v1
kind: Node
metadata:
  name: odd-0
  labels: {{nvidia.com/gpu.product: {product}, nvidia.com/gpu.count: "1"}}
status:
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}}
"""


def test_each_view_holds_the_whole_mid_migration_fleet() -> None:
    sim = run(mid_migration(2, 3) + deployment("x", 5), nodes=None)
    for mode in ("device-plugin", "dra"):
        r = sim.results[mode]
        assert (r.physical, r.placed, r.pending) == (5, 5, 0), mode
    assert sim.cluster.unmodelled == {}
    assert any("for 1 node on DRA" in n for n in sim.notes)
    assert any("(1 node still on the device plugin)" in n for n in sim.notes)


def test_a_gpu_node_without_a_dra_view_is_named() -> None:
    sim = run(mid_migration() + unknown_gpu_node() + deployment("x", 1), nodes=None)
    assert sim.cluster.unmodelled == {
        "odd-0": "no DRA view: GPU model 'NVIDIA-Imaginary-GPU' is not in kubedra's catalogue; add its "
        "ResourceSlices, or use --nodes"
    }
    assert sim.results["device-plugin"].physical == 5
    assert sim.results["dra"].physical == 4
    assert sim.to_dict()["notModelled"] == [{"node": "odd-0", "reason": sim.cluster.unmodelled["odd-0"]}]


def test_unknown_mig_layout_is_named() -> None:
    text = unknown_gpu_node("NVIDIA-H100-80GB-HBM3").replace(
        "nvidia.com/gpu.count",
        "nvidia.com/mig.config: custom, nvidia.com/mig.strategy: mixed, nvidia.com/gpu.count",
    )
    sim = run(mid_migration() + text, nodes=None)
    assert "MIG layout is not known" in sim.cluster.unmodelled["odd-0"]


def _cli(tmp_path, text: str, *args: str):
    f = tmp_path / "fleet.yaml"
    f.write_text(text)
    return CliRunner().invoke(cli, ["simulate", "-f", str(f), *args], catch_exceptions=False)


@pytest.mark.parametrize("output", ["table", "json"])
def test_cli_exits_2_and_names_the_node_but_prints_the_report(tmp_path, output: str) -> None:
    r = _cli(tmp_path, mid_migration() + unknown_gpu_node() + deployment("x", 1), "-o", output)
    assert r.exit_code == 2, r.output
    assert (
        "kubedra: error: 1 GPU node without a DRA view (odd-0), so the comparison is incomplete" in r.stderr
    )
    assert "kubectl get resourceslices -o yaml" in r.stderr
    if output == "json":
        assert json.loads(r.stdout)["notModelled"][0]["node"] == "odd-0"
    else:
        assert "DEVICE PLUGIN" in r.stdout
        assert "kubedra: error" not in r.stdout


def test_cli_device_plugin_only_needs_no_dra_view(tmp_path) -> None:
    r = _cli(tmp_path, mid_migration() + unknown_gpu_node() + deployment("x", 1), "--mode", "device-plugin")
    assert r.exit_code == 0, r.output


def test_cli_mid_migration_fleet_is_clean(tmp_path) -> None:
    r = _cli(tmp_path, mid_migration() + deployment("x", 4), "-o", "json")
    assert r.exit_code == 0, r.output
    modes = json.loads(r.stdout)["modes"]
    assert [modes[m]["placed"] for m in ("device-plugin", "dra")] == [4, 4]


def test_cli_only_unknown_gpus_says_why_in_one_line(tmp_path, capsys) -> None:
    f = tmp_path / "fleet.yaml"
    f.write_text(unknown_gpu_node() + deployment("x", 1))
    with pytest.raises(SystemExit) as e:
        main(["simulate", "-f", str(f)])
    out, err = capsys.readouterr()
    assert e.value.code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "node odd-0: no DRA view: GPU model 'NVIDIA-Imaginary-GPU'" in lines[0]


# Under mig-strategy=single GPU Feature Discovery's MIG labeler replaces the full-GPU labels: nvidia.com/gpu.count
# is the number of MIG devices (NVIDIA/k8s-device-plugin internal/lm/mig-strategy.go, newMigStrategySingleLabeler).
# Before, the DRA view took it as the number of GPUs: 8 H100 in all-3g.40gb (16 MIG devices) became 16 GPUs.
@pytest.mark.parametrize(("layout", "migs"), [("all-3g.40gb", 16), ("all-1g.10gb", 56), ("all-7g.80gb", 8)])
def test_mig_strategy_single_counts_gpus_not_mig_devices(layout: str, migs: int) -> None:
    objs = nvidia_cluster(
        "1x8xH100-80GB", f"mig-static:{layout}", "1.37", device_plugin=True, mig_strategy="single"
    )
    node = next(o for o in objs if o["kind"] == "Node")
    assert node["metadata"]["labels"]["nvidia.com/gpu.count"] == str(migs)
    text = "".join("---\n" + to_yaml(o) for o in objs) + deployment("x", migs + 1, memory="1Gi")
    sim = run(text, nodes=None, sizing="mig")
    dra = sim.results["dra"]
    assert dra.physical == 8
    assert (dra.placed, dra.pending) == (migs, 1)
    assert sim.results["device-plugin"].placed == migs
    assert any("runs mig-strategy single" in n and layout[4:] in n for n in sim.notes)


def test_mig_strategy_single_count_that_fits_no_layout_is_named() -> None:
    objs = nvidia_cluster(
        "1x8xH100-80GB", "mig-static:all-3g.40gb", "1.37", device_plugin=True, mig_strategy="single"
    )
    text = "".join("---\n" + to_yaml(o) for o in objs).replace(
        "nvidia.com/gpu.count: '16'", "nvidia.com/gpu.count: '15'"
    )
    assert "nvidia.com/gpu.count: '15'" in text
    sim = run(mid_migration() + text.replace("h100-80gb-0", "single-0"), nodes=None)
    assert "is no whole number of GPUs with layout 'all-3g.40gb'" in sim.cluster.unmodelled["single-0"]
    assert sim.results["dra"].physical == 4  # the mid-migration fleet's two nodes


def test_cli_an_edited_gpu_count_is_named_not_built(tmp_path, capsys) -> None:
    # nvidia.com/gpu.count: "99999999999" made simulate build that many GPUs' slices (it hung); "²" crashed it
    for value in ("99999999999", "²"):
        f = tmp_path / "fleet.yaml"
        f.write_text(unknown_gpu_node("NVIDIA-H100-80GB-HBM3").replace('"1"}', f'"{value}"}}', 1))
        with pytest.raises(SystemExit) as e:
            main(["simulate", "-f", str(f)])
        out, err = capsys.readouterr()
        assert e.value.code == 2, err
        assert out == "", err
        assert len(err.strip().splitlines()) == 1, err
        assert "node odd-0: no DRA view" in err

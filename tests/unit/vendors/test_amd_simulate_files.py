"""AMD nodes read from files get the view they lack through the vendor seam (``Vendor.dra_view``,
``Vendor.device_plugin_view``), as NVIDIA's do: the DRA driver's slices from a device-plugin Node's node-labeller
labels, the device plugin's ``amd.com/gpu`` from the driver's slices; a node whose partition mode its resources do
not say has no DRA view, named, exit 2. The Nodes are the catalogue's own (``--save-cluster``), so the derived view
can be compared with the generated one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubedra.cli import cli, main

POD = Path(__file__).resolve().parents[2] / "realworld" / "inputs" / "amd--pytorch-pod.yaml"


def _run(*args: str) -> tuple[int, dict, str]:
    r = CliRunner().invoke(cli, ["simulate", *args, "-o", "json"], catch_exceptions=False)
    return r.exit_code, json.loads(r.stdout) if r.stdout.strip() else {}, r.stderr


def _saved(tmp_path: Path, mode: str, *args: str) -> tuple[Path, dict]:
    """The cluster of ``--nodes ... --mode <mode>`` as --save-cluster writes it, and that run's result."""
    path = tmp_path / f"{mode}.yaml"
    code, data, err = _run(str(POD), "--mode", mode, "--save-cluster", str(path), *args)
    assert code == 0, err
    return path, data


def test_a_device_plugin_amd_node_gets_the_dra_view_of_its_mode(tmp_path: Path) -> None:
    saved, _ = _saved(tmp_path, "device-plugin", "--nodes", "2x8xMI300X")
    code, data, err = _run(str(POD), str(saved), "--gpu-mode", "spx_nps1")
    assert code == 0, err
    _, generated, _ = _run(str(POD), "--nodes", "2x8xMI300X")
    for key in ("placed", "pending", "gpus", "memory"):
        assert data["modes"]["dra"][key] == generated["modes"]["dra"][key], key
    assert "DRA view derived from the Nodes' ROCm node labeller labels" in err


def test_without_a_mode_an_amd_gpu_node_has_no_dra_view_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved, _ = _saved(tmp_path, "device-plugin", "--nodes", "1x8xMI300X")
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["simulate", str(POD), str(saved)])
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert (
        "node mi300x-0: no DRA view: its partition mode is not known (amd.com/gpu counts whole GPUs and partitions "
        "alike); pass --gpu-mode spx_nps1 (or the mode it runs) for the DRA view"
    ) in err


def test_a_mixed_strategy_resource_says_the_partition_mode(tmp_path: Path) -> None:
    saved, _ = _saved(tmp_path, "device-plugin", "--nodes", "1x8xMI300X")
    saved.write_text(saved.read_text().replace("amd.com/gpu: '8'", "amd.com/cpx_nps4: '64'"))
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD.read_text().replace("amd.com/gpu: 1", "amd.com/cpx_nps4: 2"))
    code, data, err = _run(str(pod), str(saved))
    assert code == 0, err
    dra = data["modes"]["dra"]
    assert (dra["placed"], dra["gpus"]["physical"]) == (1, 64)
    assert dra["memory"]["allocatedBytes"] == 2 * 24 * 2**30  # two CPX partitions of a 192 GiB MI300X


def test_a_dra_amd_node_gets_the_device_plugins_view(tmp_path: Path) -> None:
    saved, _ = _saved(tmp_path, "dra", "--nodes", "1x4xMI250")
    code, data, err = _run(str(POD), str(saved))
    assert code == 0, err
    dp = data["modes"]["device-plugin"]
    assert (dp["placed"], dp["gpus"]["physical"]) == (1, 8)  # one amd.com/gpu per GCD the driver publishes
    assert "device-plugin view derived from the AMD DRA driver's ResourceSlices" in err
    nodes = [o for o in yaml.safe_load_all(saved.read_text()) if o and o.get("kind") == "Node"]
    assert all("amd.com/gpu" not in o["status"]["allocatable"] for o in nodes)

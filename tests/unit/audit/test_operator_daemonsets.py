"""The GPU Operator's device-plugin DaemonSet is a device plugin as much as the standalone one: its manifest
(NVIDIA/gpu-operator assets/state-device-plugin/0500_daemonset.yaml, copied in tests/realworld/inputs with its
source) runs image "FILLED BY THE OPERATOR", so the vendor tells it by its container's name, or by the operator's
per-component node selector when nothing else says. Audit used to ask only the image and reported nothing."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml

from .helpers import run

REAL = Path(__file__).resolve().parents[2] / "realworld" / "inputs"


def _findings(*paths: Path) -> list[dict]:
    res = run("audit", *map(str, paths), "-o", "json", code=0)
    return json.loads(res.stdout)["findings"]


def test_the_operators_device_plugin_daemonset_is_flagged_as_the_standalone_one() -> None:
    operator = REAL / "gpu-operator--device-plugin-daemonset.yaml"
    standalone = REAL / "device-plugin--nvidia-device-plugin.yaml"
    found = _findings(operator, standalone)
    op = [f for f in found if f["source"]["file"] == str(operator)]
    alone = [f for f in found if f["source"]["file"] == str(standalone)]
    assert [f["rule"] for f in op] == [f["rule"] for f in alone] == ["gpu.device-plugin-daemonset"]
    assert op[0]["message"].startswith("NVIDIA device plugin (")
    assert op[0]["message"].split(" (")[0] == alone[0]["message"].split(" (")[0]
    assert (
        op[0]["source"]["line"] == 65
    )  # the nvidia-device-plugin container's image, not an init container's


def test_a_daemonset_told_only_by_the_operators_node_selector(tmp_path: Path) -> None:
    (ds,) = [
        d for d in yaml.safe_load_all((REAL / "gpu-operator--device-plugin-daemonset.yaml").read_text()) if d
    ]
    bare = copy.deepcopy(ds)
    spec = bare["spec"]["template"]["spec"]
    spec.pop("initContainers")
    spec["containers"] = [
        {"name": "plugin", "image": "registry.example/plugin:1", "command": ["/bin/sh", "-c"]}
    ]
    (tmp_path / "bare.yaml").write_text(yaml.safe_dump(bare))
    (f,) = _findings(tmp_path / "bare.yaml")
    assert f["rule"] == "gpu.device-plugin-daemonset"
    assert f["message"] == "NVIDIA device plugin (registry.example/plugin:1)"
    # without the selector nothing of it is NVIDIA's: no finding
    spec.pop("nodeSelector")
    (tmp_path / "bare.yaml").write_text(yaml.safe_dump(bare))
    assert _findings(tmp_path / "bare.yaml") == []


def test_the_operators_other_daemonsets_are_not_device_plugins() -> None:
    gfd = REAL / "gpu-operator--gfd-daemonset.yaml"
    mps = REAL / "gpu-operator--mps-control-daemonset.yaml"
    found = [(f["object"]["name"], f["rule"]) for f in _findings(gfd, mps)]
    assert found == [("nvidia-device-plugin-mps-control-daemon", "gpu.mps-sharing")]  # GFD: nothing


def test_amds_device_plugin_is_flagged_as_amds() -> None:
    (f,) = _findings(REAL / "amd--device-plugin-daemonset.yaml")
    assert f["rule"] == "gpu.device-plugin-daemonset"
    assert f["message"].startswith("AMD device plugin (rocm/k8s-device-plugin")

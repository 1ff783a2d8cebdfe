"""NVIDIA's node DaemonSets told apart: GPU feature discovery and the MPS control daemon run the device plugin's
image (and the device plugin chart labels them alike), but they are not the device plugin. plan took the last
DaemonSet whose text said k8s-device-plugin/nvidia-device-plugin for the device plugin (and patched GFD, the MPS
daemon or AMD's plugin to keep "the device plugin" off DRA nodes); audit called the chart's GFD DaemonSet, whose
config-manager sidecar runs the plugin's image, an "NVIDIA device plugin"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubedra import vendors
from kubedra.cli import cli

from .helpers import run

DATA = Path(__file__).parent / "data"
REAL = Path(__file__).resolve().parents[2] / "realworld" / "inputs"


def _one(name: str) -> dict:
    docs = [d for d in yaml.safe_load_all((REAL / name).read_text()) if isinstance(d, dict)]
    (ds,) = [d for d in docs if d.get("kind") == "DaemonSet"]
    return ds


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("device-plugin--nvidia-device-plugin.yaml", "device-plugin"),
        ("device-plugin--gfd-daemonset.yaml", "gpu-feature-discovery"),
        ("device-plugin--gfd-daemonset-mig-mixed.yaml", "gpu-feature-discovery"),
        ("gpu-operator--device-plugin-daemonset.yaml", "device-plugin"),
        ("gpu-operator--gfd-daemonset.yaml", "gpu-feature-discovery"),
        ("gpu-operator--mps-control-daemonset.yaml", "mps-control-daemon"),
        ("vllm-stack--azure-nvidia-device-plugin-ds.yaml", "device-plugin"),
        ("amd--device-plugin-daemonset.yaml", "device-plugin"),  # rocm/k8s-device-plugin: AMD's, below
    ],
)
def test_each_real_daemonset_is_what_it_runs(name: str, key: str | None) -> None:
    found = vendors.node_component(_one(name))
    assert (found.key if found else None) == key


def test_each_vendor_answers_for_its_own_daemonsets_only() -> None:
    amd, nvidia = vendors.get("amd"), vendors.get("nvidia")
    amd_ds, nvidia_ds = (
        _one("amd--device-plugin-daemonset.yaml"),
        _one("device-plugin--nvidia-device-plugin.yaml"),
    )
    assert nvidia.node_component(amd_ds) is None  # an image of the same name (k8s-device-plugin) from rocm/
    assert amd.node_component(nvidia_ds) is None
    found = amd.node_component(amd_ds)
    assert found is not None
    assert found.key == "device-plugin"
    # AMD's node labeller runs from the device plugin's image repository (k8s-ds-amdgpu-labeller.yaml)
    labeller = {"image": "rocm/k8s-device-plugin:labeller-latest", "command": ["./k8s-node-labeller"]}
    found = amd.node_component(labeller)
    assert found is not None
    assert found.key == "node-labeller"
    found = amd.node_component({"image": "docker.io/rocm/k8s-device-plugin@sha256:00"})
    assert found is not None
    assert found.key == "device-plugin"


def test_plan_patches_the_device_plugin_not_gfd_or_the_mps_daemon(tmp_path: Path) -> None:
    for f in DATA.glob("*.yaml"):
        shutil.copy(f, tmp_path / f.name)
    snap = yaml.safe_load((tmp_path / "dev.yaml").read_text())
    for name in ("device-plugin--gfd-daemonset.yaml", "gpu-operator--mps-control-daemonset.yaml"):
        ds = _one(name)
        ds["metadata"]["namespace"] = "kube-system"
        snap["items"].append(ds)  # after the device plugin's, as a Helm install lists them
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(snap, sort_keys=False))
    res = run("plan", "--fleet", str(tmp_path / "fleet.yaml"), "-o", "json")
    out = json.loads(res.stdout)
    dev = [w for w in out["waves"] if w["cluster"] == "dev"]
    text = "\n".join(c for w in dev for s in w["steps"] for c in s["commands"])
    assert "patch daemonset nvidia-device-plugin-daemonset" in text
    assert "patch daemonset gpu-feature-discovery" not in text
    assert "patch daemonset nvidia-device-plugin-mps-control-daemon" not in text


def test_audit_does_not_call_the_charts_gfd_daemonset_a_device_plugin(tmp_path: Path) -> None:
    """The chart's GFD DaemonSet (deployments/helm/nvidia-device-plugin/templates/daemonset-gfd.yml) runs a
    config-manager sidecar from the plugin's image beside gpu-feature-discovery."""
    ds = _one("device-plugin--gfd-daemonset.yaml")
    ctr = ds["spec"]["template"]["spec"]["containers"]
    ctr.insert(
        0, {"image": ctr[0]["image"], "name": "gpu-feature-discovery-sidecar", "command": ["config-manager"]}
    )
    f = tmp_path / "gfd.yaml"
    f.write_text(yaml.safe_dump(ds))
    r = CliRunner().invoke(cli, ["audit", str(f), "-o", "json"], catch_exceptions=False)
    rules = [x["rule"] for x in json.loads(r.stdout)["findings"]]
    assert "gpu.device-plugin-daemonset" not in rules, r.stdout
    real = CliRunner().invoke(
        cli, ["audit", str(REAL / "device-plugin--nvidia-device-plugin.yaml"), "-o", "json"]
    )
    assert [x["rule"] for x in json.loads(real.stdout)["findings"]] == ["gpu.device-plugin-daemonset"]

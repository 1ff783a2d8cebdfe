"""NVIDIA ComputeDomains: the driver's controller creates the ResourceClaimTemplate the ComputeDomain names (in its
namespace), and each GPU node's compute-domain plugin publishes channel-0 and daemon-0. validate said that
template was "not among the inputs" and simulate left the pods pending with "resourceclaimtemplate not found"."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubedra import vendors
from kubedra.cli import cli

INPUTS = Path(__file__).resolve().parents[2] / "realworld" / "inputs"
CD = INPUTS / "dra-driver--imex-channel-injection.yaml"  # NVIDIA's ComputeDomain quickstart
KAI_CD = INPUTS / "kai--dra-gpu-imex-pod.yaml"  # a GPU and a ComputeDomain channel, under KAI
STAGING = (
    Path(__file__).resolve().parents[1] / "plan" / "data" / "staging.yaml"
)  # a snapshot, one node on DRA


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _modes(*args: str) -> dict:
    r = run("simulate", *args, "-o", "json")
    assert r.exit_code == 0, r.output
    return {**json.loads(r.stdout), "stderr": r.stderr}


def test_validate_knows_the_template_the_controller_creates():
    r = run("validate", str(CD), "--ignore-missing-schemas")
    assert "not among the inputs" not in r.output, r.output
    assert r.exit_code == 0, r.output


def test_the_template_is_in_the_compute_domains_namespace_only(tmp_path):
    text = CD.read_text().replace(
        "  name: imex-channel-injection\nspec:\n  numNodes",
        "  name: x\n  namespace: other\nspec:\n  numNodes",
        1,
    )
    f = tmp_path / "cd.yaml"
    f.write_text(text)
    r = run("validate", str(f), "--ignore-missing-schemas")
    assert "ResourceClaimTemplate 'imex-channel-0' is not among the inputs (namespace default)" in r.output


def test_the_pod_gets_its_channel_on_a_gpu_node():
    d = _modes("-f", str(CD), "--nodes", "2x8xH100-80GB")
    assert (d["modes"]["dra"]["placed"], d["modes"]["dra"]["pending"]) == (1, 0)
    assert "imex-channel-0: created by the NVIDIA DRA driver's ComputeDomain controller" in d["stderr"]
    d = _modes("-f", str(KAI_CD), "--nodes", "1x8xH100-80GB")
    assert (d["modes"]["dra"]["placed"], d["modes"]["dra"]["pending"]) == (1, 0)


def test_one_channel_per_node(tmp_path):
    """channel-0 is the one channel a node publishes, and it is not shared: a second pod of the ComputeDomain
    needs a second node."""
    text = CD.read_text()
    pod = text[text.index("apiVersion: v1\nkind: Pod") :]
    f = tmp_path / "two.yaml"
    f.write_text(text + "\n---\n" + pod.replace("name: imex-channel-injection", "name: second", 1))
    d = _modes("-f", str(f), "--nodes", "1x8xH100-80GB")
    assert (d["modes"]["dra"]["placed"], d["modes"]["dra"]["pending"]) == (1, 1)
    d = _modes("-f", str(f), "--nodes", "2x8xH100-80GB")
    assert (d["modes"]["dra"]["placed"], d["modes"]["dra"]["pending"]) == (2, 0)


def test_compute_domain_devices_in_a_snapshot_are_no_gpus(tmp_path):
    """A snapshot's compute-domain.nvidia.com slices (channel-0, daemon-0 on each GPU node) add no GPU: the
    vendor's other drivers publish no GPUs, so 'GPUs used / physical' stays the GPUs' own."""
    snap = yaml.safe_load(STAGING.read_text())
    gpu_nodes = sorted(
        {
            o["spec"]["nodeName"]
            for o in snap["items"]
            if o["kind"] == "ResourceSlice" and o["spec"].get("nodeName")
        }
    )
    assert gpu_nodes
    out = vendors.controller_output(
        next(o for o in yaml.safe_load_all(CD.read_text()) if o["kind"] == "ComputeDomain"), "1.37"
    )
    assert out is not None
    assert out.node_slice is not None
    slices = [out.node_slice(n) for n in gpu_nodes]
    assert {d["name"] for s in slices for d in s["spec"]["devices"]} == {"channel-0", "daemon-0"}
    with_cd = tmp_path / "staging-cd.yaml"
    with_cd.write_text(yaml.safe_dump({**snap, "items": [*snap["items"], *slices]}))
    before = _modes(str(STAGING), "--mode", "dra")["modes"]["dra"]["gpus"]
    after = _modes(str(with_cd), "--mode", "dra")["modes"]["dra"]["gpus"]
    assert before["physical"] > 0
    assert after == before

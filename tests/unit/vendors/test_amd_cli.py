"""AMD through the vendor seam, at CLI level, on the ROCm device plugin's own example pod
(tests/realworld/inputs/amd--pytorch-pod.yaml: ROCm/k8s-device-plugin example/pod/pytorch.yaml @ ed764684,
Apache-2.0, see tests/realworld/SOURCES.yaml)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubedra.cli import cli

POD = Path(__file__).resolve().parents[2] / "realworld" / "inputs" / "amd--pytorch-pod.yaml"


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def test_audit_finds_amd_gpu_like_nvidia_gpu() -> None:
    code, out, _ = _run("audit", str(POD), "-o", "json")
    assert code == 0
    rules = [f["rule"] for f in json.loads(out)["findings"]]
    assert "gpu.device-plugin-request" in rules
    assert "gpu.other-vendor-request" not in rules


def test_migrate_claims_amds_device_class(tmp_path: Path) -> None:
    code, _, _ = _run("migrate", str(POD), "--out", str(tmp_path))
    assert code == 0
    docs = list(yaml.safe_load_all((tmp_path / POD.name).read_text()))
    (rct,) = [d for d in docs if d["kind"] == "ResourceClaimTemplate"]
    (req,) = rct["spec"]["spec"]["devices"]["requests"]
    assert req["exactly"] == {"deviceClassName": "gpu.amd.com"}
    (pod,) = [d for d in docs if d["kind"] == "Pod"]
    assert "amd.com/gpu" not in json.dumps(pod)


def test_migrate_amd_partition_selects_its_profile(tmp_path: Path) -> None:
    src = tmp_path / "in" / "pod.yaml"
    src.parent.mkdir()
    src.write_text(POD.read_text().replace("amd.com/gpu: 1", "amd.com/cpx_nps4: 2"))
    code, _, _ = _run("migrate", str(src), "--out", str(tmp_path / "out"))
    assert code == 0
    docs = list(yaml.safe_load_all((tmp_path / "out" / "pod.yaml").read_text()))
    (rct,) = [d for d in docs if d["kind"] == "ResourceClaimTemplate"]
    (req,) = rct["spec"]["spec"]["devices"]["requests"]
    assert req["exactly"]["count"] == 2
    assert req["exactly"]["selectors"] == [
        {"cel": {"expression": "device.attributes['gpu.amd.com'].partitionProfile == 'cpx_nps4'"}}
    ]


def test_migrate_says_what_amd_cannot_do_and_exits_1(tmp_path: Path) -> None:
    code, out, _ = _run("migrate", str(POD), "--gpu-strategy", "extended-resource", "--out", str(tmp_path))
    assert code == 1
    assert "without extendedResourceName" in out
    code, out, _ = _run("migrate", str(POD), "--sharing", "time-slicing", "--out", str(tmp_path / "s"))
    assert code == 1
    assert "--sharing applies to NVIDIA GPUs only" in out


def test_simulate_says_amd_gpus_are_not_modelled() -> None:
    _, out, _ = _run("simulate", str(POD), "--nodes", "1x8xH100-80GB")
    assert "no AMD GPU model" in out

"""AMD through the vendor seam, at CLI level, on the ROCm device plugin's own example pod
(tests/realworld/inputs/amd--pytorch-pod.yaml: ROCm/k8s-device-plugin example/pod/pytorch.yaml @ ed764684,
Apache-2.0, see tests/realworld/SOURCES.yaml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubedra.cli import cli, main

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


def _simulate(path: Path, *args: str) -> tuple[int, dict]:
    code, out, _ = _run("simulate", str(path), *args, "-o", "json")
    return code, json.loads(out) if out.strip() else {}


def test_simulate_places_amd_pods_on_amd_nodes_in_both_modes() -> None:
    code, data = _simulate(POD, "--nodes", "1x8xMI300X")
    assert code == 0
    for mode in ("device-plugin", "dra"):
        got = data["modes"][mode]
        assert (got["placed"], got["pending"]) == (1, 0)
        assert got["pods"][0]["node"] == "mi300x-0"
        assert got["gpus"] == {"physical": 8, "used": 1}


def test_simulate_places_amd_pods_next_to_nvidia_nodes() -> None:
    code, data = _simulate(POD, "--nodes", "2x8xH100-80GB,1x8xMI325X")
    assert code == 0
    assert {m: data["modes"][m]["pods"][0]["node"] for m in ("device-plugin", "dra")} == {
        "device-plugin": "mi325x-0",
        "dra": "mi325x-0",
    }


def test_simulate_mi250_advertises_each_gcd() -> None:
    # 4 MI250 boards: 8 GCDs of 64 GiB (ROCm docs gpu-specs: 128 GiB, 208 CUs per board, two GCDs)
    code, data = _simulate(POD, "--nodes", "1x4xMI250")
    assert code == 0
    assert data["modes"]["dra"]["gpus"]["physical"] == 8
    assert data["modes"]["dra"]["memory"]["allocatedBytes"] == 64 * 2**30


def test_simulate_amd_partition_mode_places_a_partition_request(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD.read_text().replace("amd.com/gpu: 1", "amd.com/cpx_nps4: 2"))
    code, data = _simulate(pod, "--nodes", "1x8xMI300X", "--gpu-mode", "cpx_nps4")
    assert code == 0
    # DRA: two CPX partitions of 24 GiB (192 GiB / 8); the device plugin's default single strategy advertises
    # them as amd.com/gpu, so a pod asking for amd.com/cpx_nps4 finds none there
    assert data["modes"]["dra"]["placed"] == 1
    assert data["modes"]["dra"]["memory"]["allocatedBytes"] == 2 * 24 * 2**30
    assert data["modes"]["device-plugin"]["pending"] == 1


def _fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert len(err.strip().splitlines()) == 1
    return err


def test_simulate_refuses_a_partition_mode_the_gpu_cannot_run(capsys: pytest.CaptureFixture[str]) -> None:
    err = _fail(["simulate", str(POD), "--nodes", "1x8xMI300X", "--gpu-mode", "spx_nps4"], capsys)
    assert "SPX is not allowed with memory partition NPS4" in err
    err = _fail(["simulate", str(POD), "--nodes", "1x8xMI210", "--gpu-mode", "cpx_nps1"], capsys)
    assert "MI210 cannot run partition mode 'cpx_nps1'" in err


REALWORLD = POD.parent


def test_migrated_amd_manifests_place_on_amd_nodes_like_the_originals(tmp_path: Path) -> None:
    """ROCm's own examples (jax-multi-gpu.yaml asks for amd.com/gpu: 2, vllm-serve's Deployment for "1"):
    migrate writes claims for gpu.amd.com with the same count, and the migrated files place on the DRA view of
    the same MI300X nodes as the originals on the device-plugin view."""
    for name, count in (("amd--jax-multi-gpu.yaml", 2), ("amd--vllm-serve-deployment.yaml", 1)):
        src = REALWORLD / name
        code, _, _ = _run("migrate", str(src), "--out", str(tmp_path / name))
        assert code == 0
        docs = list(yaml.safe_load_all((tmp_path / name / name).read_text()))
        (rct,) = [d for d in docs if d and d["kind"] == "ResourceClaimTemplate"]
        (req,) = rct["spec"]["spec"]["devices"]["requests"]
        assert req["exactly"]["deviceClassName"] == "gpu.amd.com"
        assert req["exactly"].get("count", 1) == count
        code, before = _simulate(src, "--nodes", "1x8xMI300X", "--mode", "device-plugin")
        assert code == 0
        assert before["modes"]["device-plugin"]["placed"] == 1
        code, after = _simulate(tmp_path / name / name, "--nodes", "1x8xMI300X", "--mode", "dra")
        assert code == 0
        assert after["modes"]["dra"]["placed"] == 1
        assert after["modes"]["dra"]["gpus"]["used"] == count


def test_audit_finds_the_rocm_device_plugin_daemonset(tmp_path: Path) -> None:
    """ROCm's own DaemonSet (k8s-ds-amdgpu-dp.yaml @ ed764684) must leave a node pool before AMD's DRA driver
    arrives, like NVIDIA's; the node labeller (same repository, labeller-* tag) is not the device plugin."""
    ds = REALWORLD / "amd--device-plugin-daemonset.yaml"
    code, out, _ = _run("audit", str(ds), "-o", "json")
    assert code == 0
    (f,) = [f for f in json.loads(out)["findings"] if f["rule"] == "gpu.device-plugin-daemonset"]
    assert f["message"].startswith("AMD device plugin (rocm/k8s-device-plugin)")
    labeller = tmp_path / "labeller.yaml"
    labeller.write_text(
        ds.read_text().replace(
            "image: rocm/k8s-device-plugin", "image: rocm/k8s-device-plugin:labeller-latest"
        )
    )
    code, out, _ = _run("audit", str(labeller), "-o", "json")
    assert "gpu.device-plugin-daemonset" not in [f["rule"] for f in json.loads(out)["findings"]]


def test_an_unknown_model_lists_every_vendors_models(capsys: pytest.CaptureFixture[str]) -> None:
    err = _fail(["simulate", str(POD), "--nodes", "1x8xMI999"], capsys)
    assert "unknown GPU model 'MI999'" in err
    assert "H100-80GB" in err
    assert "MI300X" in err


def test_migrate_reads_an_amd_partition_request_in_a_manifest_that_never_says_gpu(tmp_path: Path) -> None:
    # the device plugin's "mixed" naming (ROCm/k8s-device-plugin docs/user-guide/configuration.md, "Resource
    # Naming Strategy": amd.com/cpx_nps4): a document is looked at when it names any vendor's resource domain
    src = tmp_path / "in" / "job.yaml"
    src.parent.mkdir()
    src.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: train\n        image: rocm/pytorch:latest\n"
        "        resources:\n          limits:\n            amd.com/cpx_nps4: 1\n"
    )
    code, _, _ = _run("migrate", str(src), "--out", str(tmp_path / "out"))
    assert code == 0
    docs = list(yaml.safe_load_all((tmp_path / "out" / "job.yaml").read_text()))
    (rct,) = [d for d in docs if d["kind"] == "ResourceClaimTemplate"]
    (req,) = rct["spec"]["spec"]["devices"]["requests"]
    assert req["exactly"]["deviceClassName"] == "gpu.amd.com"


def test_migrate_sharing_a_mig_profile_is_a_manual_item_for_amd(tmp_path: Path) -> None:
    code, out, _ = _run("migrate", str(POD), "--sharing", "mig:1g.10gb", "--out", str(tmp_path))
    assert code == 1
    assert "--sharing applies to NVIDIA GPUs only" in out

"""A pending pod's reason names its own claims. Pods from one template share the cached allocation result (and the
class's last reason), which named the first pod's claim: Kueue's DRA sample Job at parallelism 3, on a cluster
without its DeviceClass, said "claim default/sample-dra-rct-job-0-gpu" for all three pods."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.model.objects import ObjectMeta, ResourceClaim
from kubedra.scheduler.pending import own_claims

JOB = Path(__file__).resolve().parents[2] / "realworld" / "inputs" / "kueue--dra-sample-rct-job.yaml"


def _three_pods(tmp_path: Path) -> Path:
    text = JOB.read_text()
    assert "spec:\n  template:" in text
    f = tmp_path / "job.yaml"
    f.write_text(text.replace("spec:\n  template:", "spec:\n  parallelism: 3\n  template:"))
    return f


def test_each_pending_pod_names_its_own_claim(tmp_path: Path) -> None:
    f = _three_pods(tmp_path)
    r = CliRunner().invoke(
        cli, ["simulate", str(f), "--nodes", "1x8xH100-80GB", "--mode", "dra", "-o", "json"]
    )
    pods = json.loads(r.stdout)["modes"]["dra"]["pods"]
    assert len(pods) == 3
    for p in pods:
        assert p["node"] is None
        assert f"claim default/{p['name']}-gpu," in p["reason"], p


def test_the_table_groups_them_naming_each_pods_claim(tmp_path: Path) -> None:
    f = _three_pods(tmp_path)
    r = CliRunner().invoke(cli, ["simulate", str(f), "--nodes", "1x8xH100-80GB", "--mode", "dra"])
    assert "sample-dra-rct-job-0 … sample-dra-rct-job-2 (3)" in r.stdout
    assert "claim default/<pod>-gpu, request gpu" in r.stdout


def _claim(name: str) -> ResourceClaim:
    return ResourceClaim(meta=ObjectMeta(name=name, namespace="ns"))


def test_only_whole_references_are_renamed_all_at_once() -> None:
    a, b, c = _claim("web-1-gpu"), _claim("web-2-gpu"), _claim("web-1-gpu-2")
    text = "claim ns/web-1-gpu, request g: x; claim ns/web-1-gpu-2: y; claim ns/web-2-gpu: z"
    got = own_claims(text, [a, b], [b, a])
    assert got == "claim ns/web-2-gpu, request g: x; claim ns/web-1-gpu-2: y; claim ns/web-1-gpu: z"
    assert own_claims(text, [c], [c]) == text
    assert own_claims(None, [a], [b]) is None

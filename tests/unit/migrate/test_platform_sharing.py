"""GKE's own GPU sharing, selected by node labels while the pod still asks for nvidia.com/gpu: a MIG partition is
one slice (migrate claims a MIG device of that profile), time-sharing/MPS is a share (a manual item, never an
exclusive claim), and audit names both. The inputs are GKE's documented samples."""

from __future__ import annotations

import json
from pathlib import Path

from kubedra.testing.cli import run

DATA = Path(__file__).parent / "data"
PARTITION = str(DATA / "gke-mig-partition.yaml")
TIME_SHARING = str(DATA / "gke-time-sharing.yaml")


def test_a_gke_mig_partition_becomes_a_mig_claim_of_that_profile() -> None:
    result = run("migrate", PARTITION, code=0)
    out = result.stdout
    assert "deviceClassName: mig.nvidia.com" in out
    assert "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'" in out
    assert "deviceClassName: gpu.nvidia.com" not in out
    assert "one MIG slice of profile 1g.5gb" in result.stderr


def test_gke_time_sharing_is_a_manual_item_not_an_exclusive_claim() -> None:
    result = run("migrate", TIME_SHARING, code=1)
    assert "ResourceClaimTemplate" not in result.stdout
    assert "MANUAL" in result.stderr
    assert "time-sharing" in result.stderr
    assert "up to 3" in result.stderr


def test_audit_reports_the_platform_sharing() -> None:
    result = run("audit", PARTITION, TIME_SHARING, "-o", "json", code=0)
    findings = json.loads(result.stdout)["findings"]
    assert sorted((f["rule"], f["object"]["kind"]) for f in findings) == [
        ("gpu.platform-sharing", "Deployment"),
        ("gpu.platform-sharing", "Job"),
    ]

"""``kubedra verify -o prometheus``: check status, ResourceClaims pending, devices published/tainted per
driver and allocated/tainted per DeviceClass, read back with prometheus_client's own parser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubedra.testing.metrics import samples

from .helpers import run
from .test_verify import GPU0, _mutate, _rule, healthy, snap


def _published(items: list[dict[str, Any]]) -> int:
    return sum(len(o["spec"]["devices"]) for o in items if o["kind"] == "ResourceSlice")


def _pending_claim() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "waiting", "namespace": "ml"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
        },
    }


def test_healthy_state(tmp_path: Path) -> None:
    items = healthy()
    res = run("verify", "-f", snap(tmp_path, items), "-o", "prometheus")
    assert res.exit_code == 0, res.stderr
    got = samples(res.stdout)
    status = {
        (dict(k[1])["check"], dict(k[1])["status"]): v
        for k, v in got.items()
        if k[0] == "kubedra_verify_check_status"
    }
    checks = {c for c, _ in status}
    assert len(checks) == 7
    nothing = {"events", "baseline"}  # no DRA error event, no --baseline: nothing to check, not a pass
    assert all(status[(c, "pass")] == 1 and status[(c, "fail")] == 0 for c in checks - nothing)
    assert all(status[(c, "nothing-to-check")] == 1 and status[(c, "pass")] == 0 for c in nothing)
    assert got[("kubedra_resourceclaims", (("state", "allocated"),))] == 1
    assert got[("kubedra_resourceclaims", (("state", "pending"),))] == 0
    assert got[("kubedra_dra_devices_published", (("driver", "gpu.nvidia.com"),))] == _published(items) > 1
    assert got[("kubedra_dra_devices_tainted", (("driver", "gpu.nvidia.com"),))] == 0
    assert got[("kubedra_dra_devices_allocated", (("deviceclass", "gpu.nvidia.com"),))] == 1
    assert got[("kubedra_dra_devices_allocated_tainted", (("deviceclass", "gpu.nvidia.com"),))] == 0
    assert got[("kubedra_verify_incomplete_reads", ())] == 0


def test_taint_rule_pending_claim_and_failed_check(tmp_path: Path) -> None:
    items = [*healthy(), _rule(**GPU0), _pending_claim()]
    res = run("verify", "-f", snap(tmp_path, items), "-o", "prometheus")
    assert res.exit_code == 1, res.stderr
    got = samples(res.stdout)
    assert got[("kubedra_verify_check_status", (("check", "health"), ("status", "fail")))] == 1
    assert got[("kubedra_verify_check_status", (("check", "health"), ("status", "pass")))] == 0
    assert got[("kubedra_resourceclaims", (("state", "pending"),))] == 1
    assert got[("kubedra_dra_devices_tainted", (("driver", "gpu.nvidia.com"),))] == 1
    assert got[("kubedra_dra_devices_allocated_tainted", (("deviceclass", "gpu.nvidia.com"),))] == 1


def test_slice_taint_counts_per_driver(tmp_path: Path) -> None:
    def taint_two(s: dict[str, Any]) -> None:
        for d in s["spec"]["devices"][-2:]:
            d["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "48", "effect": "NoSchedule"}]

    items = _mutate(healthy(), "ResourceSlice", taint_two)
    slices = sum(1 for o in items if o["kind"] == "ResourceSlice")
    res = run(
        "verify",
        "-f",
        snap(tmp_path, items),
        "-o",
        "prometheus",
        "--metrics-file",
        str(tmp_path / "v.prom"),
        code=0,
    )
    got = samples(res.stdout)
    assert got[("kubedra_dra_devices_tainted", (("driver", "gpu.nvidia.com"),))] == 2 * slices
    assert samples((tmp_path / "v.prom").read_text()) == got

"""cluster.removed-gate: a control-plane component or kubelet configured with a gate the target removed does not
start (data/feature-gates.yaml ``removed``, generated from each release's Go source)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubedra.cli import cli

CONTROL_PLANE = Path(__file__).with_name("removed-gates-control-plane.yaml")


def _findings(target: str) -> list[dict[str, object]]:
    r = CliRunner().invoke(cli, ["audit", str(CONTROL_PLANE), "--target-version", target, "-o", "json"])
    assert r.exit_code in (0, 1), r.output
    return [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "cluster.removed-gate"]


def test_gates_removed_in_1_38_stop_the_static_pod_the_kubeadm_args_and_the_kubelet_config() -> None:
    found = _findings("1.38")
    messages = sorted(str(f["message"]) for f in found)
    assert len(found) == 3
    assert all(f["severity"] == "error" for f in found)
    assert any("kube-apiserver sets feature gate DynamicResourceAllocation" in m for m in messages)
    assert any(
        "kube-controller-manager sets feature gate SeparateTaintEvictionController" in m for m in messages
    )
    assert any("kubelet sets feature gate DynamicResourceAllocation" in m for m in messages)
    assert not any("DRAAdminAccess" in m for m in messages)  # still registered (GA, locked) at 1.38


def test_nothing_at_a_release_that_still_has_the_gates() -> None:
    assert _findings("1.37") == []

"""``kubedra snapshot`` for what needs no API server: an unreachable cluster, the metrics lines a capture
keeps, and telling a snapshot from an ordinary manifest. Capturing from an apiserver (what is kept, what
is scrubbed, reading the file back, auditing it) is tested against the testbed's real control plane in
tests/integration/snapshot/test_snapshot_live_cluster.py."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from kubedra.errors import InputError
from kubedra.model import snapshot as snapfmt
from kubedra.snapshot import capture

from .helpers import run


def test_unreachable_cluster_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    kc = tmp_path / "kc"
    kc.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "down", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "down", "user": {"token": "t"}}],
                "contexts": [{"name": "down", "context": {"cluster": "down", "user": "down"}}],
                "current-context": "down",
            }
        )
    )
    out = tmp_path / "down.yaml"
    res = run("snapshot", "--kubeconfig", str(kc), "-o", str(out), "--timeout", "2")
    assert res.exit_code == 2
    assert res.stderr.startswith("kubedra: error: cannot reach cluster down at http://127.0.0.1:")
    assert not out.exists()
    assert not list(tmp_path.glob(".kubedra-snapshot-*"))


def test_metrics_kept_are_the_feature_gate_and_deprecated_api_lines() -> None:
    metrics = (
        "# HELP kubernetes_feature_enabled ...\n"
        'kubernetes_feature_enabled{name="DynamicResourceAllocation",stage=""} 1\n'
        'kubernetes_feature_enabled{name="DRADeviceTaints",stage="BETA"} 0\n'
        'apiserver_request_total{code="200"} 12\n'
    )
    assert capture.feature_gates(metrics) == {"DRADeviceTaints": False, "DynamicResourceAllocation": True}
    kept = [ln for ln in metrics.splitlines() if capture._METRIC_LINES.match(ln)]
    assert kept == metrics.splitlines()[1:3]


def test_ordinary_manifest_is_not_a_snapshot(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": []}))
    assert not snapfmt.is_snapshot(str(p))
    with pytest.raises(InputError, match="not a kubedra snapshot"):
        snapfmt.load(str(p))

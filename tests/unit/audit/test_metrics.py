"""``kubedra audit -o prometheus`` and ``--metrics-file``: exposition that prometheus_client's own parser reads,
with findings by rule and severity."""

from __future__ import annotations

from pathlib import Path

from kubedra.testing.cli import run
from kubedra.testing.metrics import samples

MANIFESTS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: train, namespace: ml}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
      - {name: c, image: cuda, resources: {limits: {nvidia.com/gpu: 2}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: serve, namespace: ml}
spec:
  selector: {matchLabels: {a: c}}
  template:
    metadata: {labels: {a: c}}
    spec:
      containers:
      - {name: c, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}
---
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: old}
spec: {}
"""


def test_findings_by_rule_and_severity(tmp_path: Path) -> None:
    manifests = tmp_path / "m.yaml"
    manifests.write_text(MANIFESTS)
    res = run("audit", str(manifests), "-o", "prometheus")
    assert res.exit_code == 0, res.stderr
    got = samples(res.stdout)
    assert (
        got[("kubedra_audit_findings", (("rule", "gpu.device-plugin-request"), ("severity", "warning")))] == 2
    )
    assert got[("kubedra_audit_findings", (("rule", "api.deprecated"), ("severity", "warning")))] == 1
    by_severity = {k[1][0][1]: v for k, v in got.items() if k[0] == "kubedra_audit_findings_by_severity"}
    assert by_severity == {"error": 0, "warning": 3, "info": 0}
    assert got[("kubedra_audit_objects_scanned", ())] == 3
    assert got[("kubedra_audit_incomplete_reads", ())] == 0
    (info,) = [k for k in got if k[0] == "kubedra_build_info"]
    assert dict(info[1])["verb"] == "audit"


def test_metrics_file_alongside_another_output(tmp_path: Path) -> None:
    manifests = tmp_path / "m.yaml"
    manifests.write_text(MANIFESTS)
    prom = tmp_path / "kubedra.prom"
    res = run("audit", str(manifests), "-o", "json", "--metrics-file", str(prom))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.lstrip().startswith("{")
    assert samples(prom.read_text()) == samples(
        run("audit", str(manifests), "-o", "prometheus", code=0).stdout
    )
    assert {p.name for p in tmp_path.iterdir()} == {"m.yaml", "kubedra.prom"}  # no temporary file left

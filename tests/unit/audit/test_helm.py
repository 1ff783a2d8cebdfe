"""Helm: release secret decoding (base64 + base64 + gzip + JSON), revision choice, rendered-chart attribution."""

from __future__ import annotations

import base64
import gzip
import json
import os
import stat
from pathlib import Path

import pytest

from kubedra.sources import helm

from .helpers import run

RENDERED = """\
---
# Source: trainer/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
      - name: main
        image: cuda
        resources:
          limits:
            nvidia.com/gpu: 4
---
# Source: trainer/charts/jobs/templates/cronjob.yaml
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: nightly
"""


def test_release_roundtrip_matches_helm_encoding() -> None:
    release = {
        "name": "r",
        "namespace": "ns",
        "version": 7,
        "info": {"status": "deployed"},
        "manifest": "a: b\n",
    }
    # Helm stores base64(gzip(json)); the Secret's data field base64-encodes that once more.
    helm_value = base64.b64encode(gzip.compress(json.dumps(release).encode()))
    secret_data = base64.b64encode(helm_value).decode()
    assert helm.decode_release_data(secret_data) == release
    assert helm.decode_release_data(helm.encode_release(release)) == release
    # Helm 3 before gzip: plain JSON inside the double base64
    plain = base64.b64encode(base64.b64encode(json.dumps(release).encode())).decode()
    assert helm.decode_release_data(plain)["version"] == 7


def test_decode_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match=r"secret has no data\.release"):
        helm.decode_release_secret({"data": {}})
    with pytest.raises(ValueError, match="Expecting value"):  # json.JSONDecodeError is a ValueError
        helm.decode_release_data(base64.b64encode(base64.b64encode(b"not json")).decode())


def test_current_release_prefers_newest_deployed() -> None:
    mk = lambda rev, status, name="r": helm.Release(name, "ns", rev, status, "c-1", "")  # noqa: E731
    got = helm.current_releases(
        [mk(1, "superseded"), mk(2, "deployed"), mk(3, "failed"), mk(1, "pending-install", "other")]
    )
    assert [(r.name, r.revision) for r in got] == [("other", 1), ("r", 2)]


def test_rendered_documents_keep_their_template_and_line() -> None:
    out = helm.split_rendered(RENDERED, "charts/trainer")
    assert out.files == 2
    assert not out.errors
    dep, cj = out.documents
    assert dep.file == os.path.join("charts/trainer", "templates/deployment.yaml")
    assert (
        dep.line_of(["spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"])
        == 14
    )
    assert cj.file == os.path.join("charts/trainer", "charts/jobs/templates/cronjob.yaml")
    assert cj.line == 2


def _fake_helm(tmp_path: Path, script: str) -> Path:
    exe = tmp_path / "helm"
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def test_cli_renders_chart_with_helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = tmp_path / "trainer"
    chart.mkdir()
    values = tmp_path / "prod.yaml"
    values.write_text("gpus: 4\n")
    (tmp_path / "out.yaml").write_text(RENDERED)
    args_file = tmp_path / "args"
    exe = _fake_helm(tmp_path, f'echo "$@" > {args_file}\ncat {tmp_path / "out.yaml"}\n')
    monkeypatch.setenv("KUBEDRA_HELM", str(exe))
    r = run("audit", "--helm-chart", str(chart), "--helm-values", str(values), "-o", "json")
    assert r.exit_code == 1, r.stderr
    out = json.loads(r.stdout)
    by_rule = {f["rule"]: f for f in out["findings"]}
    assert by_rule["gpu.device-plugin-request"]["source"] == {
        "file": str(chart / "templates/deployment.yaml"),
        "line": 14,
    }
    assert by_rule["api.removed"]["object"]["kind"] == "CronJob"
    assert args_file.read_text().split() == ["template", "kubedra-audit", str(chart), "--values", str(values)]
    assert out["summary"]["filesScanned"] == 2


def test_cli_reports_render_failure_and_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart = tmp_path / "broken"
    chart.mkdir()
    exe = _fake_helm(
        tmp_path,
        'echo "Error: template: broken/templates/x.yaml:3: function \\"nope\\" not defined" >&2\nexit 1\n',
    )
    monkeypatch.setenv("KUBEDRA_HELM", str(exe))
    (tmp_path / "m.yaml").write_text("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: x}\n")
    r = run("audit", "--helm-chart", str(chart), str(tmp_path / "m.yaml"), "-o", "json")
    assert r.exit_code == 1  # the removed Ingress found wins over the chart not rendered
    out = json.loads(r.stdout)
    fail = next(f for f in out["findings"] if f["rule"] == "input.helm-render-failed")
    assert 'function "nope" not defined' in fail["message"]
    assert fail["source"]["file"] == str(chart)
    assert any(f["rule"] == "api.removed" for f in out["findings"])


def test_cli_without_helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBEDRA_HELM", str(tmp_path / "no-helm-here"))
    chart = tmp_path / "c"
    chart.mkdir()
    r = run("audit", "--helm-chart", str(chart), "-o", "json")
    assert r.exit_code == 2
    assert "helm is not installed" in json.loads(r.stdout)["findings"][0]["message"]
    r = run("audit", "--helm-chart", str(tmp_path / "missing"))
    assert r.exit_code == 2
    assert "no such chart directory" in r.stderr

"""``kubedra audit --helm-chart`` with the real helm binary from the testbed: conditionals are rendered, not
scraped, and findings point at the template that produced them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubedra.testing import binaries
from kubedra.testing.require import unavailable

pytestmark = pytest.mark.integration

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    "values.yaml": "gpus: 1\nlegacyCron: false\nmig: ''\n",
    "templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-trainer
spec:
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
      - name: main
        image: cuda
        resources:
          limits:
            {{- if .Values.mig }}
            nvidia.com/mig-{{ .Values.mig }}: 1
            {{- else }}
            nvidia.com/gpu: {{ .Values.gpus }}
            {{- end }}
""",
    "templates/cron.yaml": """\
{{- if .Values.legacyCron }}
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: {{ .Release.Name }}-nightly
spec:
  schedule: "0 2 * * *"
{{- end }}
""",
}


@pytest.fixture
def helm_bin() -> str:
    path = binaries.find("helm")
    if path is None:
        unavailable(f"helm is not built in {binaries.bin_dir()}: run `make testbed`")
    return str(path)


def test_rendered_chart(tmp_path: Path, helm_bin: str) -> None:
    chart = tmp_path / "trainer"
    for name, text in CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    prod = tmp_path / "prod.yaml"
    prod.write_text("legacyCron: true\nmig: 3g.40gb\n")
    env = dict(os.environ, KUBEDRA_HELM=helm_bin)

    def audit(*args: str) -> dict:
        proc = subprocess.run(
            [sys.executable, "-m", "kubedra", "audit", "--helm-chart", str(chart), *args, "-o", "json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert proc.returncode in (0, 1), proc.stderr
        return json.loads(proc.stdout)

    default = {(f["rule"], f["source"]["file"], f["source"]["line"]) for f in audit()["findings"]}
    assert default == {("gpu.device-plugin-request", str(chart / "templates/deployment.yaml"), 18)}
    prod_findings = {f["rule"]: f for f in audit("--helm-values", str(prod))["findings"]}
    assert set(prod_findings) == {"gpu.mig-request", "api.removed"}
    assert prod_findings["api.removed"]["source"]["file"] == str(chart / "templates/cron.yaml")
    assert "nvidia.com/mig-3g.40gb" in prod_findings["gpu.mig-request"]["message"]

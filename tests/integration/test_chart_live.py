"""The Helm chart (deploy/chart/kubedra) on the testbed's real apiserver: every rendered object passes
server-side dry-run, and the CronJob's own runner, as the chart's ServiceAccount with a real token and only the
chart's RBAC, reads everything audit and verify need (complete: no exit 2) and writes the results ConfigMap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers import Objects, sa_kubeconfig

from kubedra.sources.files import parse_text
from kubedra.testing import binaries, chart
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.require import unavailable
from kubedra.validate.dryrun import dry_run

pytestmark = pytest.mark.integration

RELEASE = f"chart-it-{uuid.uuid4().hex[:6]}"
NS = RELEASE
VALUES = {"helmReleases.enabled": True, "resultsConfigMap.enabled": True}


@pytest.fixture(scope="module")
def rendered() -> list[dict]:
    if binaries.find("helm") is None:
        unavailable("testbed helm not built: run `make testbed`")
    return chart.render(VALUES, release=RELEASE, namespace=NS)


@pytest.fixture(scope="module")
def namespace(controlplane: ControlPlane) -> Iterator[Objects]:
    objects = Objects(controlplane.api)
    try:
        objects.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        yield objects
    finally:
        objects.cleanup()


def test_rendered_chart_passes_server_dry_run(
    controlplane: ControlPlane, namespace: Objects, rendered: list[dict], tmp_path: Path
) -> None:
    for values in ({}, VALUES):
        text = yaml.safe_dump_all(chart.render(values, release=RELEASE, namespace=NS))
        docs = [d for d in parse_text(text, "chart.yaml").documents if d.kind]
        assert {d.kind for d in docs} >= {"CronJob", "ClusterRole", "ServiceAccount", "ConfigMap"}
        assert dry_run(docs, kubeconfig=str(controlplane.kubeconfig)) == []


def test_runner_as_the_chart_service_account_is_complete_and_writes_the_results(
    controlplane: ControlPlane, namespace: Objects, rendered: list[dict], tmp_path: Path
) -> None:
    for obj in rendered:
        if obj["kind"] != "CronJob":
            namespace.add(obj)
    sa = next(o for o in rendered if o["kind"] == "ServiceAccount")["metadata"]["name"]
    kubeconfig = sa_kubeconfig(controlplane, tmp_path, NS, sa)
    results = next(
        o for o in rendered if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-results")
    )
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "KUBECONFIG": str(kubeconfig),
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "KUBEDRA_RUNS": json.dumps(chart.runs(rendered)),
        "KUBEDRA_RESULTS_CONFIGMAP": results["metadata"]["name"],
        "POD_NAMESPACE": NS,
    }
    proc = subprocess.run(
        [sys.executable, str(chart.CHART / "files" / "run.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["kubedra"] for line in lines] == ["audit", "verify"]
    for line in lines:
        assert line["exitCode"] in (0, 1), proc.stderr
        assert not line["result"].get("incomplete"), line["result"]["incomplete"]
    stored = controlplane.api.get(f"/api/v1/namespaces/{NS}/configmaps/{results['metadata']['name']}")["data"]
    assert json.loads(stored["exitCodes"]) == {line["kubedra"]: line["exitCode"] for line in lines}
    assert json.loads(stored["audit.json"]) == lines[0]["result"]
    assert json.loads(stored["verify.json"]) == lines[1]["result"]
